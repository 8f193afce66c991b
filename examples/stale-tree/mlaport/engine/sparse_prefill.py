"""Sparse-MLA prefill: gather the context of each workspace-sized group of
prefill requests into a bf16 workspace, then map every token's top-k
indices to workspace rows."""

import torch

from mlaport.kv_cache import (
    cp_gather_and_upconvert_fp8_kv_cache,
    cp_gather_and_upconvert_nvfp4_kv_cache,
)
from mlaport.mla_sparse import (
    prepare_sparse_mla_safe_lengths,
    triton_convert_req_index_to_global_index,
)


def gather_prefill_chunk(kv_cache, kv_cache_dtype, workspace, block_table, seq_lens):
    """Fill the workspace with one chunk's context; returns its request starts."""
    workspace_starts = torch.zeros_like(seq_lens)
    workspace_starts[1:] = torch.cumsum(seq_lens, 0)[:-1]
    total = int(seq_lens.sum())
    if kv_cache_dtype == "nvfp4_ds_mla":
        cp_gather_and_upconvert_nvfp4_kv_cache(kv_cache.view(torch.uint8), workspace[:total],
                                               block_table, workspace_starts, len(seq_lens))
    else:
        cp_gather_and_upconvert_fp8_kv_cache(kv_cache.view(torch.uint8), workspace[:total],
                                             block_table, seq_lens, workspace_starts, len(seq_lens))
    return workspace_starts


def prefill_topk_rows(req_id, block_table, topk_indices, prefill_request_id, workspace_starts,
                      block_size, topk):
    """Workspace rows of every prefill token's top-k entries, and safe lengths."""
    rows, counts = triton_convert_req_index_to_global_index(
        req_id, block_table, topk_indices, BLOCK_SIZE=block_size, NUM_TOPK_TOKENS=topk,
        HAS_PREFILL_WORKSPACE=True, prefill_workspace_request_ids=prefill_request_id,
        prefill_workspace_starts=workspace_starts, return_valid_counts=True)
    return rows, prepare_sparse_mla_safe_lengths(rows, counts)
