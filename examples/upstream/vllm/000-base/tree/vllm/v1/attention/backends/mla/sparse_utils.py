"""Utility functions for sparse MLA backends."""

import numpy as np
import torch

from vllm.triton_utils import tl, triton


@triton.jit
def _convert_req_index_to_global_index_kernel(
    req_id_ptr,  # int32 [num_tokens]
    block_table_ptr,  # int32 [num_requests, max_num_blocks_per_req]
    token_indices_ptr,  # int32 [num_tokens, NUM_TOPK_TOKENS]
    out_ptr,  # int32 [num_tokens, NUM_TOPK_TOKENS]
    valid_count_ptr,  # int32 [num_tokens]
    prefill_request_id_ptr,  # int32 [num_tokens], -1 for decode
    workspace_starts_ptr,  # int32 [num_prefill_reqs]
    max_num_blocks_per_req: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    NUM_TOPK_TOKENS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_PREFILL: tl.constexpr,
    COUNT_VALID: tl.constexpr,
    COMPACT_TO_FRONT: tl.constexpr,
    DCP_SIZE: tl.constexpr,
    DCP_RANK: tl.constexpr,
    DCP_INTERLEAVE: tl.constexpr,
):
    token_id = tl.program_id(0)
    tile_id = tl.program_id(1)
    indice_id = tile_id * BLOCK_N + tl.arange(0, BLOCK_N)
    req = tl.load(req_id_ptr + token_id)
    tok = tl.load(token_indices_ptr + token_id * NUM_TOPK_TOKENS + indice_id)
    is_invalid_tok = tok < 0

    owner = (tok // DCP_INTERLEAVE) % DCP_SIZE
    local = (tok // (DCP_SIZE * DCP_INTERLEAVE)) * DCP_INTERLEAVE + tok % DCP_INTERLEAVE
    block_id = local // BLOCK_SIZE
    inblock_off = local % BLOCK_SIZE
    valid_block = (block_id >= 0) & (block_id < max_num_blocks_per_req)
    base = tl.load(
        block_table_ptr + req * max_num_blocks_per_req + block_id,
        mask=valid_block & ~is_invalid_tok,
        other=0,
    )
    out_val = tl.where(
        valid_block & (owner == DCP_RANK) & ~is_invalid_tok,
        base * BLOCK_SIZE + inblock_off,
        -1,
    )
    if HAS_PREFILL:
        prefill_req = tl.load(prefill_request_id_ptr + token_id)
        if prefill_req >= 0:
            start = tl.load(workspace_starts_ptr + prefill_req)
            out_val = tl.where(is_invalid_tok, -1, start + tok)

    is_valid = out_val >= 0
    if COUNT_VALID:
        tile_count = tl.sum(is_valid.to(tl.int32), axis=0)
        slot = tl.atomic_add(valid_count_ptr + token_id, tile_count)
    if COMPACT_TO_FRONT:
        dest = slot + tl.cumsum(is_valid.to(tl.int32), axis=0) - 1
        tl.store(out_ptr + token_id * NUM_TOPK_TOKENS + dest, out_val, mask=is_valid)
    else:
        tl.store(out_ptr + token_id * NUM_TOPK_TOKENS + indice_id, out_val)


def triton_convert_req_index_to_global_index(
    req_id: torch.Tensor,  # int32 [num_tokens]
    block_table: torch.Tensor,  # int32 [num_requests, max_num_blocks_per_req]
    token_indices: torch.Tensor,  # int32 [num_tokens, NUM_TOPK_TOKENS]
    BLOCK_SIZE: int = 64,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,  # tile width along columns
    HAS_PREFILL_WORKSPACE: bool = False,
    prefill_workspace_request_ids: torch.Tensor | None = None,
    prefill_workspace_starts: torch.Tensor | None = None,
    return_valid_counts: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """out[token_id, indice_id] =
        block_table[req_id[token_id],
            token_indices[token_id, indice_id] // BLOCK_SIZE] * BLOCK_SIZE
        + token_indices[token_id, indice_id] % BLOCK_SIZE

    Only when token_indices[token_id, indice_id] == -1 do we output -1; an
    out-of-range block also gives -1. Prefill tokens map to workspace rows.
    """
    assert req_id.dtype == torch.int32
    assert block_table.dtype == torch.int32
    assert token_indices.dtype == torch.int32
    assert token_indices.shape[1] == NUM_TOPK_TOKENS
    assert NUM_TOPK_TOKENS % BLOCK_N == 0
    if HAS_PREFILL_WORKSPACE:
        assert prefill_workspace_request_ids is not None
        assert prefill_workspace_starts is not None

    num_tokens = req_id.shape[0]
    out = torch.empty_like(token_indices)
    valid_counts = None
    if return_valid_counts:
        valid_counts = torch.zeros(num_tokens, dtype=torch.int32,
                                   device=token_indices.device)

    grid = (num_tokens, NUM_TOPK_TOKENS // BLOCK_N)
    _convert_req_index_to_global_index_kernel[grid](
        req_id.contiguous(),
        block_table.contiguous(),
        token_indices.contiguous(),
        out,
        valid_counts,
        prefill_workspace_request_ids,
        prefill_workspace_starts,
        max_num_blocks_per_req=block_table.shape[1],
        BLOCK_SIZE=BLOCK_SIZE,
        NUM_TOPK_TOKENS=NUM_TOPK_TOKENS,
        BLOCK_N=BLOCK_N,
        HAS_PREFILL=HAS_PREFILL_WORKSPACE,
        COUNT_VALID=return_valid_counts,
        COMPACT_TO_FRONT=False,
        DCP_SIZE=1,
        DCP_RANK=0,
        DCP_INTERLEAVE=1,
    )
    if return_valid_counts:
        return out, valid_counts
    return out


def triton_filter_and_convert_dcp_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int = 1,
    BLOCK_SIZE: int = 64,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    return_valid_counts: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Filter global per-request indices to this DCP rank's local slots."""
    assert dcp_size >= 1
    assert 0 <= dcp_rank < dcp_size
    assert BLOCK_SIZE % cp_kv_cache_interleave_size == 0
    if dcp_size == 1:
        return triton_convert_req_index_to_global_index(
            req_id,
            block_table,
            token_indices,
            BLOCK_SIZE=BLOCK_SIZE,
            NUM_TOPK_TOKENS=NUM_TOPK_TOKENS,
            BLOCK_N=BLOCK_N,
            return_valid_counts=return_valid_counts,
        )

    num_tokens = req_id.shape[0]
    out = torch.empty_like(token_indices)
    valid_counts = None
    if return_valid_counts:
        valid_counts = torch.zeros(num_tokens, dtype=torch.int32,
                                   device=token_indices.device)
    grid = (num_tokens, NUM_TOPK_TOKENS // BLOCK_N)
    _convert_req_index_to_global_index_kernel[grid](
        req_id.contiguous(),
        block_table.contiguous(),
        token_indices.contiguous(),
        out,
        valid_counts,
        None,
        None,
        max_num_blocks_per_req=block_table.shape[1],
        BLOCK_SIZE=BLOCK_SIZE,
        NUM_TOPK_TOKENS=NUM_TOPK_TOKENS,
        BLOCK_N=BLOCK_N,
        HAS_PREFILL=False,
        COUNT_VALID=return_valid_counts,
        COMPACT_TO_FRONT=False,
        DCP_SIZE=dcp_size,
        DCP_RANK=dcp_rank,
        DCP_INTERLEAVE=cp_kv_cache_interleave_size,
    )
    if return_valid_counts:
        return out, valid_counts
    return out


@triton.jit
def sparse_mla_prepare_safe_lengths_kernel(
    physical_indices_ptr,
    valid_counts_ptr,
    safe_lengths_ptr,
    num_tokens,
    physical_indices_stride,
    BLOCK: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = rows < num_tokens
    counts = tl.load(valid_counts_ptr + rows, mask=in_range, other=1)
    empty = in_range & (counts == 0)
    tl.store(physical_indices_ptr + rows * physical_indices_stride,
             tl.zeros([BLOCK], tl.int32), mask=empty)
    tl.store(safe_lengths_ptr + rows, tl.maximum(counts, 1), mask=in_range)


def prepare_sparse_mla_safe_lengths(
    physical_indices: torch.Tensor, valid_counts: torch.Tensor
) -> torch.Tensor:
    """Install dummy slots for empty queries and return nonzero kernel lengths."""
    num_tokens = valid_counts.numel()
    safe_lengths = torch.empty((num_tokens,), dtype=valid_counts.dtype,
                               device=valid_counts.device)
    if num_tokens:
        sparse_mla_prepare_safe_lengths_kernel[(triton.cdiv(num_tokens, 256),)](
            physical_indices,
            valid_counts,
            safe_lengths,
            num_tokens,
            physical_indices.stride(0),
            BLOCK=256,
        )
    return safe_lengths


def request_row_bounds(req_idx: np.ndarray) -> np.ndarray:
    """Bounds of the runs of adjacent rows that belong to one request."""
    assert req_idx.size > 0
    bounds = np.flatnonzero(np.r_[True, req_idx[1:] != req_idx[:-1], True])
    assert bounds.size - 1 == np.unique(req_idx).size, (
        "rows of one request must be adjacent")
    return bounds
