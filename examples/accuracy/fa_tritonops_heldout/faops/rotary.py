"""Rotary position embedding of (batch, seqlen, nheads, headdim) q or k.

The first ``rotary_dim`` features of every head are rotated by the angles of
the cos/sin tables, either as two halves (GPT-NeoX) or as even/odd pairs
(GPT-J); the rest of the head is copied. Sequences may start at an offset
into the tables (decoding against a KV cache). It does not build attention
masks or touch the cache itself.
"""

from typing import Union

import torch
import triton
import triton.language as tl

from ._launch import device_guard

# Widest head the kernel rotates in one tile.
HEAD_DIM_LIMIT = 256
# Sequence rows one program rotates: more rows when the rotated part is narrow
# and laid out in halves, fewer for the pair layout's strided partner loads.
ROWS_NARROW_HALVES = 8
ROWS_DEFAULT = 4


def cos_sin_table(seqlen: int, rotary_dim: int, base: float = 10000.0, device=None, dtype=torch.float32):
    """(seqlen, rotary_dim / 2) cos and sin tables of the standard RoPE frequencies."""
    if rotary_dim % 2:
        raise ValueError(f"rotary_dim {rotary_dim}: expected an even number of features")
    inv_freq = 1.0 / base ** (torch.arange(0, rotary_dim, 2, device=device, dtype=torch.float32) / rotary_dim)
    angles = torch.outer(torch.arange(seqlen, device=device, dtype=torch.float32), inv_freq)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _tile_for(rotary_dim: int) -> int:
    """The feature tile: the smallest of 32, 64, 128, 256 that holds the rotated part."""
    return max(32, triton.next_power_of_2(rotary_dim))


