"""One pre-norm gated feed-forward block of a decoder layer on the vendored
cute-kernels operations: RMSNorm, the gate and up projections, SwiGLU, the
down projection and the residual. Owns no kernels; the vendored modules are
upstream's, unmodified."""

import torch

import khd.kernels.swiglu as gated
from khd.constants import BLOCK_SIZES_POWERS_OF_2
from khd.enums import KernelBackend
from khd.kernels.rmsnorm import rmsnorm_khd as normalise


class FeedForwardBlock:
    """Weights of one block: the norm's gamma and the three projections."""

    def __init__(self, gamma, w_gate, w_up, w_down, eps: float = 1e-6):
        self.gamma, self.w_gate, self.w_up, self.w_down, self.eps = gamma, w_gate, w_up, w_down, eps

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        block = BLOCK_SIZES_POWERS_OF_2[-1]
        x = normalise(hidden, self.gamma, self.eps, KernelBackend.triton, 4, block)
        act = gated.swiglu_khd(x @ self.w_gate, x @ self.w_up, KernelBackend.triton, KernelBackend.triton,
                               block, block)
        return hidden + act @ self.w_down
