"""The Python entry points the engine calls: the split schedule for a
batch's cache lengths, then decode attention over the paged latent cache."""

from .host import fwd_kvcache_mla, mla_metadata

# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_attn_varlen_func -- the dense sm100 prefill (forward and backward) is not the engine's decode
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_attn_varlen_qkvpacked_func -- the dense sm100 prefill is not the engine's decode
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_attn_varlen_kvpacked_func -- the dense sm100 prefill is not the engine's decode
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::FlashAttnVarlenFunc -- the dense sm100 prefill's autograd function; no backward here
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::_flash_attn_varlen_forward -- the dense sm100 prefill
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::_flash_attn_varlen_backward -- the backward: inference only
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_sparse_fwd -- the sparse prefill: the engine decodes densely
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache_sm100 -- Hopper-class decode only, no sm100 path


# portq: ports flashmla:flash_mla/flash_mla_interface.py::get_mla_metadata @414a2f3
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::get_mla_metadata[num_heads_q] -- only the sparse FP8 schedule needs the query head count
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::get_mla_metadata[is_fp8_kvcache] -- the engine's latent cache is bf16, no FP8 cache
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::get_mla_metadata[topk] -- the sparse (top-k indexed) decode is not carried
def get_mla_metadata(cache_seqlens, num_heads_per_head_k, num_heads_k):
    """cache_seqlens (batch,) int32; num_heads_per_head_k = s_q * h_q // h_k.
    Returns the schedule (num_sm_parts, 8) int32 and the cumulative splits
    per request (batch + 1,) int32."""
    return mla_metadata(cache_seqlens, num_heads_per_head_k, num_heads_k)


# portq: ports flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache @414a2f3
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[is_fp8_kvcache] -- the engine's latent cache is bf16, no FP8 cache
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[indices] -- the sparse (top-k indexed) decode is not carried
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[attn_sink] -- sparse decode only
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[extra_k_cache] -- sparse decode only
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[extra_indices_in_kvcache] -- sparse decode only
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[topk_length] -- sparse decode only
# portq: not-carried flashmla:flash_mla/flash_mla_interface.py::flash_mla_with_kvcache[extra_topk_length] -- sparse decode only
def flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                           num_splits, softmax_scale=None, causal=False):
    """q (b, s_q, h_q, 576); k_cache (blocks, 64, h_k, 576); block_table (b,
    max_blocks) int32; cache_seqlens (b,) int32. Returns out (b, s_q, h_q,
    head_dim_v) and the log-sum-exp (b, h_q, s_q) fp32."""
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** (-0.5)
    return fwd_kvcache_mla(q, k_cache, head_dim_v, cache_seqlens, block_table, softmax_scale, causal,
                           tile_scheduler_metadata, num_splits)
