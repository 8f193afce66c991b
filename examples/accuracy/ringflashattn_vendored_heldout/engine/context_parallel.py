"""Context-parallel prefill of the engine on the vendored ring attention:
each rank holds a shard of every packed prompt and runs causal ring
attention over the context-parallel group. Owns no kernels; the vendored
modules are upstream's, unmodified."""

from ring_flash_attn.ring_flash_attn_varlen import ring_flash_attn_varlen_func


def prefill_attention(q, k, v, cu_seqlens, max_seqlen, group=None):
    """Causal attention of packed (tokens, heads, dim) fp16/bf16 shards."""
    return ring_flash_attn_varlen_func(q, k, v, cu_seqlens, max_seqlen, causal=True, group=group)