# portq: ports flashattn:flash_attn/ops/triton/rotary.py::rotary_kernel
# portq: not-carried flashattn:flash_attn/ops/triton/rotary.py::rotary_kernel[CU_SEQLENS] -- no packed variable-length batches: the engine pads its sequences
# portq: not-carried flashattn:flash_attn/ops/triton/rotary.py::rotary_kernel[IS_VARLEN] -- no packed variable-length batches
# portq: not-carried flashattn:flash_attn/ops/triton/rotary.py::rotary_kernel[CACHE_KEY_SEQLEN] -- a compile-cache key only; this launch keys on its constexprs
# portq: not-carried flashattn:flash_attn/ops/triton/rotary.py::rotary_kernel[nheads] -- read by the grid only, never by the kernel
@triton.jit
def _rotate_kernel(
    out_ptr, x_ptr, cos_ptr, sin_ptr,
    offsets,  # an int, or a pointer to one offset per batch row when OFFSET_PER_SEQ
    seqlen, rotary_dim, table_rows,
    out_s_batch, out_s_seq, out_s_head, out_s_dim,
    x_s_batch, x_s_seq, x_s_head, x_s_dim,
    TILE: tl.constexpr,
    OFFSET_PER_SEQ: tl.constexpr,
    PAIRS: tl.constexpr,
    CONJUGATE: tl.constexpr,
    ROWS: tl.constexpr,
):
    """One program per (row block, batch, head): rotate ROWS positions of one head."""
    block = tl.program_id(0)
    b = tl.program_id(1)
    h = tl.program_id(2)
    if block * ROWS >= seqlen:
        return
    half = rotary_dim // 2
    x_ptr += b * x_s_batch + h * x_s_head
    out_ptr += b * out_s_batch + h * out_s_head
    pos = block * ROWS + tl.arange(0, ROWS)
    if OFFSET_PER_SEQ:
        table_pos = pos + tl.load(offsets + b)
    else:
        table_pos = pos + offsets
    in_seq = pos[:, None] < seqlen
    in_table = table_pos[:, None] < table_rows
    if not PAIRS:
        j = tl.arange(0, TILE // 2)
        live = in_seq & (j[None, :] < half)
        c = tl.load(cos_ptr + table_pos[:, None] * half + j[None, :], mask=in_table & (j[None, :] < half), other=1.0).to(tl.float32)
        s = tl.load(sin_ptr + table_pos[:, None] * half + j[None, :], mask=in_table & (j[None, :] < half), other=0.0).to(tl.float32)
        if CONJUGATE:
            s = -s
        lo_ptr = x_ptr + pos[:, None] * x_s_seq + j[None, :] * x_s_dim
        lo = tl.load(lo_ptr, mask=live, other=0.0).to(tl.float32)
        hi = tl.load(lo_ptr + half * x_s_dim, mask=live, other=0.0).to(tl.float32)
        dst = out_ptr + pos[:, None] * out_s_seq + j[None, :] * out_s_dim
        tl.store(dst, lo * c - hi * s, mask=live)
        tl.store(dst + half * out_s_dim, lo * s + hi * c, mask=live)
    else:
        # Even/odd pairs: each feature is combined with its partner (0<->1, 2<->3, ...)
        # and both read the angle of their pair.
        d = tl.arange(0, TILE)
        partner = d + 1 - 2 * (d % 2)
        pair = d // 2
        c = tl.load(cos_ptr + table_pos[:, None] * half + pair[None, :], mask=in_table & (pair[None, :] < half), other=1.0).to(tl.float32)
        s = tl.load(sin_ptr + table_pos[:, None] * half + pair[None, :], mask=in_table & (pair[None, :] < half), other=0.0).to(tl.float32)
        if CONJUGATE:
            s = -s
        row_ptr = x_ptr + pos[:, None] * x_s_seq
        mine = tl.load(row_ptr + d[None, :] * x_s_dim, mask=in_seq & (d[None, :] < rotary_dim), other=0.0).to(tl.float32)
        other = tl.load(row_ptr + partner[None, :] * x_s_dim, mask=in_seq & (partner[None, :] < rotary_dim), other=0.0).to(tl.float32)
        rotated = tl.where(d[None, :] % 2 == 0, mine * c - other * s, mine * c + other * s)
        tl.store(out_ptr + pos[:, None] * out_s_seq + d[None, :] * out_s_dim, rotated, mask=in_seq & (d[None, :] < rotary_dim))


# portq: ports flashattn:flash_attn/ops/triton/rotary.py::apply_rotary
# portq: not-carried flashattn:flash_attn/ops/triton/rotary.py::apply_rotary[cu_seqlens] -- no packed variable-length batches
# portq: not-carried flashattn:flash_attn/ops/triton/rotary.py::apply_rotary[max_seqlen] -- only needed with cu_seqlens
def rotary_apply(
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    seqlen_offsets: Union[int, torch.Tensor] = 0,
    interleaved: bool = False,
    inplace: bool = False,
    conjugate: bool = False,
) -> torch.Tensor:
    """Rotate the first 2 * cos.shape[1] features of (batch, seqlen, nheads, headdim) ``x``;
    ``conjugate`` rotates by the opposite angles (the gradient)."""
    batch, seqlen, nheads, headdim = x.shape
    table_rows, half = cos.shape
    if sin.shape != cos.shape:
        raise ValueError(f"sin {tuple(sin.shape)}: expected the shape of cos {tuple(cos.shape)}")
    rotary_dim = 2 * half
    if rotary_dim > headdim or headdim > HEAD_DIM_LIMIT:
        raise ValueError(f"rotary_dim {rotary_dim}, headdim {headdim}: expected rotary_dim <= headdim <= {HEAD_DIM_LIMIT}")
    if table_rows < seqlen:
        raise ValueError(f"tables of {table_rows} positions for sequences of {seqlen}")
    if x.dtype != cos.dtype or cos.dtype != sin.dtype:
        raise ValueError(f"x {x.dtype}, cos {cos.dtype}, sin {sin.dtype}: expected one dtype")
    cos, sin = cos.contiguous(), sin.contiguous()
    per_seq = isinstance(seqlen_offsets, torch.Tensor)
    if per_seq:
        if seqlen_offsets.shape != (batch,) or seqlen_offsets.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"seqlen_offsets {tuple(seqlen_offsets.shape)} {seqlen_offsets.dtype}: expected ({batch},) int32/int64")
        seqlen_offsets = seqlen_offsets.contiguous()
    elif seqlen_offsets + seqlen > table_rows:
        raise ValueError(f"offset {seqlen_offsets} + {seqlen} positions overrun tables of {table_rows}")

    out = x if inplace else torch.empty_like(x)
    if not inplace and rotary_dim < headdim:
        out[..., rotary_dim:].copy_(x[..., rotary_dim:])
    rows = ROWS_NARROW_HALVES if (not interleaved and rotary_dim <= 64) else ROWS_DEFAULT
    grid = (triton.cdiv(seqlen, rows), batch, nheads)
    with device_guard(x):
        _rotate_kernel[grid](
            out, x, cos, sin, seqlen_offsets,
            seqlen, rotary_dim, table_rows,
            *out.stride(), *x.stride(),
            TILE=_tile_for(rotary_dim), OFFSET_PER_SEQ=per_seq, PAIRS=interleaved, CONJUGATE=conjugate, ROWS=rows,
        )
    return out


