"""The int8 attention port against plain torch attention, each ported
definition called by name (the Triton ones through their launchers)."""

import torch

from int8attn import attention, quant
from int8attn.api import int8_sdpa
from engine import self_attention

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _inputs(length=150, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 2, length, 64, generator=g).half().to(DEVICE) for _ in range(3)]


def _reference(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=causal)


def test_quantize_qk_round_trips_within_one_step():
    q, k, _ = _inputs()
    q_codes, q_scale, k_codes, k_scale = quant.quantize_qk(q, k)
    assert q_codes.dtype == torch.int8 and q_scale.shape == (1, 2, 2, 1)
    assert k_scale.shape == (1, 2, 3, 1)
    k_back = quant.dequantize(k_codes, k_scale, quant.K_ROWS)
    assert (k_back - k.float()).abs().max() <= k_scale.max() * 0.5 + 1e-6
    q_folded = q.float() * 64 ** -0.5 * quant.LOG2E.value
    q_back = quant.dequantize(q_codes, q_scale, quant.Q_ROWS)
    assert (q_back - q_folded).abs().max() <= q_scale.max() * 0.5 + 1e-6


def test_int8_attention_matches_torch():
    q, k, v = _inputs()
    codes = quant.quantize_qk(q, k)
    out = attention.int8_attention(codes[0], codes[2], v, codes[1], codes[3])
    assert (out.float() - _reference(q, k, v, False)).abs().max() < 0.05


def test_int8_attention_causal_matches_torch():
    q, k, v = _inputs()
    codes = quant.quantize_qk(q, k)
    out = attention.int8_attention_causal(codes[0], codes[2], v, codes[1], codes[3])
    assert (out.float() - _reference(q, k, v, True)).abs().max() < 0.05


def test_int8_sdpa_and_engine_paths_agree():
    q, k, v = _inputs(length=130, seed=1)
    for causal in (False, True):
        out = int8_sdpa(q, k, v, is_causal=causal)
        assert (out.float() - _reference(q, k, v, causal)).abs().max() < 0.05
    assert torch.equal(self_attention.prefill(q, k, v), int8_sdpa(q, k, v, is_causal=True))
    assert torch.equal(self_attention.cross_frames(q, k, v), int8_sdpa(q, k, v))
    assert torch.equal(self_attention.masked_frames(q, k, v), int8_sdpa(q, k, v, is_causal=True))
