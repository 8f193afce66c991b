"""The LayerNorm and attention ports against plain torch fp32 references,
the launchers, the entry points and the engine's encoder layer. fp16
inputs (fp32 for LayerNorm too), tiny shapes whose lengths are not
multiples of the tiles; tolerance 2e-2 absolute on fp16 outputs of
magnitude about 1, 1e-4 on fp32."""

import math

import pytest
import torch

from engine import encoder_layer
from tfkern.api import fused_attention, layernorm
from tfkern.attention import launch_attention
from tfkern.norm import launch_layernorm

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FP16_TOL = 2e-2
FP32_TOL = 1e-4


def _randn(*shape, seed=0, dtype=torch.float16):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(DEVICE)


def _ref_layernorm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x.float(), x.shape[-1:], w.float(), b.float(), eps)


def _ref_attention(q, k, v, scale, causal, mask):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if mask is not None:
        s = s + mask.float()
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, device=q.device).tril() == 0, float("-inf"))
    return torch.softmax(s, dim=-1) @ v.float()


@pytest.mark.parametrize("dtype, tol", [(torch.float16, FP16_TOL), (torch.float32, FP32_TOL)])
@pytest.mark.parametrize("width", [48, 300])
def test_layernorm_matches_torch(dtype, tol, width):
    x = _randn(2, 3, width, seed=width, dtype=dtype) * 2 + 0.5
    w = _randn(width, seed=1, dtype=dtype)
    b = _randn(width, seed=2, dtype=dtype)
    out = launch_layernorm(x, w, b, 1e-5)
    assert out.dtype == dtype and out.shape == x.shape
    assert (out.float() - _ref_layernorm(x, w, b, 1e-5)).abs().max() < tol
    assert torch.equal(layernorm(x, w, b, 1e-5), out)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length", [20, 50])
def test_attention_matches_torch(causal, length):
    q, k, v = (_randn(2, 2, length, 16, seed=length + i) for i in range(3))
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(16)
    got = launch_attention(q, k, v, out, scale, causal, None)
    assert got is out and out.dtype == torch.float16
    assert (out.float() - _ref_attention(q, k, v, scale, causal, None)).abs().max() < FP16_TOL


def test_attention_with_broadcast_and_full_masks():
    q, k, v = (_randn(2, 2, 37, 16, seed=9 + i) for i in range(3))
    scale = 0.3
    pad = torch.zeros(2, 1, 1, 37, dtype=torch.float16, device=DEVICE)
    pad[1, :, :, 30:] = float("-inf")
    full = _randn(1, 2, 37, 37, seed=5)
    for mask in (pad, full):
        out = fused_attention(q, k, v, torch.empty_like(q), scale, False, mask)
        assert (out.float() - _ref_attention(q, k, v, scale, False, mask)).abs().max() < FP16_TOL


def test_engine_encoder_layer_matches_torch():
    batch, length, width, heads = 2, 19, 32, 2
    hidden = _randn(batch, length, width, seed=11)
    ln_w, ln_b = _randn(width, seed=12), _randn(width, seed=13)
    w_qkv = _randn(width, 3 * width, seed=14) * 0.2
    w_out = _randn(width, width, seed=15) * 0.2
    pad = torch.zeros(batch, 1, 1, length, dtype=torch.float16, device=DEVICE)
    pad[0, :, :, 15:] = float("-inf")
    got = encoder_layer(hidden, ln_w, ln_b, w_qkv, w_out, heads, pad)

    normed = _ref_layernorm(hidden, ln_w, ln_b, 1e-5)
    qkv = (normed @ w_qkv.float()).view(batch, length, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
    att = _ref_attention(qkv[0], qkv[1], qkv[2], 1.0 / math.sqrt(width // heads), False, pad)
    want = hidden.float() + att.transpose(1, 2).reshape(batch, length, width) @ w_out.float()
    assert (got.float() - want).abs().max() < 5 * FP16_TOL
