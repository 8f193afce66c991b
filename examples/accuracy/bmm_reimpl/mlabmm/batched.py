"""out[b] = x[b] @ w[b]^T (+ bias[b]) for a batch of bf16/fp16 matrices.

A re-implementation, not a copy: one program per (row tile, column tile,
batch) on a 3-D grid, no program-id swizzle and no split-K, our own names.
Semantics follow upstream at the pinned commit: x is (B, M, K), w is
(B, N, K) and is read transposed, bias is (B, 1, N), fp32 accumulation.
"""

from typing import Optional

import torch
import triton
import triton.language as tl


# portq: ports aiter:aiter/ops/triton/_triton_kernels/gemm/batched/batched_gemm_bf16.py::_batched_gemm_bf16_kernel @e2ff4b3c88
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gemm/batched/batched_gemm_bf16.py::_batched_gemm_bf16_kernel[NUM_KSPLIT] -- no split-K: the MLA absorption shapes have short K
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gemm/batched/batched_gemm_bf16.py::_batched_gemm_bf16_kernel[SPLITK_BLOCK_SIZE] -- no split-K
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gemm/batched/batched_gemm_bf16.py::_batched_gemm_bf16_kernel[GROUP_SIZE_M] -- tiles walk row-major; no grouped ordering
@triton.heuristics({"EVEN_DEPTH": lambda args: args["depth"] % args["TILE_D"] == 0})
@triton.jit
def _bmm_bf16_tiles(
    x,
    w,
    out,
    bias,
    rows,
    cols,
    depth,
    x_batch_stride,
    x_row_stride,
    x_depth_stride,
    w_batch_stride,
    w_depth_stride,
    w_col_stride,
    out_batch_stride,
    out_row_stride,
    out_col_stride,
    bias_batch_stride,
    WITH_BIAS: tl.constexpr,
    TILE_R: tl.constexpr,
    TILE_C: tl.constexpr,
    TILE_D: tl.constexpr,
    EVEN_DEPTH: tl.constexpr,
    load_hint: tl.constexpr,
):
    tile_r = tl.program_id(0)
    tile_c = tl.program_id(1)
    # The batch offset is the only product that can pass 2^31 for the shapes
    # this is used with; widen it before multiplying.
    batch = tl.program_id(2).to(tl.int64)

    r = tile_r * TILE_R + tl.arange(0, TILE_R)
    c = tile_c * TILE_C + tl.arange(0, TILE_C)
    d = tl.arange(0, TILE_D)
    r_safe = tl.where(r < rows, r, 0)
    c_safe = tl.where(c < cols, c, 0)

    x_tile = x + batch * x_batch_stride + r_safe[:, None] * x_row_stride + d[None, :] * x_depth_stride
    w_tile = w + batch * w_batch_stride + d[:, None] * w_depth_stride + c_safe[None, :] * w_col_stride

    acc = tl.zeros((TILE_R, TILE_C), dtype=tl.float32)
    for start in range(0, depth, TILE_D):
        if EVEN_DEPTH:
            xa = tl.load(x_tile)
            wb = tl.load(w_tile, cache_modifier=load_hint)
        else:
            inside = start + d < depth
            xa = tl.load(x_tile, mask=inside[None, :], other=0.0)
            wb = tl.load(w_tile, mask=inside[:, None], other=0.0, cache_modifier=load_hint)
        acc = tl.dot(xa, wb, acc=acc)
        x_tile += TILE_D * x_depth_stride
        w_tile += TILE_D * w_depth_stride

    if WITH_BIAS:
        acc += tl.load(bias + batch * bias_batch_stride + c_safe).to(tl.float32)[None, :]

    target = out + batch * out_batch_stride + r[:, None] * out_row_stride + c[None, :] * out_col_stride
    tl.store(target, acc.to(out.type.element_ty), mask=(r[:, None] < rows) & (c[None, :] < cols))


# portq: ports aiter:aiter/ops/triton/gemm/batched/batched_gemm_bf16.py::batched_gemm_bf16 @e2ff4b3c88
# portq: not-carried aiter:aiter/ops/triton/gemm/batched/batched_gemm_bf16.py::batched_gemm_bf16[splitK] -- upstream rejects it too
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gemm/batched/batched_gemm_bf16.py::_get_config -- tuned per-architecture JSON tables; one tile shape here
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/common/splitk_reduce.py::_batched_gemm_splitk_reduce_kernel -- no split-K
def bmm_bf16(
    x: torch.Tensor,
    w: torch.Tensor,
    bias: Optional[torch.Tensor] = None,
    out_dtype: torch.dtype = torch.bfloat16,
    out: Optional[torch.Tensor] = None,
    config: Optional[dict] = None,
) -> torch.Tensor:
    """x (B, M, K) times w (B, N, K) transposed, plus bias (B, 1, N)."""
    if x.dim() != 3 or w.dim() != 3 or x.shape[0] != w.shape[0] or x.shape[2] != w.shape[2]:
        raise ValueError(f"x is {tuple(x.shape)} and w is {tuple(w.shape)}: expected (B, M, K) and (B, N, K)")
    if out_dtype not in (torch.bfloat16, torch.float16):
        raise ValueError(f"out_dtype is {out_dtype}: expected torch.bfloat16 or torch.float16")
    batch, rows, depth = x.shape
    cols = w.shape[1]
    wt = w.transpose(1, 2)
    if out is None:
        out = torch.empty((batch, rows, cols), dtype=out_dtype, device=x.device)
    tiles = dict(TILE_R=64, TILE_C=64, TILE_D=64, load_hint=None, num_warps=4, num_stages=2)
    tiles.update(config or {})
    launch = (triton.cdiv(rows, tiles["TILE_R"]), triton.cdiv(cols, tiles["TILE_C"]), batch)
    _bmm_bf16_tiles[launch](
        x, wt, out, bias,
        rows, cols, depth,
        x.stride(0), x.stride(1), x.stride(2),
        wt.stride(0), wt.stride(1), wt.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        bias.stride(0) if bias is not None else 0,
        WITH_BIAS=bias is not None,
        **tiles,
    )
    return out
