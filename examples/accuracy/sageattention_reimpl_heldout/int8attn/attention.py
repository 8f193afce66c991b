"""Attention forward over int8 Q·K scores (dequantised by the two block
scales) with an fp16 P·V accumulation, one program per query tile of one
head; a non-causal and a causal variant. Head dimension 64 only. Must not
quantise: callers pass codes and scales from quant.py."""

import torch
import triton
import triton.language as tl

from .quant import K_ROWS, Q_ROWS

# masked scores get this bias before the row maximum (finite: exp2 of it is 0)
MASK_BIAS = tl.constexpr(-1.0e6)
# the head dimension these kernels are built for
HEAD_DIM = 64


# portq: ports sageattention:sageattention/attn_qk_int8_per_block_h64.py::_attn_fwd_inner
@triton.jit
def _scan_keys(acc, l_i, m_i, q, q_scale, k_ptrs, k_scale_ptr, v_ptrs, start_m,
               BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
               STAGE: tl.constexpr, offs_m: tl.constexpr, offs_n: tl.constexpr,
               N_CTX: tl.constexpr):
    for start_n in range(0, N_CTX, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        live = offs_n < (N_CTX - start_n)
        k = tl.load(k_ptrs, mask=live[None, :], other=0)
        s = tl.dot(q, k).to(tl.float32) * q_scale * tl.load(k_scale_ptr)
        s = s + tl.where(live[None, :], 0.0, MASK_BIAS)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs, mask=live[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v, out_dtype=tl.float16).to(tl.float32)
        m_i = m_new
        k_ptrs += BLOCK_N * HEAD_DIM
        k_scale_ptr += 1
        v_ptrs += BLOCK_N * HEAD_DIM
    return acc, l_i


# portq: ports sageattention:sageattention/attn_qk_int8_per_block_h64.py::_attn_fwd
@triton.jit
def _int8_attn_tile(Q, K, V, Q_scale, K_scale, Out,
                    stride_qz, stride_qh, stride_qm, stride_qk,
                    stride_kz, stride_kh, stride_kn, stride_kk,
                    stride_vz, stride_vh, stride_vk, stride_vn,
                    stride_oz, stride_oh, stride_om, stride_on,
                    Z, H, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    head_base = (off_hz // H).to(tl.int64) * stride_qz + (off_hz % H).to(tl.int64) * stride_qh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_live = offs_m[:, None] < N_CTX
    q = tl.load(Q + head_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=q_live, other=0)
    q_scale = tl.load(Q_scale + off_hz * tl.cdiv(N_CTX, BLOCK_M) + start_m)
    k_ptrs = K + head_base + offs_d[:, None] + offs_n[None, :] * stride_kn
    v_ptrs = V + head_base + offs_n[:, None] * stride_qm + offs_d[None, :]
    k_scale_ptr = K_scale + off_hz * tl.cdiv(N_CTX, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    acc, l_i = _scan_keys(acc, l_i, m_i, q, q_scale, k_ptrs, k_scale_ptr, v_ptrs, start_m,
                          BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    out = acc / l_i[:, None]
    tl.store(Out + head_base + offs_m[:, None] * stride_qm + offs_d[None, :],
             out.to(Out.type.element_ty), mask=q_live)


def _launch(kernel, q, k, v, q_scale, k_scale, stage, num_stages):
    assert q.shape[-1] == HEAD_DIM, "head dimension 64 only"
    o = torch.empty_like(q, dtype=torch.float16)
    grid = (triton.cdiv(q.shape[2], Q_ROWS), q.shape[0] * q.shape[1], 1)
    kernel[grid](
        q, k, v, q_scale, k_scale, o,
        *q.stride(), *k.stride(), *v.stride(), *o.stride(),
        q.shape[0], q.shape[1], N_CTX=q.shape[2],
        BLOCK_M=Q_ROWS, BLOCK_N=K_ROWS, HEAD_DIM=HEAD_DIM, STAGE=stage,
        num_warps=4, num_stages=num_stages)
    return o


# portq: ports sageattention:sageattention/attn_qk_int8_per_block_h64.py::forward
# portq: not-carried sageattention:sageattention/attn_qk_int8_per_block_h64.py::forward[return_lse] -- no log-sum-exp output
def int8_attention(q, k, v, q_scale, k_scale):
    """Non-causal attention of int8 q/k codes (with their scales) and fp16 v."""
    return _launch(_int8_attn_tile, q, k, v, q_scale, k_scale, 1, 3)


# portq: ports sageattention:sageattention/attn_qk_int8_per_block_hd64_causal.py::_attn_fwd_inner
@triton.jit
def _scan_keys_causal(acc, l_i, m_i, q, q_scale, k_ptrs, k_scale_ptr, v_ptrs, start_m,
                      BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                      STAGE: tl.constexpr, offs_m: tl.constexpr, offs_n: tl.constexpr,
                      N_CTX: tl.constexpr):
    # STAGE 1: the key blocks wholly before the query tile; STAGE 2: the
    # diagonal tile, masked.
    if STAGE == 1:
        lo = 0
        hi = start_m * BLOCK_M
    else:
        lo = tl.multiple_of(start_m * BLOCK_M, BLOCK_M)
        hi = (start_m + 1) * BLOCK_M
        k_scale_ptr += lo // BLOCK_N
        k_ptrs += HEAD_DIM * lo
        v_ptrs += HEAD_DIM * lo
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        live = offs_n < (N_CTX - start_n)
        k = tl.load(k_ptrs, mask=live[None, :], other=0)
        s = tl.dot(q, k).to(tl.float32) * q_scale * tl.load(k_scale_ptr)
        keep = live[None, :]
        if STAGE == 2:
            keep = keep & (offs_m[:, None] >= (start_n + offs_n[None, :]))
        s = s + tl.where(keep, 0.0, MASK_BIAS)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs, mask=live[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v, out_dtype=tl.float16).to(tl.float32)
        m_i = m_new
        k_ptrs += BLOCK_N * HEAD_DIM
        k_scale_ptr += 1
        v_ptrs += BLOCK_N * HEAD_DIM
    return acc, l_i, m_i


# portq: ports sageattention:sageattention/attn_qk_int8_per_block_hd64_causal.py::_attn_fwd
@triton.jit
def _int8_attn_tile_causal(Q, K, V, Q_scale, K_scale, Out,
                           stride_qz, stride_qh, stride_qm, stride_qk,
                           stride_kz, stride_kh, stride_kn, stride_kk,
                           stride_vz, stride_vh, stride_vk, stride_vn,
                           stride_oz, stride_oh, stride_om, stride_on,
                           Z, H, N_CTX,
                           HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    head_base = (off_hz // H).to(tl.int64) * stride_qz + (off_hz % H).to(tl.int64) * stride_qh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_live = offs_m[:, None] < N_CTX
    q = tl.load(Q + head_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=q_live, other=0)
    q_scale = tl.load(Q_scale + off_hz * tl.cdiv(N_CTX, BLOCK_M) + start_m)
    k_ptrs = K + head_base + offs_d[:, None] + offs_n[None, :] * stride_kn
    v_ptrs = V + head_base + offs_n[:, None] * stride_qm + offs_d[None, :]
    k_scale_ptr = K_scale + off_hz * tl.cdiv(N_CTX, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    acc, l_i, m_i = _scan_keys_causal(acc, l_i, m_i, q, q_scale, k_ptrs, k_scale_ptr, v_ptrs,
                                      start_m, BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE,
                                      offs_m, offs_n, N_CTX)
    acc, l_i, _ = _scan_keys_causal(acc, l_i, m_i, q, q_scale, k_ptrs, k_scale_ptr, v_ptrs,
                                    start_m, BLOCK_M, HEAD_DIM, BLOCK_N, 2,
                                    offs_m, offs_n, N_CTX)
    out = acc / l_i[:, None]
    tl.store(Out + head_base + offs_m[:, None] * stride_qm + offs_d[None, :],
             out.to(Out.type.element_ty), mask=q_live)


# portq: ports sageattention:sageattention/attn_qk_int8_per_block_hd64_causal.py::forward
# portq: not-carried sageattention:sageattention/attn_qk_int8_per_block_hd64_causal.py::forward[return_lse] -- no log-sum-exp output
def int8_attention_causal(q, k, v, q_scale, k_scale):
    """Causal attention of int8 q/k codes (with their scales) and fp16 v."""
    return _launch(_int8_attn_tile_causal, q, k, v, q_scale, k_scale, 3, 4)
