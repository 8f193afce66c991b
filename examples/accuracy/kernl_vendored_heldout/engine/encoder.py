"""A pre-norm encoder self-attention block on the vendored kernels:
LayerNorm, projections, fused attention with the padding mask, output
projection, residual. Owns no kernels; the vendored modules are upstream's,
unmodified."""

import math

import torch

from kernl_impl.attention import attention_forward
from kernl_impl.layer_norm import layer_norm

LN_EPS = 1e-5


def encoder_layer(hidden, ln_weight, ln_bias, w_qkv, w_out, heads, padding_mask=None):
    """hidden (B, L, E) fp16 on CUDA; w_qkv (E, 3E); w_out (E, E);
    padding_mask (B, 1, 1, L), additive."""
    batch, length, width = hidden.shape
    dim = width // heads
    normed = layer_norm(hidden, ln_weight, ln_bias, LN_EPS)
    qkv = (normed @ w_qkv).view(batch, length, 3, heads, dim).permute(2, 0, 3, 1, 4)
    q, k, v = (t.contiguous() for t in qkv)
    out = torch.empty_like(q)
    attention_forward(q, k, v, out, 1.0 / math.sqrt(dim), False, padding_mask)
    return hidden + out.transpose(1, 2).reshape(batch, length, width) @ w_out
