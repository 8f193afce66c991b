"""Sparse-MLA prefill over an fp8_ds_mla / nvfp4_ds_mla cache: the in-tree
caller of the upconvert gathers and of the top-k index remap.

The sparse prefill kernel reads bf16 rows, but a DeepSeek-V3.2-style cache
holds 656-byte fp8_ds_mla (or 352-byte nvfp4_ds_mla) entries. As upstream's
FlashMLA sparse backend does when prefill and decode run separately, the
engine therefore:

1. **plans** (host, once per batch, :func:`build_sparse_prefill_metadata`):
   splits the prefill requests into chunks whose whole sequences fit the
   bf16 workspace, gives every prefill request a *chunk-local* workspace start
   (exclusive prefix sum of the sequence lengths, re-based to 0 per chunk),
   and marks every query row with its prefill request (``-1`` for decode rows);
2. **remaps** (per layer, :func:`remap_sparse_topk`): one
   ``triton_convert_req_index_to_global_index(HAS_PREFILL_WORKSPACE=True)``
   over the whole batch: decode rows get paged cache slots, prefill rows get
   ``workspace_start + t``, valid entries compacted with their counts;
3. **gathers** (per layer, per chunk, :func:`iter_sparse_prefill_chunks`):
   ``cp_gather_and_upconvert_{fp8,nvfp4}_kv_cache`` writes every request of the
   chunk, whole sequence, into ``workspace[:chunk_tot_seqlen]``; the chunk's
   query rows then attend to it with the remapped indices (the engine's step,
   not done here).

``reference.py`` runs the same iteration on the PyTorch references.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import torch

from portq_kernels import validation as check
from portq_kernels.kv_cache import (
    cp_gather_and_upconvert_fp8_kv_cache,
    cp_gather_and_upconvert_nvfp4_kv_cache,
)
from portq_kernels.mla_sparse import triton_convert_req_index_to_global_index

@dataclass(frozen=True)
class SparsePrefillOps:
    """The ops the sparse prefill calls. :data:`KERNEL_OPS` are the Triton
    ports; ``reference.SPARSE_PREFILL_REFERENCE_OPS`` the PyTorch references."""

    cp_gather_and_upconvert_fp8_kv_cache: Callable
    cp_gather_and_upconvert_nvfp4_kv_cache: Callable
    convert_req_index_to_global_index: Callable


KERNEL_OPS = SparsePrefillOps(
    cp_gather_and_upconvert_fp8_kv_cache,
    cp_gather_and_upconvert_nvfp4_kv_cache,
    triton_convert_req_index_to_global_index,
)

# Bytes per token of the two packed sparse-MLA cache formats, and the bf16 row they become.
PACKED_ENTRY_BYTES = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}
UPCONVERTED_HEAD_SIZE = 576


# portq: ports vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::get_prefill_workspace_size
def get_prefill_workspace_size(max_model_len: int) -> int:
    """bf16 workspace rows of the sparse prefill: five full-length sequences."""
    return 5 * check.integer("max_model_len", max_model_len, minimum=1)


# portq: ports vllm:vllm/v1/attention/backends/utils.py::split_prefill_chunks
def split_prefill_chunks(
    seq_lens_cpu: torch.Tensor, workspace_size: int, request_offset: int = 0
) -> list[tuple[int, int]]:
    """Greedy ``[(reqs_start, reqs_end), ...]`` whose summed sequence lengths fit
    ``workspace_size``; e.g. ``[2, 3, 4, 2], 5 -> [(0, 2), (2, 3), (3, 4)]``.
    ``request_offset`` is added to every bound. A request longer than the
    workspace is refused (it could never be gathered whole).
    """
    check.host_tensor("seq_lens_cpu", seq_lens_cpu)
    workspace_size = check.integer("workspace_size", workspace_size)
    request_offset = check.integer("request_offset", request_offset)
    lens = [int(x) for x in seq_lens_cpu.tolist()]
    if any(n > workspace_size for n in lens):
        check.fail("seq_lens_cpu", f"lengths that fit the workspace of {workspace_size} rows",
                   f"a sequence of {max(lens)} tokens")
    if any(n < 0 for n in lens):
        check.fail("seq_lens_cpu", "non-negative lengths", f"minimum {min(lens)}")
    bounds, start, total = [], 0, 0
    for i, n in enumerate(lens):
        if total + n > workspace_size:
            bounds.append((start + request_offset, i + request_offset))
            start, total = i, 0
        total += n
    if start < len(lens):
        bounds.append((start + request_offset, len(lens) + request_offset))
    return bounds


# portq: ports vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseMetadata.FP8SeparatePrefillDecode.Prefill.Chunk
@dataclass
class SparsePrefillChunk:
    """One workspace fill: prefill requests ``[req_start_idx, req_end_idx)``.

    ``tokens_slice``: their query rows in the batch; ``block_table`` and
    ``workspace_starts`` (chunk-local, int32, device): views of the batch
    tensors for these requests; ``chunk_tot_seqlen``: workspace rows filled.
    """

    tokens_slice: slice
    block_table: torch.Tensor
    req_start_idx: int
    req_end_idx: int
    workspace_starts: torch.Tensor
    chunk_tot_seqlen: int


# portq: ports vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseMetadata.FP8SeparatePrefillDecode.Prefill
@dataclass
class SparsePrefillMetadata:
    """``request_ids`` int32 ``[num_tokens]`` (prefill request index, ``-1`` for
    decode rows) and ``workspace_starts`` int32 ``[num_prefills]`` (chunk-local)
    on the device, plus the chunks in order."""

    request_ids: torch.Tensor
    workspace_starts: torch.Tensor
    chunks: list[SparsePrefillChunk]


# portq: ports vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseMetadataBuilder._build_fp8_separate_prefill_decode
# portq: not-carried vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseMetadataBuilder._build_gathered_prefill -- the PCP+DCP gathered-KV prefill is not carried
def build_sparse_prefill_metadata(
    seq_lens_cpu: torch.Tensor,
    query_start_loc_cpu: torch.Tensor,
    block_table: torch.Tensor,
    num_decodes: int,
    workspace_size: int,
) -> SparsePrefillMetadata | None:
    """Plan the prefill part of a batch ordered decodes first, then prefills.

    ``seq_lens_cpu`` ``[num_reqs]`` and ``query_start_loc_cpu`` ``[num_reqs + 1]``
    on the host; ``block_table`` ``[num_reqs, max_blocks]`` int32 on the device.
    Returns ``None`` when the batch has no prefill. Example: prefill sequence
    lengths ``[10, 15, 20, 5]`` in chunks ``[0, 2), [2, 4)`` get workspace
    starts ``[0, 10, 0, 20]``.
    """
    check.host_tensor("seq_lens_cpu", seq_lens_cpu)
    check.host_tensor("query_start_loc_cpu", query_start_loc_cpu)
    num_reqs = seq_lens_cpu.shape[0]
    check.dim_size("query_start_loc_cpu", query_start_loc_cpu, num_reqs + 1, "num_reqs + 1")
    check.tensor("block_table", block_table)
    check.block_table(block_table, block_table.device, num_reqs)
    num_decodes = check.integer("num_decodes", num_decodes, maximum=num_reqs)
    num_prefills = num_reqs - num_decodes
    if num_prefills == 0:
        return None
    device = block_table.device
    qsl = query_start_loc_cpu.to(torch.int64)
    num_tokens = int(qsl[-1])
    prefill_seq_lens = seq_lens_cpu[num_decodes:].to(torch.int64)

    request_ids = torch.full((num_tokens,), -1, dtype=torch.int32)
    first = int(qsl[num_decodes])
    request_ids[first:] = torch.repeat_interleave(
        torch.arange(num_prefills, dtype=torch.int32), (qsl[num_decodes + 1:] - qsl[num_decodes:-1]))

    starts = torch.zeros(num_prefills, dtype=torch.int64)
    starts[1:] = torch.cumsum(prefill_seq_lens[:-1], dim=0)
    bounds = split_prefill_chunks(prefill_seq_lens, workspace_size)
    for lo, hi in bounds:  # re-base each chunk's starts to 0
        starts[lo:hi] -= int(starts[lo])
    workspace_starts = starts.to(torch.int32).to(device)

    chunks = [
        SparsePrefillChunk(
            tokens_slice=slice(int(qsl[num_decodes + lo]), int(qsl[num_decodes + hi])),
            block_table=block_table[num_decodes + lo:num_decodes + hi],
            req_start_idx=lo,
            req_end_idx=hi,
            workspace_starts=workspace_starts[lo:hi],
            chunk_tot_seqlen=int(prefill_seq_lens[lo:hi].sum()),
        )
        for lo, hi in bounds
    ]
    return SparsePrefillMetadata(request_ids=request_ids.to(device),
                                 workspace_starts=workspace_starts, chunks=chunks)


def remap_sparse_topk(
    topk_indices: torch.Tensor,
    req_id_per_token: torch.Tensor,
    block_table: torch.Tensor,
    block_size: int,
    metadata: SparsePrefillMetadata | None,
    block_stride_rows: int | None = None,
    *,
    ops: SparsePrefillOps = KERNEL_OPS,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Map the whole batch's top-k rows in one pass: ``(indices, lengths)``.

    Decode rows get cache slots (``block_stride_rows`` from
    ``flat_kv_row_view`` when the cache's blocks are not adjacent); prefill
    rows get rows of their chunk's workspace. Valid entries are compacted to
    the front of each row and counted.
    """
    check.tensor("topk_indices", topk_indices, ndim=2)
    has_prefill = metadata is not None
    if has_prefill:
        check.instance("metadata", metadata, SparsePrefillMetadata)
    return ops.convert_req_index_to_global_index(
        req_id_per_token[: topk_indices.shape[0]],
        block_table,
        topk_indices,
        BLOCK_SIZE=block_size,
        BLOCK_STRIDE_ROWS=block_stride_rows,
        NUM_TOPK_TOKENS=topk_indices.shape[1],
        HAS_PREFILL_WORKSPACE=has_prefill,
        prefill_workspace_request_ids=metadata.request_ids if has_prefill else None,
        prefill_workspace_starts=metadata.workspace_starts if has_prefill else None,
        return_valid_counts=True,
    )


