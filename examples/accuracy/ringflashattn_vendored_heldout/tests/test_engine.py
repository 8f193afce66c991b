"""The vendored ring attention, where the scorer has written it.

- update_out_and_lse (utils.py, pure torch) on the CPU: two blocks merged
  against attention over the union of their keys in fp64, tolerance 1e-5
  (absolute) on out and lse;
- the Triton layout kernels (triton_utils.py) bit-exact against torch
  indexing, on a CUDA device only: at this base the hosts enter
  torch.cuda.device;
- the engine at world size 1 (a one-rank NCCL group), only where flash-attn
  and a CUDA device are present: out within 2e-3 of a torch fp32 reference.
"""

import math

import pytest
import torch
import torch.distributed as dist

utils = pytest.importorskip("ring_flash_attn.utils", reason="the vendored module is written by the scorer")

HEADS, DIM = 2, 16
SEQLENS = [5, 1, 9]


def _cu(seqlens, device="cpu"):
    return torch.tensor([0] + list(torch.tensor(seqlens).cumsum(0)), dtype=torch.int32, device=device)


def _attend(q, k, v, scale):
    s = torch.einsum("thd,shd->hts", q, k) * scale
    return torch.einsum("hts,shd->thd", torch.softmax(s, dim=-1), v), torch.logsumexp(s, dim=-1)


def test_update_out_and_lse_matches_attention_over_the_union():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(7, HEADS, DIM, generator=g, dtype=torch.float64)
    k1, v1, k2, v2 = (torch.randn(6, HEADS, DIM, generator=g, dtype=torch.float64) for _ in range(4))
    scale = 1.0 / math.sqrt(DIM)
    (o1, l1), (o2, l2) = _attend(q, k1, v1, scale), _attend(q, k2, v2, scale)
    _, want_lse = _attend(q, torch.cat([k1, k2]), torch.cat([v1, v2]), scale)
    out, lse = utils.update_out_and_lse(None, None, o1.float(), l1.float())
    out, lse = utils.update_out_and_lse(out, lse, o2.float(), l2.float())
    assert (lse[..., 0].double() - want_lse.transpose(0, 1)).abs().max() < 1e-5
    w1 = torch.exp(l1 - want_lse).transpose(0, 1)[..., None]
    w2 = torch.exp(l2 - want_lse).transpose(0, 1)[..., None]
    assert (out.double() - (w1 * o1.float().double() + w2 * o2.float().double())).abs().max() < 1e-5


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="the vendored layout hosts need a CUDA device")


@cuda
def test_triton_layout_kernels_are_exact():
    triton_utils = pytest.importorskip("ring_flash_attn.triton_utils")
    cu, max_len = _cu(SEQLENS, "cuda"), max(SEQLENS)
    padded = torch.randn(len(SEQLENS), HEADS, max_len, device="cuda")
    packed = triton_utils.flatten_varlen_lse(padded, cu)
    assert torch.equal(packed, torch.cat([padded[i, :, :n] for i, n in enumerate(SEQLENS)], dim=1))
    back = triton_utils.unflatten_varlen_lse(packed.transpose(0, 1).unsqueeze(-1), cu, max_len)
    for i, n in enumerate(SEQLENS):
        assert torch.equal(back[i, :, :n], padded[i, :, :n])


@cuda
def test_engine_prefill_at_world_size_one(tmp_path):
    pytest.importorskip("flash_attn")
    from engine import prefill_attention

    dist.init_process_group("nccl", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        cu, max_len = _cu(SEQLENS, "cuda"), max(SEQLENS)
        q, k, v = (torch.randn(sum(SEQLENS), HEADS, DIM, device="cuda").half() for _ in range(3))
        out = prefill_attention(q, k, v, cu, max_len)
        for i, n in enumerate(SEQLENS):
            a = int(cu[i])
            s = torch.einsum("thd,shd->hts", q[a:a + n].float(), k[a:a + n].float()) / math.sqrt(DIM)
            s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
            want = torch.einsum("hts,shd->thd", torch.softmax(s, dim=-1), v[a:a + n].float())
            assert (out[a:a + n].float() - want).abs().max() < 2e-3
    finally:
        dist.destroy_process_group()
