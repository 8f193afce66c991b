"""The block's attention input on the vendored rotary kernel: normed hidden
states projected to q and k and rotated by their positions (NeoX layout)."""

import torch

from flag_gems.fused import rotary_embedding

from .block import Norm


def rotary_tables(positions: int, head_dim: int, base: float = 10000.0, device=None):
    """cos and sin of (positions, head_dim // 2)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(positions, device=device, dtype=torch.float32), inv_freq)
    return angles.cos(), angles.sin()


def attention_inputs(hidden, norm: Norm, cos, sin, w_q, w_k, heads: int, kv_heads: int, position_ids):
    """Rotated q (tokens, heads, head_dim) and k (tokens, kv_heads, head_dim) of packed tokens."""
    x = norm(hidden)
    tokens = x.shape[0]
    q = (x @ w_q.t()).view(tokens, heads, -1)
    k = (x @ w_k.t()).view(tokens, kv_heads, -1)
    return rotary_embedding.apply_rotary_pos_emb(q, k, cos, sin, position_ids)
