"""One pre-norm gated feed-forward block of a decoder layer: RMS norm, the
gate and up projections, SwiGLU, the down projection and the residual.
Calls ffnops; owns no kernels."""

import torch

import ffnops.gated as gated
from ffnops import rms_norm as normalise

from ffnops.blocks import POW2_BLOCKS


class FeedForwardBlock:
    """Weights of one block: the norm's gamma and the three projections."""

    def __init__(self, gamma, w_gate, w_up, w_down, eps: float = 1e-6):
        self.gamma, self.w_gate, self.w_up, self.w_down, self.eps = gamma, w_gate, w_up, w_down, eps

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        x = normalise(hidden, self.gamma, self.eps)
        act = gated.swiglu(x @ self.w_gate, x @ self.w_up, POW2_BLOCKS[-1])
        return hidden + act @ self.w_down