class RotaryFn(torch.autograd.Function):
    """Differentiable rotary embedding: the gradient is the conjugate rotation."""

    # portq: ports flashattn:flash_attn/layers/rotary.py::ApplyRotaryEmb.forward
    # portq: not-carried flashattn:flash_attn/layers/rotary.py::ApplyRotaryEmb.forward[cu_seqlens] -- no packed variable-length batches
    # portq: not-carried flashattn:flash_attn/layers/rotary.py::ApplyRotaryEmb.forward[max_seqlen] -- only needed with cu_seqlens
    @staticmethod
    def forward(ctx, x, cos, sin, interleaved=False, inplace=False, seqlen_offsets: Union[int, torch.Tensor] = 0):
        out = rotary_apply(x, cos, sin, seqlen_offsets=seqlen_offsets, interleaved=interleaved, inplace=inplace)
        if isinstance(seqlen_offsets, torch.Tensor):
            ctx.save_for_backward(cos, sin, seqlen_offsets)
            ctx.fixed_offset = None
        else:
            ctx.save_for_backward(cos, sin)
            ctx.fixed_offset = seqlen_offsets
        ctx.interleaved = interleaved
        ctx.inplace = inplace
        return x if inplace else out

    # portq: ports flashattn:flash_attn/layers/rotary.py::ApplyRotaryEmb.backward
    @staticmethod
    def backward(ctx, grad):
        if ctx.fixed_offset is None:
            cos, sin, offsets = ctx.saved_tensors
        else:
            (cos, sin), offsets = ctx.saved_tensors, ctx.fixed_offset
        if not ctx.inplace:
            grad = grad.clone()
        dx = rotary_apply(grad, cos, sin, seqlen_offsets=offsets, interleaved=ctx.interleaved,
                          inplace=ctx.inplace, conjugate=True)
        return dx, None, None, None, None, None


# portq: ports flashattn:flash_attn/layers/rotary.py::apply_rotary_emb
# portq: not-carried flashattn:flash_attn/layers/rotary.py::apply_rotary_emb[cu_seqlens] -- no packed variable-length batches
# portq: not-carried flashattn:flash_attn/layers/rotary.py::apply_rotary_emb[max_seqlen] -- only needed with cu_seqlens
# portq: not-carried flashattn:flash_attn/layers/rotary.py::ApplyRotaryEmbQKV_ -- the engine keeps q, k and v apart and rotates q and k one at a time
# portq: not-carried flashattn:flash_attn/layers/rotary.py::apply_rotary_emb_qkv_ -- the engine keeps q, k and v apart
# portq: not-carried flashattn:flash_attn/layers/rotary.py::ApplyRotaryEmbKV_ -- the engine keeps k and v apart
# portq: not-carried flashattn:flash_attn/layers/rotary.py::apply_rotary_emb_kv_ -- the engine keeps k and v apart
def rotary_emb(x, cos, sin, interleaved=False, inplace=False, seqlen_offsets: Union[int, torch.Tensor] = 0):
    """Rotary embedding of (batch, seqlen, nheads, headdim) ``x`` by (positions, rotary_dim / 2)
    tables, each sequence starting ``seqlen_offsets`` positions into them."""
    return RotaryFn.apply(x, cos, sin, interleaved, inplace, seqlen_offsets)
