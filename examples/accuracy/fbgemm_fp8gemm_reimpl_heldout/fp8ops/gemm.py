"""Scaled FP8 matmuls ``a @ b.T`` on e4m3 operands quantised by ``quant``.

Row-wise: one scale per row of ``a`` and of ``b``, applied once after the K
loop. Block-wise: one scale per [scale_block_m, scale_block_k] block of ``a``
and [scale_block_n, scale_block_k] block of ``b``, applied per K step. One
fixed tile per launch (no autotuning, no split-K); the output is bfloat16.
This module launches kernels only; it does not quantise.
"""

import torch
import triton
import triton.language as tl

from .quant import as_fp8

TILE_M, TILE_N, TILE_K = 32, 32, 32
SWIZZLE_GROUP = 8

# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::get_configs_io_bound -- one fixed tile, no autotuning
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::MATMUL_CONFIGS -- one fixed tile, no autotuning
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::init_to_zero -- no split-K, nothing to zero
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::get_matmul_tune -- autotuning keys, no autotuning


# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::prep_matmul
def _prepare_matmul(a: torch.Tensor, b: torch.Tensor, dot_out_dtype=None):
    """Shapes of ``a`` [M, K] @ ``b`` [N, K].T, the bfloat16 output and the
    accumulator's Triton dtype."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"fp8 matmul: a {tuple(a.shape)} and b {tuple(b.shape)}: expected [M, K] and [N, K]")
    if a.dtype != torch.float8_e4m3fn or b.dtype != torch.float8_e4m3fn:
        raise ValueError(f"fp8 matmul: a is {a.dtype}, b is {b.dtype}; expected float8_e4m3fn")
    M, K = a.shape
    N = b.shape[0]
    out = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    accumulate = {None: tl.float32, torch.float32: tl.float32, torch.bfloat16: tl.bfloat16}
    return M, N, K, out, accumulate.get(dot_out_dtype, tl.int32)


@triton.jit
def _swizzled_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(tiles_m - first_m, GROUP_M)
    return first_m + (pid % rows_here), (pid % per_group) // rows_here


# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_row[SPLIT_K] -- no split-K
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_row[AB_DTYPE] -- operands stay e4m3
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_row[allow_tf32] -- e4m3 operands, never tf32
# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_row
@triton.jit
def _rowwise_kernel(a_ptr, b_ptr, c_ptr, M, N, K, a_scale_ptr, b_scale_ptr,
                    stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                    ACC_DTYPE: tl.constexpr, FAST_ACCUM: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m, pid_n = _swizzled_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + (rm % M)[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + (rn % N)[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_DTYPE)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_tile)
            b = tl.load(b_tile)
        else:
            a = tl.load(a_tile, mask=(k0 + rk)[None, :] < K, other=0.0)
            b = tl.load(b_tile, mask=(k0 + rk)[:, None] < K, other=0.0)
        if FAST_ACCUM:
            acc = tl.dot(a, b, acc, out_dtype=ACC_DTYPE)
        else:
            acc += tl.dot(a, b, out_dtype=ACC_DTYPE)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    a_scale = tl.load(a_scale_ptr + rm, mask=rm < M, other=1.0)
    b_scale = tl.load(b_scale_ptr + rn, mask=rn < N, other=1.0)
    acc = acc.to(tl.float32) * ((1.0 / a_scale)[:, None] * (1.0 / b_scale)[None, :])
    inside = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=inside)


# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::matmul_fp8_row[allow_tf32] -- e4m3 operands, never tf32
# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::matmul_fp8_row
def fp8_rowwise_matmul(a, b, a_scale, b_scale, dot_out_dtype=None, fp8_fast_accum: bool = True):
    """``(a / a_scale[:, None]) @ (b / b_scale[:, None]).T`` in bfloat16."""
    a, b = as_fp8(a), as_fp8(b)
    M, N, K, out, acc_dtype = _prepare_matmul(a, b, dot_out_dtype)
    grid = (triton.cdiv(M, TILE_M) * triton.cdiv(N, TILE_N),)
    _rowwise_kernel[grid](a, b, out, M, N, K, a_scale, b_scale,
                          a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                          out.stride(0), out.stride(1),
                          ACC_DTYPE=acc_dtype, FAST_ACCUM=fp8_fast_accum,
                          BLOCK_M=TILE_M, BLOCK_N=TILE_N, BLOCK_K=TILE_K,
                          GROUP_M=SWIZZLE_GROUP, EVEN_K=K % TILE_K == 0)
    return out


# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_block[SPLIT_K] -- no split-K
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_block[AB_DTYPE] -- operands stay e4m3
# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_block[allow_tf32] -- e4m3 operands, never tf32
# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_matmul_fp8_block
@triton.jit
def _blockwise_kernel(a_ptr, b_ptr, c_ptr, M, N, K, a_scale_ptr, b_scale_ptr,
                      SCALE_BM: tl.constexpr, SCALE_BN: tl.constexpr, SCALE_BK: tl.constexpr,
                      stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                      stride_asm, stride_ask, stride_bsn, stride_bsk,
                      ACC_DTYPE: tl.constexpr, FAST_ACCUM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m, pid_n = _swizzled_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + (rm % M)[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + (rn % N)[None, :] * stride_bn
    a_scales = a_scale_ptr + (pid_m * BLOCK_M // SCALE_BM) * stride_asm
    b_scales = b_scale_ptr + (pid_n * BLOCK_N // SCALE_BN) * stride_bsn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_DTYPE)
    steps = tl.cdiv(K, BLOCK_K)
    for step in range(0, steps):
        k0 = step * BLOCK_K
        if EVEN_K:
            a = tl.load(a_tile)
            b = tl.load(b_tile)
        else:
            a = tl.load(a_tile, mask=(k0 + rk)[None, :] < K, other=0.0)
            b = tl.load(b_tile, mask=(k0 + rk)[:, None] < K, other=0.0)
        sk = k0 // SCALE_BK
        scale = tl.load(a_scales + sk * stride_ask) * tl.load(b_scales + sk * stride_bsk)
        if FAST_ACCUM:
            # acc holds the sum so far times this step's scale; rescale it to the next step's.
            next_scale = 1.0
            if step + 1 < steps:
                nk = (k0 + BLOCK_K) // SCALE_BK
                next_scale = tl.load(a_scales + nk * stride_ask) * tl.load(b_scales + nk * stride_bsk)
            acc = tl.dot(a, b, acc, out_dtype=ACC_DTYPE)
            acc *= next_scale / scale
        else:
            acc += tl.dot(a, b, out_dtype=ACC_DTYPE) * (1.0 / scale)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    inside = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=inside)


# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::matmul_fp8_block[allow_tf32] -- e4m3 operands, never tf32
# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::matmul_fp8_block
def fp8_blockwise_matmul(a, b, a_scale, b_scale, scale_block_m: int = 256, scale_block_n: int = 256,
                         scale_block_k: int = 256, dot_out_dtype=None, fp8_fast_accum: bool = True):
    """``a @ b.T`` with block-wise scales (``quantize_blockwise``'s layout), in bfloat16."""
    a, b = as_fp8(a), as_fp8(b)
    M, N, K, out, acc_dtype = _prepare_matmul(a, b, dot_out_dtype)
    for name, block, tile in (("scale_block_m", scale_block_m, TILE_M),
                              ("scale_block_n", scale_block_n, TILE_N),
                              ("scale_block_k", scale_block_k, TILE_K)):
        if block % tile:
            raise ValueError(f"fp8_blockwise_matmul: {name}={block}; expected a multiple of {tile}")
    grid = (triton.cdiv(M, TILE_M) * triton.cdiv(N, TILE_N),)
    _blockwise_kernel[grid](a, b, out, M, N, K, a_scale, b_scale,
                            scale_block_m, scale_block_n, scale_block_k,
                            a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            out.stride(0), out.stride(1),
                            a_scale.stride(0), a_scale.stride(1), b_scale.stride(0), b_scale.stride(1),
                            ACC_DTYPE=acc_dtype, FAST_ACCUM=fp8_fast_accum,
                            BLOCK_M=TILE_M, BLOCK_N=TILE_N, BLOCK_K=TILE_K,
                            GROUP_M=SWIZZLE_GROUP, EVEN_K=K % TILE_K == 0)
    return out
