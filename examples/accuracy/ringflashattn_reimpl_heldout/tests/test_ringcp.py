"""The ring attention port on the CPU through Triton's interpreter.

- the two log-sum-exp layout kernels are bit-exact against plain torch
  indexing (they only move fp32 values);
- update_out_and_lse against an fp32/fp64 reference of attention over the
  union of two key sets: tolerance 1e-5 (absolute) on out and lse;
- the entry point and the engine at world size 1 (a one-rank gloo group),
  flash-attn replaced by a torch reference of the local attention (fp32
  softmax), out within 2e-3 of the reference.
"""

import math

import pytest
import torch
import torch.distributed as dist

from engine import prefill_attention
from ringcp import varlen
from ringcp.lse_layout import flatten_varlen_lse, unflatten_varlen_lse
from ringcp.merge import update_out_and_lse
from ringcp.varlen import ring_varlen_attention

SEQLENS = [5, 1, 9]
HEADS = 2
DIM = 16
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _cu(seqlens):
    return torch.tensor([0] + list(torch.tensor(seqlens).cumsum(0)), dtype=torch.int32, device=DEVICE)


def test_flatten_is_exact():
    g = torch.Generator().manual_seed(0)
    cu, max_len = _cu(SEQLENS), max(SEQLENS)
    padded = torch.randn(len(SEQLENS), HEADS, max_len, generator=g).to(DEVICE)
    want = torch.cat([padded[i, :, :n] for i, n in enumerate(SEQLENS)], dim=1)
    assert torch.equal(flatten_varlen_lse(padded, cu), want)


def test_unflatten_is_exact():
    g = torch.Generator().manual_seed(1)
    cu, max_len = _cu(SEQLENS), max(SEQLENS)
    packed = torch.randn(sum(SEQLENS), HEADS, 1, generator=g).to(DEVICE)
    got = unflatten_varlen_lse(packed, cu, max_len)
    assert got.shape == (len(SEQLENS), HEADS, max_len)
    for i, n in enumerate(SEQLENS):
        start = int(cu[i])
        assert torch.equal(got[i, :, :n], packed[start:start + n, :, 0].transpose(0, 1))


def _attend(q, k, v, scale):
    """(tokens, heads, dim) fp64 attention of every query on every key:
    out (tokens, heads, dim), lse (heads, tokens)."""
    s = torch.einsum("thd,shd->hts", q, k) * scale
    lse = torch.logsumexp(s, dim=-1)
    out = torch.einsum("hts,shd->thd", torch.softmax(s, dim=-1), v)
    return out, lse


def test_update_out_and_lse_matches_attention_over_the_union():
    g = torch.Generator().manual_seed(2)
    q = torch.randn(7, HEADS, DIM, generator=g, dtype=torch.float64)
    k1, v1, k2, v2 = (torch.randn(6, HEADS, DIM, generator=g, dtype=torch.float64) for _ in range(4))
    scale = 1.0 / math.sqrt(DIM)
    o1, l1 = _attend(q, k1, v1, scale)
    o2, l2 = _attend(q, k2, v2, scale)
    want_out, want_lse = _attend(q, torch.cat([k1, k2]), torch.cat([v1, v2]), scale)
    out, lse = update_out_and_lse(None, None, o1.half(), l1.float())
    out, lse = update_out_and_lse(out, lse, o2.half(), l2.float())
    assert out.dtype == torch.float32 and lse.shape == (7, HEADS, 1)
    # the blocks arrive in fp16: compare with the union computed from them
    assert (lse[..., 0].double() - want_lse.transpose(0, 1)).abs().max() < 1e-5
    o1h, o2h = o1.half().double(), o2.half().double()
    w1 = torch.exp(l1 - want_lse).transpose(0, 1)[..., None]
    w2 = torch.exp(l2 - want_lse).transpose(0, 1)[..., None]
    assert (out.double() - (w1 * o1h + w2 * o2h)).abs().max() < 1e-5
    assert (out.double() - want_out).abs().max() < 2e-3


def test_a_slice_is_refused_on_the_first_merge():
    with pytest.raises(RuntimeError):
        update_out_and_lse(None, None, torch.zeros(1, 1, 1), torch.zeros(1, 1), rows=slice(0, 1))


def _reference_block(q, k, v, cu_seqlens, max_seqlen, softmax_scale, causal, window_size):
    outs, lse = [], torch.full((len(cu_seqlens) - 1, q.shape[1], max_seqlen), float("nan"), device=q.device)
    for i in range(len(cu_seqlens) - 1):
        a, b = int(cu_seqlens[i]), int(cu_seqlens[i + 1])
        s = torch.einsum("thd,shd->hts", q[a:b].float(), k[a:b].float()) * softmax_scale
        if causal:
            n = b - a
            s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
        lse[i, :, : b - a] = torch.logsumexp(s, dim=-1)
        outs.append(torch.einsum("hts,shd->thd", torch.softmax(s, dim=-1), v[a:b].float()))
    return torch.cat(outs).to(q.dtype), lse


@pytest.fixture
def one_rank_group(tmp_path, monkeypatch):
    monkeypatch.setattr(varlen, "block_attention", _reference_block)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.mark.parametrize("causal", [False, True])
def test_entry_point_at_world_size_one(one_rank_group, causal):
    g = torch.Generator().manual_seed(3)
    cu, max_len = _cu(SEQLENS), max(SEQLENS)
    q, k, v = (torch.randn(sum(SEQLENS), HEADS, DIM, generator=g).half().to(DEVICE) for _ in range(3))
    want, _ = _reference_block(q, k, v, cu, max_len, DIM ** -0.5, causal, (-1, -1))
    got = ring_varlen_attention(q, k, v, cu, max_len, causal=causal)
    assert got.dtype == torch.float16
    assert (got.float() - want.float()).abs().max() < 2e-3
    engine_out = prefill_attention(q, k, v, cu, max_len)
    want_causal, _ = _reference_block(q, k, v, cu, max_len, DIM ** -0.5, True, (-1, -1))
    assert (engine_out.float() - want_causal.float()).abs().max() < 2e-3


def test_forward_returns_the_padded_lse(one_rank_group):
    g = torch.Generator().manual_seed(4)
    cu, max_len = _cu(SEQLENS), max(SEQLENS)
    q, k, v = (torch.randn(sum(SEQLENS), HEADS, DIM, generator=g).half().to(DEVICE) for _ in range(3))
    _, want = _reference_block(q, k, v, cu, max_len, 0.25, True, (-1, -1))
    _, lse = varlen.ring_varlen_forward(None, q, k, v, cu, max_len, 0.25, causal=True)
    for i, n in enumerate(SEQLENS):
        assert torch.equal(lse[i, :, :n], want[i, :, :n])
