"""The sparse-MLA prefill caller: its plan (by hand), the batch remap and the
per-chunk upconvert, Triton kernels against the kernel rows' references."""
from __future__ import annotations

import pytest
import torch

from portq_kernels.kv_cache import reference as kv_ref
from portq_kernels.mla_prefill import reference as ref
from portq_kernels.mla_prefill.sparse_prefill import (
    build_sparse_prefill_metadata,
    get_prefill_workspace_size,
    iter_sparse_prefill_chunks,
    remap_sparse_topk,
    split_prefill_chunks,
)

ENCODERS = {"fp8_ds_mla": (kv_ref.encode_fp8_ds_mla, kv_ref.decode_fp8_ds_mla),
            "nvfp4_ds_mla": (kv_ref.encode_nvfp4_ds_mla, kv_ref.decode_nvfp4_ds_mla)}


@pytest.mark.parametrize("lens,size,want", [
    ([2, 3, 4, 2], 5, [(0, 2), (2, 3), (3, 4)]),
    ([5, 5, 5], 5, [(0, 1), (1, 2), (2, 3)]),
    ([1, 1, 1], 10, [(0, 3)]),
    ([], 10, []),
])
def test_split_prefill_chunks(lens, size, want):
    assert split_prefill_chunks(torch.tensor(lens, dtype=torch.int64), size) == want


def test_split_prefill_chunks_offset_and_oversized():
    assert split_prefill_chunks(torch.tensor([3, 3]), 4, request_offset=2) == [(2, 3), (3, 4)]
    with pytest.raises(ValueError):
        split_prefill_chunks(torch.tensor([3, 9]), 8)


def test_workspace_size():
    assert get_prefill_workspace_size(163840) == 5 * 163840
    with pytest.raises(ValueError):
        get_prefill_workspace_size(0)


def test_plan_by_hand():
    """Two decodes then prefills of lengths [10, 15, 20, 5] in a 25-row workspace."""
    seq_lens = torch.tensor([7, 9, 10, 15, 20, 5])
    query_start_loc = torch.tensor([0, 1, 2, 5, 9, 15, 17])
    block_table = torch.arange(6 * 4, dtype=torch.int32).view(6, 4)
    meta = build_sparse_prefill_metadata(seq_lens, query_start_loc, block_table, 2, 25)
    assert meta.workspace_starts.tolist() == [0, 10, 0, 20]
    assert meta.request_ids.tolist() == [-1, -1] + [0] * 3 + [1] * 4 + [2] * 6 + [3] * 2
    assert [(c.req_start_idx, c.req_end_idx) for c in meta.chunks] == [(0, 2), (2, 4)]
    assert [c.tokens_slice for c in meta.chunks] == [slice(2, 9), slice(9, 17)]
    assert [c.chunk_tot_seqlen for c in meta.chunks] == [25, 25]
    assert torch.equal(meta.chunks[1].block_table, block_table[4:6])
    assert meta.chunks[1].workspace_starts.tolist() == [0, 20]


def test_plan_decode_only_is_none():
    assert build_sparse_prefill_metadata(torch.tensor([4, 5]), torch.tensor([0, 1, 2]),
                                         torch.zeros(2, 3, dtype=torch.int32), 2, 10) is None


@pytest.mark.parametrize("bad", ["qsl length", "block table dtype", "num_decodes", "gpu lens"])
def test_plan_rejects(bad):
    seq_lens, qsl = torch.tensor([4, 5]), torch.tensor([0, 1, 3])
    bt, nd = torch.zeros(2, 3, dtype=torch.int32), 1
    if bad == "qsl length":
        qsl = qsl[:2]
    elif bad == "block table dtype":
        bt = bt.long()
    elif bad == "num_decodes":
        nd = 3
    elif bad == "gpu lens":
        seq_lens = torch.empty(2, dtype=torch.int64, device="meta")
    # A wrong dtype is a TypeError, as everywhere in portq_kernels.validation.
    with pytest.raises(TypeError if bad.endswith("dtype") else ValueError):
        build_sparse_prefill_metadata(seq_lens, qsl, bt, nd, 10)


