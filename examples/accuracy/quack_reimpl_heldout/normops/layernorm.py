"""LayerNorm forward of the engine, on the row-norm kernel of normops.rms_norm
with the mean subtracted. Forward only; it must not hold kernels of its own."""

from typing import Optional

import torch

from .rms_norm import row_norm_


# portq: ports quack:quack/rmsnorm.py::layernorm_fwd
def layernorm_fwd(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
                  eps: float = 1e-6, return_rstd: bool = False, return_mean: bool = False):
    """LayerNorm of x (M, N) with an fp32 weight (and bias); optionally rstd and mean."""
    if x.dim() != 2 or weight.dim() != 1:
        raise ValueError(f"x: expected (M, N) and a 1-D weight, got {tuple(x.shape)} and {tuple(weight.shape)}")
    if weight.dtype != torch.float32 or (bias is not None and bias.dtype != torch.float32):
        raise TypeError("weight: expected float32 weight and bias")
    n_rows = x.shape[0]
    out = torch.empty_like(x)
    rstd = torch.empty(n_rows, device=x.device, dtype=torch.float32) if return_rstd else None
    mean = torch.empty(n_rows, device=x.device, dtype=torch.float32) if return_mean else None
    row_norm_(x, weight, out, bias, rstd, mean, None, None, eps, True)
    extras = tuple(t for t in (rstd, mean) if t is not None)
    return (out, *extras) if extras else out


# portq: ports quack:quack/rmsnorm.py::layernorm_ref
def layernorm_reference(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Plain torch LayerNorm in fp32, the kernel's yardstick."""
    return torch.nn.functional.layer_norm(x.float(), w.shape, w, None, eps).to(x.dtype)
