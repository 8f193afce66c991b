"""The two-score attention forward: one program per query tile of one head,
an online softmax over key tiles, the score of each (query, key) pair taken
from the far pair (q2, k2) when the key lies at least W positions behind the
query and from the near pair (q1, k1) otherwise. Inference only: no
log-normalizer is kept for a backward pass. Must not pick tile sizes per
device: one fixed configuration."""

import torch
import triton
import triton.language as tl

# the kernel exponentiates in base 2
LOG2E = 1.4426950408889634
# one configuration on every device (rows of queries, rows of keys)
TILE_Q = 64
TILE_K = 32
HEAD_DIMS = (16, 32, 64, 128)


# portq: ports flagattention:src/flag_attn/piecewise.py::_fwd_kernel
# portq: not-carried flagattention:src/flag_attn/piecewise.py::_fwd_kernel[L] -- inference only: no log-normalizer for a backward pass
@triton.jit
def _two_score_tile(Q1, K1, Q2, K2, V, Out, scale,
                    sq_b, sq_h, sq_m, sk_b, sk_h, sk_n, so_b, so_h, so_m,
                    heads, q_len, shift,
                    W: tl.constexpr, CAUSAL: tl.constexpr,
                    TILE_M: tl.constexpr, TILE_N: tl.constexpr, DIM: tl.constexpr):
    tile = tl.program_id(0)
    bh = tl.program_id(1)
    batch = bh // heads
    head = bh % heads
    q_base = batch * sq_b + head * sq_h
    k_base = batch * sk_b + head * sk_h
    o_base = batch * so_b + head * so_h

    rows = tile * TILE_M + tl.arange(0, TILE_M)
    cols = tl.arange(0, TILE_N)
    dims = tl.arange(0, DIM)
    row_live = rows < q_len
    q_offs = q_base + rows[:, None] * sq_m + dims[None, :]
    q1 = tl.load(Q1 + q_offs, mask=row_live[:, None], other=0.0)
    q2 = tl.load(Q2 + q_offs, mask=row_live[:, None], other=0.0)

    kv_len = q_len + shift
    # a query's position counted in keys (queries are the last q_len keys)
    pos = rows + shift
    log2_scale = scale * 1.4426950408889634
    best = tl.full([TILE_M], float("-inf"), dtype=tl.float32)
    total = tl.zeros([TILE_M], dtype=tl.float32)
    acc = tl.zeros([TILE_M, DIM], dtype=tl.float32)

    if CAUSAL:
        stop = shift + (tile + 1) * TILE_M
    else:
        stop = kv_len
    for start in range(0, stop, TILE_N):
        keys = start + cols
        key_live = keys < kv_len
        k_offs = k_base + keys[:, None] * sk_n + dims[None, :]
        k1 = tl.load(K1 + k_offs, mask=key_live[:, None], other=0.0)
        k2 = tl.load(K2 + k_offs, mask=key_live[:, None], other=0.0)
        v = tl.load(V + k_offs, mask=key_live[:, None], other=0.0)
        far = pos[:, None] >= keys[None, :] + W
        near_s = tl.dot(q1, tl.trans(k1), out_dtype=tl.float32)
        far_s = tl.dot(q2, tl.trans(k2), out_dtype=tl.float32)
        s = tl.where(far, far_s, near_s) * log2_scale
        keep = key_live[None, :]
        if CAUSAL:
            keep = keep & (pos[:, None] >= keys[None, :])
        s = tl.where(keep, s, float("-inf"))
        new_best = tl.maximum(best, tl.max(s, 1))
        alpha = tl.math.exp2(best - new_best)
        p = tl.math.exp2(s - new_best[:, None])
        total = total * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, out_dtype=tl.float32)
        best = new_best

    out = acc / total[:, None]
    tl.store(Out + o_base + rows[:, None] * so_m + dims[None, :],
             out.to(Out.dtype.element_ty), mask=row_live[:, None])


# portq: ports flagattention:src/flag_attn/piecewise.py::standalone_forward
def two_score_forward(q1, k1, q2, k2, v, w, causal, sm_scale):
    """Launch the forward over (B, H, L, D) tensors; return the output only."""
    dim = q1.shape[-1]
    assert k1.shape[-1] == q2.shape[-1] == k2.shape[-1] == v.shape[-1] == dim
    assert dim in HEAD_DIMS, "head dimension 16, 32, 64 or 128"
    q1, q2 = q1.contiguous(), q2.contiguous()
    k1, k2, v = k1.contiguous(), k2.contiguous(), v.contiguous()
    batch, heads, q_len, _ = q1.shape
    kv_len = k1.shape[2]
    out = torch.empty_like(q1)
    grid = (triton.cdiv(q_len, TILE_Q), batch * heads, 1)
    _two_score_tile[grid](
        q1, k1, q2, k2, v, out, sm_scale,
        q1.stride(0), q1.stride(1), q1.stride(2),
        k1.stride(0), k1.stride(1), k1.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        heads, q_len, kv_len - q_len,
        W=w, CAUSAL=causal, TILE_M=TILE_Q, TILE_N=TILE_K, DIM=dim,
        num_warps=4, num_stages=1)
    return out
