"""The block's norms and gated MLP: the input RMSNorm, the residual-add norm
before the MLP, and the SiLU or tanh-GELU gate between its projections."""

import torch

from gemsops import norms
from gemsops.glu import SiluMulFn, silu_and_mul_packed
from gemsops.glu import gelu_and_mul as geglu


class Norm:
    """An RMSNorm with its learned scale."""

    def __init__(self, width: int, eps: float = 1e-6, device=None, dtype=torch.float32):
        self.weight = torch.ones(width, device=device, dtype=dtype)
        self.eps = eps

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return norms.rms_norm(hidden, (hidden.shape[-1],), self.weight, self.eps)

    def after_residual(self, hidden: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return norms.add_rms_norm(hidden, residual, (hidden.shape[-1],), self.weight, self.eps)


class GatedMLP:
    """down(act(gate(x)) * up(x)) with act SiLU or tanh-GELU; merged=True keeps
    gate and up as one projection whose output halves are gated in place."""

    def __init__(self, w_gate, w_up, w_down, activation: str = "silu", merged: bool = False):
        if activation not in ("silu", "gelu_tanh"):
            raise ValueError(f"activation = {activation!r}: expected 'silu' or 'gelu_tanh'")
        self.w_gate, self.w_up, self.w_down = w_gate, w_up, w_down
        self.activation, self.merged = activation, merged

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.merged and self.activation == "silu":
            hidden = silu_and_mul_packed(x @ torch.cat((self.w_gate, self.w_up), dim=0).t())
        elif self.activation == "silu":
            hidden = SiluMulFn.apply(x @ self.w_gate.t(), x @ self.w_up.t())
        else:
            hidden = geglu(x @ self.w_gate.t(), x @ self.w_up.t())
        return hidden @ self.w_down.t()