def make_batch(device, kv_cache_dtype, *, block_size=16, topk=128, seed=0,
               seq_lens=(50, 23, 40, 70, 30), query_lens=(1, 1, 8, 5, 6)):
    """Two decode requests (one query row each) then three prefills; a packed
    cache holding every request's whole sequence; causal top-k rows."""
    g = torch.Generator().manual_seed(seed)
    seq_lens, query_lens = torch.tensor(seq_lens), torch.tensor(query_lens)
    qsl = torch.zeros(6, dtype=torch.int64)
    qsl[1:] = torch.cumsum(query_lens, 0)
    blocks_per_req = [-(-int(n) // block_size) for n in seq_lens]
    num_blocks = sum(blocks_per_req) + 2
    perm = torch.randperm(num_blocks, generator=g).to(torch.int32)
    block_table = torch.zeros(5, max(blocks_per_req) + 1, dtype=torch.int32)
    used = 0
    for r, n in enumerate(blocks_per_req):
        block_table[r, :n] = perm[used:used + n]
        used += n
    encode, _ = ENCODERS[kv_cache_dtype]
    kv_c = torch.randn(num_blocks * block_size, 512, generator=g).to(torch.bfloat16)
    k_pe = (torch.randn(num_blocks * block_size, 64, generator=g) * 4).to(torch.bfloat16)
    cache = encode(kv_c, k_pe).view(num_blocks, block_size, -1)

    num_tokens = int(qsl[-1])
    req_id = torch.repeat_interleave(torch.arange(5), query_lens).to(torch.int32)
    topk_indices = torch.full((num_tokens, topk), -1, dtype=torch.int32)
    for t in range(num_tokens):
        r = int(req_id[t])
        pos = int(seq_lens[r]) - int(qsl[r + 1]) + t  # causal: tokens up to this one
        k = min(pos + 1, topk - 7)
        topk_indices[t, :k] = torch.randperm(pos + 1, generator=g)[:k].to(torch.int32)
        topk_indices[t] = topk_indices[t, torch.randperm(topk, generator=g)]
    return dict(seq_lens=seq_lens, qsl=qsl, block_table=block_table.to(device),
                cache=cache.to(device), req_id=req_id.to(device),
                topk_indices=topk_indices.to(device), block_size=block_size)


def run_prefill(module, device, batch, kv_cache_dtype, workspace_size):
    meta = build_sparse_prefill_metadata(batch["seq_lens"], batch["qsl"], batch["block_table"],
                                         2, workspace_size)
    indices, lengths = module.remap_sparse_topk(batch["topk_indices"], batch["req_id"],
                                                batch["block_table"], batch["block_size"], meta)
    workspace = torch.full((workspace_size, 576), float("nan"), dtype=torch.bfloat16,
                           device=device)
    chunks = [(c.workspace.clone(), c.indices, c.lengths, c.chunk)
              for c in module.iter_sparse_prefill_chunks(batch["cache"], kv_cache_dtype,
                                                          workspace, meta, indices, lengths)]
    return meta, indices, lengths, chunks


def sorted_rows(x):
    return x.sort(dim=1).values


@pytest.mark.parametrize("kv_cache_dtype", ["fp8_ds_mla", "nvfp4_ds_mla"])
def test_prefill_iteration_matches_reference(device, kv_cache_dtype):
    import portq_kernels.mla_prefill.sparse_prefill as kernels_module

    batch = make_batch(device, kv_cache_dtype)
    meta, indices, lengths, chunks = run_prefill(kernels_module, device, batch, kv_cache_dtype,
                                                 100)
    _, want_indices, want_lengths, want_chunks = run_prefill(ref, device, batch, kv_cache_dtype,
                                                             100)
    assert [c.req_start_idx for c in meta.chunks] == [0, 1]
    assert torch.equal(lengths, want_lengths)
    assert torch.equal(sorted_rows(indices), sorted_rows(want_indices))
    for (ws, idx, ln, chunk), (want_ws, _, _, _) in zip(chunks, want_chunks):
        assert ws.shape == (chunk.chunk_tot_seqlen, 576)
        assert torch.equal(ws.view(torch.int16), want_ws.view(torch.int16))


@pytest.mark.parametrize("kv_cache_dtype", ["fp8_ds_mla", "nvfp4_ds_mla"])
def test_prefill_rows_read_their_own_tokens(device, kv_cache_dtype):
    """Independent of the references' composition: every valid index of a
    prefill row selects, in its chunk's workspace, the upconverted cache entry
    of the token the indexer chose; decode rows select the cache slot."""
    import portq_kernels.mla_prefill.sparse_prefill as kernels_module

    batch = make_batch(device, kv_cache_dtype, seed=3)
    _, decode = ENCODERS[kv_cache_dtype]
    meta, indices, lengths, chunks = run_prefill(kernels_module, device, batch, kv_cache_dtype,
                                                 100)
    cache, bt, bs = batch["cache"], batch["block_table"], batch["block_size"]
    flat = cache.view(-1, cache.shape[-1])
    tok = batch["topk_indices"]
    for row in range(2):  # decode rows: slots
        r = int(batch["req_id"][row])
        chosen = tok[row][tok[row] >= 0].long()
        slots = bt[r, chosen // bs].long() * bs + chosen % bs
        n = int(lengths[row])
        assert torch.equal(indices[row, :n].sort().values, slots.sort().values.to(torch.int32))
    for ws, idx, ln, chunk in chunks:
        for i in range(idx.shape[0]):
            row = chunk.tokens_slice.start + i
            r = int(batch["req_id"][row])
            pid = r - 2
            n = int(ln[i])
            rows = idx[i, :n].long()
            # workspace row = chunk-local start + token: invert it, then look both up
            tokens = rows - int(meta.workspace_starts[pid])
            assert torch.equal(tokens.sort().values, tok[row][tok[row] >= 0].long().sort().values)
            want = decode(flat[bt[r, tokens // bs].long() * bs + tokens % bs])
            assert torch.equal(ws[rows].view(torch.int16), want.view(torch.int16))


def test_iteration_rejects_bad_inputs(device):
    import portq_kernels.mla_prefill.sparse_prefill as kernels_module

    batch = make_batch(device, "fp8_ds_mla")
    meta = build_sparse_prefill_metadata(batch["seq_lens"], batch["qsl"], batch["block_table"],
                                         2, 100)
    idx, ln = kernels_module.remap_sparse_topk(batch["topk_indices"], batch["req_id"],
                                               batch["block_table"], 16, meta)
    ws = torch.empty(100, 576, dtype=torch.bfloat16, device=device)
    bad_calls = [
        (batch["cache"], "fp8", ws, ValueError),  # not a packed format
        (batch["cache"], "nvfp4_ds_mla", ws, ValueError),  # 656-byte entries are not nvfp4
        (batch["cache"], "fp8_ds_mla", ws[:50], ValueError),  # a chunk needs 100 rows
        (batch["cache"], "fp8_ds_mla", ws.float(), TypeError),  # the workspace is bf16
    ]
    for cache, dtype, workspace, error in bad_calls:
        with pytest.raises(error):
            next(iter_sparse_prefill_chunks(cache, dtype, workspace, meta, idx, ln))


@pytest.mark.gpu
@pytest.mark.parametrize("kv_cache_dtype", ["fp8_ds_mla", "nvfp4_ds_mla"])
def test_gpu_long_prefills(kv_cache_dtype):
    """Top-k 2048, block 64, sequences of thousands of tokens over three chunks."""
    import portq_kernels.mla_prefill.sparse_prefill as kernels_module

    device = torch.device("cuda")
    batch = make_batch(device, kv_cache_dtype, block_size=64, topk=2048, seed=7,
                       seq_lens=(3000, 2500, 9000, 7000, 3000), query_lens=(1, 1, 64, 32, 48))
    meta, indices, lengths, chunks = run_prefill(kernels_module, device, batch, kv_cache_dtype,
                                                 10000)
    _, want_indices, want_lengths, want_chunks = run_prefill(ref, device, batch, kv_cache_dtype,
                                                             10000)
    assert len(meta.chunks) == 2
    assert torch.equal(lengths, want_lengths)
    assert torch.equal(sorted_rows(indices), sorted_rows(want_indices))
    for (ws, _, _, _), (want_ws, _, _, _) in zip(chunks, want_chunks):
        assert torch.equal(ws.view(torch.int16), want_ws.view(torch.int16))
