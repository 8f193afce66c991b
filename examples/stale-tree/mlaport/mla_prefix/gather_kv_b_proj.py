"""gather_kv_b_proj: expand each cached token's latent into per-head K and V.

One program per (sequence, head); it loads the head's kv_b_proj rows once
and walks the sequence's context in chunks of ChunkK tokens.
"""

import torch
import triton
import triton.language as tl

# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_fp4_impl -- MXFP4 weights need gfx950
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_load_unshuffle_segment -- AMD preshuffled weight layout
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj[IS_FP4] -- MXFP4 weights need gfx950


# portq: ports aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj @e8b22da70a
# portq: ports aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_impl @e8b22da70a
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_impl[WEIGHT_PRESHUFFLE] -- AMD MFMA layout
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_impl[SHUFFLED_KV_CACHE] -- AMD MFMA layout
@triton.jit
def _gather_kv_b_proj_kernel(
    batch_size,
    k_buffer,
    k_scale,
    kv_indptr,
    kv_indices,
    kv_prefix_sum_context_lens,
    kv_proj_weight,
    kv_proj_scale,
    k_prefix,
    v_prefix,
    KBlockSize: tl.constexpr,
    TpNumHeads: tl.constexpr,
    QkNopeHeadDim: tl.constexpr,
    VHeadDim: tl.constexpr,
    KV_CDim: tl.constexpr,
    KV_PeDim: tl.constexpr,
    ChunkK: tl.constexpr,
    PaddedK: tl.constexpr,
    PaddedV: tl.constexpr,
    PER_ROW_SCALE: tl.constexpr = False,
    NO_SCALE: tl.constexpr = False,
):
    pid = tl.program_id(0)
    pid_batch = pid // TpNumHeads
    pid_head = pid % TpNumHeads
    head_rows = QkNopeHeadDim + VHeadDim
    k_rows = pid_head * head_rows + tl.arange(0, PaddedK)
    v_rows = pid_head * head_rows + QkNopeHeadDim + tl.arange(0, PaddedV)
    k_mask = tl.arange(0, PaddedK) < QkNopeHeadDim
    v_mask = tl.arange(0, PaddedV) < VHeadDim
    seg = tl.arange(0, 128)
    kv_start = tl.load(kv_indptr + pid_batch)
    out_start = tl.load(kv_prefix_sum_context_lens + pid_batch)
    context_len = tl.load(kv_prefix_sum_context_lens + pid_batch + 1) - out_start
    num_chunks = tl.cdiv(context_len, ChunkK)
    ks = 1.0 if k_buffer.dtype.element_ty == tl.bfloat16 else tl.load(k_scale)

    for chunk in range(0, num_chunks):
        tokens = chunk * ChunkK + tl.arange(0, ChunkK)
        token_mask = tokens < context_len
        pages = tl.load(kv_indices + kv_start + tokens // KBlockSize, mask=token_mask)
        row_base = (pages.to(tl.int64) * KBlockSize + tokens % KBlockSize) * (KV_CDim + KV_PeDim)
        k_acc = tl.zeros([ChunkK, PaddedK], dtype=tl.float32)
        v_acc = tl.zeros([ChunkK, PaddedV], dtype=tl.float32)
        for s in tl.static_range(4):
            lat = tl.load(k_buffer + row_base[:, None] + s * 128 + seg[None, :],
                          mask=token_mask[:, None], other=0.0).to(tl.bfloat16)
            w_k = tl.load(kv_proj_weight + k_rows[None, :] * KV_CDim + s * 128 + seg[:, None],
                          mask=k_mask[None, :], other=0.0).to(tl.bfloat16)
            w_v = tl.load(kv_proj_weight + v_rows[None, :] * KV_CDim + s * 128 + seg[:, None],
                          mask=v_mask[None, :], other=0.0).to(tl.bfloat16)
            if NO_SCALE:
                k_acc = tl.dot(lat, w_k, acc=k_acc)
                v_acc = tl.dot(lat, w_v, acc=v_acc)
            elif PER_ROW_SCALE:
                k_acc += tl.dot(lat, w_k) * tl.load(kv_proj_scale + k_rows, mask=k_mask, other=1.0)[None, :]
                v_acc += tl.dot(lat, w_v) * tl.load(kv_proj_scale + v_rows, mask=v_mask, other=1.0)[None, :]
            else:
                k_acc += tl.dot(lat, w_k) * tl.load(kv_proj_scale + (k_rows // 128) * 4 + s, mask=k_mask)[None, :]
                v_acc += tl.dot(lat, w_v) * tl.load(kv_proj_scale + (v_rows // 128) * 4 + s, mask=v_mask)[None, :]
        out_rows = (out_start + tokens).to(tl.int64)
        pe = tl.load(k_buffer + row_base[:, None] + KV_CDim + tl.arange(0, KV_PeDim)[None, :],
                     mask=token_mask[:, None], other=0.0)
        k_out = k_prefix + (out_rows[:, None] * TpNumHeads + pid_head) * (QkNopeHeadDim + KV_PeDim)
        tl.store(k_out + tl.arange(0, PaddedK)[None, :], k_acc * ks, mask=token_mask[:, None] & k_mask[None, :])
        tl.store(k_out + QkNopeHeadDim + tl.arange(0, KV_PeDim)[None, :], pe * ks, mask=token_mask[:, None])
        v_out = v_prefix + (out_rows[:, None] * TpNumHeads + pid_head) * VHeadDim
        tl.store(v_out + tl.arange(0, PaddedV)[None, :], v_acc * ks, mask=token_mask[:, None] & v_mask[None, :])


def _next_pow2(x: int) -> int:
    return 1 << (x - 1).bit_length()


# portq: ports aiter:aiter/ops/triton/gather_kv_b_proj.py::gather_kv_b_proj @e8b22da70a
# portq: not-carried aiter:aiter/ops/triton/gather_kv_b_proj.py::gather_kv_b_proj[weight_preshuffle] -- AMD MFMA layout
# portq: not-carried aiter:aiter/ops/triton/gather_kv_b_proj.py::gather_kv_b_proj[shuffled_kv_cache] -- AMD MFMA layout
def gather_kv_b_proj(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                     kv_proj_weight, kv_proj_scale, k_prefix, v_prefix,
                     weight_preshuffle: bool = False, shuffled_kv_cache: bool = False) -> None:
    """Write k_prefix [T, H, Dn+E] and v_prefix [T, H, Dv] in place."""
    if weight_preshuffle or shuffled_kv_cache:
        raise ValueError("preshuffled weights and shuffled KV caches are AMD layouts, not supported")
    batch_size = kv_indptr.shape[0] - 1
    num_heads = k_prefix.shape[1]
    v_head_dim = v_prefix.shape[2]
    qk_nope_head_dim = kv_proj_weight.shape[0] // num_heads - v_head_dim
    chunk_k = 16 if k_buffer.dtype == torch.bfloat16 else 32
    no_scale = kv_proj_scale is None
    grid = (batch_size * num_heads,)
    _gather_kv_b_proj_kernel[grid](
        batch_size, k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
        kv_proj_weight, kv_proj_weight if no_scale else kv_proj_scale, k_prefix, v_prefix,
        KBlockSize=k_buffer.shape[1], TpNumHeads=num_heads, QkNopeHeadDim=qk_nope_head_dim,
        VHeadDim=v_head_dim, KV_CDim=kv_proj_weight.shape[1],
        KV_PeDim=k_prefix.shape[2] - qk_nope_head_dim, ChunkK=chunk_k,
        PaddedK=_next_pow2(qk_nope_head_dim), PaddedV=_next_pow2(v_head_dim),
        PER_ROW_SCALE=not no_scale and kv_proj_scale.dim() == 1, NO_SCALE=no_scale,
    )
