"""Causal attention over a batch of prompts packed end to end ([tokens,
heads, head_dim], each prompt at its start offset), with grouped key/value
heads; one program per (prompt, head, block of queries), online softmax.

Holds the kernel and its launcher. Triton 2.1 or newer only: the 2.0
workaround with a scratch buffer is not carried.
"""

import torch
import triton
import triton.language as tl

# Queries and keys one program handles per step.
PREFILL_BLOCK = 128
# Head sizes the kernel is built for.
PREFILL_HEAD_DIMS = (16, 32, 64, 128)


# portq: ports lightllm:lightllm/models/llama/triton_kernel/context_flashattention_nopad.py::_fwd_kernel
@triton.jit
def prefill_attention_kernel(
    q, k, v, scale, starts, lengths,
    out,
    q_tok_stride, q_head_stride, q_dim_stride,
    k_tok_stride, k_head_stride, k_dim_stride,
    v_tok_stride, v_head_stride, v_dim_stride,
    o_tok_stride, o_head_stride, o_dim_stride,
    heads_per_kv,
    BLOCK_Q: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_K: tl.constexpr,
):
    prompt = tl.program_id(0)
    head = tl.program_id(1)
    q_block = tl.program_id(2)
    kv_head = head // heads_per_kv
    length = tl.load(lengths + prompt)
    start = tl.load(starts + prompt)

    rows = q_block * BLOCK_Q + tl.arange(0, BLOCK_Q)
    cols = tl.arange(0, BLOCK_K)
    dims = tl.arange(0, HEAD_DIM)
    qv = tl.load(q + (start + rows[:, None]) * q_tok_stride + head * q_head_stride + dims[None, :] * q_dim_stride,
                 mask=rows[:, None] < length, other=0.0)

    row_max = tl.zeros([BLOCK_Q], dtype=tl.float32) - float("inf")
    row_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)

    # A query block past the prompt's end reads no keys.
    key_end = tl.where(q_block * BLOCK_Q < length, (q_block + 1) * BLOCK_Q, 0)
    for key0 in range(0, key_end, BLOCK_K):
        key0 = tl.multiple_of(key0, BLOCK_K)
        kt = tl.load(k + (start + key0 + cols[None, :]) * k_tok_stride + kv_head * k_head_stride
                     + dims[:, None] * k_dim_stride,
                     mask=(key0 + cols[None, :]) < length, other=0.0)
        scores = tl.dot(qv, kt) * scale
        scores = tl.where(rows[:, None] >= key0 + cols[None, :], scores, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(scores, 1))
        p = tl.exp(scores - new_max[:, None])
        correction = tl.exp(row_max - new_max)
        row_sum = row_sum * correction + tl.sum(p, 1)
        vv = tl.load(v + (start + key0 + cols[:, None]) * v_tok_stride + kv_head * v_head_stride
                     + dims[None, :] * v_dim_stride,
                     mask=(key0 + cols[:, None]) < length, other=0.0)
        acc = acc * correction[:, None] + tl.dot(p.to(vv.dtype), vv)
        row_max = new_max
    acc = acc / row_sum[:, None]
    tl.store(out + (start + rows[:, None]) * o_tok_stride + head * o_head_stride + dims[None, :] * o_dim_stride,
             acc.to(out.dtype.element_ty), mask=rows[:, None] < length)


# portq: ports lightllm:lightllm/models/llama/triton_kernel/context_flashattention_nopad.py::context_attention_fwd
@torch.no_grad()
def prefill_attention(q, k, v, out, starts, lengths, longest: int) -> None:
    """out[t] = causal softmax(q k^T / sqrt(d)) v within each prompt; q has a
    multiple of k's heads (grouped-query attention)."""
    head_dim = q.shape[-1]
    if k.shape[-1] != head_dim or v.shape[-1] != head_dim or head_dim not in PREFILL_HEAD_DIMS:
        raise ValueError(f"prefill_attention: head sizes q {head_dim}, k {k.shape[-1]}, v {v.shape[-1]}; "
                         f"expected one of {PREFILL_HEAD_DIMS}")
    n_prompts, n_heads = lengths.shape[0], q.shape[1]
    grid = (n_prompts, n_heads, triton.cdiv(longest, PREFILL_BLOCK))
    prefill_attention_kernel[grid](
        q, k, v, 1.0 / head_dim ** 0.5, starts, lengths,
        out,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        heads_per_kv=n_heads // k.shape[1],
        BLOCK_Q=PREFILL_BLOCK, HEAD_DIM=head_dim, BLOCK_K=PREFILL_BLOCK,
        num_warps=4 if head_dim <= 64 else 8, num_stages=1,
    )
