"""The engine's attention-layer KV-cache steps over FBGEMM's vendored ops
(torch.ops.fbgemm, built by engine/kv_ops.py): RoPE or NoPE layers write a
prefill chunk or a decode step's K/V into a bf16 or FP8 cache (FP8 rows carry
their (scale, shift) inline, or beside the cache when the layer keeps them
apart) and get back Q; an FP8 cache is read back as bf16 for attention
kernels that only read bf16. The INT4 cache and xPos are not used."""

import torch

FP8 = 1  # fbgemm's CacheLogicalDtype: BF16 = 0, FP8 = 1, INT4 = 2


class LayerCache:
    """One layer's K/V cache, (batch, max_t, kv_heads, row)."""

    def __init__(self, batch, max_t, n_kv_heads, head_dim, fp8, device, separate_qparams=False):
        inline = 4 if fp8 and not separate_qparams else 0
        dtype = torch.uint8 if fp8 else torch.bfloat16
        self.k = torch.zeros(batch, max_t, n_kv_heads, head_dim + inline, dtype=dtype, device=device)
        self.v = torch.zeros_like(self.k)
        self.fp8 = fp8
        self.qparam_k = self.qparam_v = None
        if fp8 and separate_qparams:
            self.qparam_k = torch.zeros(batch, max_t, n_kv_heads, 1, dtype=torch.int32, device=device)
            self.qparam_v = torch.zeros_like(self.qparam_k)


def write_prefill(cache, xq, xk, xv, varseq_batch, varseq_seqpos, rope_theta=None, block_tables=None, page_size=64):
    """Writes a packed prefill chunk's K, V and returns Q (rotated unless the layer is NoPE)."""
    if rope_theta is None:
        return torch.ops.fbgemm.nope_qkv_varseq_prefill(
            xq, xk, xv, cache.k, cache.v, varseq_batch, varseq_seqpos, block_tables, page_size)
    return torch.ops.fbgemm.rope_qkv_varseq_prefill(
        xq, xk, xv, cache.k, cache.v, varseq_batch, varseq_seqpos, rope_theta,
        block_tables=block_tables, page_size=page_size,
        cache_logical_dtype_int=FP8 if cache.fp8 else 0,
        qparam_k=cache.qparam_k, qparam_v=cache.qparam_v)


def write_decode(cache, xq, xk, xv, seqpos, rope_theta=None, block_tables=None, page_size=64, actual_batch_size=None):
    """One token per sequence: writes its K, V at seqpos and returns Q."""
    if rope_theta is None:
        return torch.ops.fbgemm.nope_qkv_decoding(
            xq, xk, xv, cache.k, cache.v, seqpos, block_tables, page_size, actual_batch_size)
    return torch.ops.fbgemm.rope_qkv_decoding(
        xq, xk, xv, cache.k, cache.v, seqpos, rope_theta,
        block_tables=block_tables, page_size=page_size, actual_batch_size=actual_batch_size,
        cache_logical_dtype_int=FP8 if cache.fp8 else 0,
        qparam_k=cache.qparam_k, qparam_v=cache.qparam_v)


def read_bf16(cache, kv_seqlen):
    """The cache's K and V as bf16 (the cache itself when it is bf16)."""
    if not cache.fp8:
        return cache.k, cache.v
    return torch.ops.fbgemm.dequantize_fp8_cache(cache.k, cache.v, kv_seqlen, cache.qparam_k, cache.qparam_v)
