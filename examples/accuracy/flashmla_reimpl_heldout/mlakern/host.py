"""Host entries: the checks, the reshape of the query heads of one KV head
into rows, the buffers and the launches, as the extension's entry points
do them."""

import math

import torch

from .decode import run_splitkv_mla
from .schedule import BLOCK_M, TILE_SCHEDULER_METADATA_SIZE, launch_split_schedule

# SM count used off CUDA (the interpreter): an H800's.
CPU_SM_COUNT = 132


def _sm_count(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return CPU_SM_COUNT


# portq: ports flashmla:csrc/flash_api.cpp::get_mla_metadata @414a2f3
def mla_metadata(seqlens_k, num_heads_per_head_k, num_heads_k):
    assert seqlens_k.is_contiguous() and seqlens_k.dtype == torch.int32
    batch = seqlens_k.shape[0]
    num_sm_parts = _sm_count(seqlens_k.device) // num_heads_k // math.ceil(num_heads_per_head_k / BLOCK_M)
    meta = torch.zeros((num_sm_parts, TILE_SCHEDULER_METADATA_SIZE), dtype=torch.int32, device=seqlens_k.device)
    splits = torch.empty((batch + 1,), dtype=torch.int32, device=seqlens_k.device)
    launch_split_schedule(seqlens_k, meta, splits, num_sm_parts)
    return meta, splits


# portq: ports flashmla:csrc/flash_api.cpp::mha_fwd_kvcache_mla @414a2f3
# portq: not-carried flashmla:csrc/flash_api.cpp::mha_fwd_kvcache_mla[fp16] -- bf16 only: the engine's queries and latent cache are bf16
# portq: not-carried flashmla:csrc/flash_api.cpp::mha_fwd_kvcache_mla[vcache_] -- v is always the first head_size_v dims of the k cache; the interface passes None
def fwd_kvcache_mla(q, kcache, head_size_v, seqlens_k, block_table, softmax_scale, is_causal,
                    tile_scheduler_metadata, num_splits):
    assert q.dtype == torch.bfloat16, "bf16 only"
    assert kcache.dtype == q.dtype, "query and key must have the same dtype"
    assert q.stride(-1) == 1 and kcache.stride(-1) == 1, "contiguous last dimension"
    assert block_table.dtype == torch.int32 and block_table.stride(-1) == 1
    batch, seqlen_q_ori, num_heads_ori, head_size = q.shape
    assert head_size % 8 == 0 and head_size_v % 32 == 0
    num_blocks, page_block_size, num_heads_k, _ = kcache.shape
    assert batch > 0 and num_heads_ori % num_heads_k == 0
    assert kcache.shape == (num_blocks, page_block_size, num_heads_k, head_size)
    assert block_table.shape[0] == batch
    assert seqlens_k.dtype == torch.int32 and seqlens_k.is_contiguous() and seqlens_k.shape == (batch,)
    if seqlen_q_ori == 1:
        is_causal = False
    ngroups = num_heads_ori // num_heads_k
    seqlen_q = seqlen_q_ori * ngroups
    q = q.view(batch, seqlen_q_ori, num_heads_k, ngroups, head_size).transpose(2, 3) \
         .reshape(batch, seqlen_q, num_heads_k, head_size)
    out = torch.empty((batch, seqlen_q, num_heads_k, head_size_v), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, num_heads_k, seqlen_q), dtype=torch.float32, device=q.device)
    assert tile_scheduler_metadata.dtype == torch.int32 and tile_scheduler_metadata.is_contiguous()
    assert tile_scheduler_metadata.shape[1] == TILE_SCHEDULER_METADATA_SIZE
    assert num_splits.dtype == torch.int32 and num_splits.is_contiguous()
    num_sm_parts = tile_scheduler_metadata.shape[0]
    lse_accum = torch.empty((batch + num_sm_parts, num_heads_k, seqlen_q), dtype=torch.float32, device=q.device)
    out_accum = torch.empty((batch + num_sm_parts, num_heads_k, seqlen_q, head_size_v), dtype=torch.float32, device=q.device)
    assert head_size == 576
    run_splitkv_mla(q, kcache, out, lse, out_accum, lse_accum, block_table, seqlens_k,
                    tile_scheduler_metadata, num_splits, ngroups, is_causal, softmax_scale, head_size_v)
    out = out.view(batch, seqlen_q_ori, ngroups, num_heads_k, head_size_v).transpose(2, 3) \
             .reshape(batch, seqlen_q_ori, num_heads_ori, head_size_v)
    lse = lse.view(batch, num_heads_k, seqlen_q_ori, ngroups).transpose(2, 3) \
             .reshape(batch, num_heads_ori, seqlen_q_ori)
    return out, lse

