"""x @ W for W stored as packed 4-bit codes: each program computes a
BLOCK_M x BLOCK_N tile of the output, walking the inputs BLOCK_K at a time,
unpacking the codes and zero points of its columns from their words
(interleaved order, see packed.py), dequantising (q - zero) * step in fp32
and accumulating with tl.dot. The result takes x's dtype."""

import torch
import triton
import triton.language as tl


@triton.jit
def _dequant_gemm_kernel(
    x_ptr, qw_ptr, st_ptr, qz_ptr, out_ptr,
    M, N, K, GROUP,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    words = N // 8
    j = rn % 8
    shift = 4 * ((j >> 1) + 4 * (j & 1))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        wmask = (rk[:, None] < K) & (rn[None, :] < N)
        packed = tl.load(qw_ptr + rk[:, None] * words + (rn // 8)[None, :], mask=wmask, other=0)
        q = (packed >> shift[None, :]) & 0xF
        g = rk // GROUP
        zp = tl.load(qz_ptr + g[:, None] * words + (rn // 8)[None, :], mask=wmask, other=0)
        z = (zp >> shift[None, :]) & 0xF
        s = tl.load(st_ptr + g[:, None] * N + rn[None, :], mask=wmask, other=0.0).to(tl.float32)
        w = (q - z).to(tl.float32) * s
        acc += tl.dot(x.to(tl.float32), w)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def dequant_gemm(x, qweight, scales, qzeros, group_size, block_m=16, block_n=32, block_k=32):
    if x.dim() != 2 or x.shape[1] != qweight.shape[0]:
        raise ValueError(f"x {tuple(x.shape)} does not match the packed weight {tuple(qweight.shape)}")
    m, k = x.shape
    n = qweight.shape[1] * 8
    x = x.contiguous()
    out = torch.empty((m, n), dtype=torch.float32, device=x.device)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _dequant_gemm_kernel[grid](
        x, qweight.contiguous(), scales.contiguous(), qzeros.contiguous(), out,
        m, n, k, group_size,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
    )
    return out.to(x.dtype)
