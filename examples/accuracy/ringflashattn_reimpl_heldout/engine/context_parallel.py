"""Context-parallel prefill of the engine: each rank holds a shard of every
packed prompt and runs causal ring attention over the context-parallel group.
Projections and rotary embedding are the caller's; this module owns no
kernels."""

from ringcp.varlen import ring_varlen_attention


def prefill_attention(q, k, v, cu_seqlens, max_seqlen, group=None):
    """Causal attention of packed (tokens, heads, dim) fp16 shards."""
    return ring_varlen_attention(q, k, v, cu_seqlens, max_seqlen, causal=True, group=group)
