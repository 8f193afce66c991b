"""The block's norms and gated MLP on the vendored ops: the input RMSNorm,
the norm of the residual sum before the MLP, and the SiLU or tanh-GELU gate."""

import torch

from flag_gems.fused.gelu_and_mul import gelu_and_mul
from flag_gems.fused.silu_and_mul import SiluAndMul
from flag_gems.fused.skip_rms_norm import skip_rms_norm as residual_rms_norm
from flag_gems.ops import rms_norm as rms


class Norm:
    """An RMSNorm with its learned scale."""

    def __init__(self, width: int, eps: float = 1e-6, device=None, dtype=torch.float32):
        self.weight = torch.ones(width, device=device, dtype=dtype)
        self.eps = eps

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return rms.rms_norm(hidden, (hidden.shape[-1],), self.weight, self.eps)

    def after_residual(self, hidden: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return residual_rms_norm(hidden, residual, (hidden.shape[-1],), self.weight, self.eps)


def gated_mlp(x, w_gate, w_up, w_down, activation: str = "silu"):
    """down(act(gate(x)) * up(x)), act SiLU or tanh-GELU."""
    if activation == "silu":
        hidden = SiluAndMul.apply(x @ w_gate.t(), x @ w_up.t())
    elif activation == "gelu_tanh":
        hidden = gelu_and_mul(x @ w_gate.t(), x @ w_up.t(), "tanh")
    else:
        raise ValueError(f"activation = {activation!r}: expected 'silu' or 'gelu_tanh'")
    return hidden @ w_down.t()
