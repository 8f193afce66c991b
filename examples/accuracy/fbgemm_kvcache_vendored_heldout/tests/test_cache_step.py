"""The engine's cache steps over FBGEMM's vendored KV-cache ops against torch
references: NoPE and RoPE writes of prefill and decode, and an FP8 round trip."""

import pytest
import torch

from engine import cache_step, kv_ops

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not kv_ops.ops_loaded(),
    reason="needs a GPU and torch.ops.fbgemm built from the vendored csrc/third_party/fbgemm sources (engine/kv_ops.py)",
)

HEADS, KV_HEADS, DIM = 4, 2, 128


def _rope(x, pos, theta=10000.0):
    inv_freq = theta ** (-torch.arange(0, DIM, 2, device=x.device, dtype=torch.float64) / DIM)
    ang = pos.double()[:, None, None] * inv_freq
    x = x.double()
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * ang.cos() - x1 * ang.sin(), x1 * ang.cos() + x0 * ang.sin()], -1).flatten(-2)


def _packed(tokens):
    torch.manual_seed(0)
    mk = lambda h: torch.randn(tokens, h, DIM, device="cuda", dtype=torch.bfloat16)
    return mk(HEADS), mk(KV_HEADS), mk(KV_HEADS)


def test_nope_prefill_copies_k_and_v_into_the_cache():
    xq, xk, xv = _packed(5)
    cache = cache_step.LayerCache(2, 8, KV_HEADS, DIM, fp8=False, device="cuda")
    batch = torch.tensor([0, 0, 0, 1, 1], dtype=torch.int32, device="cuda")
    pos = torch.tensor([0, 1, 2, 0, 1], dtype=torch.int32, device="cuda")
    q = cache_step.write_prefill(cache, xq, xk, xv, batch, pos)
    torch.testing.assert_close(q, xq)
    torch.testing.assert_close(cache.k[1, :2], xk[3:])
    torch.testing.assert_close(cache.v[0, :3], xv[:3])


def test_rope_prefill_rotates_q_and_k():
    xq, xk, xv = _packed(3)
    cache = cache_step.LayerCache(1, 8, KV_HEADS, DIM, fp8=False, device="cuda")
    batch = torch.zeros(3, dtype=torch.int32, device="cuda")
    pos = torch.tensor([4, 5, 6], dtype=torch.int32, device="cuda")
    q = cache_step.write_prefill(cache, xq, xk, xv, batch, pos, rope_theta=10000.0)
    torch.testing.assert_close(q.double(), _rope(xq, pos), atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(cache.k[0, 4:7].double(), _rope(xk, pos), atol=2e-2, rtol=2e-2)


def test_nope_decode_writes_each_sequence_at_its_position():
    xq, xk, xv = _packed(2)
    cache = cache_step.LayerCache(2, 8, KV_HEADS, DIM, fp8=False, device="cuda")
    pos = torch.tensor([3, 5], dtype=torch.int32, device="cuda")
    cache_step.write_decode(cache, xq, xk, xv, pos)
    torch.testing.assert_close(cache.k[0, 3], xk[0])
    torch.testing.assert_close(cache.v[1, 5], xv[1])


def test_rope_decode_into_fp8_reads_back_close():
    xq, xk, xv = _packed(2)
    cache = cache_step.LayerCache(2, 128, KV_HEADS, DIM, fp8=True, device="cuda")
    pos = torch.tensor([0, 7], dtype=torch.int32, device="cuda")
    cache_step.write_decode(cache, xq, xk, xv, pos, rope_theta=10000.0)
    k, v = cache_step.read_bf16(cache, torch.tensor([1, 8], dtype=torch.int32, device="cuda"))
    torch.testing.assert_close(k[1, 7].double(), _rope(xk[1:], pos[1:])[0], atol=0.15, rtol=0.1)
    torch.testing.assert_close(v[0, 0].float(), xv[0].float(), atol=0.15, rtol=0.1)
