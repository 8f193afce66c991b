"""y += x @ dequant(W) for one fp32 row x, W stored as 3-bit codes in a
little-endian bitstream of int32 words along the input axis (code k of a
column at bit 3k of its words; 1024 inputs in 96 words), dequantised per
output column as scale * q - zero (zero holds zero-point times scale) and
accumulated in fp32. One program per 1024-input slab and column tile; the
partial sums are added atomically into y, which the caller fills with the
bias."""

import torch
import triton
import triton.language as tl

SLAB = 1024  # inputs per program
SLAB_WORDS = 96  # int32 words per slab: 1024 * 3 / 32


# portq: ports gptqllama:quant_cuda_kernel.cu::VecQuant3MatMulKernel @1eb985a
# portq: ports gptqllama:quant_cuda_kernel.cu::as_unsigned @1eb985a
@triton.jit
def _matvec3_kernel(x_ptr, w_ptr, y_ptr, scale_ptr, zero_ptr, n_words, n_cols,
                    SLAB: tl.constexpr, SLAB_WORDS: tl.constexpr, BLOCK_N: tl.constexpr):
    slab = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    k = tl.arange(0, SLAB)
    x = tl.load(x_ptr + slab * SLAB + k)
    bit = 3 * k
    word = slab * SLAB_WORDS + bit // 32
    shift = (bit % 32).to(tl.int64)
    lo = tl.load(w_ptr + word[:, None] * n_cols + cols[None, :], mask=cmask[None, :], other=0)
    straddles = (shift > 29)[:, None] & cmask[None, :]
    hi = tl.load(w_ptr + (word + 1)[:, None] * n_cols + cols[None, :], mask=straddles, other=0)
    # the two words as one unsigned 64-bit stream: the code may cross the boundary
    stream = (lo.to(tl.int64) & 0xFFFFFFFF) | ((hi.to(tl.int64) & 0xFFFFFFFF) << 32)
    q = ((stream >> shift[:, None]) & 0x7).to(tl.float32)
    scale = tl.load(scale_ptr + cols, mask=cmask, other=0.0)
    zero = tl.load(zero_ptr + cols, mask=cmask, other=0.0)
    w = scale[None, :] * q - zero[None, :]
    part = tl.sum(w * x[:, None], axis=0)
    tl.atomic_add(y_ptr + cols, part, mask=cmask)


# portq: ports gptqllama:quant_cuda_kernel.cu::vecquant3matmul_cuda @1eb985a
# portq: ports gptqllama:quant_cuda.cpp::vecquant3matmul @1eb985a
def matvec3(vec, mat, mul, scales, zeros, block_n=32):
    """Adds vec (fp32, in) @ dequant(mat) into mul (fp32, out) in place;
    mat is (in / 1024 * 96, out) int32, scales and zeros (out, 1) fp32."""
    n_words, n_cols = mat.shape
    grid = (triton.cdiv(n_words, SLAB_WORDS), triton.cdiv(n_cols, block_n))
    _matvec3_kernel[grid](vec, mat, mul, scales.reshape(-1), zeros.reshape(-1), n_words, n_cols,
                          SLAB=SLAB, SLAB_WORDS=SLAB_WORDS, BLOCK_N=block_n)
    return mul
