"""The block's attention input: q and k rotated by their positions before the
scores, and the whole pre-attention step (norm, projections, rotation)."""

import torch

from gemsops.rope import apply_rope

from .mlp import Norm


class Rotary:
    """cos/sin tables for every position the engine serves (NeoX layout)."""

    def __init__(self, positions: int, head_dim: int, base: float = 10000.0, device=None):
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
        angles = torch.outer(torch.arange(positions, device=device, dtype=torch.float32), inv_freq)
        self.cos, self.sin = angles.cos(), angles.sin()

    def __call__(self, q, k, position_ids=None):
        return apply_rope(q, k, self.cos.to(q.dtype), self.sin.to(q.dtype), position_ids)


def attention_inputs(hidden, norm: Norm, rotary: Rotary, w_q, w_k, heads: int, kv_heads: int, position_ids):
    """Rotated q (tokens, heads, head_dim) and k (tokens, kv_heads, head_dim) of packed tokens."""
    x = norm(hidden)
    tokens = x.shape[0]
    q = (x @ w_q.t()).view(tokens, heads, -1)
    k = (x @ w_k.t()).view(tokens, kv_heads, -1)
    return rotary(q, k, position_ids)
