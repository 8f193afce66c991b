"""Vertical-and-slash sparse flash attention (Triton) and its entry point.

Causal prefill where each query row block attends to the key blocks that
cover its slash lines and to its vertical key columns, as the index builder
lists them; online softmax in fp32, exp2 with log2(e) folded into the scale.
Inputs are (B, H, L, D); the sequence is padded to whole row blocks and the
output cut back."""

import torch
import triton
import triton.language as tl

from .vs_index import convert_vertical_slash_indexes


# portq: ports minference:minference/ops/pit_sparse_flash_attention_v2.py::_triton_mixed_sparse_attn_fwd_kernel @eb922ea2c1
@triton.jit
def _vs_attn_fwd_kernel(
    Q, K, V, seqlens, sm_scale,
    block_count, block_offset, column_count, column_index,
    Out,
    sqz, sqh, sqm, sqd,
    skz, skh, skn, skd,
    svz, svh, svn, svd,
    soz, soh, som, sod,
    Z, H, N_CTX,
    NUM_ROWS, NNZ_S, NNZ_V,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    dtype: tl.constexpr,
):
    row = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    length = tl.load(seqlens + b)
    if row * BLOCK_M >= length:
        return

    rows = row * BLOCK_M + tl.arange(0, BLOCK_M)
    lanes = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, BLOCK_DMODEL)
    q_base = Q + b * sqz + h * sqh
    k_base = K + b * skz + h * skh + dims[:, None] * skd
    v_base = V + b * svz + h * svh + dims[None, :] * svd
    o_ptrs = Out + b * soz + h * soh + rows[:, None] * som + dims[None, :] * sod

    slot = bh * NUM_ROWS + row
    n_blocks = tl.load(block_count + slot)
    starts = block_offset + slot * NNZ_S
    n_cols = tl.load(column_count + slot)
    cols_ptr = column_index + slot * NNZ_V

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    scale = sm_scale * 1.44269504
    q = tl.load(q_base + rows[:, None] * sqm + dims[None, :] * sqd)
    q = (q * scale).to(dtype)
    row_ok = rows[:, None] < length

    # slash ranges: whole key blocks, causal inside the block
    for i in range(n_blocks):
        cols = tl.load(starts + i) + lanes
        col_ok = cols < length
        k = tl.load(k_base + cols[None, :] * skn, mask=col_ok[None, :], other=0.0)
        v = tl.load(v_base + cols[:, None] * svn, mask=col_ok[:, None], other=0.0)
        s = tl.where(row_ok & (cols[None, :] <= rows[:, None]), 0.0, float("-inf"))
        s += tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        acc = acc * alpha[:, None] + tl.dot(p.to(dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new

    # vertical columns: gathered BLOCK_N at a time, all left of the slash ranges
    for c in range(0, n_cols, BLOCK_N):
        col_ok = c + lanes < n_cols
        cols = tl.load(cols_ptr + c + lanes, mask=col_ok, other=0)
        k = tl.load(k_base + cols[None, :] * skn, mask=col_ok[None, :], other=0.0)
        v = tl.load(v_base + cols[:, None] * svn, mask=col_ok[:, None], other=0.0)
        s = tl.where(row_ok & col_ok[None, :], 0.0, float("-inf"))
        s += tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        acc = acc * alpha[:, None] + tl.dot(p.to(dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_ptrs, acc.to(dtype), mask=row_ok)


# portq: ports minference:minference/ops/pit_sparse_flash_attention_v2.py::_triton_mixed_sparse_attention @eb922ea2c1
def _vs_sparse_attention(q, k, v, seqlens, block_count, block_offset, column_count, column_index, sm_scale, block_size_M=64, block_size_N=64):
    """Launch: one program per (row block, batch x head)."""
    head_dim = q.shape[-1]
    assert head_dim == k.shape[-1] == v.shape[-1]
    assert head_dim in {16, 32, 64, 128}
    o = torch.zeros_like(q)
    grid = (triton.cdiv(q.shape[2], block_size_M), q.shape[0] * q.shape[1], 1)
    _vs_attn_fwd_kernel[grid](
        q, k, v, seqlens, sm_scale,
        block_count, block_offset, column_count, column_index,
        o,
        *q.stride(), *k.stride(), *v.stride(), *o.stride(),
        q.shape[0], q.shape[1], q.shape[2],
        block_count.shape[-1], block_offset.shape[-1], column_index.shape[-1],
        BLOCK_M=block_size_M, BLOCK_N=block_size_N, BLOCK_DMODEL=head_dim,
        dtype=tl.bfloat16 if q.dtype == torch.bfloat16 else tl.float16,
        num_warps=4, num_stages=2,
    )
    return o


# portq: ports minference:minference/ops/pit_sparse_flash_attention_v2.py::vertical_slash_sparse_attention @eb922ea2c1
# portq: not-carried minference:minference/ops/pit_sparse_flash_attention_v2.py::vertical_slash_sparse_attention[head_dim] -- head dimensions are 16, 32, 64 or 128; no zero-padding of other head dimensions to a power of two
def vertical_slash_sparse_attention(query, key, value, v_idx, s_idx, block_size_M=64, block_size_N=64):
    """Causal attention of (B, H, L, D) tensors over the vertical key
    positions v_idx and the slash offsets s_idx, both (B, H, ...)."""
    batch, heads, length, head_dim = query.shape
    assert head_dim in {16, 32, 64, 128}, "head dimension 16, 32, 64 or 128"
    # pad to whole row blocks (a full extra block when already whole)
    pad = block_size_M - length % block_size_M
    query, key, value = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (query, key, value))
    v_idx = v_idx.to(torch.int32).reshape(batch, heads, -1).sort(dim=-1).values
    s_idx = s_idx.to(torch.int32).reshape(batch, heads, -1).sort(dim=-1, descending=True).values
    seqlens = torch.full((batch,), length, dtype=torch.int32, device=query.device)
    index = convert_vertical_slash_indexes(seqlens, v_idx, s_idx, length, block_size_M, block_size_N)
    out = _vs_sparse_attention(query, key, value, seqlens, *index, head_dim ** -0.5, block_size_M, block_size_N)
    return out[..., :length, :]
