"""The engine's attention layer and the vendored per-block quantiser
against plain torch fp32 references.

Runs where the scorer has written the vendored modules. The quantiser and
the engine's dense path run on a CUDA device or on the CPU under
TRITON_INTERPRET=1 (codes and scales bit-exact); the sparse entry point
needs SpargeAttn's CUDA extension and a CUDA device, and is skipped
otherwise. Tolerance 5e-2 absolute on outputs of magnitude about 1 (int8 Q
and K).
"""

import importlib.util
import math

import pytest
import torch

pytest.importorskip("spas_sage_attn.quant_per_block", reason="the vendored modules are written by the scorer")

from spas_sage_attn.quant_per_block import per_block_int8  # noqa: E402
from engine import self_attention  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL = 5e-2
HAS_EXT = torch.cuda.is_available() and importlib.util.find_spec("spas_sage_attn._qattn") is not None


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).half().to(DEVICE)


def _ref_int8(x, tile):
    codes, scales = torch.empty(x.shape, dtype=torch.int8), []
    for t in range(0, x.shape[-2], tile):
        blk = x[..., t:t + tile, :]
        step = blk.abs().amax(dim=(-1, -2)) / 127.0 + 1e-7
        val = blk / step[..., None, None]
        codes[..., t:t + tile, :] = torch.trunc(val + 0.5 * torch.where(val >= 0, 1.0, -1.0)).to(torch.int8)
        scales.append(step)
    return codes, torch.stack(scales, dim=-1)


def _ref_layer(x, w_qkv, w_out, heads):
    batch, length, width = x.shape
    qkv = (x @ w_qkv).view(batch, length, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
    s = (qkv[0].float() @ qkv[1].float().transpose(-1, -2)) / math.sqrt(width // heads)
    attn = (torch.softmax(s, dim=-1) @ qkv[2].float()).half()
    return x.float() + attn.transpose(1, 2).reshape(batch, length, width).float() @ w_out.float()


def test_per_block_int8_is_bit_exact():
    q, k = _randn(1, 2, 200, 64, seed=1), _randn(1, 2, 150, 64, seed=2)
    qc, qs, kc, ks = per_block_int8(q, k, sm_scale=0.125)
    want_qc, want_qs = _ref_int8(q.float().cpu() * (0.125 * 1.44269504), 128)
    want_kc, want_ks = _ref_int8(k.float().cpu(), 64)
    assert torch.equal(qc.cpu(), want_qc) and torch.equal(kc.cpu(), want_kc)
    assert torch.equal(qs.cpu().squeeze(-1), want_qs) and torch.equal(ks.cpu().squeeze(-1), want_ks)


def test_engine_dense_path_matches_torch():
    w_qkv, w_out = _randn(128, 384, seed=3) / 12, _randn(128, 128, seed=4) / 12
    x = _randn(1, 64, 128, seed=5)
    assert (self_attention(x, w_qkv, w_out, 2).float() - _ref_layer(x, w_qkv, w_out, 2)).abs().max() < TOL


@pytest.mark.skipif(not HAS_EXT, reason="the sparse entry point needs the CUDA extension")
def test_engine_sparse_path_with_every_tile_kept_matches_torch(monkeypatch):
    import engine.attention_layer as layer

    monkeypatch.setattr(layer, "SIM_THRESHOLD", 1.1)
    w_qkv, w_out = _randn(128, 384, seed=6) / 12, _randn(128, 128, seed=7) / 12
    x = _randn(1, 256, 128, seed=8)
    assert (self_attention(x, w_qkv, w_out, 2).float() - _ref_layer(x, w_qkv, w_out, 2)).abs().max() < TOL
