"""Attention layers of the engine: causal self-attention over a prompt, and
cross-attention of a decoder over encoder states with 128-wide heads."""

import math

import torch

from . import _backend
from ._backend import fa_launch


def causal_self_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q, k, v (batch, seqlen, heads, head_dim)."""
    return _backend.fused_attention(q, k, v, causal=True)


def cross_attention_d128(q: torch.Tensor, memory_k: torch.Tensor, memory_v: torch.Tensor) -> torch.Tensor:
    """Decoder queries over encoder keys/values; head_dim must be 128."""
    out = torch.empty_like(q)
    return fa_launch.fwd_hdim128(q, memory_k, memory_v, out, 1.0 / math.sqrt(q.shape[-1]), False)
