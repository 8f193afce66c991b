"""The two-score attention port against a plain torch fp32 reference, the
kernel's launcher and the entry point called by name. fp16 inputs, tiny
shapes whose lengths are not multiples of the tiles; tolerance 2e-2
(absolute, on outputs of magnitude about 1)."""

import math

import pytest
import torch

from engine import decode_window, prefill
from twoscore.api import two_score_attention
from twoscore.kernel import two_score_forward

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOLERANCE = 2e-2


def _inputs(q_len, kv_len, dim=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    make = lambda n: torch.randn(1, 2, n, dim, generator=g).half().to(DEVICE)
    return make(q_len), make(kv_len), make(q_len), make(kv_len), make(kv_len)


def _reference(q1, k1, q2, k2, v, w, causal, scale):
    q1, k1, q2, k2, v = (t.float() for t in (q1, k1, q2, k2, v))
    q_len, kv_len = q1.shape[2], k1.shape[2]
    pos = torch.arange(q_len, device=q1.device)[:, None] + (kv_len - q_len)
    keys = torch.arange(kv_len, device=q1.device)[None, :]
    s = torch.where(pos >= keys + w, q2 @ k2.transpose(-1, -2), q1 @ k1.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(pos < keys, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("q_len, kv_len", [(50, 50), (40, 75)])
def test_forward_matches_torch(causal, q_len, kv_len):
    q1, k1, q2, k2, v = _inputs(q_len, kv_len, seed=q_len)
    scale = 1.0 / math.sqrt(32)
    out = two_score_forward(q1, k1, q2, k2, v, 8, causal, scale)
    want = _reference(q1, k1, q2, k2, v, 8, causal, scale)
    assert out.dtype == torch.float16 and out.shape == q1.shape
    assert (out.float() - want).abs().max() < TOLERANCE


def test_entry_point_and_engine_agree_with_torch():
    q1, k1, q2, k2, v = _inputs(45, 45, seed=7)
    scale = 1.0 / math.sqrt(32)
    out = two_score_attention(q1, k1, q2, k2, v, 16, True, scale)
    assert (out.float() - _reference(q1, k1, q2, k2, v, 16, True, scale)).abs().max() < TOLERANCE
    assert torch.equal(prefill(q1, k1, q2, k2, v), out)
    assert torch.equal(decode_window(q1, k1, q2, k2, v), two_score_attention(q1, k1, q2, k2, v, 16, False, scale))
