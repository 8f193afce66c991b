"""FlashMLA sparse backend: the fp8 prefill path gathers the paged cache into
a bf16 workspace chunk by chunk, then remaps top-k indices to workspace rows."""

import torch

from vllm import _custom_ops as ops
from vllm.v1.attention.backends.mla.sparse_utils import (
    triton_convert_req_index_to_global_index)


def get_prefill_workspace_size(max_model_len: int) -> int:
    return 5 * max_model_len


class FlashMLASparseImpl:

    def __init__(self, kv_cache_dtype: str, topk: int, block_size: int):
        self.kv_cache_dtype = kv_cache_dtype
        self.topk = topk
        self.block_size = block_size

    def _gather_prefill_chunk(self, kv_cache, workspace, chunk):
        if self.kv_cache_dtype == "nvfp4_ds_mla":
            ops.cp_gather_and_upconvert_nvfp4_kv_cache(
                kv_cache.view(torch.uint8), workspace[:chunk.total_tokens],
                chunk.block_table, chunk.workspace_starts,
                len(chunk.block_table))
        else:
            ops.cp_gather_and_upconvert_fp8_kv_cache(
                kv_cache.view(torch.uint8), workspace[:chunk.total_tokens],
                chunk.block_table, chunk.seq_lens, chunk.workspace_starts,
                len(chunk.block_table))

    def _prefill_indices(self, chunk, topk_indices):
        return triton_convert_req_index_to_global_index(
            chunk.req_id,
            chunk.block_table,
            topk_indices,
            BLOCK_SIZE=self.block_size,
            NUM_TOPK_TOKENS=self.topk,
            HAS_PREFILL_WORKSPACE=True,
            prefill_workspace_request_ids=chunk.prefill_request_id,
            prefill_workspace_starts=chunk.workspace_starts,
        )
