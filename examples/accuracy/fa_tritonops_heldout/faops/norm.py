"""RMSNorm (and the LayerNorm the same kernel computes) over the last
dimension, with an optional residual added before the norm, forward only:
the engine normalises under inference and in frozen blocks, and never
differentiates through this op.

It normalises and, when asked, returns the pre-norm sum for the next block's
residual; it does no dropout, no row scaling and no second branch.
"""

import torch
import triton
import triton.language as tl

from ._launch import device_guard

# Bytes of one row a single program may hold; wider rows are refused, not tiled.
ROW_BYTES_LIMIT = 65536

# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_bwd_kernel -- forward only: the engine never differentiates through the norm
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_bwd -- forward only
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::LayerNormFn -- forward only: rms_norm calls the host function without autograd
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::layer_norm_fn -- the engine's blocks use RMSNorm only
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::RMSNorm -- the engine holds the weight and calls rms_norm
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::LayerNormLinearFn -- the engine does not fuse the norm into the next projection
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::layer_norm_linear_fn -- no fused norm and projection


def _warps_for_row(block_n: int) -> int:
    """Warps for one row of ``block_n`` elements (upstream autotunes over 1-32)."""
    return max(1, min(16, block_n // 256))


# portq: ports flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[X1] -- no second input branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[W1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[B1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[Y1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[ROWSCALE] -- no row scaling
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[SEEDS] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[DROPOUT_MASK] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[stride_x1_row] -- no second input branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[stride_y1_row] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[M] -- read only to index the second branch's seeds and row scales
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[dropout_p] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[HAS_DROPOUT] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[STORE_DROPOUT_MASK] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[HAS_ROWSCALE] -- no row scaling
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[HAS_X1] -- no second input branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[HAS_W1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd_1pass_kernel[HAS_B1] -- no second output branch
@triton.jit
def _norm_rows_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, res_ptr, res_out_ptr, mean_ptr, rstd_ptr,
    x_stride, y_stride, res_stride, res_out_stride,
    n_cols, eps,
    IS_RMS_NORM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    STORE_RESIDUAL_OUT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
):
    """One program per row: y = norm(x [+ residual]) * w [+ b]; mean (LayerNorm) and 1/std kept."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        x += tl.load(res_ptr + row * res_stride + cols, mask=inside, other=0.0).to(tl.float32)
    if STORE_RESIDUAL_OUT:
        tl.store(res_out_ptr + row * res_out_stride + cols, x, mask=inside)
    if IS_RMS_NORM:
        centred = tl.where(inside, x, 0.0)
    else:
        mean = tl.sum(x, axis=0) / n_cols
        tl.store(mean_ptr + row, mean)
        centred = tl.where(inside, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(centred * centred, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd)
    y = centred * rstd * tl.load(w_ptr + cols, mask=inside).to(tl.float32)
    if HAS_BIAS:
        y += tl.load(b_ptr + cols, mask=inside).to(tl.float32)
    tl.store(y_ptr + row * y_stride + cols, y, mask=inside)


# portq: ports flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd[x1] -- no second input branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd[weight1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd[bias1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd[dropout_p] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd[rowscale] -- no row scaling
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::_layer_norm_fwd[return_dropout_mask] -- no dropout
def norm_forward(x, weight, bias, eps, residual=None, out_dtype=None, residual_dtype=None, is_rms_norm=False):
    """(y, mean, rstd, residual_out) of (rows, n) ``x``; mean is None for RMSNorm, and
    residual_out is ``x`` itself when nothing was added or cast."""
    if residual is not None:
        residual_dtype = residual.dtype
    rows, n = x.shape
    if x.stride(-1) != 1:
        raise ValueError("x: expected unit stride along the normalised dimension")
    if weight.shape != (n,) or (bias is not None and bias.shape != (n,)):
        raise ValueError(f"weight/bias: expected ({n},)")
    if residual is not None and (residual.shape != (rows, n) or residual.stride(-1) != 1):
        raise ValueError(f"residual {tuple(residual.shape)}: expected ({rows}, {n}) with unit stride")
    y = torch.empty_like(x, dtype=x.dtype if out_dtype is None else out_dtype)
    if residual is not None or (residual_dtype is not None and residual_dtype != x.dtype):
        residual_out = torch.empty(rows, n, device=x.device, dtype=residual_dtype if residual_dtype is not None else x.dtype)
    else:
        residual_out = None
    mean = None if is_rms_norm else torch.empty((rows,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)
    block_n = triton.next_power_of_2(n)
    if block_n > ROW_BYTES_LIMIT // x.element_size():
        raise RuntimeError(f"rows of {n} {x.dtype} exceed {ROW_BYTES_LIMIT} bytes; this norm does not tile rows")
    with device_guard(x):
        _norm_rows_kernel[(rows,)](
            x, y, weight, bias, residual, residual_out, mean, rstd,
            x.stride(0), y.stride(0),
            residual.stride(0) if residual is not None else 0,
            residual_out.stride(0) if residual_out is not None else 0,
            n, eps,
            is_rms_norm, block_n, residual is not None, residual_out is not None, bias is not None,
            num_warps=_warps_for_row(block_n),
        )
    return y, mean, rstd, residual_out if residual_out is not None else x


# portq: ports flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn[x1] -- no second input branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn[weight1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn[bias1] -- no second output branch
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn[dropout_p] -- no dropout
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn[rowscale] -- no row scaling
# portq: not-carried flashattn:flash_attn/ops/triton/layer_norm.py::rms_norm_fn[return_dropout_mask] -- no dropout
@torch.no_grad()
def rms_norm(x, weight, bias, residual=None, eps=1e-6, prenorm=False, residual_in_fp32=False):
    """RMSNorm of (..., n) ``x`` (plus ``residual``); with ``prenorm`` also the sum
    x + residual the next block adds to, in fp32 when ``residual_in_fp32``."""
    shape = x.shape
    x = x.reshape(-1, shape[-1])
    if x.stride(-1) != 1:
        x = x.contiguous()
    if residual is not None:
        if residual.shape != shape:
            raise ValueError(f"residual {tuple(residual.shape)}: expected {tuple(shape)}")
        residual = residual.reshape(-1, shape[-1]).contiguous()
    residual_dtype = residual.dtype if residual is not None else (torch.float32 if residual_in_fp32 else None)
    y, _, _, residual_out = norm_forward(x, weight.contiguous(), None if bias is None else bias.contiguous(), eps,
                                         residual, residual_dtype=residual_dtype, is_rms_norm=True)
    y = y.reshape(shape)
    return (y, residual_out.reshape(shape)) if prenorm else y
