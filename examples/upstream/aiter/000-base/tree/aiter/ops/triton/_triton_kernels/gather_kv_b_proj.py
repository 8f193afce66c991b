# SPDX-License-Identifier: MIT
# Copyright (C) 2024-2026, Advanced Micro Devices, Inc. All rights reserved.

import triton
import triton.language as tl


@triton.jit
def _load_unshuffle_segment(
    base_ptr,
    seg_idx,
    HeadDim: tl.constexpr,
    PaddedHeadDim: tl.constexpr,
    KV_CDim: tl.constexpr,
    ScaleKGranularity: tl.constexpr,
):
    # Weights preshuffled with layout (16, 16): each 16-row group stores its
    # 128-wide K segment as four 512-element tiles.
    rows = tl.arange(0, PaddedHeadDim)
    cols = tl.arange(0, ScaleKGranularity)
    group = rows // 16
    offs = (
        (group[:, None] * (KV_CDim // 32) + seg_idx * 4 + cols[None, :] // 32) * 512
        + ((cols[None, :] % 32) // 16) * 256
        + (rows[:, None] % 16) * 16
        + cols[None, :] % 16
    )
    return tl.load(base_ptr + offs, mask=rows[:, None] < HeadDim, other=0.0)


@triton.jit
def _triton_gather_kv_b_proj_impl(
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
    WEIGHT_PRESHUFFLE: tl.constexpr = False,
    PER_ROW_SCALE: tl.constexpr = False,
    NO_SCALE: tl.constexpr = False,
    SHUFFLED_KV_CACHE: tl.constexpr = False,
):
    tl.static_assert(KV_CDim == 512, "kv_lora_rank must be 512")
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
    kv_end = tl.load(kv_indptr + pid_batch + 1)
    out_start = tl.load(kv_prefix_sum_context_lens + pid_batch)
    out_end = tl.load(kv_prefix_sum_context_lens + pid_batch + 1)
    context_len = out_end - out_start
    num_blocks = kv_end - kv_start
    KBlocksPerChunkK: tl.constexpr = ChunkK // KBlockSize
    num_chunks = tl.cdiv(num_blocks, KBlocksPerChunkK)

    if k_buffer.dtype.element_ty != tl.bfloat16:
        ks = tl.load(k_scale)
    else:
        ks = 1.0

    for chunk in range(0, num_chunks):
        tokens = chunk * ChunkK + tl.arange(0, ChunkK)
        token_mask = tokens < context_len
        pages = tl.load(kv_indices + kv_start + tokens // KBlockSize, mask=token_mask)
        slots = tokens % KBlockSize
        row_base = (pages * KBlockSize + slots) * (KV_CDim + KV_PeDim)

        k_acc = tl.zeros([ChunkK, PaddedK], dtype=tl.float32)
        v_acc = tl.zeros([ChunkK, PaddedV], dtype=tl.float32)
        for s in tl.static_range(4):
            lat = tl.load(k_buffer + row_base[:, None] + s * 128 + seg[None, :],
                          mask=token_mask[:, None], other=0.0)
            w_k = tl.load(kv_proj_weight + k_rows[None, :] * KV_CDim + s * 128 + seg[:, None],
                          mask=k_mask[None, :], other=0.0).to(lat.dtype)
            w_v = tl.load(kv_proj_weight + v_rows[None, :] * KV_CDim + s * 128 + seg[:, None],
                          mask=v_mask[None, :], other=0.0).to(lat.dtype)
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
        tl.store(k_out + tl.arange(0, PaddedK)[None, :], k_acc * ks,
                 mask=token_mask[:, None] & k_mask[None, :])
        tl.store(k_out + QkNopeHeadDim + tl.arange(0, KV_PeDim)[None, :], pe * ks,
                 mask=token_mask[:, None])
        v_out = v_prefix + (out_rows[:, None] * TpNumHeads + pid_head) * VHeadDim
        tl.store(v_out + tl.arange(0, PaddedV)[None, :], v_acc * ks,
                 mask=token_mask[:, None] & v_mask[None, :])


@triton.jit
def _triton_gather_kv_b_proj_fp4_impl(
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
    ScaleCols: tl.constexpr,
    Fp4ScaleKGranularity: tl.constexpr = 32,
    WEIGHT_PRESHUFFLE: tl.constexpr = False,
):
    pid = tl.program_id(0)
    pid_chunk = pid // (batch_size * TpNumHeads)
    pid_batch = (pid % (batch_size * TpNumHeads)) // TpNumHeads
    pid_head = pid % TpNumHeads

    kv_start = tl.load(kv_indptr + pid_batch)
    kv_end = tl.load(kv_indptr + pid_batch + 1)
    KBlocksPerChunkK: tl.constexpr = ChunkK // KBlockSize
    # A grid sized from the longest sequence has surplus programs for the
    # shorter ones: they leave at once.
    if pid_chunk >= tl.cdiv(kv_end - kv_start, KBlocksPerChunkK):
        return

    out_start = tl.load(kv_prefix_sum_context_lens + pid_batch)
    context_len = tl.load(kv_prefix_sum_context_lens + pid_batch + 1) - out_start
    tokens = pid_chunk * ChunkK + tl.arange(0, ChunkK)
    token_mask = tokens < context_len
    pages = tl.load(kv_indices + kv_start + tokens // KBlockSize, mask=token_mask)
    row_base = (pages * KBlockSize + tokens % KBlockSize) * (KV_CDim + KV_PeDim)
    head_rows = QkNopeHeadDim + VHeadDim
    k_rows = pid_head * head_rows + tl.arange(0, PaddedK)
    k_acc = tl.zeros([ChunkK, PaddedK], dtype=tl.float32)
    for s in tl.static_range(KV_CDim // Fp4ScaleKGranularity):
        cols = s * Fp4ScaleKGranularity + tl.arange(0, Fp4ScaleKGranularity)
        lat = tl.load(k_buffer + row_base[:, None] + cols[None, :],
                      mask=token_mask[:, None], other=0.0).to(tl.bfloat16)
        w = tl.load(kv_proj_weight + k_rows[None, :] * (KV_CDim // 2)
                    + s * (Fp4ScaleKGranularity // 2) + tl.arange(0, Fp4ScaleKGranularity // 2)[:, None])
        w_scale = tl.load(kv_proj_scale + k_rows[:, None] * ScaleCols
                          + s * (Fp4ScaleKGranularity // 32) + tl.arange(0, Fp4ScaleKGranularity // 32)[None, :])
        k_acc = tl.dot_scaled(lat, None, "bf16", w, w_scale, "e2m1", acc=k_acc, fast_math=True)
    out_rows = (out_start + tokens).to(tl.int64)
    k_out = k_prefix + (out_rows[:, None] * TpNumHeads + pid_head) * (QkNopeHeadDim + KV_PeDim)
    tl.store(k_out + tl.arange(0, PaddedK)[None, :], k_acc,
             mask=token_mask[:, None] & (tl.arange(0, PaddedK)[None, :] < QkNopeHeadDim))


@triton.jit
def _triton_gather_kv_b_proj(
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
    ScaleCols: tl.constexpr = 1,
    IS_FP4: tl.constexpr = False,
    Fp4ScaleKGranularity: tl.constexpr = 32,
    WEIGHT_PRESHUFFLE: tl.constexpr = False,
    PER_ROW_SCALE: tl.constexpr = False,
    NO_SCALE: tl.constexpr = False,
    SHUFFLED_KV_CACHE: tl.constexpr = False,
):
    if IS_FP4:
        _triton_gather_kv_b_proj_fp4_impl(
            batch_size, k_buffer, k_scale, kv_indptr, kv_indices,
            kv_prefix_sum_context_lens, kv_proj_weight, kv_proj_scale,
            k_prefix, v_prefix, KBlockSize, TpNumHeads, QkNopeHeadDim,
            VHeadDim, KV_CDim, KV_PeDim, ChunkK, PaddedK, PaddedV, ScaleCols,
            Fp4ScaleKGranularity, WEIGHT_PRESHUFFLE,
        )
    else:
        _triton_gather_kv_b_proj_impl(
            batch_size, k_buffer, k_scale, kv_indptr, kv_indices,
            kv_prefix_sum_context_lens, kv_proj_weight, kv_proj_scale,
            k_prefix, v_prefix, KBlockSize, TpNumHeads, QkNopeHeadDim,
            VHeadDim, KV_CDim, KV_PeDim, ChunkK, PaddedK, PaddedV,
            WEIGHT_PRESHUFFLE, PER_ROW_SCALE, NO_SCALE, SHUFFLED_KV_CACHE,
        )
