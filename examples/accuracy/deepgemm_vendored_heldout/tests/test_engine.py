"""The vendored host helpers and the engine's layers against plain torch
fp32 references computed from the dequantised operands.

Runs where the scorer has written the vendored modules. The scale layout and
the block/stage selection run anywhere (bit-exact); the GEMMs need the
system's JIT and a Hopper device, and are skipped otherwise. Tolerance: 1e-2
relative to the output's largest magnitude (bf16 output, FP32 accumulation).
"""

import pytest
import torch

pytest.importorskip("deep_gemm.jit_kernels.utils", reason="the vendored modules are written by the scorer")

from deep_gemm.jit_kernels.utils import get_col_major_tma_aligned_tensor  # noqa: E402
from engine import dense_fp8_linear, moe_fp8_experts, quantize_tokens, quantize_weight  # noqa: E402
import engine.fp8_linear as layer  # noqa: E402

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
HAS_JIT = HOPPER and layer.gemm_fp8_fp8_bf16_nt is not None
TOL = 1e-2


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to("cuda" if HOPPER else "cpu")


def _dequant(codes, scales, tile_rows):
    rows, k = codes.shape
    full = scales.float().repeat_interleave(tile_rows, 0)[:rows].repeat_interleave(128, 1)
    return codes.float() * full[:, :k]


def test_scale_layout_is_column_major_and_padded():
    x = torch.arange(15, dtype=torch.float32).view(5, 3)
    y = get_col_major_tma_aligned_tensor(x)
    assert y.shape == (8, 3) and y.stride() == (1, 8) and torch.equal(y[:5], x)


def test_best_configs_fit_shared_memory():
    gemm = pytest.importorskip("deep_gemm.jit_kernels.gemm", reason="the vendored tuner needs torch.cuda")
    block_m, block_n, stages, multicast, smem = gemm.get_best_configs(64, 256, 512, 1, 132)
    assert block_m == 64 and 4 <= stages and smem <= 232448 and multicast == 1


@pytest.mark.skipif(not HAS_JIT, reason="the GEMMs need the system JIT and a Hopper device")
def test_engine_layers_match_reference():
    x = _randn(20, 256, seed=1).bfloat16()
    w = quantize_weight(_randn(128, 256, seed=2))
    a, a_s = quantize_tokens(x)
    want = _dequant(a, a_s[:20], 1) @ _dequant(*w, 128).t()
    got = dense_fp8_linear(x, w)
    assert (got.float() - want).abs().max() <= TOL * want.abs().max()
    ws = [quantize_weight(_randn(128, 256, seed=3 + e)) for e in range(2)]
    experts = (torch.stack([e[0] for e in ws]), torch.stack([e[1] for e in ws]))
    route = torch.tensor([0, 1] * 10, device=x.device)
    got = moe_fp8_experts(x, route, experts)
    want = torch.stack([_dequant(a, a_s[:20], 1)[i] @ _dequant(*ws[int(route[i])], 128).t() for i in range(20)])
    assert (got.float() - want).abs().max() <= TOL * want.abs().max()
