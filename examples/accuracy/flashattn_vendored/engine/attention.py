"""Prompt attention of the engine: runs the vendored FlashAttention-2 forward
through the engine_attn torch op (csrc/attn_ext.cu)."""

import math

import torch


def prompt_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """q, k, v (batch, seqlen, heads, head_dim), fp16, head_dim a multiple of 32 up to 256."""
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[0], q.shape[2], q.shape[1], dtype=torch.float32, device=q.device)
    torch.ops.engine_attn.attention_forward(q, k, v, out, lse, 1.0 / math.sqrt(q.shape[-1]), causal)
    return out
