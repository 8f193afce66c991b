"""Block-sparse flash attention over a top-k block index (Triton) and its
entry point.

Query and key blocks are mean-pooled; each query block keeps the top_k key
blocks (causal at block level) by pooled score, in ascending order, and the
kernel attends over the first (row + 1) * BLOCK_M // BLOCK_N of them with a
causal mask inside. Inputs are (B, H, L, D), padded to whole blocks."""

import torch
import triton
import triton.language as tl


# portq: ports minference:minference/ops/block_sparse_flash_attention.py::_triton_block_sparse_attn_fwd_kernel @eb922ea2c1
@triton.jit
def _block_sparse_fwd_kernel(
    Q, K, V, seqlens, sm_scale,
    block_index,
    Out,
    sqz, sqh, sqm, sqd,
    skz, skh, skn, skd,
    svz, svh, svn, svd,
    soz, soh, som, sod,
    Z, H, N_CTX,
    NUM_ROWS, MAX_BLOCKS_PRE_ROW,
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
    k_base = K + b * skz + h * skh + dims[:, None] * skd
    v_base = V + b * svz + h * svh + dims[None, :] * svd
    o_ptrs = Out + b * soz + h * soh + rows[:, None] * som + dims[None, :] * sod
    picks = block_index + (bh * NUM_ROWS + row) * MAX_BLOCKS_PRE_ROW

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    q = tl.load(Q + b * sqz + h * sqh + rows[:, None] * sqm + dims[None, :] * sqd)
    q = (q * (sm_scale * 1.44269504)).to(dtype)
    row_ok = rows[:, None] < length
    n_picks = tl.minimum((row + 1) * BLOCK_M // BLOCK_N, MAX_BLOCKS_PRE_ROW)

    for i in range(n_picks):
        cols = tl.load(picks + i) * BLOCK_N + lanes
        k = tl.load(k_base + cols[None, :] * skn)
        v = tl.load(v_base + cols[:, None] * svn)
        s = tl.where(row_ok & (cols[None, :] <= rows[:, None]), 0.0, float("-inf"))
        s += tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        acc = acc * alpha[:, None] + tl.dot(p.to(dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_ptrs, acc.to(dtype), mask=row_ok)


# portq: ports minference:minference/ops/block_sparse_flash_attention.py::_triton_block_sparse_attention @eb922ea2c1
def _block_sparse_attention(q, k, v, seqlens, block_index, sm_scale, block_size_M=64, block_size_N=64):
    """Launch: one program per (row block, batch x head)."""
    head_dim = q.shape[-1]
    assert head_dim == k.shape[-1] == v.shape[-1]
    assert head_dim in {16, 32, 64, 128}
    o = torch.zeros_like(q)
    grid = (triton.cdiv(q.shape[2], block_size_M), q.shape[0] * q.shape[1], 1)
    _block_sparse_fwd_kernel[grid](
        q, k, v, seqlens, sm_scale,
        block_index,
        o,
        *q.stride(), *k.stride(), *v.stride(), *o.stride(),
        q.shape[0], q.shape[1], q.shape[2],
        block_index.shape[-2], block_index.shape[-1],
        BLOCK_M=block_size_M, BLOCK_N=block_size_N, BLOCK_DMODEL=head_dim,
        dtype=tl.bfloat16 if q.dtype == torch.bfloat16 else tl.float16,
        num_warps=4, num_stages=2,
    )
    return o


# portq: ports minference:minference/ops/block_sparse_flash_attention.py::_build_block_index @eb922ea2c1
def build_block_index(query, key, top_k, block_size_M=64, block_size_N=64):
    """(B, H, L / BLOCK_M, k) int32 key-block indices, ascending: the top_k
    key blocks of each query block by mean-pooled score, causal at block
    level, k = min(top_k, L // BLOCK_N)."""
    batch, heads, length, head_dim = query.shape
    q_pool = query.reshape(batch, heads, -1, block_size_M, head_dim).mean(dim=-2)
    k_pool = key.reshape(batch, heads, -1, block_size_N, head_dim).mean(dim=-2)
    q_start = torch.arange(q_pool.shape[-2], device=query.device) * block_size_M
    k_start = torch.arange(k_pool.shape[-2], device=key.device) * block_size_N
    scores = q_pool @ k_pool.transpose(-1, -2)
    scores = scores.masked_fill(q_start[:, None] < k_start[None, :], -torch.inf)
    top_k = min(top_k, length // block_size_N)
    return torch.topk(scores, top_k, dim=-1).indices.to(torch.int32).sort(dim=-1).values


# portq: ports minference:minference/ops/block_sparse_flash_attention.py::block_sparse_attention @eb922ea2c1
def block_sparse_attention(query, key, value, top_k, block_size_M=64, block_size_N=64):
    """Causal block-sparse attention of (B, H, L, D) tensors over the top_k
    key blocks of each query block."""
    batch, heads, length, head_dim = query.shape
    pad = block_size_M - length % block_size_M
    query, key, value = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (query, key, value))
    seqlens = torch.full((batch,), length, dtype=torch.int32, device=query.device)
    block_index = build_block_index(query, key, top_k, block_size_M, block_size_N)
    out = _block_sparse_attention(query, key, value, seqlens, block_index, head_dim ** -0.5, block_size_M, block_size_N)
    return out[..., :length, :]
