"""One message format for every host check of the four kernel packages.

Every public entry point gets a representative bad argument of each class it
takes (wrong type, dtype, ndim, device, shape, stride, value): the error is a
TypeError (wrong type or dtype) or a ValueError (anything else) whose message
is one line, ``{argument} must be {expected}, got {got}``, naming the argument.
Nothing is launched: every case fails before a kernel runs. Device mismatches
use ``meta`` tensors, which carry metadata only, so the CPU suite covers them.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
import torch

from portq_kernels import kv_cache, mla_prefix, mla_sparse
from portq_kernels.mla_prefill import chunked_context, sparse_prefill
from portq_kernels.mla_prefix.gather_kv_b_proj import TileConfig

MESSAGE = re.compile(r"(?P<name>[^\n]+?) must be (?P<expected>[^\n]+), got (?P<got>[^\n]+)")

I32 = torch.int32
BF16 = torch.bfloat16
META = torch.device("meta")


def _z(*shape, dtype=BF16, device="cpu"):
    return torch.zeros(*shape, dtype=dtype, device=device)


def _i(*values):
    return torch.tensor(values, dtype=I32)


# --- argument sets that pass every check; each case breaks one argument -----------------

def _gather(**kw):
    args = dict(src_cache=_z(4, 16, 576), dst=_z(20, 576), block_table=_z(2, 3, dtype=I32),
                cu_seq_lens=_i(0, 10, 20), num_tokens=20, kv_cache_dtype="auto",
                scale=torch.ones(1), seq_starts=_i(0, 3))
    return lambda: kv_cache.gather_and_maybe_dequant_cache(**{**args, **kw})


def _cp_gather(**kw):
    args = dict(src_cache=_z(4, 16, 576), dst=_z(20, 576), block_table=_z(2, 3, dtype=I32),
                cu_seq_lens=_i(0, 10, 20), batch_size=2, seq_starts=_i(0, 3))
    return lambda: kv_cache.cp_gather_cache(**{**args, **kw})


def _upconvert(fmt, **kw):
    entry = {"fp8": 656, "nvfp4": 352}[fmt]
    args = dict(src_cache=_z(4, 16, entry, dtype=torch.uint8), dst=_z(20, 576),
                block_table=_z(2, 3, dtype=I32), workspace_starts=_i(0, 10), batch_size=2,
                seq_starts=None)
    op = getattr(kv_cache, f"cp_gather_and_upconvert_{fmt}_kv_cache")
    return lambda: op(**{**args, **kw})


def _concat(**kw):
    args = dict(kv_c=_z(8, 512), k_pe=_z(8, 64), kv_cache=_z(4, 16, 576),
                slot_mapping=torch.arange(8), kv_cache_dtype="auto", scale=torch.ones(1))
    return lambda: kv_cache.concat_and_cache_mla(**{**args, **kw})


def _expand(**kw):
    # 2 heads, Dn = Dv = 128, rank 512, rope 64, one request of 4 rows on one page.
    args = dict(k_buffer=_z(2, 16, 576), k_scale=None, kv_indptr=_i(0, 1), kv_indices=_i(0),
                kv_prefix_sum_context_lens=_i(0, 4), kv_proj_weight=_z(512, 512),
                kv_proj_scale=None, k_prefix=_z(4, 2, 192), v_prefix=_z(4, 2, 128))
    args.update(kw)
    return lambda: mla_prefix.gather_kv_b_proj(**args)


def _remap(**kw):
    args = dict(req_id=_i(0, 0), block_table=_z(1, 4, dtype=I32), token_indices=_z(2, 128, dtype=I32),
                BLOCK_SIZE=16, NUM_TOPK_TOKENS=128)
    return lambda: mla_sparse.triton_convert_req_index_to_global_index(**{**args, **kw})


def _dcp(**kw):
    args = dict(req_id=_i(0, 0), block_table=_z(1, 4, dtype=I32), token_indices=_z(2, 128, dtype=I32),
                dcp_size=2, dcp_rank=0, BLOCK_SIZE=16, NUM_TOPK_TOKENS=128)
    return lambda: mla_sparse.triton_filter_and_convert_dcp_index(**{**args, **kw})


def _safe(**kw):
    args = dict(physical_indices=_z(4, 8, dtype=I32), valid_counts=_z(4, dtype=I32))
    return lambda: mla_sparse.prepare_sparse_mla_safe_lengths(**{**args, **kw})


def _row_view(**kw):
    args = dict(kv_cache=_z(4, 8, 64), block_size=8)
    return lambda: mla_sparse.flat_kv_row_view(**{**args, **kw})


def _chunk_metadata():
    return chunked_context.build_chunked_context_metadata(torch.tensor([5, 3]), _z(64, 576), 16)


def _chunked_layer(**kw):
    args = dict(kv_cache=_z(4, 16, 576), block_table=_z(2, 3, dtype=I32), metadata=_chunk_metadata(),
                kv_cache_dtype="auto", k_scale=torch.ones(1), kv_b_proj_weight=_z(512, 512),
                kv_b_proj_scale=None, num_heads=2, v_head_dim=128, kv_lora_rank=512)
    args.update(kw)
    return lambda: next(chunked_context.iter_prefill_context_chunks(**args))


def _sparse_metadata():
    return sparse_prefill.build_sparse_prefill_metadata(
        torch.tensor([4, 6]), torch.tensor([0, 1, 3]), _z(2, 3, dtype=I32), 1, 32)


def _sparse_layer(**kw):
    args = dict(kv_cache=_z(4, 16, 656, dtype=torch.uint8), kv_cache_dtype="fp8_ds_mla",
                workspace=_z(32, 576), metadata=_sparse_metadata(), indices=_z(3, 128, dtype=I32),
                lengths=_z(3, dtype=I32))
    args.update(kw)
    return lambda: next(sparse_prefill.iter_sparse_prefill_chunks(**args))


def _build_chunked(**kw):
    args = dict(context_lens_cpu=torch.tensor([5, 3]), workspace=_z(64, 576), page_size=16)
    return lambda: chunked_context.build_chunked_context_metadata(**{**args, **kw})


def _build_sparse(**kw):
    args = dict(seq_lens_cpu=torch.tensor([4, 6]), query_start_loc_cpu=torch.tensor([0, 1, 3]),
                block_table=_z(2, 3, dtype=I32), num_decodes=1, workspace_size=32)
    return lambda: sparse_prefill.build_sparse_prefill_metadata(**{**args, **kw})


def _remap_topk(**kw):
    args = dict(topk_indices=_z(2, 128, dtype=I32), req_id_per_token=_i(0, 0),
                block_table=_z(1, 4, dtype=I32), block_size=16, metadata=None)
    return lambda: sparse_prefill.remap_sparse_topk(**{**args, **kw})


# (entry point, argument named first in the message, error, call)
CASES = [
    # kv_cache
    ("gather_and_maybe_dequant_cache", "src_cache", TypeError, _gather(src_cache=[0])),
    ("gather_and_maybe_dequant_cache", "dst", TypeError, _gather(dst=_z(20, 576, dtype=I32))),
    ("gather_and_maybe_dequant_cache", "src_cache", ValueError, _gather(src_cache=_z(4, 576))),
    ("gather_and_maybe_dequant_cache", "dst", ValueError, _gather(dst=_z(20, 576, device=META))),
    ("gather_and_maybe_dequant_cache", "src_cache", ValueError, _gather(src_cache=_z(4, 16, 512))),
    ("gather_and_maybe_dequant_cache", "dst", ValueError, _gather(dst=_z(20, 576).t().contiguous().t())),
    ("gather_and_maybe_dequant_cache", "cu_seq_lens", ValueError, _gather(cu_seq_lens=_z(0, dtype=I32))),
    ("gather_and_maybe_dequant_cache", "num_tokens", ValueError, _gather(num_tokens=21)),
    ("gather_and_maybe_dequant_cache", "kv_cache_dtype", ValueError, _gather(kv_cache_dtype="int4")),
    ("gather_and_maybe_dequant_cache", "kv_cache_dtype", TypeError, _gather(kv_cache_dtype=3)),
    ("gather_and_maybe_dequant_cache", "src_cache", TypeError, _gather(kv_cache_dtype="fp8")),
    ("cp_gather_cache", "dst", TypeError, _cp_gather(dst=_z(20, 576, dtype=torch.float16))),
    ("cp_gather_cache", "dst", ValueError, _cp_gather(dst=_z(20, 575))),
    ("cp_gather_cache", "src_cache", ValueError, _cp_gather(src_cache=_z(4, 16, 1152)[:, :, ::2])),
    ("cp_gather_cache", "batch_size", TypeError, _cp_gather(batch_size=True)),
    ("cp_gather_cache", "src_cache", TypeError,
     _cp_gather(src_cache=_z(4, 16, 576, dtype=torch.float64), dst=_z(20, 576, dtype=torch.float64))),
    ("cp_gather_cache", "block_table", ValueError, _cp_gather(block_table=_z(1, 3, dtype=I32))),
    ("cp_gather_cache", "seq_starts", ValueError, _cp_gather(seq_starts=_i(0, 3).to(META))),
    *[(f"cp_gather_and_upconvert_{f}_kv_cache", name, exc, _upconvert(f, **kw))
      for f in ("fp8", "nvfp4")
      for name, exc, kw in (
          ("src_cache", TypeError, dict(src_cache=_z(4, 16, 656))),
          ("src_cache", ValueError, dict(src_cache=_z(4, 16, 576, dtype=torch.uint8))),
          ("dst", ValueError, dict(dst=_z(20, 512))),
          ("dst", TypeError, dict(dst=_z(20, 576, dtype=torch.float32))),
          ("workspace_starts", ValueError, dict(workspace_starts=_i(0, 10, 12))),
          ("batch_size", ValueError, dict(batch_size=-1)),
      )],
    ("cp_gather_and_upconvert_fp8_kv_cache", "src_cache", ValueError,
     _upconvert("fp8", src_cache=_z(4 * 16 * 657 + 1, dtype=torch.uint8)[1:].view(4, 16, 657)[:, :, :656])),
    ("concat_and_cache_mla", "kv_c", TypeError, _concat(kv_c=_z(8, 512, dtype=torch.int16))),
    ("concat_and_cache_mla", "slot_mapping", ValueError, _concat(slot_mapping=torch.arange(9))),
    ("concat_and_cache_mla", "kv_cache_dtype", ValueError, _concat(kv_cache_dtype="fp4")),
    ("concat_and_cache_mla", "kv_cache_dtype", TypeError, _concat(kv_cache_dtype=8)),
    # mla_prefix
    ("gather_kv_b_proj", "k_buffer", TypeError, _expand(k_buffer=[0])),
    ("gather_kv_b_proj", "k_buffer", TypeError, _expand(k_buffer=_z(2, 16, 576, dtype=torch.float16))),
    ("gather_kv_b_proj", "k_buffer", ValueError, _expand(k_buffer=_z(16, 576))),
    ("gather_kv_b_proj", "kv_proj_weight", ValueError, _expand(kv_proj_weight=_z(512, 512, device=META))),
    ("gather_kv_b_proj", "v_prefix", ValueError, _expand(v_prefix=_z(3, 2, 128))),
    ("gather_kv_b_proj", "kv_proj_weight", ValueError, _expand(kv_proj_weight=_z(512, 512).t())),
    ("gather_kv_b_proj", "k_scale", TypeError, _expand(k_buffer=_z(2, 16, 576, dtype=torch.float8_e4m3fn))),
    ("gather_kv_b_proj", "weight_preshuffle", ValueError, lambda: mla_prefix.gather_kv_b_proj(
        *[None] * 9, weight_preshuffle=True)),
    ("gather_kv_b_proj", "shuffled_kv_cache", ValueError, lambda: mla_prefix.gather_kv_b_proj(
        *[None] * 9, shuffled_kv_cache=True)),
    ("TileConfig", "TileConfig.block_n", ValueError, lambda: TileConfig(block_n=48)),
    ("TileConfig", "TileConfig.group_rows", ValueError, lambda: TileConfig(group_rows=0)),
    # mla_sparse
    ("triton_convert_req_index_to_global_index", "req_id", TypeError, _remap(req_id=[0, 0])),
    ("triton_convert_req_index_to_global_index", "block_table", TypeError,
     _remap(block_table=_z(1, 4, dtype=torch.int64))),
    ("triton_convert_req_index_to_global_index", "token_indices", ValueError,
     _remap(token_indices=_z(128, dtype=I32))),
    ("triton_convert_req_index_to_global_index", "req_id", ValueError, _remap(req_id=_i(0, 0).to(META))),
    ("triton_convert_req_index_to_global_index", "req_id", ValueError, _remap(req_id=_i(0, 0, 0))),
    ("triton_convert_req_index_to_global_index", "BLOCK_N", ValueError, _remap(BLOCK_N=48)),
    ("triton_convert_req_index_to_global_index", "BLOCK_SIZE", TypeError, _remap(BLOCK_SIZE=16.0)),
    ("triton_convert_req_index_to_global_index", "out", ValueError,
     _remap(out=_z(2, 256, dtype=I32)[:, ::2])),
    ("triton_convert_req_index_to_global_index", "out", TypeError, _remap(out=_z(2, 128, dtype=torch.int64))),
    ("triton_convert_req_index_to_global_index", "valid_counts_out", ValueError,
     _remap(return_valid_counts=True, valid_counts_out=_z(3, dtype=I32))),
    ("triton_filter_and_convert_dcp_index", "dcp_rank", ValueError, _dcp(dcp_rank=2)),
    ("triton_filter_and_convert_dcp_index", "dcp_size", TypeError, _dcp(dcp_size="2")),
    ("triton_filter_and_convert_dcp_index", "cp_kv_cache_interleave_size", ValueError,
     _dcp(cp_kv_cache_interleave_size=3)),
    ("triton_filter_and_convert_dcp_index", "token_indices", TypeError,
     _dcp(token_indices=_z(2, 128, dtype=torch.int64))),
    ("prepare_sparse_mla_safe_lengths", "physical_indices", TypeError, _safe(physical_indices=[[0]])),
    ("prepare_sparse_mla_safe_lengths", "valid_counts", TypeError, _safe(valid_counts=_z(4, dtype=torch.int64))),
    ("prepare_sparse_mla_safe_lengths", "physical_indices", ValueError, _safe(physical_indices=_z(8, dtype=I32))),
    ("prepare_sparse_mla_safe_lengths", "physical_indices", ValueError,
     _safe(physical_indices=_z(4, 8, dtype=I32, device=META))),
    ("prepare_sparse_mla_safe_lengths", "physical_indices", ValueError, _safe(physical_indices=_z(3, 8, dtype=I32))),
    ("prepare_sparse_mla_safe_lengths", "physical_indices", ValueError, _safe(physical_indices=_z(4, 0, dtype=I32))),
    ("flat_kv_row_view", "kv_cache", TypeError, _row_view(kv_cache=[0])),
    ("flat_kv_row_view", "kv_cache", ValueError, _row_view(kv_cache=_z(8, 64))),
    ("flat_kv_row_view", "block_size", ValueError, _row_view(block_size=16)),
    ("flat_kv_row_view", "block_size", TypeError, _row_view(block_size=8.0)),
    ("flat_kv_row_view", "kv_cache", ValueError, _row_view(kv_cache=_z(4, 8, 128)[:, :, ::2])),
    ("flat_kv_row_view", "kv_cache", ValueError,
     _row_view(kv_cache=_z(4 * 8 * 64 + 40).as_strided((4, 8, 64), (8 * 64 + 10, 64, 1)))),
    ("flat_kv_row_view", "kv_cache", ValueError, _row_view(kv_cache=_z(0, 8, 64))),
    ("request_row_bounds", "req_idx", ValueError, lambda: mla_sparse.request_row_bounds(np.zeros((2, 2), np.int64))),
    ("request_row_bounds", "req_idx", ValueError, lambda: mla_sparse.request_row_bounds(np.array([], np.int64))),
    ("request_row_bounds", "req_idx", ValueError, lambda: mla_sparse.request_row_bounds(np.array([1, 2, 1]))),
    ("request_row_bounds", "req_idx", TypeError, lambda: mla_sparse.request_row_bounds(np.array([0.5, 1.0]))),
    # mla_prefill: chunked context
    ("determine_chunked_prefill_workspace_size", "block_size", ValueError,
     lambda: chunked_context.determine_chunked_prefill_workspace_size(1024, 4, 0)),
    ("determine_chunked_prefill_workspace_size", "max_model_len", TypeError,
     lambda: chunked_context.determine_chunked_prefill_workspace_size(1024.0, 4, 16)),
    ("allocate_chunked_prefill_workspace", "dtype", TypeError,
     lambda: chunked_context.allocate_chunked_prefill_workspace(64, 576, torch.int8, "cpu")),
    ("allocate_chunked_prefill_workspace", "workspace_size", ValueError,
     lambda: chunked_context.allocate_chunked_prefill_workspace(0, 576, BF16, "cpu")),
    ("build_chunked_context_metadata", "context_lens_cpu", ValueError,
     _build_chunked(context_lens_cpu=torch.tensor([5, 3], device=META))),
    ("build_chunked_context_metadata", "context_lens_cpu", TypeError,
     _build_chunked(context_lens_cpu=torch.tensor([5.0, 3.0]))),
    ("build_chunked_context_metadata", "context_lens_cpu", ValueError,
     _build_chunked(context_lens_cpu=torch.tensor([[5, 3]]))),
    ("build_chunked_context_metadata", "context_lens_cpu", ValueError,
     _build_chunked(context_lens_cpu=torch.tensor([5, -3]))),
    ("build_chunked_context_metadata", "workspace", TypeError, _build_chunked(workspace=[0])),
    ("build_chunked_context_metadata", "workspace", ValueError, _build_chunked(workspace=_z(64))),
    ("build_chunked_context_metadata", "page_size", TypeError, _build_chunked(page_size=True)),
    ("build_chunked_context_metadata", "workspace", ValueError, _build_chunked(workspace=_z(8, 576))),
    ("iter_prefill_context_chunks", "metadata", TypeError, _chunked_layer(metadata=None)),
    ("iter_prefill_context_chunks", "kv_cache", ValueError, _chunked_layer(kv_cache=_z(16, 576))),
    ("iter_prefill_context_chunks", "kv_cache", ValueError, _chunked_layer(kv_cache=_z(4, 16, 512))),
    ("iter_prefill_context_chunks", "kv_cache", ValueError, _chunked_layer(kv_cache=_z(4, 16, 576, device=META))),
    ("iter_prefill_context_chunks", "block_table", ValueError, _chunked_layer(block_table=_z(3, 3, dtype=I32))),
    ("iter_prefill_context_chunks", "kv_cache_dtype", ValueError, _chunked_layer(kv_cache_dtype="nvfp4_ds_mla")),
    ("iter_prefill_context_chunks", "k_scale", TypeError, _chunked_layer(k_scale=torch.ones(1, dtype=BF16))),
    ("iter_prefill_context_chunks", "num_heads", ValueError, _chunked_layer(num_heads=0)),
    ("iter_prefill_context_chunks", "kv_lora_rank", ValueError, _chunked_layer(kv_lora_rank=576)),
    ("iter_prefill_context_chunks", "kv_b_proj_weight", ValueError, _chunked_layer(kv_b_proj_weight=_z(512, 256))),
    ("gather_context_chunk", "chunk", ValueError, lambda: chunked_context.gather_context_chunk(
        _z(4, 16, 576), _z(2, 3, dtype=I32), _chunk_metadata(), 5, "auto", torch.ones(1))),
    ("expand_context_chunk", "chunk", ValueError, lambda: chunked_context.expand_context_chunk(
        _chunk_metadata(), -1, torch.ones(1), _z(512, 512), None, 2, 128, 512)),
    # mla_prefill: sparse prefill
    ("get_prefill_workspace_size", "max_model_len", ValueError, lambda: sparse_prefill.get_prefill_workspace_size(0)),
    ("split_prefill_chunks", "seq_lens_cpu", ValueError,
     lambda: sparse_prefill.split_prefill_chunks(torch.tensor([[4, 6]]), 32)),
    ("split_prefill_chunks", "seq_lens_cpu", ValueError,
     lambda: sparse_prefill.split_prefill_chunks(torch.tensor([4, 60]), 32)),
    ("split_prefill_chunks", "workspace_size", TypeError,
     lambda: sparse_prefill.split_prefill_chunks(torch.tensor([4, 6]), 32.0)),
    ("build_sparse_prefill_metadata", "seq_lens_cpu", ValueError,
     _build_sparse(seq_lens_cpu=torch.tensor([4, 6], device=META))),
    ("build_sparse_prefill_metadata", "query_start_loc_cpu", ValueError,
     _build_sparse(query_start_loc_cpu=torch.tensor([0, 1]))),
    ("build_sparse_prefill_metadata", "block_table", TypeError,
     _build_sparse(block_table=_z(2, 3, dtype=torch.int64))),
    ("build_sparse_prefill_metadata", "block_table", ValueError, _build_sparse(block_table=_z(1, 3, dtype=I32))),
    ("build_sparse_prefill_metadata", "num_decodes", ValueError, _build_sparse(num_decodes=3)),
    ("remap_sparse_topk", "topk_indices", TypeError, _remap_topk(topk_indices=[0])),
    ("remap_sparse_topk", "topk_indices", ValueError, _remap_topk(topk_indices=_z(128, dtype=I32))),
    ("remap_sparse_topk", "metadata", TypeError, _remap_topk(metadata=3)),
    ("iter_sparse_prefill_chunks", "kv_cache_dtype", ValueError, _sparse_layer(kv_cache_dtype="fp8")),
    ("iter_sparse_prefill_chunks", "kv_cache", ValueError, _sparse_layer(kv_cache=_z(4, 16, 352, dtype=torch.uint8))),
    ("iter_sparse_prefill_chunks", "workspace", TypeError, _sparse_layer(workspace=_z(32, 576, dtype=torch.float16))),
    ("iter_sparse_prefill_chunks", "workspace", ValueError, _sparse_layer(workspace=_z(32, 576, device=META))),
    ("iter_sparse_prefill_chunks", "workspace", ValueError, _sparse_layer(workspace=_z(4, 576))),
    ("iter_sparse_prefill_chunks", "metadata", TypeError, _sparse_layer(metadata=None)),
]


def _values(case):
    return case.values if hasattr(case, "values") else case


@pytest.mark.parametrize("entry,argument,error,call", CASES,
                         ids=[f"{_values(c)[0]}-{_values(c)[1]}-{i}" for i, c in enumerate(CASES)])
def test_bad_argument_message_has_the_one_format(entry, argument, error, call):
    with pytest.raises((TypeError, ValueError)) as raised:
        call()
    assert type(raised.value) is error, f"{entry}: {type(raised.value).__name__}: {raised.value}"
    message = str(raised.value)
    match = MESSAGE.fullmatch(message)
    assert match, f"{entry}: {message!r} is not '<argument> must be <expected>, got <got>'"
    assert re.match(rf"{re.escape(argument)}\b", match["name"]), (
        f"{entry}: {message!r} does not name {argument} first")


PACKAGES = {
    "kv_cache": kv_cache, "mla_prefix": mla_prefix, "mla_sparse": mla_sparse,
    "chunked_context": chunked_context, "sparse_prefill": sparse_prefill,
}
# Public callables that take no argument a caller could get wrong.
NO_ARGUMENT_CHECKS = {"trusted_index_values"}


def _public_entry_points():
    for module in PACKAGES.values():
        names = getattr(module, "__all__", None) or [
            n for n, v in vars(module).items()
            if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == module.__name__]
        yield from (n for n in names if n not in NO_ARGUMENT_CHECKS)


def test_every_public_entry_point_is_walked():
    walked = {_values(case)[0] for case in CASES}
    missing = sorted(set(_public_entry_points()) - walked)
    assert not missing, f"entry points without a bad-argument case: {missing}"