@dataclass
class SparsePrefillChunkInputs:
    """What the sparse prefill kernel needs for one chunk: its query rows
    (``chunk.tokens_slice``), the filled ``workspace`` view
    ``[chunk_tot_seqlen, 576]`` bf16, and the rows' workspace ``indices`` and
    ``lengths``."""

    chunk: SparsePrefillChunk
    workspace: torch.Tensor
    indices: torch.Tensor
    lengths: torch.Tensor


def _check_sparse_inputs(kv_cache, kv_cache_dtype, workspace, metadata):
    check.one_of("kv_cache_dtype", kv_cache_dtype, tuple(sorted(PACKED_ENTRY_BYTES)))
    check.tensor("kv_cache", kv_cache, ndim=3)
    entry_bytes = PACKED_ENTRY_BYTES[kv_cache_dtype]
    if kv_cache.shape[2] * kv_cache.element_size() != entry_bytes:
        check.fail("kv_cache", f"[num_blocks, block_size, {entry_bytes} bytes] for {kv_cache_dtype}",
                   f"shape {tuple(kv_cache.shape)} of {check.dtype_name(kv_cache.dtype)}")
    check.tensor("workspace", workspace, dtypes=(torch.bfloat16,), ndim=2, device=kv_cache.device,
                 device_of="kv_cache")
    check.dim_size("workspace", workspace, UPCONVERTED_HEAD_SIZE, "the upconverted head size", dim=1)
    check.instance("metadata", metadata, SparsePrefillMetadata)
    largest = max((c.chunk_tot_seqlen for c in metadata.chunks), default=0)
    if largest > workspace.shape[0]:
        check.fail("workspace", f"at least {largest} rows (the largest chunk)",
                   f"shape {tuple(workspace.shape)}")


