"""The schedule, the split-KV decode and the combine against plain PyTorch
fp32 references, on tiny shapes.

Runs on a CUDA device or on the CPU under TRITON_INTERPRET=1. The schedule
is compared bit-exact with a Python transcription of upstream's greedy walk;
the attention output (bf16) within 2e-2 absolute and the log-sum-exp
within 1e-3 of an fp32 reference over the gathered pages."""

import math

import torch

from engine import decode_step
from mlakern import flash_mla_with_kvcache, get_mla_metadata

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL_OUT = 2e-2
TOL_LSE = 1e-3


def _schedule_ref(lens, parts, block_n=64, overhead=5):
    blocks = [math.ceil(n / block_n) for n in lens]
    payload = math.ceil(sum(b + overhead for b in blocks) / parts) + overhead
    meta, splits = [], [0]
    idx = blk = split = 0
    for _ in range(parts):
        row = [idx, blk * block_n, 0, 0, split]
        remain = payload
        while idx < len(lens):
            left = blocks[idx] - blk
            if remain >= left + overhead:
                splits.append(splits[-1] + split + 1)
                remain -= left + overhead
                idx, blk, split = idx + 1, 0, 0
            else:
                if remain - overhead > 0:
                    blk += remain - overhead
                    split += 1
                break
        row[2] = idx if blk > 0 else idx - 1
        row[3] = blk * block_n if blk > 0 else lens[idx - 1]
        meta.append(row)
    return meta, splits


def _cache(lens, h_k, seed):
    g = torch.Generator().manual_seed(seed)
    n_pages = [math.ceil(n / 64) for n in lens]
    total = sum(n_pages) + 3
    cache = torch.randn(total, 64, h_k, 576, generator=g).bfloat16()
    perm = torch.randperm(total, generator=g)
    table = torch.zeros(len(lens), max(n_pages), dtype=torch.int32)
    at = 0
    for i, n in enumerate(n_pages):
        table[i, :n] = perm[at:at + n].int()
        at += n
    return cache.to(DEVICE), table.to(DEVICE)


def _reference(q, cache, table, lens, scale, causal):
    b, s_q, h_q, _ = q.shape
    h_k = cache.shape[2]
    outs, lses = [], []
    for i in range(b):
        n = int(lens[i])
        kv = cache[table[i].long()].reshape(-1, h_k, 576)[:n].float()
        kv = kv.repeat_interleave(h_q // h_k, dim=1).transpose(0, 1)
        qi = q[i].float().transpose(0, 1)
        s = qi @ kv.transpose(-1, -2) * scale
        if causal:
            mask = torch.ones(s_q, n, dtype=torch.bool, device=q.device).tril(n - s_q)
            s = s.masked_fill(~mask, float("-inf"))
        lses.append(torch.logsumexp(s, dim=-1))
        outs.append((torch.softmax(s, dim=-1) @ kv[..., :512]).transpose(0, 1))
    return torch.stack(outs), torch.stack(lses)


def test_schedule_is_the_greedy_walk():
    lens = torch.tensor([130, 64, 1, 700, 257], dtype=torch.int32, device=DEVICE)
    meta, splits = get_mla_metadata(lens, 16, 1)
    ref_meta, ref_splits = _schedule_ref(lens.tolist(), meta.shape[0])
    assert meta[:, :5].tolist() == ref_meta
    assert splits.tolist() == ref_splits


def _run(lens, s_q, h_q, h_k, causal, seed):
    cache, table = _cache(lens, h_k, seed)
    g = torch.Generator().manual_seed(seed + 1)
    q = torch.randn(len(lens), s_q, h_q, 576, generator=g).bfloat16().to(DEVICE)
    seqlens = torch.tensor(lens, dtype=torch.int32, device=DEVICE)
    meta, splits = get_mla_metadata(seqlens, s_q * h_q // h_k, h_k)
    scale = 576 ** -0.5
    out, lse = flash_mla_with_kvcache(q, cache, table, seqlens, 512, meta, splits, softmax_scale=scale, causal=causal)
    ref_out, ref_lse = _reference(q, cache, table, seqlens, scale, causal)
    assert out.shape == (len(lens), s_q, h_q, 512) and lse.shape == (len(lens), h_q, s_q)
    torch.testing.assert_close(out.float(), ref_out, atol=TOL_OUT, rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=TOL_LSE, rtol=0)
    return splits


def test_decode_splits_and_combines():
    splits = _run([300, 45], s_q=1, h_q=4, h_k=1, causal=False, seed=0)
    assert (splits[1:] - splits[:-1]).max() > 1, "the schedule must split a request"


def test_decode_causal_multi_token():
    _run([130, 70], s_q=2, h_q=2, h_k=1, causal=True, seed=3)


def test_engine_decode_step():
    lens = [100, 200]
    cache, table = _cache(lens, 1, 7)
    g = torch.Generator().manual_seed(8)
    q = torch.randn(2, 1, 2, 576, generator=g).bfloat16().to(DEVICE)
    seqlens = torch.tensor(lens, dtype=torch.int32, device=DEVICE)
    (out, lse), = decode_step([q], [cache], table, seqlens, 0.1)
    ref_out, ref_lse = _reference(q, cache, table, seqlens, 0.1, False)
    torch.testing.assert_close(out.float(), ref_out, atol=TOL_OUT, rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=TOL_LSE, rtol=0)
