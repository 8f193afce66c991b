"""The engine's KV-cache ops against torch references: every op of
csrc/bindings.cpp, each named after the host function it runs."""

import pytest
import torch

OPS = ("nope_qkv_varseq_prefill", "nope_qkv_decoding", "rope_qkv_varseq_prefill", "rope_qkv_decoding",
       "dequantize_fp8_cache", "allocate_kv_cache")


def _built():
    return (torch.cuda.is_available() and hasattr(torch.ops, "kv_ops")
            and all(hasattr(torch.ops.kv_ops, op) for op in OPS))


pytestmark = pytest.mark.skipif(
    not _built(), reason="needs a GPU and the kv_ops extension built from csrc/ with nvcc"
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


def test_nope_qkv_varseq_prefill_copies_rows():
    xq, xk, xv = _packed(5)
    k, v = torch.ops.kv_ops.allocate_kv_cache(2, 8, KV_HEADS, DIM, False, False, torch.device("cuda"))
    batch = torch.tensor([0, 0, 0, 1, 1], dtype=torch.int32, device="cuda")
    pos = torch.tensor([0, 1, 2, 0, 1], dtype=torch.int32, device="cuda")
    xq_out = torch.ops.kv_ops.nope_qkv_varseq_prefill(xq, xk, xv, k, v, batch, pos)
    torch.testing.assert_close(xq_out, xq)
    torch.testing.assert_close(k[1, :2], xk[3:])
    torch.testing.assert_close(v[0, :3], xv[:3])


def test_nope_qkv_decoding_honours_actual_batch_size():
    xq, xk, xv = _packed(2)
    k, v = torch.ops.kv_ops.allocate_kv_cache(2, 8, KV_HEADS, DIM, False, False, torch.device("cuda"))
    pos = torch.tensor([3, 5], dtype=torch.int32, device="cuda")
    live = torch.tensor([1], dtype=torch.int64, device="cuda")
    torch.ops.kv_ops.nope_qkv_decoding(xq, xk, xv, k, v, pos, None, 64, live)
    torch.testing.assert_close(k[0, 3], xk[0])
    assert k[1].abs().sum().item() == 0


def test_rope_qkv_varseq_prefill_rotates_q_and_k():
    xq, xk, xv = _packed(3)
    k, v = torch.ops.kv_ops.allocate_kv_cache(1, 8, KV_HEADS, DIM, False, False, torch.device("cuda"))
    batch = torch.zeros(3, dtype=torch.int32, device="cuda")
    pos = torch.tensor([4, 5, 6], dtype=torch.int32, device="cuda")
    xq_out = torch.ops.kv_ops.rope_qkv_varseq_prefill(xq, xk, xv, k, v, batch, pos, 10000.0)
    torch.testing.assert_close(xq_out.double(), _rope(xq, pos), atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(k[0, 4:7].double(), _rope(xk, pos), atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(v[0, 4:7], xv)


def test_rope_qkv_decoding_into_fp8_round_trips_through_dequantize_fp8_cache():
    xq, xk, xv = _packed(2)
    k, v = torch.ops.kv_ops.allocate_kv_cache(2, 128, KV_HEADS, DIM, True, True, torch.device("cuda"))
    pos = torch.tensor([0, 7], dtype=torch.int32, device="cuda")
    torch.ops.kv_ops.rope_qkv_decoding(xq, xk, xv, k, v, pos, 10000.0)
    kv_seqlen = torch.tensor([1, 8], dtype=torch.int32, device="cuda")
    k_dq, v_dq = torch.ops.kv_ops.dequantize_fp8_cache(k, v, kv_seqlen)
    torch.testing.assert_close(k_dq[1, 7].double(), _rope(xk[1:], pos[1:])[0], atol=0.15, rtol=0.1)
    torch.testing.assert_close(v_dq[0, 0].float(), xv[0].float(), atol=0.15, rtol=0.1)
