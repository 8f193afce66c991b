"""The engine's RMSNorm entry points: checks that no gradient is wanted,
then calls the launchers of norm_kernels. No kernels here."""

from typing import Optional

import torch
from torch import nn

from . import norm_kernels


# portq: ports xformers:xformers/ops/rmsnorm.py::rms_norm
def rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float = 1e-6):
    """x / sqrt(mean(x * x) + eps) over the last dimension, times weight if given."""
    if torch.is_grad_enabled() and (x.requires_grad or (weight is not None and weight.requires_grad)):
        raise ValueError("rms_norm is inference only: no gradients")
    return norm_kernels._launch_rms(x, weight, eps)


# portq: ports xformers:xformers/ops/rmsnorm.py::rms_norm_add
def rms_norm_residual(resid: torch.Tensor, delta: torch.Tensor,
                      weight: Optional[torch.Tensor], eps: float = 1e-6):
    """resid += delta in place, then rms_norm(resid, weight, eps)."""
    if torch.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (resid, delta, weight)):
        raise ValueError("rms_norm_residual is inference only: no gradients")
    return norm_kernels._launch_rms_add(resid, delta, weight, eps)


# portq: not-carried xformers:xformers/ops/rmsnorm.py::RMSNorm.increment_and_forward_ -- the engine calls rms_norm_residual itself
class RMSNorm(nn.Module):
    """RMSNorm over the last dimension, with an optional learned scale."""

    # portq: ports xformers:xformers/ops/rmsnorm.py::RMSNorm.__init__
    def __init__(self, dim: int, include_weight: bool = True, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim)) if include_weight else None

    # portq: ports xformers:xformers/ops/rmsnorm.py::RMSNorm.forward
    def forward(self, x: torch.Tensor):
        return rms_norm(x, self.weight, self.eps)
