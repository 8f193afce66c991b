"""RMSNorm over the last dimension of a 2-D tensor.

A persistent grid of at most one program per compute unit walks the rows; a
row wider than one tile is reduced tile by tile, so the tile stays bounded by
64 KiB of input whatever the hidden size.
"""

import os

import torch
import triton
import triton.language as tl


# portq: ports aiter:aiter/ops/triton/rmsnorm.py::_rms_norm_kernel @aafda3c471
@triton.jit
def _rmsnorm_rows_kernel(
    x_ptr,
    y_ptr,
    w_ptr,
    x_stride_row,
    y_stride_row,
    rows,
    cols,
    eps,
    TILE: tl.constexpr,
    TILED: tl.constexpr,
    PROGRAMS: tl.constexpr,
):
    first = tl.program_id(0)
    lanes = tl.arange(0, TILE)
    for r in range(first, rows, PROGRAMS):
        x_row = x_ptr + r * x_stride_row
        y_row = y_ptr + r * y_stride_row
        if TILED:
            acc = tl.zeros((TILE,), dtype=tl.float32)
            for start in range(0, cols, TILE):
                idx = start + lanes
                keep = idx < cols
                v = tl.load(x_row + idx, mask=keep, other=0.0).to(tl.float32)
                acc += v * v
            inv = tl.rsqrt(tl.sum(acc, axis=0) / cols + eps)
            for start in range(0, cols, TILE):
                idx = start + lanes
                keep = idx < cols
                v = tl.load(x_row + idx, mask=keep, other=0.0).to(tl.float32)
                g = tl.load(w_ptr + idx, mask=keep, other=0.0).to(tl.float32)
                tl.store(y_row + idx, (v * inv * g).to(y_ptr.dtype.element_ty), mask=keep)
        else:
            keep = lanes < cols
            v = tl.load(x_row + lanes, mask=keep, other=0.0).to(tl.float32)
            inv = tl.rsqrt(tl.sum(v * v, axis=0) / cols + eps)
            g = tl.load(w_ptr + lanes, mask=keep, other=0.0).to(tl.float32)
            tl.store(y_row + lanes, (v * inv * g).to(y_ptr.dtype.element_ty), mask=keep)


# portq: ports aiter:aiter/ops/triton/rmsnorm.py::get_num_sms @aafda3c471
def _compute_units(device: torch.device) -> int:
    """How many programs the persistent grid may hold (CPU cores when interpreted)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return os.cpu_count() or 1


# portq: ports aiter:aiter/ops/triton/rmsnorm.py::rms_norm @aafda3c471
# portq: not-carried aiter:aiter/ops/triton/rmsnorm.py::_fused_add_rmsnorm_kernel -- the residual add is done by the caller
# portq: not-carried aiter:aiter/ops/triton/rmsnorm.py::rmsnorm2d_fwd_with_add -- the residual add is done by the caller
def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """y = x / sqrt(mean(x**2, -1) + eps) * weight, for x of shape (rows, cols)."""
    rows, cols = x.shape
    y = torch.zeros_like(x)
    tile = min(65536 // x.element_size(), triton.next_power_of_2(cols))
    programs = min(rows, _compute_units(x.device))
    _rmsnorm_rows_kernel[(programs,)](
        x,
        y,
        weight,
        x.stride(0),
        y.stride(0),
        rows,
        cols,
        eps,
        TILE=tile,
        TILED=cols > tile,
        PROGRAMS=programs,
    )
    return y
