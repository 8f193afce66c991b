"""Rotary position embedding of q and k in the NeoX layout (the head's two
halves rotate against each other), by explicit position ids or by each
token's place in its sequence; one program per token, fp32 rotation.

Forward only; the cos/sin tables are the caller's, never built here.
"""

from typing import Optional

import torch
import triton
import triton.language as tl

from .launch import half_tile


@triton.jit
def _rotate_heads(out, src, cos, sin, keep, src_head_stride, out_head_stride, HEADS: tl.constexpr,
                  HALF: tl.constexpr, HALF_TILE: tl.constexpr):
    lo = tl.arange(0, HALF_TILE)
    for h in range(0, HEADS):
        x1 = tl.load(src + h * src_head_stride + lo, mask=keep, other=0.0).to(tl.float32)
        x2 = tl.load(src + h * src_head_stride + HALF + lo, mask=keep, other=0.0).to(tl.float32)
        tl.store(out + h * out_head_stride + lo, x1 * cos - x2 * sin, mask=keep)
        tl.store(out + h * out_head_stride + HALF + lo, x2 * cos + x1 * sin, mask=keep)


# portq: ports flaggems:src/flag_gems/fused/rotary_embedding.py::apply_rotary_pos_emb_kernel
# portq: not-carried flaggems:src/flag_gems/fused/rotary_embedding.py::apply_rotary_pos_emb_kernel[ROTARY_INTERLEAVED] -- NeoX layout only: no GPT-J interleaved heads
@triton.jit
def _rope_tokens_kernel(q_out, k_out, q, k, cos, sin, positions, q_token_stride, q_head_stride,
                        k_token_stride, k_head_stride, qo_token_stride, qo_head_stride,
                        ko_token_stride, ko_head_stride, cos_row_stride, sin_row_stride, seq_len,
                        Q_HEADS: tl.constexpr, K_HEADS: tl.constexpr, HALF: tl.constexpr,
                        HALF_TILE: tl.constexpr, HAS_POSITIONS: tl.constexpr):
    token = tl.program_id(0)
    if HAS_POSITIONS:
        pos = tl.load(positions + token)
    else:
        pos = token % seq_len
    lo = tl.arange(0, HALF_TILE)
    keep = lo < HALF
    c = tl.load(cos + pos * cos_row_stride + lo, mask=keep, other=0.0).to(tl.float32)
    s = tl.load(sin + pos * sin_row_stride + lo, mask=keep, other=0.0).to(tl.float32)
    _rotate_heads(q_out + token * qo_token_stride, q + token * q_token_stride, c, s, keep,
                  q_head_stride, qo_head_stride, Q_HEADS, HALF, HALF_TILE)
    _rotate_heads(k_out + token * ko_token_stride, k + token * k_token_stride, c, s, keep,
                  k_head_stride, ko_head_stride, K_HEADS, HALF, HALF_TILE)


# portq: ports flaggems:src/flag_gems/fused/rotary_embedding.py::apply_rotary_pos_emb
# portq: not-carried flaggems:src/flag_gems/fused/rotary_embedding.py::apply_rotary_pos_emb[rotary_interleaved] -- NeoX layout only
def apply_rope(q, k, cos, sin, position_ids: Optional[torch.Tensor] = None):
    """q (*, q_heads, head_dim) and k (*, k_heads, head_dim) rotated by the rows
    of cos/sin (max_positions, head_dim // 2) at ``position_ids`` (shape ``*``),
    or, without them, at each token's index in its sequence (q of 4 dims:
    batch, seq, heads, head_dim)."""
    head_dim = q.shape[-1]
    if k.shape[-1] != head_dim or cos.shape[-1] != sin.shape[-1] or cos.shape[-1] * 2 != head_dim:
        raise ValueError(f"head dims disagree: q {tuple(q.shape)}, k {tuple(k.shape)}, cos {tuple(cos.shape)}")
    if cos.stride(-1) != 1 or sin.stride(-1) != 1:
        raise ValueError("cos and sin must be contiguous in their last dimension")
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q and k cover different tokens: {tuple(q.shape[:-2])} and {tuple(k.shape[:-2])}")
    if position_ids is None:
        if q.ndim != 4:
            raise ValueError(f"q must have 4 dims when no position ids are given, got {q.ndim}")
        seq_len = q.shape[-3]
    else:
        if position_ids.shape != q.shape[:-2]:
            raise ValueError(f"position_ids {tuple(position_ids.shape)} must match q's tokens {tuple(q.shape[:-2])}")
        position_ids = position_ids.reshape(-1).contiguous()
        seq_len = 1
    q_shape, k_shape = q.shape, k.shape
    q = q.reshape(-1, q.shape[-2], head_dim)
    k = k.reshape(-1, k.shape[-2], head_dim)
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    tokens = q.shape[0]
    _rope_tokens_kernel[(tokens,)](
        q_out, k_out, q, k, cos, sin, position_ids if position_ids is not None else cos,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1),
        q_out.stride(0), q_out.stride(1), k_out.stride(0), k_out.stride(1),
        cos.stride(0), sin.stride(0), seq_len,
        Q_HEADS=q.shape[1], K_HEADS=k.shape[1], HALF=head_dim // 2, HALF_TILE=half_tile(head_dim),
        HAS_POSITIONS=position_ids is not None,
    )
    return q_out.view(q_shape), k_out.view(k_shape)
