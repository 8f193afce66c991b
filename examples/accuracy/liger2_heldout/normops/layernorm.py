"""LayerNorm over the last dimension, forward and backward, one program per
row: statistics in fp32, the affine step fused, weight and bias gradients
accumulated across rows with atomics.

It normalises rows; it does not own parameters or pick model shapes.
"""

import torch
import triton
import triton.language as tl

from .tiles import row_tile


# portq: ports liger:src/liger_kernel/ops/layer_norm.py::_layer_norm_forward_kernel
@triton.jit
def _ln_rows_fwd(
    out_ptr, out_stride,
    in_ptr, in_stride,
    scale_ptr, scale_stride,
    shift_ptr, shift_stride,
    mean_ptr, mean_stride,
    rstd_ptr, rstd_stride,
    width,
    eps,
    TILE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, TILE)
    live = cols < width

    scale = tl.load(scale_ptr + cols, mask=live, other=0.0).to(tl.float32)
    shift = tl.load(shift_ptr + cols, mask=live, other=0.0).to(tl.float32)
    raw = tl.load(in_ptr + row * in_stride + cols, mask=live, other=0.0)
    x = raw.to(tl.float32)

    mean = tl.sum(x, axis=0) / width
    centred = tl.where(live, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / width
    rstd = 1.0 / tl.sqrt(var + eps)

    tl.store(mean_ptr + row * mean_stride, mean.to(raw.dtype))
    tl.store(rstd_ptr + row * rstd_stride, rstd.to(raw.dtype))
    y = centred * rstd * scale + shift
    tl.store(out_ptr + row * out_stride + cols, y.to(raw.dtype), mask=live)


# portq: ports liger:src/liger_kernel/ops/layer_norm.py::_layer_norm_backward_kernel
@triton.jit
def _ln_rows_bwd(
    in_ptr, scale_ptr, mean_ptr, rstd_ptr,
    din_ptr, dscale_ptr, dshift_ptr, dout_ptr,
    in_stride, din_stride, dout_stride,
    width,
    TILE: tl.constexpr,
    OUT_DTYPE: tl.constexpr,
    ACC_DTYPE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, TILE)
    live = cols < width

    scale = tl.load(scale_ptr + cols, mask=live, other=0.0).to(tl.float32)
    x = tl.load(in_ptr + row * in_stride + cols, mask=live, other=0.0).to(tl.float32)
    dy = tl.load(dout_ptr + row * dout_stride + cols, mask=live, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row).to(tl.float32)
    rstd = tl.load(rstd_ptr + row).to(tl.float32)

    xhat = (x - mean) * rstd
    g = scale * dy
    proj = tl.sum(xhat * g, axis=0) / width
    avg = tl.sum(g, axis=0) / width
    dx = (g - (xhat * proj + avg)) * rstd
    tl.store(din_ptr + row * din_stride + cols, dx.to(OUT_DTYPE), mask=live)

    tl.atomic_add(dscale_ptr + cols, (dy * xhat).to(ACC_DTYPE), mask=live)
    tl.atomic_add(dshift_ptr + cols, dy.to(ACC_DTYPE), mask=live)


_TL_DTYPE = {torch.float32: tl.float32, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}


# portq: ports liger:src/liger_kernel/ops/layer_norm.py::layer_norm_forward
def ln_forward(x, weight, bias, eps):
    """(y, rows, mean, rstd, tile, warps): y has x's shape, rows is x as (rows, width)."""
    shape = x.shape
    rows = x.view(-1, shape[-1])
    n_rows, width = rows.shape
    if width != weight.shape[0]:
        raise ValueError(f"input width {width} does not match weight size {weight.shape[0]}")
    tile, warps = row_tile(width)
    y = torch.empty_like(rows)
    mean = torch.empty(n_rows, dtype=rows.dtype, device=rows.device)
    rstd = torch.empty(n_rows, dtype=rows.dtype, device=rows.device)
    _ln_rows_fwd[(n_rows,)](
        y, y.stride(0), rows, rows.stride(0),
        weight, weight.stride(0), bias, bias.stride(0),
        mean, mean.stride(0), rstd, rstd.stride(0),
        width, eps,
        TILE=tile, num_warps=warps,
    )
    return y.view(*shape), rows, mean, rstd, tile, warps


# portq: ports liger:src/liger_kernel/ops/layer_norm.py::layer_norm_backward
# portq: not-carried liger:src/liger_kernel/ops/layer_norm.py::layer_norm_backward[B] -- unused upstream: the shift gradient needs only the output gradient
def ln_backward(dy, x, weight, mean, rstd):
    """(dx, dweight, dbias) of LayerNorm for the output gradient ``dy``."""
    shape = dy.shape
    dy = dy.view(-1, shape[-1])
    n_rows, width = dy.shape
    tile, warps = row_tile(width)
    acc = torch.float32 if weight.dtype == torch.bfloat16 else weight.dtype
    dx = torch.empty((n_rows, width), dtype=x.dtype, device=x.device)
    dweight = torch.zeros(width, dtype=acc, device=weight.device)
    dbias = torch.zeros(width, dtype=acc, device=weight.device)
    out_dtype = _TL_DTYPE.get(x.dtype, tl.float32)
    _ln_rows_bwd[(n_rows,)](
        x, weight, mean, rstd, dx, dweight, dbias, dy,
        x.stride(0), dx.stride(0), dy.stride(0),
        width,
        TILE=tile, OUT_DTYPE=out_dtype, ACC_DTYPE=_TL_DTYPE[acc], num_warps=warps,
    )
    return dx.view(*shape), dweight.to(weight.dtype), dbias.to(weight.dtype)


# portq: ports liger:src/liger_kernel/ops/layer_norm.py::LigerLayerNormFunction
class LayerNormOp(torch.autograd.Function):
    """Autograd LayerNorm: apply(x, weight, bias, eps)."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        y, rows, mean, rstd, _, _ = ln_forward(x.contiguous(), weight.contiguous(), bias.contiguous(), eps)
        ctx.save_for_backward(rows, weight, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        rows, weight, mean, rstd = ctx.saved_tensors
        dx, dweight, dbias = ln_backward(dy.contiguous(), rows, weight, mean, rstd)
        return dx, dweight, dbias, None
