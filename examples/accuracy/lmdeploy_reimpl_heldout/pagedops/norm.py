"""RMSNorm over the last dimension, one program per row holding the whole row.

Holds the kernel, its launcher and a residual-add form of the engine's own;
the weight is the caller's.
"""

import torch
import triton
import triton.language as tl

# Warps one row's program runs with; a row is one tile of next_power_of_2(width).
NORM_WARPS = 4


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/rms_norm.py::rms_norm_kernel
@triton.jit
def rms_norm_row_kernel(src, scale, dst, row_stride, width, eps,
                        WIDTH: tl.constexpr, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    inside = cols < width
    g = tl.load(scale + cols, mask=inside)
    v = tl.load(src + row * row_stride + cols, mask=inside, other=0.0)
    v32 = v.to(tl.float32)
    mean_sq = tl.sum(v32 * v32, 0) * float(1.0 / WIDTH)
    normed = v32 / tl.sqrt(mean_sq + eps)
    tl.store(dst + row * row_stride + cols, (g * normed).to(v.dtype), mask=inside)


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/rms_norm.py::rms_norm
@torch.no_grad()
def rms_norm(hidden: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """weight * (hidden / sqrt(mean(hidden**2) + eps)), in hidden's dtype."""
    width = weight.shape[0]
    if hidden.shape[-1] != width:
        raise ValueError(f"rms_norm: hidden's last dimension {hidden.shape[-1]} is not the weight's {width}")
    rows = hidden.numel() // width
    out = torch.empty_like(hidden)
    rms_norm_row_kernel[(rows,)](hidden, weight, out, hidden.stride(-2), width, eps,
                                 WIDTH=width, TILE=triton.next_power_of_2(width),
                                 num_warps=NORM_WARPS, num_stages=2)
    return out


def add_rms_norm(hidden: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                 eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """(rms_norm(hidden + residual), hidden + residual): the pre-norm layer's step."""
    summed = hidden + residual
    return rms_norm(summed, weight, eps), summed
