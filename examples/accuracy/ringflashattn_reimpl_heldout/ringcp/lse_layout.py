"""Log-sum-exp layout changes between the padded per-sequence form flash
attention returns, (batch, heads, max_seqlen), and the packed form the merge
works in, (heads, total_tokens) or (total_tokens, heads). One program copies
TILE positions of one sequence and one head; positions past a sequence's
length are neither read nor written."""

import torch
import triton
import triton.language as tl

TILE = 4


def _grid(max_seqlen, batch, heads):
    return (triton.cdiv(max_seqlen, TILE), batch, heads)


# portq: ports ringflashattn:ring_flash_attn/triton_utils.py::flatten_kernel @10d992c
@triton.jit
def _pack_lse_kernel(dst, src, cu_seqlens,
                     dst_s_head, dst_s_tok,
                     src_s_seq, src_s_head, src_s_pos,
                     TILE: tl.constexpr):
    blk = tl.program_id(0)
    seq = tl.program_id(1)
    head = tl.program_id(2)
    first = tl.load(cu_seqlens + seq)
    length = tl.load(cu_seqlens + seq + 1) - first
    pos = blk * TILE + tl.arange(0, TILE)
    keep = pos[:, None] < length
    vals = tl.load(src + seq * src_s_seq + head * src_s_head + pos[:, None] * src_s_pos, mask=keep, other=0.0)
    tl.store(dst + head * dst_s_head + (first + pos[:, None]) * dst_s_tok, vals, mask=keep)


# portq: ports ringflashattn:ring_flash_attn/triton_utils.py::flatten_varlen_lse @10d992c
def flatten_varlen_lse(lse, cu_seqlens):
    """(batch, heads, max_seqlen) -> (heads, total_tokens)."""
    total = cu_seqlens[-1]
    batch, heads, max_seqlen = lse.shape
    packed = torch.empty((heads, total), dtype=lse.dtype, device=lse.device)
    _pack_lse_kernel[_grid(max_seqlen, batch, heads)](
        packed, lse, cu_seqlens,
        packed.stride(0), packed.stride(1),
        lse.stride(0), lse.stride(1), lse.stride(2),
        TILE,
    )
    return packed


# portq: ports ringflashattn:ring_flash_attn/triton_utils.py::unflatten_kernel @10d992c
@triton.jit
def _unpack_lse_kernel(dst, src, cu_seqlens,
                       dst_s_seq, dst_s_head, dst_s_pos,
                       src_s_tok, src_s_head,
                       TILE: tl.constexpr):
    blk = tl.program_id(0)
    seq = tl.program_id(1)
    head = tl.program_id(2)
    first = tl.load(cu_seqlens + seq)
    length = tl.load(cu_seqlens + seq + 1) - first
    pos = blk * TILE + tl.arange(0, TILE)
    keep = pos[:, None] < length
    vals = tl.load(src + head * src_s_head + (first + pos[:, None]) * src_s_tok, mask=keep, other=0.0)
    tl.store(dst + seq * dst_s_seq + head * dst_s_head + pos[:, None] * dst_s_pos, vals, mask=keep)


# portq: ports ringflashattn:ring_flash_attn/triton_utils.py::unflatten_varlen_lse @10d992c
def unflatten_varlen_lse(lse, cu_seqlens, max_seqlen: int):
    """(total_tokens, heads, 1) -> (batch, heads, max_seqlen); positions past
    a sequence's length are left unwritten."""
    lse = lse.unsqueeze(-1)
    batch = len(cu_seqlens) - 1
    heads = lse.shape[1]
    padded = torch.empty((batch, heads, max_seqlen), dtype=lse.dtype, device=lse.device)
    _unpack_lse_kernel[_grid(max_seqlen, batch, heads)](
        padded, lse, cu_seqlens,
        padded.stride(0), padded.stride(1), padded.stride(2),
        lse.stride(0), lse.stride(1),
        TILE,
    )
    return padded
