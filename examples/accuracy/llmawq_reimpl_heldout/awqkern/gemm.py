"""W4A16 GEMM: fp16 activations times AWQ-packed int4 weights.

Layout (as upstream's): qweight (K, N/8) int32, eight output columns per
word in the interleaved nibble order of dequant.py; qzeros (K/G, N/8)
int32, packed the same way; scales (K/G, N) fp16. A weight is
(code - zero) * scale of its group of G input rows. The reduction over K is
split into `split_k` interleaved slices of 32 rows; each slice writes its own
partial product and the host sums them."""

import torch
import triton
import triton.language as tl

from .dequant import unpack_int4

TILE_M = 16
TILE_K = 32


# portq: ports llmawq:awq/kernels/csrc/quantization/gemm_cuda_gen.cu::gemm_forward_4bit_cuda_m16n128k32 @5f377ef
# portq: ports llmawq:awq/kernels/csrc/quantization/gemm_cuda_gen.cu::gemm_forward_4bit_cuda_m16n64k32 @5f377ef
@triton.jit
def _w4a16_kernel(x, qw, scl, qz, out, group, split_k, rows, k_dim, n_dim,
                  TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    # one program per (row tile, column tile) and split slice, packed in axis 0
    tiles_n = n_dim // TN
    per_split = tl.cdiv(rows, TM) * tiles_n
    pid = tl.program_id(0)
    part = pid // per_split
    tile_m = (pid % per_split) // tiles_n
    tile_n = (pid % per_split) % tiles_n
    rm = tile_m * TM + tl.arange(0, TM)
    rn = tile_n * TN + tl.arange(0, TN)
    rk = tl.arange(0, TK)
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    words_n = n_dim // 8
    steps = tl.cdiv(k_dim // TK - part, split_k)
    for step in range(0, steps):
        k0 = (step * split_k + part) * TK
        kk = k0 + rk
        a = tl.load(x + rm[:, None] * k_dim + kk[None, :], mask=rm[:, None] < rows, other=0.0)
        packed = tl.load(qw + kk[:, None] * words_n + (rn // 8)[None, :])
        codes = unpack_int4(packed, rn[None, :])
        g = k0 // group
        zwords = tl.load(qz + g * words_n + rn // 8)
        zeros = unpack_int4(zwords, rn)
        scales = tl.load(scl + g * n_dim + rn).to(tl.float32)
        w = (codes - zeros[None, :]).to(tl.float32) * scales[None, :]
        acc += tl.dot(a.to(tl.float32), w)
    dst = out + part * rows * n_dim + rm[:, None] * n_dim + rn[None, :]
    tl.store(dst, acc.to(out.dtype.element_ty), mask=rm[:, None] < rows)


# portq: ports llmawq:awq/kernels/csrc/quantization/gemm_cuda_gen.cu::gemm_forward_cuda @5f377ef
def w4a16_gemm(x, qweight, scales, qzeros, split_k=8):
    """x (M, K) fp16 @ the packed (K, N) int4 weight -> (M, N) fp16."""
    rows, k_dim = x.shape
    n_dim = qweight.shape[1] * 8
    group = k_dim // scales.shape[0]
    if n_dim % 64 != 0:
        raise ValueError("output features must be a multiple of 64")
    if group % 32 != 0:
        raise ValueError("group size must be a multiple of 32")
    if n_dim % group != 0:
        raise ValueError("output features must be a multiple of the group size")
    tile_n = 128 if n_dim % 128 == 0 else 64
    partial = torch.empty((split_k, rows, n_dim), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(rows, TILE_M) * (n_dim // tile_n) * split_k,)
    _w4a16_kernel[grid](x, qweight, scales, qzeros, partial, group, split_k, rows, k_dim, n_dim,
                        TM=TILE_M, TN=tile_n, TK=TILE_K)
    return partial.sum(0)
