"""Every op's default wrapper is CUDA-graph capturable: no host read of index
values, so a captured graph replays to the eager result bit for bit; with the
index debug mode on, capture is refused with a clear error instead of a hang."""
from __future__ import annotations

import pytest
import torch

from portq_kernels import kv_cache as ops
from portq_kernels import validation
from portq_kernels.mla_prefix import gather_kv_b_proj
from portq_kernels.mla_sparse import (
    triton_convert_req_index_to_global_index,
    triton_filter_and_convert_dcp_index,
)

pytestmark = pytest.mark.gpu

I32 = dict(dtype=torch.int32, device="cuda")


def _paged(entry, dtype=torch.uint8, blocks=64, block=16):
    gen = torch.Generator(device="cuda").manual_seed(5)
    cache = torch.randint(0, 0x78, (blocks, block, entry), dtype=torch.uint8, device="cuda", generator=gen)
    table = torch.randperm(blocks, device="cuda").to(torch.int32)[:60].view(3, 20)
    return cache.view(dtype) if dtype != torch.uint8 else cache, table


def _ops():
    """name -> (call, outputs): ``call()`` writes the outputs in place."""
    cases = {}
    seq_starts = torch.tensor([3, 17, 0], **I32)
    cu = torch.tensor([0, 100, 180, 300], **I32)
    cache, table = _paged(576)
    raw = torch.zeros(300, 576, dtype=torch.uint8, device="cuda")
    cases["cp_gather_cache"] = (lambda: ops.cp_gather_cache(cache, raw, table, cu, 3, seq_starts), [raw])
    dq = torch.zeros(300, 576, dtype=torch.bfloat16, device="cuda")
    scale = torch.tensor([0.25], device="cuda")
    cases["gather_and_maybe_dequant_cache"] = (
        lambda: ops.gather_and_maybe_dequant_cache(cache, dq, table, cu, 300, "fp8", scale, seq_starts), [dq])
    kv_c = torch.randn(300, 512, device="cuda").bfloat16()
    k_pe = torch.randn(300, 64, device="cuda").bfloat16()
    slots = torch.randperm(64 * 16, device="cuda")[:300]
    for fmt, entry in (("auto", 576), ("fp8", 576), ("fp8_ds_mla", 656), ("nvfp4_ds_mla", 352)):
        dtype = torch.bfloat16 if fmt == "auto" else torch.uint8
        dest = torch.zeros(64, 16, entry, dtype=dtype, device="cuda")
        cases[f"concat_and_cache_mla[{fmt}]"] = (
            lambda dest=dest, fmt=fmt: ops.concat_and_cache_mla(kv_c, k_pe, dest, slots, fmt, scale), [dest])
    for kind, entry in (("fp8", 656), ("nvfp4", 352)):
        src = torch.zeros(64, 16, entry, dtype=torch.uint8, device="cuda")
        ops.concat_and_cache_mla(kv_c, k_pe, src, torch.arange(300, device="cuda"), f"{kind}_ds_mla", scale)
        out = torch.zeros(300, 576, dtype=torch.bfloat16, device="cuda")
        op = getattr(ops, f"cp_gather_and_upconvert_{kind}_kv_cache")
        cases[op.__name__] = (lambda op=op, src=src, out=out: op(src, out, table, cu[:3], 3, seq_starts), [out])
    req_id = torch.randint(0, 3, (64,), **I32)
    topk = torch.randint(-1, 300, (64, 2048), **I32)
    remap = torch.zeros(64, 2048, **I32)
    counts = torch.zeros(64, **I32)
    cases["triton_convert_req_index_to_global_index"] = (
        lambda: triton_convert_req_index_to_global_index(
            req_id, table, topk, BLOCK_SIZE=16, return_valid_counts=True, out=remap, valid_counts_out=counts),
        [remap, counts])
    dcp_out = {}

    def dcp():
        dcp_out["value"] = triton_filter_and_convert_dcp_index(req_id, table, topk, 2, 1, BLOCK_SIZE=16)
    cases["triton_filter_and_convert_dcp_index"] = (dcp, dcp_out)
    pages, heads = 64, 4
    k_buffer = (torch.randn(pages, 16, 576, device="cuda") * 0.1).bfloat16()
    weight = (torch.randn(heads * 256, 512, device="cuda") * 0.05).bfloat16()
    indptr = torch.tensor([0, 7, 13, 20], **I32)
    indices = torch.randperm(pages, device="cuda").to(torch.int32)[:20]
    lens = torch.tensor([0, 100, 190, 300], **I32)
    k_prefix = torch.zeros(300, heads, 192, dtype=torch.bfloat16, device="cuda")
    v_prefix = torch.zeros(300, heads, 128, dtype=torch.bfloat16, device="cuda")
    cases["gather_kv_b_proj"] = (
        lambda: gather_kv_b_proj(k_buffer, None, indptr, indices, lens, weight, None, k_prefix, v_prefix),
        [k_prefix, v_prefix])
    return cases


def _snapshot(outputs):
    values = outputs.values() if isinstance(outputs, dict) else outputs
    return [v.clone() for v in values]


def _clear(outputs):
    if isinstance(outputs, dict):
        return
    for value in outputs:
        value.zero_()


CASES = _ops() if torch.cuda.is_available() else {}


@pytest.mark.parametrize("name", sorted(CASES) or ["none"])
def test_capture_and_replay_matches_eager(name):
    call, outputs = CASES[name]
    call()
    torch.cuda.synchronize()
    eager = _snapshot(outputs)
    _clear(outputs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    for _ in range(3):
        _clear(outputs)
        graph.replay()
    torch.cuda.synchronize()
    for got, want in zip(_snapshot(outputs), eager):
        assert torch.equal(got, want), name
    assert int(validation.index_flag("cuda")[0]) == 1


@pytest.mark.parametrize("name", ["cp_gather_cache", "concat_and_cache_mla[auto]", "gather_kv_b_proj"])
def test_capture_with_debug_mode_is_refused_clearly(name):
    call, _ = CASES[name]
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with validation.index_checks("debug"), pytest.raises(RuntimeError, match="debug mode"):
        with torch.cuda.graph(graph):
            call()
    # The stream is usable afterwards: an eager call completes.
    call()
    torch.cuda.synchronize()
