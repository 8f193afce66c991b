"""RMSNorm over the last dimension of packed tokens, one program per token.

Holds the kernel and its launcher only; the weight is the caller's.
"""

import torch
import triton
import triton.language as tl

# A row wider than this many bytes is refused rather than tiled across programs.
ROW_BYTES_LIMIT = 65536
# Columns one program reduces per step of its loop.
NORM_COLUMN_TILE = 1024


# portq: ports lightllm:lightllm/models/llama/triton_kernel/rmsnorm.py::_rms_norm_fwd_fused
@triton.jit
def rms_norm_rows_kernel(src, dst, scale, row_stride, width, eps, TILE: tl.constexpr):
    row = tl.program_id(0)
    src += row * row_stride
    dst += row * row_stride
    sum_sq = tl.zeros([TILE], dtype=tl.float32)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        v = tl.load(src + cols, mask=cols < width, other=0.0).to(tl.float32)
        sum_sq += v * v
    inv_rms = 1.0 / tl.sqrt(tl.sum(sum_sq, axis=0) / width + eps)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        inside = cols < width
        g = tl.load(scale + cols, mask=inside).to(tl.float32)
        v = tl.load(src + cols, mask=inside, other=0.0).to(tl.float32)
        tl.store(dst + cols, (v * inv_rms * g).to(dst.dtype.element_ty), mask=inside)


# portq: ports lightllm:lightllm/models/llama/triton_kernel/rmsnorm.py::rmsnorm_forward
def rms_norm(hidden: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """hidden * rsqrt(mean(hidden**2) + eps) * weight, in hidden's dtype."""
    out = torch.empty_like(hidden)
    rows = hidden.view(-1, hidden.shape[-1])
    n_rows, width = rows.shape
    if width * hidden.element_size() > ROW_BYTES_LIMIT:
        raise ValueError(f"rms_norm: a row of {width} elements is wider than {ROW_BYTES_LIMIT} bytes")
    rms_norm_rows_kernel[(n_rows,)](rows, out, weight, rows.stride(0), width, eps,
                                    TILE=NORM_COLUMN_TILE, num_warps=8)
    return out
