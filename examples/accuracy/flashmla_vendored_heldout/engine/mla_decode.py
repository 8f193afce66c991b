"""A DeepSeek-style MLA decode step over the engine's paged latent cache, on
FlashMLA's vendored interface (flash_mla/flash_mla_interface.py): the split
schedule is computed once per step from the cache lengths and shared by
every layer, then each layer's absorbed query (512 latent + 64 rope dims)
attends over the cache, whose first 512 dims are the latent values.
Inference only, bf16. Owns no kernels."""

from flash_mla.flash_mla_interface import flash_mla_with_kvcache, get_mla_metadata

KV_LORA_RANK = 512
ROPE_DIM = 64


def plan_step(cache_seqlens, num_heads_q, num_heads_k, q_len=1):
    """The split schedule for one decode step (shared by every layer)."""
    return get_mla_metadata(cache_seqlens, q_len * num_heads_q // num_heads_k, num_heads_k)


def decode_step(q_per_layer, cache_per_layer, block_table, cache_seqlens, softmax_scale, causal=True):
    """q_per_layer: list of (b, s_q, h_q, 576) bf16; cache_per_layer: list of
    (blocks, 64, 1, 576) bf16. Returns each layer's (b, s_q, h_q, 512)
    latent output and its log-sum-exp."""
    b, s_q, h_q, _ = q_per_layer[0].shape
    meta, splits = plan_step(cache_seqlens, h_q, cache_per_layer[0].shape[2], s_q)
    outs = []
    for q, cache in zip(q_per_layer, cache_per_layer):
        out, lse = flash_mla_with_kvcache(q, cache, block_table, cache_seqlens, KV_LORA_RANK, meta, splits,
                                          softmax_scale=softmax_scale, causal=causal)
        outs.append((out, lse))
    return outs
