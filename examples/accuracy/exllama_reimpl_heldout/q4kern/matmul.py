"""The 4-bit GPTQ matmul, out = x @ dequant(w): per-group half scales and
packed zeros (stored zero plus one), the group of each weight row from
row // groupsize or, for act-order weights, from the sequentialised group
index (the activation's columns remapped first by the caller). One program
per (row tile, column tile), fp32 accumulation over the whole depth where
upstream splits the depth into 512-wide slices added atomically in half."""

import torch
import triton
import triton.language as tl

from .packing import column_code, row_code
from .recons import group_of_rows


# portq: ports exllama:exllama_ext/cuda_func/q4v2_matmul.cu::q4v2_matmul_kernel @3dc7cd9
# portq: ports exllama:exllama_ext/matrix.h::dot_product_8 @3dc7cd9
# portq: not-carried exllama:exllama_ext/matrix.h::dot_product_8_dual -- only the fused MLP, which is not carried, uses it
# portq: not-carried exllama:exllama_ext/matrix.h::dot_product_8_dual_buffered -- only the fused MLP, which is not carried, uses it
@triton.jit
def _q4_matmul_kernel(x_ptr, w_ptr, out_ptr, scales_ptr, zeros_ptr, group_of_row_ptr,
                      height, dim, width,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < height
    col_ok = cols < width
    c = tl.where(col_ok, cols, 0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, dim, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < dim
        k = tl.where(k_ok, ks, 0)
        xv = tl.load(x_ptr + rows[:, None].to(tl.int64) * dim + k[None, :],
                     mask=row_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)
        group = tl.load(group_of_row_ptr + k)
        code = column_code(w_ptr, k[:, None], c[None, :], width)
        zero = row_code(zeros_ptr, group[:, None], c[None, :], width) + 1
        scale = tl.load(scales_ptr + group[:, None].to(tl.int64) * width + c[None, :]).to(tl.float32)
        wv = ((code - zero).to(tl.float32) * scale).to(tl.float16).to(tl.float32)
        wv = tl.where(k_ok[:, None], wv, 0.0)
        acc += tl.dot(xv, wv, allow_tf32=False)
    tl.store(out_ptr + rows[:, None].to(tl.int64) * width + cols[None, :], acc.to(tl.float16),
             mask=row_ok[:, None] & col_ok[None, :])


# portq: ports exllama:exllama_ext/cuda_func/q4v2_matmul.cu::q4v2_matmul_cuda @3dc7cd9
def q4_matmul(x, w, out, scales, zeros, groupsize, seq_g_idx=None):
    """x (height, dim) half, w (dim/8, width) int32 -> out (height, width) half.
    x is already remapped when the weight is act-order."""
    height, dim = x.shape
    width = w.shape[1]
    groups = group_of_rows(dim, groupsize, seq_g_idx, w.device)
    grid = (triton.cdiv(height, 16), triton.cdiv(width, 32))
    _q4_matmul_kernel[grid](x, w, out, scales, zeros, groups, height, dim, width,
                            BLOCK_M=16, BLOCK_N=32, BLOCK_K=32)
    return out
