"""A self-attention step of the engine: projections in torch, attention
through the int8 kernels (prefill causal, cross-frame non-causal). Must not
define kernels."""

import torch

from int8attn import attention as attn_mod
from int8attn import quant
from int8attn.api import int8_sdpa as quantized_sdpa


def prefill(q, k, v):
    """Causal prefill of a (B, H, L, 64) block."""
    return quantized_sdpa(q, k, v, is_causal=True)


def cross_frames(q, k, v):
    """Non-causal attention, quantising once and calling the kernel directly."""
    q_codes, q_scale, k_codes, k_scale = quant.quantize_qk(q.contiguous(), k.contiguous())
    return attn_mod.int8_attention(q_codes, k_codes, v.contiguous(), q_scale, k_scale)


def masked_frames(q, k, v):
    """Causal attention through the kernel module directly."""
    q_codes, q_scale, k_codes, k_scale = quant.quantize_qk(q.contiguous(), k.contiguous())
    return attn_mod.int8_attention_causal(q_codes, k_codes, v.contiguous(), q_scale, k_scale)


def step(x, wq, wk, wv, heads):
    b, l, d = x.shape
    split = lambda t: t.view(b, l, heads, d // heads).transpose(1, 2).to(torch.float16)
    o = prefill(split(x @ wq), split(x @ wk), split(x @ wv))
    return o.transpose(1, 2).reshape(b, l, d)
