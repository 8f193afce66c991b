"""The MLA chunked-context caller: its plan (by hand) and one layer's
iteration end to end, Triton kernels against the kernel rows' references."""
from __future__ import annotations

import pytest
import torch

from portq_kernels.mla_prefill import reference as ref
from portq_kernels.mla_prefill.chunked_context import (
    allocate_chunked_prefill_workspace,
    build_chunked_context_metadata,
    determine_chunked_prefill_workspace_size,
    iter_prefill_context_chunks,
)

KV_LORA_RANK, ROPE_DIM = 512, 64
HEAD_SIZE = KV_LORA_RANK + ROPE_DIM


# ---------------------------------------------------------------------------------------------
# The plan.

def test_workspace_size_formula():
    assert determine_chunked_prefill_workspace_size(4096, 256, 64) == 64 * 1024
    assert determine_chunked_prefill_workspace_size(1024, 4, 16) == 8 * 1024
    assert determine_chunked_prefill_workspace_size(128, 2048, 64) == 2048 * 64


def test_plan_by_hand():
    workspace = torch.empty(96, HEAD_SIZE, dtype=torch.bfloat16)
    meta = build_chunked_context_metadata(torch.tensor([0, 37, 200, 5]), workspace, 16)
    assert meta.chunk_size == 32 and meta.num_chunks == 7
    assert meta.seq_lens[0].tolist() == [0, 32, 32, 5]
    assert meta.seq_lens[1].tolist() == [0, 5, 32, 0]
    assert all(meta.seq_lens[i].tolist() == [0, 0, 32, 0] for i in range(2, 6))
    assert meta.seq_lens[6].tolist() == [0, 0, 8, 0]
    assert meta.cu_seq_lens[0].tolist() == [0, 0, 32, 64, 69]
    assert meta.starts[3].tolist() == [96] * 4
    assert meta.seq_tot == [69, 37, 32, 32, 32, 32, 8] == meta.chunk_total_token
    assert meta.max_seq_lens == [32, 32, 32, 32, 32, 32, 8]
    assert meta.workspace_rows.tolist() == list(range(96))


def test_plan_covers_every_context_token_once():
    g = torch.Generator().manual_seed(1)
    context = torch.randint(0, 3000, (9,), generator=g)
    context[2] = 0
    meta = build_chunked_context_metadata(context, torch.empty(1000, 8), 64)
    assert meta.chunk_size % 64 == 0
    assert torch.equal(meta.seq_lens.sum(0).long(), context)
    assert max(meta.seq_tot) <= 1000
    covered_to = meta.starts[:, :].long() + meta.seq_lens.long()
    # chunk i+1 of a request starts where chunk i ended
    assert torch.equal(meta.starts[1:].long().clamp(max=context), covered_to[:-1].clamp(
        max=context))


def test_plan_without_context_is_none():
    assert build_chunked_context_metadata(torch.tensor([0, 0]), torch.empty(64, 8), 16) is None


@pytest.mark.parametrize("case", ["workspace too small", "gpu lens", "float lens", "page size",
                                  "negative", "workspace 1-D"])
def test_plan_rejects(case):
    lens, workspace, page = torch.tensor([5, 7, 9]), torch.empty(40, 8), 16
    if case == "workspace too small":
        pass
    elif case == "gpu lens":
        lens = torch.empty(3, dtype=torch.int64, device="meta")
    elif case == "float lens":
        lens = lens.float()
    elif case == "page size":
        page = 0
    elif case == "negative":
        lens, workspace = torch.tensor([5, -1]), torch.empty(64, 8)
    elif case == "workspace 1-D":
        workspace = torch.empty(40)
    # A wrong dtype is a TypeError, as everywhere in portq_kernels.validation.
    with pytest.raises(TypeError if case == "float lens" else ValueError):
        build_chunked_context_metadata(lens, workspace, page)


def test_allocate_rejects_dtype():
    with pytest.raises(TypeError):
        allocate_chunked_prefill_workspace(64, HEAD_SIZE, torch.float16, "cpu")


