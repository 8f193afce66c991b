"""A pre-norm encoder self-attention block: LayerNorm, projections, fused
attention with the padding mask, output projection, residual. Projections
are plain torch; this module owns no kernels."""

import math

import torch

from tfkern.api import fused_attention, layernorm

LN_EPS = 1e-5


def encoder_layer(hidden, ln_weight, ln_bias, w_qkv, w_out, heads, padding_mask=None):
    """hidden (B, L, E) fp16; w_qkv (E, 3E); w_out (E, E); padding_mask
    (B, 1, 1, L), additive (0 or -inf)."""
    batch, length, width = hidden.shape
    dim = width // heads
    normed = layernorm(hidden, ln_weight, ln_bias, LN_EPS)
    qkv = (normed @ w_qkv).view(batch, length, 3, heads, dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    out = torch.empty_like(q)
    fused_attention(q, k, v, out, 1.0 / math.sqrt(dim), False, padding_mask)
    return hidden + out.transpose(1, 2).reshape(batch, length, width) @ w_out
