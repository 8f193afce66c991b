"""RMSNorm over the last dimension, forward only: this tree normalises in
inference and never differentiates through the norm.

It normalises; it does not fuse a residual add or cast for the caller.
"""

import torch
import triton
import triton.language as tl

from .launch import contiguous_args, row_launch


# portq: ports liger:src/liger_kernel/ops/rms_norm.py::_rms_norm_forward
# portq: not-carried liger:src/liger_kernel/ops/rms_norm.py::_rms_norm_backward -- inference only, no backward
@triton.jit
def _rms_rows_kernel(out_ptr, out_stride, x_ptr, x_stride, w_ptr, w_stride, inv_rms_ptr, inv_rms_stride,
                     width, eps, TILE: tl.constexpr):
    """One program per row: out = x * rsqrt(mean(x^2) + eps) * w; 1/rms kept per row."""
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    inside = cols < width
    x = tl.load(x_ptr + row * x_stride + cols, mask=inside, other=0)
    w = tl.load(w_ptr + cols, mask=inside, other=0)
    inv_rms = tl.math.rsqrt(tl.sum(x * x, axis=0) / width + eps)
    tl.store(inv_rms_ptr + row * inv_rms_stride, inv_rms)
    tl.store(out_ptr + row * out_stride + cols, x * inv_rms * w, mask=inside)


class RMSNormOp(torch.autograd.Function):
    """RMSNorm of (..., width) by a (width,) scale; no backward."""

    # portq: ports liger:src/liger_kernel/ops/rms_norm.py::LigerRMSNormFunction.forward
    # portq: not-carried liger:src/liger_kernel/ops/rms_norm.py::LigerRMSNormFunction.backward -- inference only, no backward
    @staticmethod
    @contiguous_args
    def forward(ctx, x, weight, eps):
        shape = x.shape
        x = x.view(-1, shape[-1])
        rows, width = x.shape
        if weight.shape[0] != width:
            raise ValueError(f"scale of {weight.shape[0]} for rows of {width}")
        tile, warps = row_launch(width)
        out = torch.empty_like(x)
        inv_rms = torch.empty(rows, dtype=x.dtype, device=x.device)
        _rms_rows_kernel[(rows,)](out, out.stride(0), x, x.stride(0), weight, weight.stride(0),
                                  inv_rms, inv_rms.stride(0), width, eps, TILE=tile, num_warps=warps)
        return out.view(*shape)


def rms_norm(x, weight, eps=1e-6):
    """Functional form: the norm without autograd bookkeeping (inference)."""
    with torch.no_grad():
        return RMSNormOp.apply(x, weight, eps)
