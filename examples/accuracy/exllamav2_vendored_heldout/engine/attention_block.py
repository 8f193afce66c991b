"""Attention block of the engine around the vendored ExLlamaV2 kernels: the
input norm, RoPE on the packed queries and keys, and the FP8 KV cache's store
and load of a token window, through the engine_exl torch ops (csrc/exl_ops.cu)."""

import torch


def input_norm(x, weight, eps=1e-6):
    """x (rows, dim) fp16 -> RMSNorm(x) * weight."""
    out = torch.empty_like(x)
    torch.ops.engine_exl.rms_norm(out, x, weight, eps)
    return out


def rotate(x, sin, cos, past_len=0, past_lens=None):
    """Applies NeoX-style RoPE in place to x (batch, tokens, heads, head_dim); past_len is
    every sequence's first position, or -1 with int32 past_lens giving it per sequence."""
    torch.ops.engine_exl.rope_(x, sin, cos, past_len, past_lens)
    return x


def store_kv(values, cache, start, length):
    """Writes tokens [start, start + length) of values (batch, max_tokens, heads, head_dim)
    fp16 into the uint8 E5M2 cache of the same shape."""
    width = values.shape[-2] * values.shape[-1]
    torch.ops.engine_exl.store_fp8(values.view(values.shape[0], -1), cache.view(cache.shape[0], -1),
                                   start * width, length * width)
    return cache


def load_kv(cache, values, start, length):
    """Reads tokens [start, start + length) of the uint8 cache back into fp16 values."""
    width = values.shape[-2] * values.shape[-1]
    torch.ops.engine_exl.load_fp8(cache.view(cache.shape[0], -1), values.view(values.shape[0], -1),
                                  start * width, length * width)
    return values
