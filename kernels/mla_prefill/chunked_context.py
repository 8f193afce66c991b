"""MLA chunked-context prefill: the in-tree caller of the context gathers and
the cached-prefix expansion.

A prefill request with a prefix-cache hit (or a chunked prefill past its first
chunk) attends its new tokens to a context that is already in the paged cache
as compressed latents. The engine cannot up-project the whole context at once
(128 heads x 192 dims per token), so, as upstream's MLA backend does, it walks
the context in chunks that fit a fixed workspace:

1. **plan** (host, once per batch): the workspace size, the chunk length, and
   per chunk the start of every request's slice and the ``cu_seq_lens`` of the
   chunk (:func:`build_chunked_context_metadata`);
2. **gather** (per layer, per chunk): every request's slice of the paged cache
   into the dense workspace, dequantised to the model dtype with
   ``gather_and_maybe_dequant_cache``, or as raw fp8 bytes with
   ``cp_gather_cache`` when the workspace is fp8 (an fp8 prefill query);
3. **expand**: ``gather_kv_b_proj`` turns the workspace rows into per-head
   ``K = [K_nope | k_pe]`` and ``V``.

Attention over each chunk and the LSE merge are the engine's business and are
not done here: :func:`iter_prefill_context_chunks` yields each chunk's K, V and
metadata. ``reference.py`` runs the same iteration on the PyTorch references
of the two kernel rows.

Chunk length (decision): rounded **down to the page size**, as upstream does.
The gathers here take any ``seq_starts``, but page-aligned chunk starts mean
every chunk reads whole pages except at a request's end, and keep the plan
identical to upstream's so the two can be compared chunk for chunk.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import torch

from portq_kernels import validation as check
from portq_kernels.kv_cache import (
    cp_gather_cache,
    gather_and_maybe_dequant_cache,
)
from portq_kernels.mla_prefix import gather_kv_b_proj

# Upstream's cap on the chunked-prefill workspace: 64K latent rows.
MAX_CHUNKED_PREFILL_WORKSPACE_TOKENS = 64 * 1024

FP8_CACHE_FORMATS = {
    "fp8": torch.float8_e4m3fn,
    "fp8_e4m3": torch.float8_e4m3fn,
}
"""kv_cache_dtype strings whose raw bytes the expansion can read directly (fp8 workspace)."""

DEQUANT_CACHE_FORMATS = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")
"""kv_cache_dtype strings a bf16 workspace can be gathered from (dequantised on the way)."""

WORKSPACE_DTYPES = (torch.bfloat16, torch.float8_e4m3fn)
"""What the expansion reads: bf16 (the model dtype) or raw e4m3 bytes (fp8 prefill query)."""


# portq: ports vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonPrefillMetadata.ChunkedContextMetadata
# portq: not-carried vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonPrefillMetadata.ChunkedContextMetadata[token_to_seq] -- the page-task gathers find the request from cu_seq_lens
# portq: not-carried vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonPrefillMetadata.ChunkedContextMetadata[padded_local_cu_seq_lens] -- DCP context gather is not carried
@dataclass
class ChunkedContextMetadata:
    """The plan of one batch's context chunks (prefill requests only).

    ``cu_seq_lens`` int32 ``[num_chunks, num_prefills + 1]`` and ``starts``
    int32 ``[num_chunks, num_prefills]`` live on the cache's device (what the
    gathers read); ``seq_lens`` stays on the host. ``seq_tot[i]`` ==
    ``chunk_total_token[i]`` is the number of workspace rows chunk ``i``
    fills, ``max_seq_lens[i]`` its longest request slice. ``workspace`` is the
    ``[W, head_size]`` buffer every chunk reuses; ``workspace_rows`` is
    ``arange(W)`` (int32), the page list of the workspace seen as a cache of
    one-row pages.
    """

    cu_seq_lens: torch.Tensor
    starts: torch.Tensor
    seq_tot: list[int]
    max_seq_lens: list[int]
    seq_lens: torch.Tensor
    workspace: torch.Tensor
    workspace_rows: torch.Tensor
    chunk_total_token: list[int]
    chunk_size: int

    @property
    def num_chunks(self) -> int:
        return len(self.seq_tot)


@dataclass
class ContextChunkKV:
    """What one chunk gives the engine's attention step.

    ``k`` ``[T, H, Dn + E]`` and ``v`` ``[T, H, Dv]`` in bf16, rows ordered
    request after request; ``cu_seq_lens`` (int32, device,
    ``[num_prefills + 1]``) and ``max_seq_len`` describe the ragged key side of
    this chunk's attention; ``index`` is the chunk number.
    """

    index: int
    k: torch.Tensor
    v: torch.Tensor
    cu_seq_lens: torch.Tensor
    max_seq_len: int


# portq: ports vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonMetadataBuilder.determine_chunked_prefill_workspace_size
def determine_chunked_prefill_workspace_size(
    max_model_len: int, max_num_seqs: int, block_size: int
) -> int:
    """Workspace rows: room for 8 full-length requests or 4 pages per request,
    capped at 64K rows, but never less than one page per request."""
    for name, value in (("max_model_len", max_model_len), ("max_num_seqs", max_num_seqs),
                        ("block_size", block_size)):
        check.integer(name, value, minimum=1)
    size = min(max(8 * max_model_len, 4 * max_num_seqs * block_size),
               MAX_CHUNKED_PREFILL_WORKSPACE_TOKENS)
    return max(size, max_num_seqs * block_size)


def allocate_chunked_prefill_workspace(
    workspace_size: int, head_size: int, dtype: torch.dtype, device
) -> torch.Tensor:
    """The ``[workspace_size, head_size]`` buffer of :class:`ChunkedContextMetadata`.

    ``dtype`` is bf16, the model dtype the gather dequantises into, or
    ``torch.float8_e4m3fn`` for an fp8 prefill query (raw cache bytes, scaled
    by the expansion).
    """
    check.one_of("dtype", dtype, WORKSPACE_DTYPES, exc=TypeError)
    check.integer("workspace_size", workspace_size, minimum=1)
    check.integer("head_size", head_size, minimum=1)
    return torch.empty((workspace_size, head_size), dtype=dtype, device=device)


def _plan_chunks(context_lens: torch.Tensor, workspace_size: int, page_size: int):
    """Host arithmetic of the plan: (chunk_size, starts, seq_lens, cu_seq_lens)."""
    num_with_context = int((context_lens > 0).sum())
    chunk_size = (workspace_size // num_with_context) // page_size * page_size
    if chunk_size < 1:
        check.fail("workspace", f"room for one page ({page_size} rows) for each of the "
                   f"{num_with_context} requests with context (size it with "
                   "determine_chunked_prefill_workspace_size)", f"{workspace_size} rows")
    max_context = int(context_lens.max())
    num_chunks = -(-max_context // chunk_size)
    chunk_starts = torch.arange(num_chunks, dtype=torch.int64)[:, None] * chunk_size
    starts = chunk_starts.expand(num_chunks, context_lens.shape[0])
    ends = torch.minimum(context_lens[None, :], starts + chunk_size)
    seq_lens = (ends - starts).clamp(min=0)
    cu_seq_lens = torch.zeros((num_chunks, context_lens.shape[0] + 1), dtype=torch.int64)
    torch.cumsum(seq_lens, dim=1, out=cu_seq_lens[:, 1:])
    return chunk_size, starts, seq_lens, cu_seq_lens


# portq: ports vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonMetadataBuilder.build
# portq: not-carried vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonMetadataBuilder.build[dcp_world_size] -- the DCP chunk layout (local chunk lengths, all-gather area) is not carried
def build_chunked_context_metadata(
    context_lens_cpu: torch.Tensor,
    workspace: torch.Tensor,
    page_size: int,
) -> ChunkedContextMetadata | None:
    """Plan the context chunks of a batch's prefill requests.

    ``context_lens_cpu``: int ``[num_prefills]`` on the host, ``seq_len -
    query_len`` of each prefill request (the tokens already cached). Returns
    ``None`` when no request has context. Chunk ``i`` covers context
    positions ``[i * chunk_size, (i + 1) * chunk_size)`` of every request,
    ``chunk_size = (W // requests_with_context)`` rounded down to ``page_size``.
    No device-to-host synchronisation: everything is computed on the host and
    copied to ``workspace.device`` once.
    """
    check.host_tensor("context_lens_cpu", context_lens_cpu)
    check.tensor("workspace", workspace, ndim=2)
    page_size = check.integer("page_size", page_size, minimum=1)
    context_lens = context_lens_cpu.to(torch.int64)
    if context_lens.numel() == 0 or not bool((context_lens > 0).any()):
        return None
    if bool((context_lens < 0).any()):
        check.fail("context_lens_cpu", "non-negative lengths", f"minimum {int(context_lens.min())}")

    chunk_size, starts, seq_lens, cu_seq_lens = _plan_chunks(
        context_lens, workspace.shape[0], page_size)
    device = workspace.device
    seq_tot = cu_seq_lens[:, -1].tolist()
    return ChunkedContextMetadata(
        cu_seq_lens=cu_seq_lens.to(torch.int32).to(device),
        starts=starts.to(torch.int32).contiguous().to(device),
        seq_tot=seq_tot,
        max_seq_lens=seq_lens.max(dim=1).values.tolist(),
        seq_lens=seq_lens.to(torch.int32),
        workspace=workspace,
        workspace_rows=torch.arange(workspace.shape[0], dtype=torch.int32, device=device),
        chunk_total_token=list(seq_tot),
        chunk_size=chunk_size,
    )


def _check_layer_inputs(kv_cache, block_table, metadata, kv_cache_dtype, k_scale,
                        kv_b_proj_weight, num_heads, v_head_dim, kv_lora_rank):
    check.instance("metadata", metadata, ChunkedContextMetadata)
    workspace = metadata.workspace
    check.one_of("metadata.workspace.dtype", workspace.dtype, WORKSPACE_DTYPES, exc=TypeError)
    check.tensor("kv_cache", kv_cache, ndim=3, device=workspace.device, device_of="metadata.workspace")
    if kv_cache.shape[2] != workspace.shape[1]:
        check.fail("kv_cache", f"entries of the workspace's head size {workspace.shape[1]}",
                   f"shape {tuple(kv_cache.shape)}")
    num_prefills = metadata.starts.shape[1]
    check.tensor("block_table", block_table, dtypes=(torch.int32,), ndim=2, device=workspace.device,
                 device_of="metadata.workspace")
    check.dim_size("block_table", block_table, num_prefills, "one per prefill request of metadata")
    if workspace.element_size() == 1:
        check.one_of("kv_cache_dtype", kv_cache_dtype, tuple(sorted(FP8_CACHE_FORMATS)),
                     note=" (an fp8 workspace reads raw e4m3 cache bytes)")
    else:
        check.one_of("kv_cache_dtype", kv_cache_dtype, DEQUANT_CACHE_FORMATS)
    check.scale_tensor("k_scale", k_scale, workspace.device)
    num_heads = check.integer("num_heads", num_heads, minimum=1)
    v_head_dim = check.integer("v_head_dim", v_head_dim, minimum=1)
    check.integer("kv_lora_rank", kv_lora_rank, minimum=1, maximum=kv_cache.shape[2] - 1)
    check.tensor("kv_b_proj_weight", kv_b_proj_weight, ndim=2)
    n_rows, rank = kv_b_proj_weight.shape
    if rank != kv_lora_rank or n_rows % num_heads or n_rows // num_heads <= v_head_dim:
        check.fail("kv_b_proj_weight", f"[num_heads * (qk_nope_head_dim + v_head_dim), "
                   f"kv_lora_rank={kv_lora_rank}] with num_heads={num_heads}, v_head_dim={v_head_dim}",
                   f"shape {tuple(kv_b_proj_weight.shape)}")


def _check_chunk(metadata, chunk) -> int:
    check.instance("metadata", metadata, ChunkedContextMetadata)
    return check.integer("chunk", chunk, maximum=metadata.num_chunks - 1)


@dataclass(frozen=True)
class ChunkedContextOps:
    """The three ops one chunk calls. :data:`KERNEL_OPS` are the Triton ports;
    ``reference.REFERENCE_OPS`` the PyTorch references of the same rows, so the
    reference iteration is this module's loop on the oracles."""

    gather_and_maybe_dequant_cache: Callable
    cp_gather_cache: Callable
    gather_kv_b_proj: Callable


KERNEL_OPS = ChunkedContextOps(gather_and_maybe_dequant_cache, cp_gather_cache, gather_kv_b_proj)


def gather_context_chunk(
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    metadata: ChunkedContextMetadata,
    chunk: int,
    kv_cache_dtype: str,
    k_scale: torch.Tensor,
    *,
    ops: ChunkedContextOps = KERNEL_OPS,
) -> torch.Tensor:
    """Step 1 of chunk ``chunk``: fill ``workspace[:seq_tot[chunk]]`` and return that view.

    A model-dtype workspace is filled by ``gather_and_maybe_dequant_cache``
    (dequantising fp8 caches with ``k_scale``); an fp8 workspace by
    ``cp_gather_cache`` (raw bytes, dequantised later by the expansion).
    """
    chunk = _check_chunk(metadata, chunk)
    workspace = metadata.workspace
    num_tokens = metadata.chunk_total_token[chunk]
    cu_seq_lens = metadata.cu_seq_lens[chunk]
    seq_starts = metadata.starts[chunk]
    if workspace.element_size() == 1:
        cache_bytes = kv_cache.view(workspace.dtype) if kv_cache.element_size() == 1 else kv_cache
        ops.cp_gather_cache(cache_bytes, workspace[:num_tokens], block_table, cu_seq_lens,
                            block_table.shape[0], seq_starts)
    else:
        ops.gather_and_maybe_dequant_cache(kv_cache, workspace, block_table, cu_seq_lens,
                                           num_tokens, kv_cache_dtype, k_scale, seq_starts)
    return workspace[:num_tokens]


def expand_context_chunk(
    metadata: ChunkedContextMetadata,
    chunk: int,
    k_scale: torch.Tensor,
    kv_b_proj_weight: torch.Tensor,
    kv_b_proj_scale: torch.Tensor | None,
    num_heads: int,
    v_head_dim: int,
    kv_lora_rank: int,
    *,
    ops: ChunkedContextOps = KERNEL_OPS,
) -> ContextChunkKV:
    """Step 2 of chunk ``chunk``: up-project the gathered rows into K and V.

    The workspace is handed to ``gather_kv_b_proj`` as a cache of one-row
    pages (``kv_indices = arange``, ``kv_indptr = cu_seq_lens``), which is
    exactly the expansion's flat-path precondition. The KV scale is ``k_scale``
    for an fp8 workspace and 1 for a dequantised one.
    """
    chunk = _check_chunk(metadata, chunk)
    workspace = metadata.workspace
    num_tokens = metadata.chunk_total_token[chunk]
    rope_dim = workspace.shape[1] - kv_lora_rank
    nope_dim = kv_b_proj_weight.shape[0] // num_heads - v_head_dim
    device = workspace.device
    k = torch.empty((num_tokens, num_heads, nope_dim + rope_dim), dtype=torch.bfloat16,
                    device=device)
    v = torch.empty((num_tokens, num_heads, v_head_dim), dtype=torch.bfloat16, device=device)
    cu_seq_lens = metadata.cu_seq_lens[chunk]
    if workspace.element_size() == 1:
        expansion_scale = k_scale
    else:
        expansion_scale = torch.ones(1, dtype=torch.float32, device=device)
    if num_tokens:
        ops.gather_kv_b_proj(workspace[:num_tokens].view(num_tokens, 1, workspace.shape[1]),
                             expansion_scale, cu_seq_lens, metadata.workspace_rows, cu_seq_lens,
                             kv_b_proj_weight, kv_b_proj_scale, k, v)
    return ContextChunkKV(index=chunk, k=k, v=v, cu_seq_lens=cu_seq_lens,
                          max_seq_len=metadata.max_seq_lens[chunk])


# portq: ports vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonImpl._compute_prefill_context
# portq: not-carried vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonImpl._context_parallel_compute_prefill_context -- DCP context gather + all-gather + reorg is not carried
def iter_prefill_context_chunks(
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    metadata: ChunkedContextMetadata,
    kv_cache_dtype: str,
    k_scale: torch.Tensor,
    kv_b_proj_weight: torch.Tensor,
    kv_b_proj_scale: torch.Tensor | None,
    num_heads: int,
    v_head_dim: int,
    kv_lora_rank: int,
    *,
    ops: ChunkedContextOps = KERNEL_OPS,
) -> Iterator[ContextChunkKV]:
    """One layer's chunked-context iteration: gather, expand, yield, per chunk.

    ``kv_cache`` ``[num_blocks, block_size, kv_lora_rank + rope_dim]`` is the
    layer's paged cache (``kv_cache_dtype`` as in the cache ops), and
    ``block_table`` holds the prefill requests' rows in metadata order. The
    workspace is reused by the next chunk, but each yielded ``k``/``v`` is a
    fresh bf16 tensor the engine may keep. Attention + LSE merge: the engine's.
    """
    _check_layer_inputs(kv_cache, block_table, metadata, kv_cache_dtype, k_scale,
                        kv_b_proj_weight, num_heads, v_head_dim, kv_lora_rank)
    for chunk in range(metadata.num_chunks):
        gather_context_chunk(kv_cache, block_table, metadata, chunk, kv_cache_dtype, k_scale,
                             ops=ops)
        yield expand_context_chunk(metadata, chunk, k_scale, kv_b_proj_weight, kv_b_proj_scale,
                                   num_heads, v_head_dim, kv_lora_rank, ops=ops)
