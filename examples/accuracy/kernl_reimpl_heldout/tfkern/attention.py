"""Fused attention forward: one program per query tile of one (batch, head),
an online softmax over key tiles, an optional additive mask broadcast over
batch, heads and query rows, an optional causal mask. Queries and keys
share one length. Keys past the length are masked to -inf. Inference only."""

import torch
import triton
import triton.language as tl


# portq: ports kernl:src/kernl/implementations/attention.py::_fwd_kernel @71e8fb0975
# portq: not-carried kernl:src/kernl/implementations/attention.py::_fwd_kernel[TMP] -- scratchpad for an old compiler bug the port's Triton does not have
# portq: not-carried kernl:src/kernl/implementations/attention.py::attention_reference -- test reference
@triton.jit
def _attn_fwd_tile(Q, K, V, Out, Mask, scale, mask_floor,
                   sq_b, sq_h, sq_m, sq_d, sk_b, sk_h, sk_n, sk_d,
                   sv_b, sv_h, sv_n, sv_d, so_b, so_h, so_m, so_d,
                   sm_b, sm_h, sm_m, sm_n,
                   heads, length,
                   MASK_ONE_BATCH: tl.constexpr, MASK_ONE_HEAD: tl.constexpr, MASK_ONE_ROW: tl.constexpr,
                   HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
                   TILE_M: tl.constexpr, TILE_N: tl.constexpr, DIM: tl.constexpr):
    tile = tl.program_id(0)
    bh = tl.program_id(1)
    batch = bh // heads
    head = bh % heads

    rows = tile * TILE_M + tl.arange(0, TILE_M)
    cols = tl.arange(0, TILE_N)
    dims = tl.arange(0, DIM)
    row_live = rows < length

    q = tl.load(Q + batch * sq_b + head * sq_h + rows[:, None] * sq_m + dims[None, :] * sq_d,
                mask=row_live[:, None], other=0.0)
    k_base = K + batch * sk_b + head * sk_h
    v_base = V + batch * sv_b + head * sv_h
    if HAS_MASK:
        mb = batch
        if MASK_ONE_BATCH:
            mb = 0
        mh = head
        if MASK_ONE_HEAD:
            mh = 0
        m_base = Mask + mb * sm_b + mh * sm_h

    best = tl.full([TILE_M], float("-inf"), dtype=tl.float32)
    total = tl.zeros([TILE_M], dtype=tl.float32)
    acc = tl.zeros([TILE_M, DIM], dtype=tl.float32)

    stop = length
    if CAUSAL:
        stop = (tile + 1) * TILE_M
    for start in range(0, stop, TILE_N):
        keys = start + cols
        key_live = keys < length
        k = tl.load(k_base + keys[:, None] * sk_n + dims[None, :] * sk_d, mask=key_live[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), out_dtype=tl.float32) * scale
        if HAS_MASK:
            if MASK_ONE_ROW:
                add = tl.load(m_base + keys[None, :] * sm_n, mask=key_live[None, :], other=0.0)
            else:
                add = tl.load(m_base + rows[:, None] * sm_m + keys[None, :] * sm_n,
                              mask=row_live[:, None] & key_live[None, :], other=0.0)
            # an -inf in the mask would give NaN for a fully masked row
            add = tl.where(add == float("-inf"), mask_floor, add.to(tl.float32))
            s = s + add
        keep = key_live[None, :]
        if CAUSAL:
            keep = keep & (rows[:, None] >= keys[None, :])
        s = tl.where(keep, s, float("-inf"))

        new_best = tl.maximum(best, tl.max(s, 1))
        alpha = tl.exp(best - new_best)
        p = tl.exp(s - new_best[:, None])
        total = total * alpha + tl.sum(p, 1)
        v = tl.load(v_base + keys[:, None] * sv_n + dims[None, :] * sv_d, mask=key_live[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, out_dtype=tl.float32)
        best = new_best

    out = acc / total[:, None]
    tl.store(Out + batch * so_b + head * so_h + rows[:, None] * so_m + dims[None, :] * so_d,
             out.to(Out.dtype.element_ty), mask=row_live[:, None])


# portq: ports kernl:src/kernl/implementations/attention.py::Attention.forward @71e8fb0975
# portq: not-carried kernl:src/kernl/implementations/attention.py::prune -- autotuning: the port fixes its tile
# portq: not-carried kernl:src/kernl/implementations/attention.py::closest_power_of_2 -- autotuning: the port fixes its tile
def launch_attention(q, k, v, out, scale, causal, mask):
    """Check shapes, pick the tile from the length, launch; return out."""
    assert q.shape[-1] == k.shape[-1], "queries and keys must share the head dimension"
    assert q.dtype == k.dtype == v.dtype == out.dtype, "q, k, v and out must share a dtype"
    assert q.dtype in (torch.float16, torch.bfloat16), "fp16 or bf16 only"
    batch, heads, length, dim = q.shape

    tile = max(min(128, triton.next_power_of_2(length)), 16)
    if length == 32:
        tile = 64  # upstream avoids a 32-row tile at exactly this length

    has_mask = mask is not None
    if has_mask:
        assert mask.size(0) in (1, batch), "mask batch must broadcast"
        assert mask.size(1) in (1, heads), "mask heads must broadcast"
        assert mask.size(2) in (1, length), "mask rows must broadcast"
        assert mask.size(3) == length, "mask must cover every key"
        m_strides = mask.stride()
        floor = torch.finfo(mask.dtype).min
    else:
        m_strides = (0, 0, 0, 0)
        floor = 0.0

    grid = (triton.cdiv(length, tile), batch * heads)
    _attn_fwd_tile[grid](
        q, k, v, out, mask if has_mask else q, scale, floor,
        *q.stride(), *k.stride(), *v.stride(), *out.stride(), *m_strides,
        heads, length,
        MASK_ONE_BATCH=has_mask and mask.size(0) == 1,
        MASK_ONE_HEAD=has_mask and mask.size(1) == 1,
        MASK_ONE_ROW=has_mask and mask.size(2) == 1,
        HAS_MASK=has_mask, CAUSAL=causal,
        TILE_M=tile, TILE_N=tile, DIM=dim,
        num_warps=4, num_stages=1)
    return out
