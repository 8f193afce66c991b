"""Attention block of the engine around its own CUDA kernels: the input norm,
RoPE on the packed queries and keys, and the FP8 (E5M2) KV cache's store and
load of a token window, through the engine_exl torch ops of csrc/bindings.cu."""

import torch


def input_norm(x, weight, eps=1e-6):
    """x (rows, dim) fp16, dim <= 8192 -> RMSNorm(x) * weight."""
    out = torch.empty_like(x)
    torch.ops.engine_exl.launch_rms_norm(out, x.contiguous(), weight, eps)
    return out


def rotate(x, sin, cos, past_len=0, past_lens=None):
    """Rotate-half RoPE in place on x (batch, tokens, heads, head_dim); past_len is every
    sequence's first position, or -1 with int32 past_lens giving it per sequence."""
    torch.ops.engine_exl.launch_rope_neox(x, sin, cos, past_len, past_lens)
    return x


def _window(values, start, length):
    width = values.shape[-2] * values.shape[-1]
    return start * width, length * width


def store_kv(keys, values, k_cache, v_cache, start, length):
    """Writes tokens [start, start + length) of keys and values (batch, max_tokens, heads,
    head_dim) fp16 into their uint8 E5M2 caches of the same shape, in one launch."""
    offset, width = _window(keys, start, length)
    rows = keys.shape[0]
    torch.ops.engine_exl.launch_store_e5m2_kv(keys.view(rows, -1), values.view(rows, -1), k_cache.view(rows, -1),
                                              v_cache.view(rows, -1), offset, width)


def store(values, cache, start, length):
    """Writes tokens [start, start + length) of one tensor into its E5M2 cache."""
    offset, width = _window(values, start, length)
    rows = values.shape[0]
    torch.ops.engine_exl.launch_store_e5m2(values.view(rows, -1), cache.view(rows, -1), offset, width)
    return cache


def load(cache, values, start, length):
    """Reads tokens [start, start + length) of the uint8 cache back into fp16 values."""
    offset, width = _window(values, start, length)
    rows = values.shape[0]
    torch.ops.engine_exl.launch_load_e5m2(cache.view(rows, -1), values.view(rows, -1), offset, width)
    return values
