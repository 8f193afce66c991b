"""The FP8 GEMMs, the scale layout helper and the engine's layers against
plain torch fp32 references computed from the dequantised operands.

Runs on a CUDA device or on the CPU under TRITON_INTERPRET=1 (float8_e4m3fn
tensors are made and dequantised by torch on the CPU; the kernel then reads
their exact fp32 values). Tolerance: 1e-2 relative to the output's largest
magnitude (bf16 output, FP32 accumulation); the scale layout is bit-exact.
"""

import torch

from fp8gemm.configs import best_config
from fp8gemm.gemm import gemm_fp8_fp8_bf16_nt, m_grouped_gemm_fp8_fp8_bf16_nt_contiguous
from fp8gemm.utils import col_major_tma_aligned, set_num_sms
from engine import dense_fp8_linear, moe_fp8_experts
from engine.fp8_linear import quantize_tokens, quantize_weight

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL = 1e-2
set_num_sms(8)


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(DEVICE)


def _dequant_lhs(codes, scales):
    m, k = codes.shape
    return (codes.float().view(m, k // 128, 128) * scales.float()[..., None]).view(m, k)


def _dequant_rhs(codes, scales):
    n, k = codes.shape
    full = scales.float().repeat_interleave(128, 0).repeat_interleave(128, 1)
    return codes.float() * full[:n, :k]


def _close(got, want):
    return (got.float() - want).abs().max().item() <= TOL * want.abs().max().item()


def test_scale_layout_is_column_major_padded_and_idempotent():
    x = _randn(5, 3, seed=1)
    y = col_major_tma_aligned(x)
    assert y.shape == (8, 3) and y.stride() == (1, 8) and torch.equal(y[:5], x)
    g = _randn(2, 6, 2, seed=2)
    h = col_major_tma_aligned(g)
    assert h.shape == (2, 8, 2) and torch.equal(h[:, :6], g)
    assert col_major_tma_aligned(h).data_ptr() == h.data_ptr()


def test_config_prefers_fewer_waves_and_fits_shared_memory():
    block_m, block_n, stages, multicast, smem = best_config(64, 256, 512, 1, 8)
    assert block_m == 64 and stages >= 4 and smem <= 232448 and multicast == 1


def test_normal_gemm_matches_dequantised_reference():
    m, n, k = 40, 192, 384
    a, a_s = quantize_tokens(_randn(m, k, seed=3))
    b, b_s = quantize_weight(_randn(n, k, seed=4))
    out = torch.empty((m, n), dtype=torch.bfloat16, device=DEVICE)
    gemm_fp8_fp8_bf16_nt((a, a_s), (b, b_s), out)
    assert _close(out, _dequant_lhs(a, a_s) @ _dequant_rhs(b, b_s).t())


def test_grouped_contiguous_gemm_skips_negative_blocks():
    g, n, k = 2, 128, 256
    a, a_s = quantize_tokens(_randn(384, k, seed=5))
    ws = [quantize_weight(_randn(n, k, seed=6 + e)) for e in range(g)]
    b, b_s = torch.stack([w[0] for w in ws]), torch.stack([w[1] for w in ws])
    m_indices = torch.tensor([0] * 128 + [-1] * 128 + [1] * 128, dtype=torch.int32, device=DEVICE)
    out = torch.full((384, n), 7.0, dtype=torch.bfloat16, device=DEVICE)
    m_grouped_gemm_fp8_fp8_bf16_nt_contiguous((a, a_s), (b, b_s), out, m_indices)
    lhs = _dequant_lhs(a, a_s)
    assert _close(out[:128], lhs[:128] @ _dequant_rhs(*ws[0]).t())
    assert _close(out[256:], lhs[256:] @ _dequant_rhs(*ws[1]).t())
    assert torch.equal(out[128:256], torch.full((128, n), 7.0, dtype=torch.bfloat16, device=DEVICE))


def test_engine_layers_match_reference():
    x = _randn(20, 256, seed=9).bfloat16()
    w = quantize_weight(_randn(128, 256, seed=10))
    a, a_s = quantize_tokens(x)
    assert _close(dense_fp8_linear(x, w), _dequant_lhs(a, a_s) @ _dequant_rhs(*w).t())
    ws = [quantize_weight(_randn(128, 256, seed=11 + e)) for e in range(2)]
    experts = (torch.stack([e[0] for e in ws]), torch.stack([e[1] for e in ws]))
    route = torch.tensor([0, 1] * 10, device=DEVICE)
    got = moe_fp8_experts(x, route, experts)
    want = torch.stack([_dequant_lhs(a, a_s)[i] @ _dequant_rhs(*ws[int(route[i])]).t() for i in range(20)])
    assert _close(got, want)
