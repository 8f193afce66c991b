"""RMSNorm over the last dimension, forward only: the engine normalises at
inference and never differentiates through the norm.

It normalises with a plain scale (Llama's form); Gemma's ``1 + w`` scale and
the backward pass are not carried.
"""

import torch
import triton
import triton.language as tl

from .settings import row_block_and_warps


# portq: ports unsloth:unsloth/kernels/rms_layernorm.py::_rms_layernorm_forward
# portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::_gemma_rms_layernorm_forward -- no Gemma models: the scale is never 1 + w
# portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::_rms_layernorm_backward -- inference only, no backward
@triton.jit
def _rms_rows_fwd(out_ptr, out_stride, x_ptr, x_stride, w_ptr, inv_rms_ptr, width, eps, TILE: tl.constexpr):
    """One program per row: out = (x * rsqrt(mean(x^2) + eps)) in w's dtype, times w; 1/rms kept in fp32."""
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    inside = cols < width
    x = tl.load(x_ptr + row * x_stride + cols, mask=inside, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=inside, other=0)
    inv_rms = tl.math.rsqrt(tl.sum(x * x, axis=0) / width + eps)
    tl.store(inv_rms_ptr + row, inv_rms)
    scaled = (x * inv_rms).to(w.dtype) * w
    tl.store(out_ptr + row * out_stride + cols, scaled, mask=inside)


class RMSNormFn(torch.autograd.Function):
    """RMSNorm of (..., width) by a (width,) scale; no backward."""

    # portq: ports unsloth:unsloth/kernels/rms_layernorm.py::Fast_RMS_Layernorm.forward
    # portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::Fast_RMS_Layernorm.forward[gemma] -- no Gemma models
    # portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::Fast_RMS_Layernorm.backward -- inference only, no backward
    @staticmethod
    def forward(ctx, x, weight, eps):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        rows, width = x.shape
        tile, warps = row_block_and_warps(width)
        out = torch.empty((rows, width), dtype=x.dtype, device=x.device)
        inv_rms = torch.empty(rows, dtype=torch.float32, device=x.device)
        _rms_rows_fwd[(rows,)](out, out.stride(0), x, x.stride(0), weight, inv_rms, width, eps,
                               TILE=tile, num_warps=warps)
        ctx.eps = eps
        return out.view(*shape)


# portq: ports unsloth:unsloth/kernels/rms_layernorm.py::fast_rms_layernorm
# portq: not-carried unsloth:unsloth/kernels/rms_layernorm.py::fast_rms_layernorm[gemma] -- no Gemma models
def rms_norm(norm, x):
    """Normalise ``x`` with the ``weight`` and epsilon (``variance_epsilon`` or ``eps``) that ``norm`` holds."""
    eps = norm.variance_epsilon if hasattr(norm, "variance_epsilon") else norm.eps
    return RMSNormFn.apply(x, norm.weight, eps)
