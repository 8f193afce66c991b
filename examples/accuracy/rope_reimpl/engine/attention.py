"""Position encoding of an attention layer over packed tokens: query and key
are rotated together by the positions of their tokens."""

import torch

from ropeops import rope_qk


def rotate_qk(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, positions: torch.Tensor):
    """q, k (tokens, heads, dim); cos, sin (max_position, dim // 2); positions (tokens,)."""
    return rope_qk(q, k, cos, sin, positions)
