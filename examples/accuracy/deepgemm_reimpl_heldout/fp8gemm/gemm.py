"""Host entry points: the normal FP8 GEMM and the contiguous grouped GEMM
for MoE. Same operands, scale shapes and checks as upstream; the LHS scales
are brought to the TMA-aligned column-major layout the kernel reads.

Where the device has no FP8 support in Triton (the CPU interpreter), the
FP8 operands are passed as their exact FP32 values: every e4m3 value is an
FP32 value, so the products are the same."""

import torch
import triton

from .configs import best_config
from .kernel import fp8_gemm_kernel
from .utils import col_major_tma_aligned, get_num_sms

BLOCK_K = 128


def _operand(x):
    return x if x.is_cuda else x.float()


def _launch(lhs, lhs_scales, rhs, rhs_scales, out, m_indices, m, n, k, block_m, block_n):
    block_n = triton.next_power_of_2(block_n)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    fp8_gemm_kernel[grid](
        _operand(lhs), _operand(rhs), out, lhs_scales, rhs_scales,
        m_indices if m_indices is not None else lhs_scales,
        m, n, k, lhs_scales.stride(-1),
        GROUPED=m_indices is not None, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=BLOCK_K,
    )


# portq: ports deepgemm:deep_gemm/jit_kernels/gemm.py::gemm_fp8_fp8_bf16_nt @a6d97a1
# portq: not-carried deepgemm:csrc/apis/gemm.hpp::k_grouped_fp8_gemm_tn_contiguous -- K-grouped (weight-gradient) GEMMs; the engine runs inference only
# portq: not-carried deepgemm:csrc/apis/gemm.hpp::k_grouped_fp8_gemm_nt_contiguous -- K-grouped (weight-gradient) GEMMs; the engine runs inference only
# portq: not-carried deepgemm:csrc/jit_kernels/impls/smxx_layout.hpp::get_mn_major_tma_aligned_packed_ue8m0_tensor -- packed UE8M0 scales are an sm100 format; the engine's scales are fp32
# portq: not-carried deepgemm:csrc/jit_kernels/impls/smxx_layout.hpp::get_mn_major_tma_aligned_packed_ue8m0_tensor_torch -- packed UE8M0 scales are an sm100 format; the engine's scales are fp32
def gemm_fp8_fp8_bf16_nt(lhs, rhs, out) -> None:
    """out (M, N) bf16 = lhs (M, K) fp8 with (M, K/128) fp32 scales times
    rhs (N, K) fp8 with (N/128, K/128) fp32 scales, transposed."""
    lhs, lhs_scales = lhs
    rhs, rhs_scales = rhs
    m, k = lhs.shape
    n, k_ = rhs.shape
    m_, n_ = out.shape
    assert n % 64 == 0 and k % 128 == 0
    assert m == m_ and n == n_ and k == k_
    assert n > 0 and k > 0
    assert lhs_scales.shape == (m, (k + 127) // 128)
    assert rhs_scales.shape == ((n + 127) // 128, (k + 127) // 128)
    assert lhs.dtype == torch.float8_e4m3fn and lhs_scales.dtype == torch.float32
    assert rhs.dtype == torch.float8_e4m3fn and rhs_scales.dtype == torch.float32
    assert out.dtype == torch.bfloat16
    assert lhs.is_contiguous() and rhs.is_contiguous() and out.is_contiguous()
    lhs_scales = col_major_tma_aligned(lhs_scales)
    assert rhs_scales.is_contiguous()
    if m == 0:
        return
    block_m, block_n, _, _, _ = best_config(m, n, k, 1, get_num_sms())
    _launch(lhs, lhs_scales, rhs, rhs_scales, out, None, m, n, k, block_m, block_n)


# portq: ports deepgemm:deep_gemm/jit_kernels/m_grouped_gemm.py::m_grouped_gemm_fp8_fp8_bf16_nt_contiguous @a6d97a1
# portq: not-carried deepgemm:deep_gemm/jit_kernels/m_grouped_gemm.py::m_grouped_gemm_fp8_fp8_bf16_nt_masked -- the engine runs MoE prefill only; the masked decoding layout is not carried
def m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(lhs, rhs, out, m_indices) -> None:
    """Rows of lhs (M_sum, K) grouped contiguously, each group padded to 128
    rows; row i is multiplied with rhs[m_indices[i]] ((G, N, K), scales
    (G, N/128, K/128)); a -1 index skips its block."""
    lhs, lhs_scales = lhs
    rhs, rhs_scales = rhs
    m, k = lhs.shape
    num_groups, n, k_ = rhs.shape
    m_, n_ = out.shape
    m__ = m_indices.numel()
    assert m == m_ == m__ and k == k_ and n == n_
    assert lhs_scales.shape == (m, (k + 127) // 128)
    assert rhs_scales.shape == (num_groups, (n + 127) // 128, (k + 127) // 128)
    assert lhs.dtype == torch.float8_e4m3fn and lhs_scales.dtype == torch.float32
    assert rhs.dtype == torch.float8_e4m3fn and rhs_scales.dtype == torch.float32
    assert out.dtype == torch.bfloat16
    assert m_indices.dtype == torch.int32
    assert lhs.is_contiguous() and rhs.is_contiguous()
    assert out.is_contiguous() and m_indices.is_contiguous()
    lhs_scales = col_major_tma_aligned(lhs_scales)
    assert rhs_scales.is_contiguous()
    if m == 0:
        return
    block_m, block_n, _, _, _ = best_config(m, n, k, 1, get_num_sms(), is_grouped_contiguous=True)
    _launch(lhs, lhs_scales, rhs, rhs_scales, out, m_indices, m, n, k, block_m, block_n)
