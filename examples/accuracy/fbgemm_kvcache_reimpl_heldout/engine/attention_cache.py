"""The engine's attention-layer KV-cache steps over its CUDA ops (csrc/,
registered as torch.ops.kv_ops): writing a prefill chunk or a decode step's
Q/K/V (RoPE or NoPE layers) into a bf16 or FP8 cache, and reading an FP8
cache back as bf16 for attention kernels that only read bf16."""

import torch


class LayerCache:
    """One layer's K/V cache: bf16 rows, or FP8 rows with their (scale, shift)
    inline or, with separate_qparams, in one int32 per row beside the cache."""

    def __init__(self, batch, max_t, n_kv_heads, head_dim, fp8, device, separate_qparams=False):
        self.k, self.v = torch.ops.kv_ops.allocate_kv_cache(
            batch, max_t, n_kv_heads, head_dim, fp8, fp8 and not separate_qparams, device)
        self.fp8 = fp8
        self.qparam_k = self.qparam_v = None
        if fp8 and separate_qparams:
            self.qparam_k = torch.zeros(batch, max_t, n_kv_heads, dtype=torch.int32, device=device)
            self.qparam_v = torch.zeros_like(self.qparam_k)


def write_prefill(cache, xq, xk, xv, varseq_batch, varseq_seqpos, rope_theta=None,
                  block_tables=None, page_size=64, llama3_scaling=None):
    """Writes a packed prefill chunk's K, V into the cache and returns Q, rotated
    unless the layer is NoPE (rope_theta None)."""
    if rope_theta is None:
        return torch.ops.kv_ops.nope_qkv_varseq_prefill(
            xq, xk, xv, cache.k, cache.v, varseq_batch, varseq_seqpos, block_tables, page_size)
    scaling = llama3_scaling or {}
    return torch.ops.kv_ops.rope_qkv_varseq_prefill(
        xq, xk, xv, cache.k, cache.v, varseq_batch, varseq_seqpos, rope_theta,
        block_tables=block_tables, page_size=page_size,
        rope_scaling=bool(scaling), old_context_len=scaling.get("old_context_len", 8192),
        scaling_factor=scaling.get("factor", 16.0), lo_freq_factor=scaling.get("low_freq_factor", 1.0),
        hi_freq_factor=scaling.get("high_freq_factor", 32.0),
        qparam_k=cache.qparam_k, qparam_v=cache.qparam_v)


def write_decode(cache, xq, xk, xv, seqpos, rope_theta=None, block_tables=None, page_size=64,
                 actual_batch_size=None):
    """One token per sequence: writes its K, V at seqpos and returns Q."""
    if rope_theta is None:
        return torch.ops.kv_ops.nope_qkv_decoding(
            xq, xk, xv, cache.k, cache.v, seqpos, block_tables, page_size, actual_batch_size)
    return torch.ops.kv_ops.rope_qkv_decoding(
        xq, xk, xv, cache.k, cache.v, seqpos, rope_theta, block_tables, page_size, actual_batch_size,
        qparam_k=cache.qparam_k, qparam_v=cache.qparam_v)


def read_bf16(cache, kv_seqlen):
    """The cache's K and V as bf16 (the cache itself when it is bf16)."""
    if not cache.fp8:
        return cache.k, cache.v
    return torch.ops.kv_ops.dequantize_fp8_cache(cache.k, cache.v, kv_seqlen, cache.qparam_k, cache.qparam_v)
