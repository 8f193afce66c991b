"""RMS normalisation, forward only: a Triton kernel over a tile of rows, its
host launch and a torch reference. Must not save anything for a backward."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from .blocks import norm_tiles


# portq: ports cutekernels:khd/kernels/rmsnorm/triton_implementation.py::rmsnorm_forward_triton_kernel
# portq: not-carried cutekernels:khd/kernels/rmsnorm/triton_implementation.py::rmsnorm_forward_triton_kernel[has_weight] -- the engine's norms always carry a weight
@triton.jit
def rms_norm_rows_kernel(
    src,
    src_row_stride,
    src_col_stride,
    gamma,
    dst,
    dst_row_stride,
    dst_col_stride,
    eps,
    n_rows,
    width,
    ROWS: tl.constexpr,
    COLS: tl.constexpr,
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    steps = tl.cdiv(width, COLS)

    sum_sq = tl.zeros((ROWS, 1), dtype=tl.float32)
    for step in range(0, steps):
        cols = step * COLS + tl.arange(0, COLS)
        ok = row_ok[:, None] & (cols < width)[None, :]
        v = tl.load(src + rows[:, None] * src_row_stride + cols[None, :] * src_col_stride, mask=ok).to(tl.float32)
        sum_sq += tl.sum(v * v, axis=1, keep_dims=True)
    inv_rms = tl.rsqrt(sum_sq / width + eps)

    for step in range(0, steps):
        cols = step * COLS + tl.arange(0, COLS)
        col_ok = cols < width
        ok = row_ok[:, None] & col_ok[None, :]
        v = tl.load(src + rows[:, None] * src_row_stride + cols[None, :] * src_col_stride, mask=ok).to(tl.float32)
        g = tl.load(gamma + cols, mask=col_ok)
        out = v * inv_rms * g[None, :]
        tl.store(dst + rows[:, None] * dst_row_stride + cols[None, :] * dst_col_stride, out, mask=ok)


class RMSNormOp:
    """Host side of the forward: flattens to rows, launches, restores the shape."""

    # portq: ports cutekernels:khd/kernels/rmsnorm/__init__.py::_RMSNorm_KHD.forward
    @staticmethod
    def forward(x: torch.Tensor, weight: torch.Tensor, eps: float, rows_per_program: int, cols_per_step: int) -> torch.Tensor:
        if x.stride(-1) != 1:
            x = x.contiguous()
        assert x.dim() > 1, "x needs at least two dimensions"
        assert weight.dim() == 1 and weight.size(0) == x.size(-1), "weight must be 1-D over the last dimension"
        weight = weight.contiguous()

        shape = x.shape
        width = x.size(-1)
        rows = x.reshape(-1, width)
        n_rows = rows.size(0)
        out = torch.empty_like(rows)

        grid = (triton.cdiv(n_rows, rows_per_program),)
        rms_norm_rows_kernel[grid](
            rows, rows.stride(0), rows.stride(1),
            weight,
            out, out.stride(0), out.stride(1),
            eps, n_rows, width,
            ROWS=rows_per_program, COLS=cols_per_step,
        )
        return out.view(shape)


# portq: ports cutekernels:khd/kernels/rmsnorm/__init__.py::rmsnorm_khd
# portq: not-carried cutekernels:khd/kernels/rmsnorm/__init__.py::rmsnorm_khd[kernel_backend] -- Triton only, no backend switch
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    rows_per_program, cols_per_step = norm_tiles(x.size(-1))
    return RMSNormOp.forward(x, weight, eps, rows_per_program, cols_per_step)


# portq: ports cutekernels:khd/kernels/rmsnorm/torch_implementation.py::rmsnorm_torch
def rms_norm_reference(x: torch.Tensor, weight: torch.Tensor | None, eps: float) -> torch.Tensor:
    return F.rms_norm(x, (x.size(-1),), weight=weight, eps=eps)
