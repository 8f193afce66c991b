"""MLA chunked-context prefill: plan the context chunks of a batch, then for
every chunk gather the cached latent into the workspace and expand it to
per-head K and V.

The gather is the first step of every chunked-context iteration, so every
prefill with a prefix-cache hit goes through it.
"""

from dataclasses import dataclass

import torch

from mlaport.kv_cache import gather_and_maybe_dequant_cache
from mlaport.mla_prefix import gather_kv_b_proj

# portq: not-carried vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonImpl._context_parallel_compute_prefill_context -- decode context parallelism is not supported by this engine


@dataclass
class ChunkPlan:
    cu_seq_lens: torch.Tensor  # [num_chunks, num_prefills + 1]
    starts: torch.Tensor  # [num_chunks, num_prefills]
    token_to_seq: torch.Tensor  # [num_chunks, max_chunk_tokens]
    chunk_total_token: list[int]


# portq: ports vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonMetadataBuilder.build_chunked_context @7412a96f78
def plan_context_chunks(context_lens: torch.Tensor, workspace_size: int, page_size: int) -> ChunkPlan:
    """Split every request's cached context into workspace-sized chunks."""
    num_prefills = context_lens.shape[0]
    max_chunk = (workspace_size // num_prefills) // page_size * page_size
    num_chunks = -(-int(context_lens.max()) // max_chunk)
    starts = torch.arange(num_chunks, dtype=torch.int32)[:, None].expand(-1, num_prefills) * max_chunk
    lens = (torch.minimum(context_lens[None, :], starts + max_chunk) - starts).clamp(min=0)
    cu_seq_lens = torch.zeros(num_chunks, num_prefills + 1, dtype=torch.int32)
    torch.cumsum(lens, dim=1, out=cu_seq_lens[:, 1:])
    totals = cu_seq_lens[:, -1].tolist()
    token_to_seq = torch.zeros(num_chunks, max(totals), dtype=torch.int32)
    for i in range(num_chunks):
        token_to_seq[i, :totals[i]] = torch.repeat_interleave(
            torch.arange(num_prefills, dtype=torch.int32), lens[i])
    return ChunkPlan(cu_seq_lens, starts.contiguous(), token_to_seq, totals)


# portq: ports vllm:vllm/model_executor/layers/attention/mla_attention.py::MLACommonImpl._compute_prefill_context @7412a96f78
def compute_prefill_context(kv_cache, block_table, plan: ChunkPlan, workspace, kv_cache_dtype,
                            k_scale, kv_b_proj_weight, kv_b_proj_scale, num_heads, v_head_dim):
    """Yield (K, V) of every context chunk, in order."""
    device = kv_cache.device
    for i, total in enumerate(plan.chunk_total_token):
        cu_seq_lens = plan.cu_seq_lens[i].to(device)
        gather_and_maybe_dequant_cache(
            src_cache=kv_cache,
            dst=workspace,
            block_table=block_table,
            cu_seq_lens=cu_seq_lens,
            token_to_seq=plan.token_to_seq[i].to(device),
            num_tokens=total,
            kv_cache_dtype=kv_cache_dtype,
            scale=k_scale,
            seq_starts=plan.starts[i].to(device),
        )
        # The workspace is already token-packed: expand it as a page-size-1 cache.
        rows = torch.arange(total, dtype=torch.int32, device=device)
        k = torch.empty(total, num_heads, kv_b_proj_weight.shape[0] // num_heads - v_head_dim + 64,
                        dtype=torch.bfloat16, device=device)
        v = torch.empty(total, num_heads, v_head_dim, dtype=torch.bfloat16, device=device)
        gather_kv_b_proj(workspace[:total].unsqueeze(1), k_scale, cu_seq_lens, rows, cu_seq_lens,
                         kv_b_proj_weight, kv_b_proj_scale, k, v)
        yield k, v