# portq: ports vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseImpl._forward_fp8_kv_separate_prefill_decode
# portq: not-carried vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseImpl._prefill_over_gathered_context -- PCP+DCP all-gathered prefill is not carried
# portq: not-carried vllm:vllm/v1/attention/backends/mla/flashmla_sparse.py::FlashMLASparseImpl._bf16_flash_mla_kernel -- attention itself is the engine's
def iter_sparse_prefill_chunks(
    kv_cache: torch.Tensor,
    kv_cache_dtype: str,
    workspace: torch.Tensor,
    metadata: SparsePrefillMetadata,
    indices: torch.Tensor,
    lengths: torch.Tensor,
    *,
    ops: SparsePrefillOps = KERNEL_OPS,
) -> Iterator[SparsePrefillChunkInputs]:
    """Per chunk: upconvert its requests into ``workspace`` and yield the chunk's inputs.

    ``indices``/``lengths`` come from :func:`remap_sparse_topk` for the same
    batch. The workspace is overwritten by the next chunk: run the chunk's
    attention before advancing the iterator.
    """
    _check_sparse_inputs(kv_cache, kv_cache_dtype, workspace, metadata)
    cache_bytes = kv_cache.view(torch.uint8)
    upconvert = (ops.cp_gather_and_upconvert_fp8_kv_cache if kv_cache_dtype == "fp8_ds_mla"
                 else ops.cp_gather_and_upconvert_nvfp4_kv_cache)
    for chunk in metadata.chunks:
        chunk_workspace = workspace[: chunk.chunk_tot_seqlen]
        upconvert(cache_bytes, chunk_workspace, chunk.block_table, chunk.workspace_starts,
                  chunk.block_table.shape[0])
        yield SparsePrefillChunkInputs(
            chunk=chunk,
            workspace=chunk_workspace,
            indices=indices[chunk.tokens_slice],
            lengths=lengths[chunk.tokens_slice],
        )
