"""kvprep against plain torch: RoPE into a padded KV cache (both pair
layouts, f32 and f64 internal math), RMSNorm with and without weight, the
fused residual add, and the engine's prelude on them."""

import pytest
import torch

from engine import AttentionPrelude
from kvprep import norm_kernels, rope_kernels
from kvprep.norm import RMSNorm, rms_norm, rms_norm_residual
from kvprep.norm_kernels import _launch_rms, _launch_rms_add, _rms_add_row_kernel, _rms_row_kernel
from kvprep.rope import PaddedKVLayout, rope_into_cache
from kvprep.rope_kernels import _rope_cache_kernel

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rotate(x, positions, theta, adjacents):
    """x: (tokens, heads, dim) rotated by each token's position."""
    dim = x.shape[-1]
    inv = theta ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    ang = positions.double()[:, None] * inv[None, :]
    cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
    xd = x.double()
    if adjacents:
        a, b = xd[..., 0::2], xd[..., 1::2]
        out = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
    else:
        a, b = xd[..., : dim // 2], xd[..., dim // 2:]
        out = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    return out


def _reference_rope(xq, xk, xv, k_cache, v_cache, new, used, slot, theta, adjacents):
    q_out = torch.empty(xq.shape, dtype=torch.float64)
    k_ref, v_ref = k_cache.clone().double(), v_cache.clone().double()
    start = 0
    for b, (n, u) in enumerate(zip(new, used)):
        pos = torch.arange(u - n, u)
        q_out[0, start:start + n] = _rotate(xq[0, start:start + n], pos, theta, adjacents)
        k_ref[0, b * slot + u - n: b * slot + u] = _rotate(xk[0, start:start + n], pos, theta, adjacents)
        v_ref[0, b * slot + u - n: b * slot + u] = xv[0, start:start + n].double()
        start += n
    return q_out, k_ref, v_ref


def _rope_case(adjacents, internal_dtype, theta=10000.0):
    torch.manual_seed(0)
    new, used, slot, q_heads, kv_heads, dim = [3, 1, 2], [5, 1, 7], 8, 4, 2, 16
    tokens = sum(new)
    xq = torch.randn(1, tokens, q_heads, dim, device=DEVICE)
    xk = torch.randn(1, tokens, kv_heads, dim, device=DEVICE)
    xv = torch.randn(1, tokens, kv_heads, dim, device=DEVICE)
    k_cache = torch.zeros(1, slot * len(new), kv_heads, dim, device=DEVICE)
    v_cache = torch.zeros_like(k_cache)
    layout = PaddedKVLayout.from_lengths(new, used, slot, device=DEVICE)
    want = _reference_rope(xq.cpu(), xk.cpu(), xv.cpu(), k_cache.cpu(), v_cache.cpu(),
                           new, used, slot, theta, adjacents)
    got_q = rope_into_cache(xq, xk, xv, k_cache, v_cache, layout, theta=theta,
                            adjacents=adjacents, internal_dtype=internal_dtype)
    return (got_q, k_cache, v_cache), want


@pytest.mark.parametrize("adjacents", [True, False])
@pytest.mark.parametrize("internal_dtype", ["", "f32", "f64"])
def test_rope_into_cache_rotates_queries_and_fills_the_cache_tail(adjacents, internal_dtype):
    got, want = _rope_case(adjacents, internal_dtype)
    for g, w in zip(got, want):
        torch.testing.assert_close(g.double().cpu(), w, atol=1e-4, rtol=1e-4)


def test_rope_into_cache_rejects_a_batch_dimension():
    x = torch.zeros(2, 1, 1, 8)
    layout = PaddedKVLayout.from_lengths([1], [1], 4)
    with pytest.raises(ValueError, match="leading dimension"):
        rope_into_cache(x, x, x, x, x, layout)


def test_layout_from_lengths_packs_queries_and_pads_slots():
    layout = PaddedKVLayout.from_lengths([2, 1], [4, 3], 6)
    assert layout.q_starts.tolist() == [0, 2, 3]
    assert layout.kv_starts.tolist() == [0, 6, 12]
    assert layout.kv_lens.tolist() == [4, 3]
    assert (layout.total_queries, layout.cache_tokens, layout.max_new) == (3, 12, 2)


def test_rope_kernel_copies_value_heads_unchanged():
    # one token, one q head, one kv head, at position 0: every head keeps its values
    x = torch.randn(1, 1, 1, 8, device=DEVICE)
    out = torch.empty_like(x)
    kc, vc = torch.zeros_like(x), torch.zeros_like(x)
    starts = torch.tensor([0, 1], dtype=torch.int32, device=DEVICE)
    lens = torch.tensor([1], dtype=torch.int32, device=DEVICE)
    strides = (x.stride(1), x.stride(2)) * 5
    _rope_cache_kernel[(1, 1, 3)](x, x, x, out, kc, vc, starts, starts, lens, 10000.0, 1, 2, 8,
                                  *strides, 1, 1, 1, out.stride(1), out.stride(2), "f32",
                                  BLOCK=128, PAIRS_ADJACENT=True)
    for t in (out, kc, vc):
        torch.testing.assert_close(t, x)
    assert hasattr(rope_kernels._libm, "exp2") and hasattr(rope_kernels._libm, "log2")


def _reference_rms(x, w, eps):
    y = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w.double()


@pytest.mark.parametrize("with_weight", [True, False])
@pytest.mark.parametrize("cols", [96, 300])
def test_rms_norm_matches_torch(with_weight, cols):
    torch.manual_seed(1)
    x = torch.randn(3, 5, cols, device=DEVICE)
    w = torch.randn(cols, device=DEVICE) if with_weight else None
    torch.testing.assert_close(rms_norm(x, w, 1e-5).double().cpu(),
                               _reference_rms(x.cpu(), None if w is None else w.cpu(), 1e-5),
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(_launch_rms(x, w, 1e-5), rms_norm(x, w, 1e-5))


def test_rms_norm_residual_adds_in_place_then_norms():
    torch.manual_seed(2)
    resid = torch.randn(4, 200, device=DEVICE)
    delta = torch.randn(4, 200, device=DEVICE)
    w = torch.randn(200, device=DEVICE)
    summed = resid + delta
    out = rms_norm_residual(resid, delta, w, 1e-6)
    torch.testing.assert_close(resid, summed)
    torch.testing.assert_close(out.double().cpu(), _reference_rms(summed.cpu(), w.cpu(), 1e-6),
                               atol=1e-5, rtol=1e-5)
    again = summed.clone()
    torch.testing.assert_close(_launch_rms_add(again, torch.zeros_like(delta), w, 1e-6), out)


def test_row_kernels_launched_directly():
    x = torch.full((2, 64), 2.0, device=DEVICE)
    out = torch.empty_like(x)
    _rms_row_kernel[(2,)](x, out, None, 0.0, 64, 64, TILE=128, HAS_WEIGHT=False)
    torch.testing.assert_close(out, torch.ones_like(x))
    resid, delta = torch.ones_like(x), torch.full_like(x, 3.0)
    _rms_add_row_kernel[(2,)](resid, delta, out, None, 0.0, 64, 64, TILE=128, HAS_WEIGHT=False)
    torch.testing.assert_close(resid, torch.full_like(x, 4.0))
    torch.testing.assert_close(out, torch.ones_like(x))
    assert hasattr(norm_kernels._libm, "rsqrt")


def test_rmsnorm_module_and_inference_only_guard():
    layer = RMSNorm(32, include_weight=False).to(DEVICE)
    assert layer.weight is None
    x = torch.randn(2, 32, device=DEVICE)
    torch.testing.assert_close(layer.forward(x), rms_norm(x, None, layer.eps))
    with pytest.raises(ValueError, match="no gradients"):
        RMSNorm(32).to(DEVICE)(x)


@torch.no_grad()
def test_engine_prelude_writes_the_cache_the_reference_expects():
    torch.manual_seed(3)
    prelude = AttentionPrelude(hidden=64, q_heads=4, kv_heads=2, head_dim=16).to(DEVICE)
    layout = PaddedKVLayout.from_lengths([2, 1], [3, 4], 4, device=DEVICE)
    x = torch.randn(3, 64, device=DEVICE)
    k_cache = torch.zeros(1, 8, 2, 16, device=DEVICE)
    v_cache = torch.zeros_like(k_cache)
    q = prelude.first_layer(x, k_cache, v_cache, layout)
    h = _reference_rms(x.cpu(), prelude.norm.weight.cpu(), prelude.norm.eps).float()
    v = (h @ prelude.wv.cpu().t()).view(3, 2, 16)
    torch.testing.assert_close(v_cache[0, 1:3].cpu(), v[:2], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(v_cache[0, 7].cpu(), v[2], atol=1e-4, rtol=1e-4)
    assert q.shape == (1, 3, 4, 16)
    resid, delta = x.clone(), torch.randn_like(x)
    q2 = prelude(resid, delta, k_cache, v_cache, layout)
    torch.testing.assert_close(resid, x + delta)
    assert q2.shape == q.shape
