"""RMSNorm over the last dimensions of a tensor, and the same norm applied
after adding a residual stream: one program per row, statistics in fp32.

Forward only; it neither allocates caches nor knows about models.
"""

import math

import torch
import triton
import triton.language as tl

from .launch import row_tile


# portq: ports flaggems:src/flag_gems/ops/rms_norm.py::rms_norm_kernel
@triton.jit(do_not_specialize=["eps"])
def _rms_rows_kernel(out, inp, scale, out_row_stride, inp_row_stride, width, eps, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    keep = cols < width
    x = tl.load(inp + row * inp_row_stride + cols, mask=keep, other=0.0).to(tl.float32)
    inv_rms = 1 / tl.sqrt(tl.sum(x * x, axis=0) / width + eps)
    w = tl.load(scale + cols, mask=keep, other=0.0)
    y = (x * inv_rms).to(out.dtype.element_ty) * w
    tl.store(out + row * out_row_stride + cols, y, mask=keep)


def _rows_and_width(x: torch.Tensor, normalized_shape) -> tuple[int, int]:
    lead = x.ndim - len(normalized_shape)
    return math.prod(x.shape[:lead]), math.prod(normalized_shape)


class RMSNormFn(torch.autograd.Function):
    """RMSNorm as an autograd Function, for callers that go through ``.apply``."""

    # portq: ports flaggems:src/flag_gems/ops/rms_norm.py::RmsNorm.forward
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, eps=1e-5):
        rows, width = _rows_and_width(x, normalized_shape)
        x = x.contiguous()
        weight = weight.contiguous()
        out = torch.empty_like(x)
        _rms_rows_kernel[(rows,)](out, x, weight, width, width, width, eps, TILE=row_tile(width))
        return out


# portq: ports flaggems:src/flag_gems/ops/rms_norm.py::rms_norm
def rms_norm(x, normalized_shape, weight, eps=1e-5):
    """x normalised by its root mean square over ``normalized_shape``, times ``weight``."""
    return RMSNormFn.apply(x, normalized_shape, weight, eps)


# portq: ports flaggems:src/flag_gems/fused/skip_rms_norm.py::skip_rms_norm_kernel
@triton.jit(do_not_specialize=["eps"])
def _add_rms_rows_kernel(out, inp, residual, scale, row_stride, width, eps, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    keep = cols < width
    x = tl.load(inp + row * row_stride + cols, mask=keep, other=0.0).to(tl.float32)
    x += tl.load(residual + row * row_stride + cols, mask=keep, other=0.0).to(tl.float32)
    inv_rms = 1 / tl.sqrt(tl.sum(x * x / width, axis=0) + eps)
    w = tl.load(scale + cols, mask=keep, other=0.0)
    y = (x * inv_rms).to(out.dtype.element_ty) * w
    tl.store(out + row * row_stride + cols, y, mask=keep)


# portq: ports flaggems:src/flag_gems/fused/skip_rms_norm.py::skip_rms_norm
# portq: not-carried flaggems:src/flag_gems/fused/skip_rms_norm.py::SkipRmsNorm -- forward only: the fused norm is launched directly, not through an autograd Function
def add_rms_norm(x, residual, normalized_shape, weight, eps=1e-5):
    """RMSNorm of ``x + residual``; neither input is written."""
    rows, width = _rows_and_width(x, normalized_shape)
    x = x.contiguous()
    residual = residual.contiguous()
    weight = weight.contiguous()
    out = torch.empty_like(x)
    _add_rms_rows_kernel[(rows,)](out, x, residual, weight, width, width, eps, TILE=row_tile(width))
    return out
