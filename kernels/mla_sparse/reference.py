"""Plain-PyTorch semantics of the sparse-MLA index utilities.

Same names and signatures as the Triton ops (``portq_kernels.mla_sparse``),
vectorised so the GPU tests can run them at realistic shapes. These functions
*are* the specification the tests hold the kernels to: exact equality for
every element, compaction compared as a set per row plus the counts. Where the
reference compacts it keeps input order (the kernels promise only the set).
Argument validation lives in the ops, not here.
"""
from __future__ import annotations

import torch

from .row_view import flat_kv_row_view, request_row_bounds  # host-only: shared as is

INT32_MAX = 2**31 - 1

__all__ = [
    "triton_convert_req_index_to_global_index",
    "triton_filter_and_convert_dcp_index",
    "prepare_sparse_mla_safe_lengths",
    "flat_kv_row_view",
    "request_row_bounds",
    "compact_rows",
]


def _remap_values(req_id, block_table, token_indices, *, block_size, block_stride_rows,
                  prefill_request_ids, prefill_starts, rank_stride, dcp_size, dcp_rank,
                  interleave):
    """Per-entry (value, valid) of the remap, in int64 (no compaction)."""
    tok = token_indices.to(torch.int64)
    num_requests, max_blocks = block_table.shape
    req = req_id.to(torch.int64)[:, None].expand_as(tok)
    empty = tok < 0
    safe_tok = tok.clamp(min=0)
    owner = (safe_tok // interleave) % dcp_size
    local = (safe_tok // (dcp_size * interleave)) * interleave + safe_tok % interleave
    block_id = local // block_size
    paged = (~empty & (owner == dcp_rank) & (block_id < max_blocks) & (req >= 0)
             & (req < num_requests))
    if prefill_request_ids is not None:
        pid = prefill_request_ids.to(torch.int64)[:, None].expand_as(tok)
        is_prefill = pid >= 0
        paged &= ~is_prefill
    physical = torch.zeros_like(tok)
    physical[paged] = block_table.to(torch.int64)[req[paged], block_id[paged]]
    value = physical * block_stride_rows + local % block_size
    valid = paged & (physical >= 0) & (value <= INT32_MAX)
    if prefill_request_ids is not None:
        ok = is_prefill & (pid < prefill_starts.shape[0])
        start = torch.zeros_like(tok)
        start[ok] = prefill_starts.to(torch.int64)[pid[ok]]
        pre_value = start + owner * rank_stride + local
        pre_valid = ok & ~empty & (pre_value >= 0) & (pre_value <= INT32_MAX)
        value = torch.where(is_prefill, pre_value, value)
        valid = torch.where(is_prefill, pre_valid, valid)
    return value, valid


def compact_rows(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Move the valid entries of each row to its front (stable), tail -1."""
    order = torch.sort((~valid).to(torch.int8), dim=1, stable=True).indices
    packed = torch.gather(torch.where(valid, values, -1), 1, order)
    return packed


def triton_convert_req_index_to_global_index(
    req_id, block_table, token_indices, BLOCK_SIZE=64, BLOCK_STRIDE_ROWS=None,
    NUM_TOPK_TOKENS=2048, BLOCK_N=128, HAS_PREFILL_WORKSPACE=False,
    prefill_workspace_request_ids=None, prefill_workspace_starts=None,
    prefill_workspace_rank_stride=None, dcp_size=1, dcp_rank=0,
    cp_kv_cache_interleave_size=1, return_valid_counts=False, out=None,
    valid_counts_out=None,
):
    """Reference remap; see the op's docstring. ``BLOCK_N`` only tiles the kernel."""
    value, valid = _remap_values(
        req_id, block_table, token_indices, block_size=BLOCK_SIZE,
        block_stride_rows=BLOCK_STRIDE_ROWS or BLOCK_SIZE,
        prefill_request_ids=prefill_workspace_request_ids if HAS_PREFILL_WORKSPACE else None,
        prefill_starts=prefill_workspace_starts,
        rank_stride=prefill_workspace_rank_stride or 0, dcp_size=dcp_size,
        dcp_rank=dcp_rank, interleave=cp_kv_cache_interleave_size,
    )
    if return_valid_counts:
        result = compact_rows(value, valid).to(torch.int32)
    else:
        result = torch.where(valid, value, -1).to(torch.int32)
    if out is not None:
        out.copy_(result)
        result = out
    if not return_valid_counts:
        return result
    counts = valid.sum(dim=1).to(torch.int32)
    if valid_counts_out is not None:
        valid_counts_out.copy_(counts)
        counts = valid_counts_out
    return result, counts


def triton_filter_and_convert_dcp_index(
    req_id, block_table, token_indices, dcp_size, dcp_rank, cp_kv_cache_interleave_size=1,
    BLOCK_SIZE=64, BLOCK_STRIDE_ROWS=None, NUM_TOPK_TOKENS=2048, BLOCK_N=128,
    return_valid_counts=False, compact_valid_to_front=True,
):
    """Reference DCP filter; ``dcp_size == 1`` behaves like the plain remap."""
    if dcp_size == 1:
        return triton_convert_req_index_to_global_index(
            req_id, block_table, token_indices, BLOCK_SIZE=BLOCK_SIZE,
            BLOCK_STRIDE_ROWS=BLOCK_STRIDE_ROWS, return_valid_counts=return_valid_counts,
        )
    value, valid = _remap_values(
        req_id, block_table, token_indices, block_size=BLOCK_SIZE,
        block_stride_rows=BLOCK_STRIDE_ROWS or BLOCK_SIZE, prefill_request_ids=None,
        prefill_starts=None, rank_stride=0, dcp_size=dcp_size, dcp_rank=dcp_rank,
        interleave=cp_kv_cache_interleave_size,
    )
    if compact_valid_to_front:
        result = compact_rows(value, valid).to(torch.int32)
    else:
        result = torch.where(valid, value, -1).to(torch.int32)
    if return_valid_counts:
        return result, valid.sum(dim=1).to(torch.int32)
    return result


def prepare_sparse_mla_safe_lengths(physical_indices, valid_counts):
    """Slot 0 into column 0 of empty rows (in place); return counts clamped to >= 1."""
    empty = valid_counts == 0
    physical_indices[:, 0].masked_fill_(empty, 0)
    return valid_counts.clamp(min=1).to(torch.int32)
