"""Every op of kvops and the engine's layer against plain torch (TRITON_INTERPRET=1 on a CPU)."""

import pytest
import torch

from engine.prefill_layer import PrefillLayer
from kvops.kv_cache import scatter_kv, scatter_kv_kernel, scatter_kv_pair
from kvops.norm import rms_norm, rms_norm_rows_kernel
from kvops.prefill import prefill_attention, prefill_attention_kernel
from kvops.rotary import apply_rotary_inplace, rotary_inplace_kernel

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rms_reference(x, w, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def _rotary_reference(x, cos, sin):
    half = x.shape[-1] // 2
    lo, hi = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((lo * c - hi * s, lo * s + hi * c), dim=-1)


def _prefill_reference(q, k, v, starts, lengths):
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    for s, n in zip(starts.tolist(), lengths.tolist()):
        qs = q[s:s + n].float().transpose(0, 1)
        ks = k[s:s + n].float().repeat_interleave(group, dim=1).transpose(0, 1)
        vs = v[s:s + n].float().repeat_interleave(group, dim=1).transpose(0, 1)
        scores = qs @ ks.transpose(1, 2) / q.shape[-1] ** 0.5
        causal = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        out[s:s + n] = (scores.softmax(-1) @ vs).transpose(0, 1).to(q.dtype)
    return out


@pytest.mark.parametrize("width", [64, 1500])
def test_rms_norm_matches_torch(width):
    torch.manual_seed(0)
    x = torch.randn(5, width, device=DEVICE)
    w = torch.rand(width, device=DEVICE)
    torch.testing.assert_close(rms_norm(x, w, 1e-6), _rms_reference(x, w, 1e-6), atol=1e-4, rtol=1e-4)


def test_rms_norm_rows_kernel_normalises_each_row_by_its_stride():
    x = torch.full((3, 8), 2.0, device=DEVICE)
    out = torch.empty_like(x)
    rms_norm_rows_kernel[(3,)](x, out, torch.ones(8, device=DEVICE), x.stride(0), 8, 0.0, TILE=8)
    torch.testing.assert_close(out, torch.ones_like(x))


def test_rms_norm_refuses_rows_wider_than_its_limit():
    with pytest.raises(ValueError, match="wider than"):
        rms_norm(torch.zeros(1, 20000, device=DEVICE), torch.ones(20000, device=DEVICE), 1e-6)


def test_apply_rotary_inplace_matches_rotate_half():
    torch.manual_seed(1)
    x = torch.randn(37, 6, 32, device=DEVICE)
    cos, sin = torch.randn(37, 16, device=DEVICE), torch.randn(37, 16, device=DEVICE)
    expected = _rotary_reference(x, cos, sin)
    apply_rotary_inplace(x, cos, sin)
    torch.testing.assert_close(x, expected, atol=1e-5, rtol=1e-5)


def test_rotary_inplace_kernel_with_identity_tables_leaves_x_alone():
    x = torch.randn(4, 2, 8, device=DEVICE)
    before = x.clone()
    cos, sin = torch.ones(4, 4, device=DEVICE), torch.zeros(4, 4, device=DEVICE)
    rotary_inplace_kernel[(1, 1)](x, cos, sin, *x.stride(), *cos.stride(), *sin.stride(), 4, 2,
                                  HEADS=2, TOKENS=4, HEAD_DIM=8)
    torch.testing.assert_close(x, before)


def test_scatter_kv_writes_each_token_at_its_slot():
    src = torch.randn(4, 3, 16, device=DEVICE)
    slots = torch.tensor([7, 0, 3, 5], device=DEVICE, dtype=torch.int32)
    cache = torch.zeros(8, 3, 16, device=DEVICE)
    scatter_kv(src, slots, cache)
    torch.testing.assert_close(cache[slots.long()], src)
    assert cache[[1, 2, 4, 6]].abs().sum() == 0


def test_scatter_kv_kernel_masks_padded_heads():
    src = torch.randn(2, 3, 8, device=DEVICE)
    cache = torch.zeros(2, 3, 8, device=DEVICE)
    slots = torch.tensor([1, 0], device=DEVICE, dtype=torch.int32)
    scatter_kv_kernel[(2,)](src, slots, cache, *src.stride(), *cache.stride(), 3, HEAD_DIM=8, HEADS=4)
    torch.testing.assert_close(cache, src.flip(0))


def test_scatter_kv_pair_and_shape_check():
    k, v = torch.randn(2, 2, 8, device=DEVICE), torch.randn(2, 2, 8, device=DEVICE)
    kc, vc = torch.zeros(4, 2, 8, device=DEVICE), torch.zeros(4, 2, 8, device=DEVICE)
    slots = torch.tensor([2, 3], device=DEVICE, dtype=torch.int32)
    scatter_kv_pair(k, v, slots, kc, vc)
    torch.testing.assert_close(kc[2:], k)
    torch.testing.assert_close(vc[2:], v)
    with pytest.raises(ValueError, match="does not fit"):
        scatter_kv(k, slots, torch.zeros(4, 3, 8, device=DEVICE))


def _packed_prompts(lengths, n_heads, n_kv_heads, head_dim):
    torch.manual_seed(2)
    total = sum(lengths)
    q = torch.randn(total, n_heads, head_dim, device=DEVICE, dtype=torch.float16)
    k = torch.randn(total, n_kv_heads, head_dim, device=DEVICE, dtype=torch.float16)
    v = torch.randn(total, n_kv_heads, head_dim, device=DEVICE, dtype=torch.float16)
    lens = torch.tensor(lengths, device=DEVICE, dtype=torch.int32)
    starts = torch.cumsum(lens, 0) - lens
    return q, k, v, starts.to(torch.int32), lens


def test_prefill_attention_matches_causal_softmax_with_grouped_heads():
    q, k, v, starts, lens = _packed_prompts([5, 11], n_heads=4, n_kv_heads=2, head_dim=16)
    out = torch.empty_like(q)
    prefill_attention(q, k, v, out, starts, lens, 11)
    torch.testing.assert_close(out.float(), _prefill_reference(q, k, v, starts, lens).float(), atol=2e-2, rtol=2e-2)


def test_prefill_attention_kernel_first_query_copies_first_value():
    q, k, v, starts, lens = _packed_prompts([3], n_heads=1, n_kv_heads=1, head_dim=16)
    out = torch.zeros_like(q)
    prefill_attention_kernel[(1, 1, 1)](q, k, v, 0.25, starts, lens, out, *q.stride(), *k.stride(), *v.stride(),
                                        *out.stride(), 1, BLOCK_Q=16, HEAD_DIM=16, BLOCK_K=16)
    torch.testing.assert_close(out[0], v[0], atol=1e-3, rtol=1e-3)


def test_prefill_attention_refuses_unsupported_head_size():
    q = torch.zeros(2, 1, 24, device=DEVICE, dtype=torch.float16)
    with pytest.raises(ValueError, match="head sizes"):
        prefill_attention(q, q, q, q, torch.zeros(1, dtype=torch.int32), torch.ones(1, dtype=torch.int32), 1)


def test_prefill_layer_runs_norm_rotary_cache_and_attention():
    torch.manual_seed(3)
    width, n_heads, n_kv, head_dim, tokens = 64, 4, 2, 16, 7
    wq = (torch.randn(width, n_heads * head_dim, dtype=torch.float16) * 0.1).to(DEVICE)
    wk = (torch.randn(width, n_kv * head_dim, dtype=torch.float16) * 0.1).to(DEVICE)
    wv = (torch.randn(width, n_kv * head_dim, dtype=torch.float16) * 0.1).to(DEVICE)
    wo = (torch.randn(n_heads * head_dim, width, dtype=torch.float16) * 0.1).to(DEVICE)
    layer = PrefillLayer(wq, wk, wv, wo, torch.ones(width, dtype=torch.float16, device=DEVICE), n_heads, n_kv)
    hidden = torch.randn(tokens, width, dtype=torch.float16).to(DEVICE)
    angles = torch.randn(tokens, head_dim // 2).to(DEVICE)
    cos, sin = angles.cos().half(), angles.sin().half()
    slots = torch.arange(tokens, dtype=torch.int32, device=DEVICE)
    kc = torch.zeros(tokens, n_kv, head_dim, dtype=torch.float16, device=DEVICE)
    vc = torch.zeros_like(kc)
    lens = torch.tensor([3, 4], dtype=torch.int32, device=DEVICE)
    starts = torch.tensor([0, 3], dtype=torch.int32, device=DEVICE)
    out = layer(hidden, cos, sin, slots, kc, vc, starts, lens)

    x = _rms_reference(hidden, layer.norm_weight, layer.eps)
    q = _rotary_reference((x @ wq).view(tokens, n_heads, head_dim).float(), cos.float(), sin.float()).half()
    k = _rotary_reference((x @ wk).view(tokens, n_kv, head_dim).float(), cos.float(), sin.float()).half()
    v = (x @ wv).view(tokens, n_kv, head_dim)
    expected = hidden + _prefill_reference(q, k, v, starts, lens).view(tokens, -1) @ wo
    torch.testing.assert_close(out.float(), expected.float(), atol=5e-2, rtol=5e-2)
    torch.testing.assert_close(vc, v)
