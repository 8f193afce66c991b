"""The FP8 GEMM kernel (Triton): D = A B^T with A (M, K) scaled per row and
per 128-wide K block, B (N, K) scaled per 128x128 block. Each K block's
product is accumulated in FP32 and promoted into the running sum after its
two scales are applied, as the Hopper kernel does after each block's wgmma.
For the contiguous grouped layout, the group of an M block is read from the
first row's index; a negative index skips the block (its output is left as
it was)."""

import triton
import triton.language as tl


# portq: ports deepgemm:deep_gemm/include/deep_gemm/fp8_gemm.cuh::fp8_gemm_kernel @a6d97a1
# portq: not-carried deepgemm:deep_gemm/include/deep_gemm/fp8_gemm.cuh::Gemm -- the CUDA build's TMA descriptors and cluster launch; the Triton host launches the kernel directly
# portq: not-carried deepgemm:deep_gemm/include/deep_gemm/fp8_gemm.cuh::fp8_gemm_kernel[kNumTMAMulticast] -- no TMA in the Triton kernel; the multicast factor is planned and ignored
@triton.jit
def fp8_gemm_kernel(a, b, d, scales_a, scales_b, m_indices,
                    M, N, K, scales_a_ld,
                    GROUPED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(N, BLOCK_N)
    m_block, n_block = pid // n_blocks, pid % n_blocks
    rows = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = n_block * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    k_blocks = tl.cdiv(K, BLOCK_K)
    group = pid * 0
    if GROUPED:
        group = tl.load(m_indices + m_block * BLOCK_M)
    if group >= 0:
        b_base = b + group.to(tl.int64) * N * K
        sb_base = scales_b + group * tl.cdiv(N, BLOCK_K) * k_blocks
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(0, k_blocks):
            kk = kb * BLOCK_K + ks
            a_tile = tl.load(a + rows[:, None] * K + kk[None, :],
                             mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
            b_tile = tl.load(b_base + cols[:, None] * K + kk[None, :],
                             mask=(cols[:, None] < N) & (kk[None, :] < K), other=0.0)
            partial = tl.dot(a_tile, tl.trans(b_tile), out_dtype=tl.float32)
            sa = tl.load(scales_a + kb * scales_a_ld + rows, mask=rows < M, other=0.0)
            sb = tl.load(sb_base + (cols // BLOCK_K) * k_blocks + kb, mask=cols < N, other=0.0)
            acc += partial * sa[:, None] * sb[None, :]
        tl.store(d + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))