# ---------------------------------------------------------------------------------------------
# One layer, end to end.

def make_layer(device, *, kv_cache_dtype, block_size, context_lens, num_heads=2, nope=128,
               v_dim=128, seed=0):
    """A paged cache holding every request's context, its block table, a weight."""
    g = torch.Generator().manual_seed(seed)
    blocks_per_req = [-(-int(n) // block_size) for n in context_lens]
    num_blocks = sum(blocks_per_req) + 3
    perm = torch.randperm(num_blocks, generator=g)
    width = max(max(blocks_per_req), 1) + 1
    block_table = torch.full((len(context_lens), width), 0, dtype=torch.int32)
    used = 0
    for r, n in enumerate(blocks_per_req):
        block_table[r, :n] = perm[used:used + n].to(torch.int32)
        used += n
    values = torch.randn(num_blocks, block_size, HEAD_SIZE, generator=g)
    scale = torch.tensor([0.05], dtype=torch.float32)
    if kv_cache_dtype == "auto":
        cache = values.to(torch.bfloat16)
    else:
        cache = (values / scale).clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)
    weight = (torch.randn(num_heads * (nope + v_dim), KV_LORA_RANK, generator=g) * 0.05).to(
        torch.bfloat16)
    return (cache.to(device), block_table.to(device), scale.to(device), weight.to(device),
            num_heads, v_dim)


def run_layer(iterate, device, cache, block_table, scale, weight, num_heads, v_dim,
              kv_cache_dtype, workspace_dtype, context_lens, workspace_size, block_size):
    workspace = allocate_chunked_prefill_workspace(workspace_size, HEAD_SIZE, workspace_dtype,
                                                   device)
    workspace.view(torch.uint8).fill_(0x3C)  # poison: every used row must be rewritten
    meta = build_chunked_context_metadata(torch.tensor(context_lens), workspace, block_size)
    chunks = [(c.index, c.k.clone(), c.v.clone(), c.cu_seq_lens.clone(), c.max_seq_len)
              for c in iterate(cache, block_table, meta, kv_cache_dtype, scale, weight, None,
                               num_heads, v_dim, KV_LORA_RANK)]
    return meta, chunks


def assert_chunks_match(got, want, nope):
    """Same chunk metadata; rope bit-exact (a copy, or one fp32 multiply and a
    rounding); K_nope and V within bf16 rounding of the fp32 oracle."""
    assert len(got) == len(want)
    for (_, k, v, cu, mx), (_, rk, rv, rcu, rmx) in zip(got, want):
        assert torch.equal(cu, rcu) and mx == rmx and k.shape == rk.shape
        assert torch.equal(k[..., nope:].view(torch.int16), rk[..., nope:].view(torch.int16))
        for got_part, want_part in ((k[..., :nope], rk[..., :nope]), (v, rv)):
            ref32 = want_part.float()
            tol = 2e-2 * ref32.abs().max().item() + 1e-6
            torch.testing.assert_close(got_part.float(), ref32, rtol=1.6e-2, atol=tol)


CASES = [
    # kv_cache_dtype, workspace dtype, block size, context lengths (prefix hits, one without)
    ("auto", torch.bfloat16, 16, [37, 0, 150, 5]),
    ("fp8", torch.bfloat16, 16, [64, 90, 0]),
    ("fp8", torch.float8_e4m3fn, 32, [120, 7, 33]),
]


@pytest.mark.parametrize("kv_cache_dtype,workspace_dtype,block_size,context_lens", CASES)
def test_iteration_matches_reference(device, kv_cache_dtype, workspace_dtype, block_size,
                                     context_lens):
    layer = make_layer(device, kv_cache_dtype=kv_cache_dtype, block_size=block_size,
                       context_lens=context_lens)
    args = dict(kv_cache_dtype=kv_cache_dtype, workspace_dtype=workspace_dtype,
                context_lens=context_lens, workspace_size=96, block_size=block_size)
    meta, got = run_layer(iter_prefill_context_chunks, device, *layer, **args)
    _, want = run_layer(ref.iter_prefill_context_chunks, device, *layer, **args)
    assert meta.num_chunks >= 2, "the case must exercise several chunks"
    assert len(got) == meta.num_chunks
    assert_chunks_match(got, want, layer[3].shape[0] // layer[4] - layer[5])


def test_rope_rows_are_each_requests_context_in_order(device):
    """Independent of any reference: regrouping the chunks' k_pe per request
    gives exactly that request's cached positions 0 .. context_len - 1."""
    context_lens, block_size = [37, 0, 150, 5], 16
    cache, block_table, scale, weight, heads, v_dim = make_layer(
        device, kv_cache_dtype="auto", block_size=block_size, context_lens=context_lens, seed=4)
    _, chunks = run_layer(iter_prefill_context_chunks, device, cache, block_table, scale, weight,
                          heads, v_dim, "auto", torch.bfloat16, context_lens, 96, block_size)
    nope = weight.shape[0] // heads - v_dim
    for r, n in enumerate(context_lens):
        pieces = [k[int(cu[r]):int(cu[r + 1]), 0, nope:] for _, k, _, cu, _ in chunks]
        got = torch.cat(pieces) if pieces else torch.empty(0)
        pos = torch.arange(n, device=device)
        want = cache[block_table[r, pos // block_size].long(), pos % block_size, KV_LORA_RANK:]
        assert torch.equal(got, want)


@pytest.mark.parametrize("case", ["cache dtype vs fp8 workspace", "scale dtype", "weight shape",
                                  "block table rows", "head size", "unknown cache dtype"])
def test_layer_rejects(device, case):
    cache, block_table, scale, weight, heads, v_dim = make_layer(
        device, kv_cache_dtype="auto", block_size=16, context_lens=[20, 40])
    ws_dtype, dtype_str = torch.bfloat16, "auto"
    if case == "cache dtype vs fp8 workspace":
        ws_dtype = torch.float8_e4m3fn
    elif case == "scale dtype":
        scale = scale.double()
    elif case == "weight shape":
        weight = weight[:, :256]
    elif case == "block table rows":
        block_table = block_table[:1]
    elif case == "head size":
        cache = cache[..., :320]
    elif case == "unknown cache dtype":
        dtype_str = "fp4"
    workspace = allocate_chunked_prefill_workspace(64, HEAD_SIZE, ws_dtype, device)
    meta = build_chunked_context_metadata(torch.tensor([20, 40]), workspace, 16)
    with pytest.raises(TypeError if case == "scale dtype" else ValueError):
        next(iter_prefill_context_chunks(cache, block_table, meta, dtype_str, scale, weight, None,
                                         heads, v_dim, KV_LORA_RANK))


@pytest.mark.gpu
@pytest.mark.parametrize("kv_cache_dtype,workspace_dtype", [
    ("auto", torch.bfloat16), ("fp8", torch.bfloat16), ("fp8", torch.float8_e4m3fn)])
def test_gpu_long_prefix_hits(kv_cache_dtype, workspace_dtype):
    """Long contexts, few new tokens: several 64-page chunks, 16 heads."""
    device = torch.device("cuda")
    context_lens = [9000, 0, 2500, 17000]
    layer = make_layer(device, kv_cache_dtype=kv_cache_dtype, block_size=64,
                       context_lens=context_lens, num_heads=16, seed=9)
    args = dict(kv_cache_dtype=kv_cache_dtype, workspace_dtype=workspace_dtype,
                context_lens=context_lens, workspace_size=8192, block_size=64)
    meta, got = run_layer(iter_prefill_context_chunks, device, *layer, **args)
    _, want = run_layer(ref.iter_prefill_context_chunks, device, *layer, **args)
    assert meta.num_chunks >= 3
    assert_chunks_match(got, want, layer[3].shape[0] // layer[4] - layer[5])
