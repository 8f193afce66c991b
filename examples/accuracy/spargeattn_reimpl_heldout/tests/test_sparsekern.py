"""The sparse-attention ports against plain torch fp32 references: the
per-tile int8 quantisers bit-exact (codes and scales), the pooled means and
similarity flags, the LUT, the causal tile mask, and the entry point and
engine layer with every tile kept (a similarity threshold above 1) against
dense softmax attention. fp16 inputs, lengths not multiples of the tiles
where the kernel allows; tolerance 5e-2 absolute on outputs of magnitude
about 1 (int8 Q and K), 1e-3 on fp16 pooled means."""

import math

import pytest
import torch

from engine import self_attention
from sparsekern.attention import sparse_sage_attention
from sparsekern.blockmap import block_map_to_lut, causal_tiles, per_head, pool_similarity_quant, predict_block_map
from sparsekern.quant import quantize_qk_per_tile

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL = 5e-2


def _randn(*shape, seed=0, dtype=torch.float16):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(DEVICE)


def _ref_int8(x, tile):
    """Per-tile codes and scales along dim -2 of a (B, H, N, D) fp32 tensor."""
    n = x.shape[-2]
    codes, scales = torch.empty(x.shape, dtype=torch.int8), []
    for t in range(0, n, tile):
        blk = x[..., t:t + tile, :]
        step = blk.abs().amax(dim=(-1, -2)) / 127.0 + 1e-7
        val = blk / step[..., None, None]
        codes[..., t:t + tile, :] = torch.trunc(val + 0.5 * torch.where(val >= 0, 1.0, -1.0)).to(torch.int8)
        scales.append(step)
    return codes, torch.stack(scales, dim=-1)


def _ref_attention(q, k, v, scale, causal):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).tril() == 0, -torch.inf)
    return torch.softmax(s, dim=-1) @ v.float()


def test_per_tile_quantiser_is_bit_exact():
    q, k = _randn(1, 2, 200, 64, seed=1), _randn(1, 2, 150, 64, seed=2)
    qc, qs, kc, ks = quantize_qk_per_tile(q, k, sm_scale=0.125)
    want_qc, want_qs = _ref_int8(q.float().cpu() * (0.125 * 1.44269504), 128)
    want_kc, want_ks = _ref_int8(k.float().cpu(), 64)
    assert torch.equal(qc.cpu(), want_qc) and torch.equal(kc.cpu(), want_kc)
    assert torch.equal(qs.cpu().squeeze(-1), want_qs) and torch.equal(ks.cpu().squeeze(-1), want_ks)


def test_per_tile_quantiser_reads_nhd():
    q, k = _randn(1, 130, 2, 64, seed=3), _randn(1, 70, 2, 64, seed=4)
    qc, qs, kc, ks = quantize_qk_per_tile(q, k, tensor_layout="NHD")
    rc, rs, rkc, rks = quantize_qk_per_tile(q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous())
    assert torch.equal(qc.transpose(1, 2), rc) and torch.equal(kc.transpose(1, 2), rkc)
    assert torch.equal(qs, rs) and torch.equal(ks, rks)


def test_pool_similarity_quant_matches_torch():
    x = _randn(1, 2, 128, 64, seed=5)
    xm = x.float().mean(dim=-2, keepdim=True).half()
    pooled, similar, codes, scales = pool_similarity_quant(x, xm, 64, per_head(0.0, 2, DEVICE))
    xs = (x.float() - xm.float()).cpu()
    assert (pooled.float().cpu() - xs.view(1, 2, 2, 64, 64).mean(dim=-2)).abs().max() < 1e-3
    want_codes, want_scales = _ref_int8(xs.half().float(), 64)
    assert torch.equal(codes.cpu(), want_codes) and torch.equal(scales.cpu(), want_scales)
    unit = torch.nn.functional.normalize(xs.view(1, 2, 2, 64, 64), dim=-1)
    sim = (unit @ unit.transpose(-1, -2)).mean(dim=(-1, -2))
    assert torch.equal(similar.cpu(), sim > 0.0)


def test_lut_and_causal_tiles():
    bm = torch.tensor([[[[1, 0, 1, 1], [0, 0, 0, 1]]]], dtype=torch.bool, device=DEVICE)
    lut, counts = block_map_to_lut(bm)
    assert lut.cpu().tolist() == [[[[0, 2, 1, 0], [3, 0, 0, 0]]]] and counts.cpu().tolist() == [[[3, 1]]]
    mask = causal_tiles(torch.empty(2, 4, dtype=torch.bool, device=DEVICE), 2.0)
    assert mask.cpu().tolist() == [[True, True, False, False], [True, True, True, True]]


def test_block_map_keeps_at_least_one_tile_and_respects_causality():
    q, k = _randn(1, 2, 256, 64, seed=6), _randn(1, 2, 256, 64, seed=7)
    bm, *_ = predict_block_map(q, k, k.mean(dim=-2, keepdim=True), is_causal=True, simthreshd1=-1.0, cdfthreshd=0.5)
    assert bm.any(dim=-1).all()
    visible = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool, device=DEVICE)
    assert not (bm & ~visible).any()


@pytest.mark.parametrize("causal", [False, True])
def test_entry_point_with_every_tile_kept_matches_dense_attention(causal):
    q, k, v = (_randn(1, 2, 192, 64, seed=8 + i) for i in range(3))
    o, sparsity = sparse_sage_attention(q, k, v, is_causal=causal, simthreshd1=1.1, return_sparsity=True)
    assert (o.float() - _ref_attention(q, k, v, 1 / 8, causal)).abs().max() < TOL
    assert sparsity <= 0.0 + 1e-6 if not causal else sparsity < 0.5


def test_engine_layer_matches_torch_on_short_and_long_sequences(monkeypatch):
    import engine.attention_layer as layer

    monkeypatch.setattr(layer, "SIM_THRESHOLD", 1.1)
    w_qkv, w_out = _randn(128, 384, seed=20) / 12, _randn(128, 128, seed=21) / 12
    for length in (64, 160):
        x = _randn(1, length, 128, seed=22)
        qkv = (x @ w_qkv).view(1, length, 3, 2, 64).permute(2, 0, 3, 1, 4)
        attn = _ref_attention(qkv[0], qkv[1], qkv[2], 1 / math.sqrt(64), False)
        want = x.float() + attn.half().transpose(1, 2).reshape(1, length, 128).float() @ w_out.float()
        assert (self_attention(x, w_qkv, w_out, 2).float() - want).abs().max() < TOL
