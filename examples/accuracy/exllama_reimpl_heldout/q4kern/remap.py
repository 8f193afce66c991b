"""Column remap of a half activation: x_new[:, j] = x[:, x_map[j]], so that
x_new @ w_seq == x @ w once w's rows are sequentialised."""

import triton
import triton.language as tl


# portq: ports exllama:exllama_ext/cuda_func/column_remap.cu::column_remap_kernel @3dc7cd9
@triton.jit
def _remap_kernel(x_ptr, out_ptr, map_ptr, height, width, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(1) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < width
    src = tl.load(map_ptr + cols, mask=col_ok, other=0)
    keep = (rows[:, None] < height) & col_ok[None, :]
    base = rows[:, None].to(tl.int64) * width
    v = tl.load(x_ptr + base + src[None, :], mask=keep, other=0.0)
    tl.store(out_ptr + base + cols[None, :], v, mask=keep)


# portq: ports exllama:exllama_ext/cuda_func/column_remap.cu::column_remap_cuda @3dc7cd9
def column_remap(x, x_new, x_map):
    height, width = x.shape
    grid = (triton.cdiv(width, 64), triton.cdiv(height, 16))
    _remap_kernel[grid](x, x_new, x_map, height, width, BLOCK_R=16, BLOCK_C=64)
    return x_new
