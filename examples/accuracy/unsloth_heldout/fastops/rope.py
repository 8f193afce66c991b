"""Rotary position embedding of q and k, in place, forward only (the
rotate-half layout: the first half of each head pairs with the second).

It rotates heads and builds the cos/sin tables; it does not gather tables by
position ids (positions are the row's index within its sequence) and has no
backward.
"""

import torch
import triton
import triton.language as tl

from .settings import row_block_and_warps

# Heads one program rotates in turn.
HEADS_PER_PROGRAM = 4


# portq: ports unsloth:unsloth/kernels/rope_embedding.py::_rope_embedding
# portq: not-carried unsloth:unsloth/kernels/rope_embedding.py::_rope_embedding[BACKWARD_PASS] -- forward only: the rotation is never inverted
@triton.jit
def _rotate_heads_kernel(q_ptr, q_row_stride, cos_ptr, cos_row_stride, sin_ptr, sin_row_stride, seqlen,
                         head_dim: tl.constexpr, n_heads: tl.constexpr, HALF_TILE: tl.constexpr,
                         GROUP: tl.constexpr):
    """Program (row, group): rotate heads GROUP*group .. GROUP*group+GROUP-1 of one token row."""
    row = tl.program_id(0)
    group = tl.program_id(1)
    half = head_dim // 2
    cols = tl.arange(0, HALF_TILE)
    inside = cols < half
    position = row % seqlen
    cos = tl.load(cos_ptr + position * cos_row_stride + cols, mask=inside, other=0)
    sin = tl.load(sin_ptr + position * sin_row_stride + cols, mask=inside, other=0)
    first = group * GROUP
    last = tl.minimum(first + GROUP, n_heads)
    for head in range(first, last):
        lo = q_ptr + row * q_row_stride + head * head_dim + cols
        a = tl.load(lo, mask=inside, other=0).to(sin.dtype)
        b = tl.load(lo + half, mask=inside, other=0).to(sin.dtype)
        tl.store(lo, a * cos - b * sin, mask=inside)
        tl.store(lo + half, b * cos + a * sin, mask=inside)


class RopeFn(torch.autograd.Function):
    """Rotate (batch, seqlen, heads, head_dim) in place by (seqlen, head_dim) cos/sin tables."""

    # portq: ports unsloth:unsloth/kernels/rope_embedding.py::Fast_RoPE_Embedding.forward
    # portq: not-carried unsloth:unsloth/kernels/rope_embedding.py::Fast_RoPE_Embedding.backward -- forward only
    @staticmethod
    def forward(ctx, q, cos, sin):
        cos, sin = cos.squeeze(), sin.squeeze()
        batch, seqlen, n_heads, head_dim = q.shape
        if seqlen > cos.shape[0]:
            raise ValueError(f"{seqlen} positions for tables of {cos.shape[0]}")
        rows = q.reshape(batch * seqlen, n_heads * head_dim)
        half_tile, warps = row_block_and_warps(head_dim // 2)
        groups = triton.cdiv(n_heads, HEADS_PER_PROGRAM)
        _rotate_heads_kernel[(batch * seqlen, groups)](
            rows, rows.stride(0), cos, cos.stride(0), sin, sin.stride(0), seqlen,
            head_dim, n_heads, HALF_TILE=half_tile, GROUP=HEADS_PER_PROGRAM, num_warps=warps,
        )
        return rows.view(batch, seqlen, n_heads, head_dim)


# portq: ports unsloth:unsloth/kernels/rope_embedding.py::fast_rope_embedding
# portq: not-carried unsloth:unsloth/kernels/rope_embedding.py::Slow_RoPE_Embedding -- positions are always the row index: no position-id gather
# portq: not-carried unsloth:unsloth/kernels/rope_embedding.py::inplace_rope_embedding -- positions are always the row index
def apply_rope(q, k, cos, sin):
    """q and k of (batch, heads, seqlen, head_dim), rotated; the engine lays heads out that way."""
    q = RopeFn.apply(q.transpose(1, 2), cos, sin).transpose(1, 2)
    k = RopeFn.apply(k.transpose(1, 2), cos, sin).transpose(1, 2)
    return q, k


def rope_tables(positions: int, head_dim: int, base: float = 10000.0, device=None, dtype=torch.float32):
    """(cos, sin) of (positions, head_dim) for the rotate-half layout (this tree's own; upstream takes them from the model)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(positions, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)
