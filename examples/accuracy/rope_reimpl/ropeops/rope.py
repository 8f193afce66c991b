"""GPT-J (interleaved-pair) rotary embedding of two packed-token tensors.

Query and key share their positions and their cos/sin tables, so one program
rotates a block of tokens of one head in both: the tables are read once for
the pair. Each element's partner in its pair is the neighbour ``d ^ 1``.
"""

import torch
import triton
import triton.language as tl

NEOX = 0
GPTJ = 1

TOKENS_PER_PROGRAM = 32


# portq: ports aiter:aiter/ops/triton/rope.py::_rope_fwd_kernel_gptj_cached_thd_position_2c @53dac26257
@triton.jit
def _rope_pair_kernel(
    q_ptr,
    k_ptr,
    cos_ptr,
    sin_ptr,
    pos_ptr,
    q_out_ptr,
    k_out_ptr,
    q_stride_tok,
    q_stride_head,
    q_stride_dim,
    tab_stride_row,
    tab_stride_dim,
    pos_stride,
    out_stride_tok,
    out_stride_head,
    out_stride_dim,
    tokens,
    HALF_TABLE: tl.constexpr,
    DIM: tl.constexpr,
    TOKENS: tl.constexpr,
):
    head = tl.program_id(0)
    block = tl.program_id(1)
    tok = block * TOKENS + tl.arange(0, TOKENS)
    live = tok < tokens
    dim = tl.arange(0, DIM)
    where = live[:, None] & (dim < DIM)[None, :]

    row = tl.load(pos_ptr + tok * pos_stride, mask=live, other=0)
    col = dim // 2 if HALF_TABLE else dim
    tab = row[:, None] * tab_stride_row + col[None, :] * tab_stride_dim
    c = tl.load(cos_ptr + tab, mask=where, other=0.0).to(tl.float32)
    s = tl.load(sin_ptr + tab, mask=where, other=0.0).to(tl.float32)

    sign = tl.where(dim % 2 == 0, -1.0, 1.0)[None, :]
    src = tok[:, None] * q_stride_tok + head * q_stride_head
    mate = src + (dim ^ 1)[None, :] * q_stride_dim
    src = src + dim[None, :] * q_stride_dim
    dst = tok[:, None] * out_stride_tok + head * out_stride_head + dim[None, :] * out_stride_dim

    q = tl.load(q_ptr + src, mask=where, other=0.0).to(tl.float32)
    q_mate = tl.load(q_ptr + mate, mask=where, other=0.0).to(tl.float32)
    tl.store(q_out_ptr + dst, (q * c + sign * q_mate * s).to(q_out_ptr.dtype.element_ty), mask=where)

    k = tl.load(k_ptr + src, mask=where, other=0.0).to(tl.float32)
    k_mate = tl.load(k_ptr + mate, mask=where, other=0.0).to(tl.float32)
    tl.store(k_out_ptr + dst, (k * c + sign * k_mate * s).to(k_out_ptr.dtype.element_ty), mask=where)


# portq: ports aiter:aiter/ops/triton/rope.py::_rope_cached_thd_positions_2c_fwd @53dac26257
# portq: not-carried aiter:aiter/ops/triton/rope.py::_rope_cached_thd_positions_2c_fwd[nope_first] -- unused upstream: the GPT-J path has no nope part
# portq: not-carried aiter:aiter/ops/triton/rope.py::_rope_cached_thd_positions_2c_fwd[transpose_output] -- unused upstream
def _launch_rope_pair(q, k, q_out, k_out, cos, sin, positions, style, half_table):
    """One program per (head, block of tokens); only the GPT-J pairing exists."""
    if style != GPTJ:
        raise NotImplementedError("only the GPT-J rotate style is implemented")
    tokens, heads, dim = q.shape
    grid = (heads, triton.cdiv(tokens, TOKENS_PER_PROGRAM), 1)
    _rope_pair_kernel[grid](
        q,
        k,
        cos,
        sin,
        positions,
        q_out,
        k_out,
        *q.stride(),
        *cos.stride(),
        *positions.stride(),
        *q_out.stride(),
        tokens,
        HALF_TABLE=half_table,
        DIM=dim,
        TOKENS=TOKENS_PER_PROGRAM,
        num_warps=4,
    )
    return q_out, k_out


# portq: ports aiter:aiter/ops/triton/rope.py::rope_cached_thd_positions_2c_fwd @53dac26257
# portq: not-carried aiter:aiter/ops/triton/rope.py::rope_cached_thd_positions_2c_fwd[nope_first] -- unused upstream: the GPT-J path has no nope part
# portq: not-carried aiter:aiter/ops/triton/rope.py::rope_cached_thd_positions_2c_fwd[transpose_output] -- unused upstream
def rope_qk(q, k, cos, sin, positions, style=GPTJ, half_table=True):
    """Rotate q and k, each (tokens, heads, dim), by the cos/sin rows of positions (tokens,).

    ``half_table``: cos/sin hold dim/2 columns, one per pair (aiter's
    ``reuse_freqs_front_part``).
    """
    tokens, heads, dim = q.shape
    q_out = torch.empty((tokens, heads, dim), dtype=q.dtype, device=q.device)
    k_out = torch.empty((tokens, heads, dim), dtype=q.dtype, device=q.device)
    return _launch_rope_pair(q, k, q_out, k_out, cos, sin, positions, style, half_table)
