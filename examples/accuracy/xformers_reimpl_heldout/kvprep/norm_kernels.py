"""RMSNorm over the last dimension in Triton, plain and with a fused
residual add that updates the residual in place, and their launchers. One
program per row, two passes over the row in tiles (sum of squares, then
scale). Argument checks beyond contiguity are the caller's (norm.py)."""

import torch
import triton
import triton.language as tl

# Math functions the kernels call: libdevice's where this triton exposes it
# under tl, else tl.math's.
_libm = tl.libdevice if hasattr(tl, "libdevice") else tl.math

# Row tiles: at most 64 KiB of one row per load, between these bounds.
_NORM_MAX_TILE = 4096
_NORM_MIN_TILE = 128


def _row_tile(n_cols, element_size):
    """The tile width and warp count for rows of n_cols elements."""
    tile = max(min(65536 // element_size, triton.next_power_of_2(n_cols)), _NORM_MIN_TILE)
    tile = min(tile, _NORM_MAX_TILE)
    return tile, min(max(tile // 256, 1), 8)


# portq: ports xformers:xformers/ops/_triton/rmsnorm_kernels.py::_rms_norm_kernel
@triton.jit
def _rms_row_kernel(src, dst, weight, eps, row_stride, n_cols,
                    TILE: tl.constexpr, HAS_WEIGHT: tl.constexpr):
    row = tl.program_id(0)
    src += row * row_stride
    dst += row * row_stride
    squares = tl.zeros([TILE], dtype=tl.float32)
    for start in range(0, n_cols, TILE):
        cols = start + tl.arange(0, TILE)
        x = tl.load(src + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        squares += x * x
    inv_rms = _libm.rsqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, TILE):
        cols = start + tl.arange(0, TILE)
        mask = cols < n_cols
        y = tl.load(src + cols, mask=mask, other=0.0).to(tl.float32) * inv_rms
        if HAS_WEIGHT:
            y = y * tl.load(weight + cols, mask=mask)
        tl.store(dst + cols, y, mask=mask)


# portq: ports xformers:xformers/ops/_triton/rmsnorm_kernels.py::_rms_norm_add_kernel
@triton.jit
def _rms_add_row_kernel(resid, delta, dst, weight, eps, row_stride, n_cols,
                        TILE: tl.constexpr, HAS_WEIGHT: tl.constexpr):
    row = tl.program_id(0)
    resid += row * row_stride
    delta += row * row_stride
    dst += row * row_stride
    squares = tl.zeros([TILE], dtype=tl.float32)
    for start in range(0, n_cols, TILE):
        cols = start + tl.arange(0, TILE)
        mask = cols < n_cols
        x = tl.load(resid + cols, mask=mask, other=0.0).to(tl.float32)
        x += tl.load(delta + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(resid + cols, x, mask=mask)
        squares += x * x
    inv_rms = _libm.rsqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, TILE):
        cols = start + tl.arange(0, TILE)
        mask = cols < n_cols
        y = tl.load(resid + cols, mask=mask, other=0.0).to(tl.float32) * inv_rms
        if HAS_WEIGHT:
            y = y * tl.load(weight + cols, mask=mask)
        tl.store(dst + cols, y, mask=mask)


# portq: ports xformers:xformers/ops/_triton/rmsnorm_kernels.py::_rms_norm_forward
def _launch_rms(x, weight, eps):
    if not x.is_contiguous():
        raise ValueError("x must be contiguous")
    if weight is not None and not weight.is_contiguous():
        raise ValueError("weight must be contiguous")
    out = torch.empty_like(x)
    rows = x.reshape(-1, x.shape[-1])
    n_rows, n_cols = rows.shape
    tile, warps = _row_tile(n_cols, x.element_size())
    _rms_row_kernel[(n_rows,)](rows, out, weight, eps, rows.stride(0), n_cols,
                               TILE=tile, HAS_WEIGHT=weight is not None, num_warps=warps)
    return out


# portq: ports xformers:xformers/ops/_triton/rmsnorm_kernels.py::_rms_norm_add_forward
def _launch_rms_add(resid, delta, weight, eps):
    if not resid.is_contiguous() or not delta.is_contiguous():
        raise ValueError("resid and delta must be contiguous")
    if weight is not None and not weight.is_contiguous():
        raise ValueError("weight must be contiguous")
    out = torch.empty_like(resid)
    rows = resid.reshape(-1, resid.shape[-1])
    delta_rows = delta.reshape(-1, resid.shape[-1])
    n_rows, n_cols = rows.shape
    tile, warps = _row_tile(n_cols, resid.element_size())
    _rms_add_row_kernel[(n_rows,)](rows, delta_rows, out, weight, eps, rows.stride(0), n_cols,
                                   TILE=tile, HAS_WEIGHT=weight is not None, num_warps=warps)
    return out
