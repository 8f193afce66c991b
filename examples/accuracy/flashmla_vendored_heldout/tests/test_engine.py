"""The engine's decode step on FlashMLA's vendored interface, against a
plain torch fp32 reference over the gathered pages. Needs a Hopper GPU and
the flash_mla_cuda extension built from the vendored csrc/ (see
flash_mla/__init__.py); skipped otherwise, since the interface imports the
extension at import time. Tolerance 2e-2 absolute on the bf16 output, 1e-3
on the log-sum-exp; the schedule's cumulative splits checked exactly
(a partition of every request's KV blocks)."""

import importlib.util
import math

import pytest
import torch

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or importlib.util.find_spec("flash_mla_cuda") is None,
    reason="needs a GPU and the flash_mla_cuda extension built from the vendored csrc/",
)


def _cache(lens, seed):
    g = torch.Generator().manual_seed(seed)
    n_pages = [math.ceil(n / 64) for n in lens]
    total = sum(n_pages) + 3
    cache = torch.randn(total, 64, 1, 576, generator=g).bfloat16()
    perm = torch.randperm(total, generator=g)
    table = torch.zeros(len(lens), max(n_pages), dtype=torch.int32)
    at = 0
    for i, n in enumerate(n_pages):
        table[i, :n] = perm[at:at + n].int()
        at += n
    return cache.cuda(), table.cuda()


def _reference(q, cache, table, lens, scale, causal):
    b, s_q, h_q, _ = q.shape
    outs, lses = [], []
    for i in range(b):
        n = int(lens[i])
        kv = cache[table[i].long()].reshape(-1, 576)[:n].float()
        s = q[i].float().transpose(0, 1) @ kv.T * scale
        if causal:
            mask = torch.ones(s_q, n, dtype=torch.bool, device=q.device).tril(n - s_q)
            s = s.masked_fill(~mask, float("-inf"))
        lses.append(torch.logsumexp(s, dim=-1))
        outs.append((torch.softmax(s, dim=-1) @ kv[:, :512]).transpose(0, 1))
    return torch.stack(outs), torch.stack(lses)


@pytest.mark.parametrize("s_q,causal", [(1, False), (2, True)])
def test_decode_step_matches_reference(s_q, causal):
    from engine import decode_step
    from engine.mla_decode import plan_step

    lens = [300, 45, 1000]
    cache, table = _cache(lens, 0)
    g = torch.Generator().manual_seed(1)
    q = torch.randn(3, s_q, 16, 576, generator=g).bfloat16().cuda()
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    (out, lse), = decode_step([q], [cache], table, seqlens, 576 ** -0.5, causal=causal)
    ref_out, ref_lse = _reference(q, cache, table, seqlens, 576 ** -0.5, causal)
    torch.testing.assert_close(out.float(), ref_out, atol=2e-2, rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=1e-3, rtol=0)
    _, splits = plan_step(seqlens, 16, 1, s_q)
    assert splits[0].item() == 0 and bool((splits[1:] > splits[:-1]).all())
