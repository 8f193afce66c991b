"""DeepSeek-V2/V3 MLA attention as this engine runs it: write the new tokens'
latent KV, then, for a prefill with a cached prefix, expand the context
chunk by chunk (dense models) or gather it into the sparse workspace (V3.2)."""

import torch

from mlaport.engine.chunked_context import compute_prefill_context, plan_context_chunks
from mlaport.engine.kv_writer import write_layer_kv
from mlaport.engine.sparse_prefill import gather_prefill_chunk, prefill_topk_rows


class DeepseekV2MLAAttention(torch.nn.Module):

    def __init__(self, num_heads: int, v_head_dim: int, kv_cache_dtype: str, page_size: int,
                 workspace_size: int, use_sparse: bool = False):
        super().__init__()
        self.num_heads = num_heads
        self.v_head_dim = v_head_dim
        self.kv_cache_dtype = kv_cache_dtype
        self.page_size = page_size
        self.use_sparse = use_sparse
        self.register_buffer("workspace", torch.empty(workspace_size, 576), persistent=False)

    def forward_prefill(self, kv_c, k_pe, kv_cache, slot_mapping, block_table, context_lens,
                        k_scale, kv_b_proj_weight, kv_b_proj_scale, sparse_batch=None):
        write_layer_kv(kv_c, k_pe, kv_cache, slot_mapping, self.kv_cache_dtype, k_scale)
        if self.use_sparse:
            starts = gather_prefill_chunk(kv_cache, self.kv_cache_dtype, self.workspace,
                                          block_table, sparse_batch.seq_lens)
            return prefill_topk_rows(sparse_batch.req_id, block_table, sparse_batch.topk_indices,
                                     sparse_batch.prefill_request_id, starts, self.page_size,
                                     sparse_batch.topk_indices.shape[1])
        plan = plan_context_chunks(context_lens, self.workspace.shape[0], self.page_size)
        return list(compute_prefill_context(kv_cache, block_table, plan, self.workspace,
                                            self.kv_cache_dtype, k_scale, kv_b_proj_weight,
                                            kv_b_proj_scale, self.num_heads, self.v_head_dim))
