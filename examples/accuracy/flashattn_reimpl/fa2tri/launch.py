"""The forward kernel of a FlashAttention-2 style attention in Triton, its
launcher and the per-head-dimension tile choices.

Tensors are laid out (batch, seqlen, heads, head_dim), as FlashAttention-2
takes them. The tile sizes per head dimension follow FlashAttention-2's
forward launch heuristics for the head dimensions this port serves (32, 64,
128); ``attention_forward`` is this port's own entry point and picks among
them. This module launches kernels; the row-softmax arithmetic lives in
``softmax`` and nothing here allocates beyond the output.
"""

import math

import torch
import triton
import triton.language as tl

from .softmax import exp2_rescaled, mask_causal, mask_kv_tail, row_max, row_sum, LOG2E

# Warps per program unless a head dimension asks for another count.
DEFAULT_WARPS = 4


def _ampere_consumer_part() -> bool:
    """sm86/sm89 (8.x with x > 0): smaller shared memory than sm80/sm90."""
    if not torch.cuda.is_available():
        return False
    major, minor = torch.cuda.get_device_capability()
    return major == 8 and minor > 0


# Read once at import: every launch of this process runs on the same part.
IS_SM8X = _ampere_consumer_part()

# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim96 -- head dims served: 32, 64, 128
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim160 -- head dims served: 32, 64, 128
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim192 -- head dims served: 32, 64, 128
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim224 -- head dims served: 32, 64, 128
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim256 -- head dims served: 32, 64, 128


# portq: ports flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::flash_fwd_kernel
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::flash_fwd_kernel[Is_dropout] -- the port has no dropout
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::flash_fwd_kernel[Return_softmax] -- probabilities are never returned
@triton.jit
def _fa2_fwd_kernel(
    Q, K, V, Out,
    scale_log2,
    stride_qb, stride_qm, stride_qh,
    stride_kb, stride_kn, stride_kh,
    stride_vb, stride_vn, stride_vh,
    stride_ob, stride_om, stride_oh,
    seqlen_q, seqlen_k, head_dim,
    IS_CAUSAL: tl.constexpr,
    EVEN_N: tl.constexpr,
    EVEN_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    m_block = tl.program_id(0)
    batch = tl.program_id(1)
    head = tl.program_id(2)
    rows = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_D)
    cols0 = tl.arange(0, BLOCK_N)
    if EVEN_K:
        dim_ok = dims < BLOCK_D
    else:
        dim_ok = dims < head_dim
    q_ptrs = Q + batch * stride_qb + head * stride_qh + rows[:, None] * stride_qm + dims[None, :]
    q = tl.load(q_ptrs, mask=(rows[:, None] < seqlen_q) & dim_ok[None, :], other=0.0)

    maxima = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    sums = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    stop = seqlen_k
    if IS_CAUSAL:
        stop = tl.minimum(seqlen_k, (m_block + 1) * BLOCK_M)
    for start in range(0, stop, BLOCK_N):
        cols = start + cols0
        kv_mask = (cols[:, None] < seqlen_k) & dim_ok[None, :]
        k = tl.load(K + batch * stride_kb + head * stride_kh + cols[:, None] * stride_kn + dims[None, :],
                    mask=kv_mask, other=0.0)
        scores = tl.dot(q, tl.trans(k)).to(tl.float32)
        if not EVEN_N:
            scores = mask_kv_tail(scores, cols, seqlen_k)
        if IS_CAUSAL:
            scores = mask_causal(scores, rows, cols, seqlen_k)
        new_max = tl.maximum(maxima, row_max(scores))
        probs = exp2_rescaled(scores, new_max, scale_log2, True)
        safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)
        alpha = tl.exp2((maxima - safe_max) * scale_log2)
        sums = sums * alpha + row_sum(probs)
        v = tl.load(V + batch * stride_vb + head * stride_vh + cols[:, None] * stride_vn + dims[None, :],
                    mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(probs.to(v.dtype), v).to(tl.float32)
        maxima = new_max
    acc = acc / tl.where(sums == 0.0, 1.0, sums)[:, None]
    o_ptrs = Out + batch * stride_ob + head * stride_oh + rows[:, None] * stride_om + dims[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=(rows[:, None] < seqlen_q) & dim_ok[None, :])


# portq: ports flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_flash_fwd
# portq: not-carried flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_flash_fwd[Is_dropout] -- the port has no dropout
def launch_fwd(q, k, v, out, softmax_scale, causal, block_m, block_n, num_warps=DEFAULT_WARPS):
    """One program per (query block, batch, head), as FlashAttention-2 lays
    out its grid."""
    batch, seqlen_q, heads, head_dim = q.shape
    seqlen_k = k.shape[1]
    block_d = max(16, triton.next_power_of_2(head_dim))
    num_m_block = triton.cdiv(seqlen_q, block_m)
    grid = (num_m_block, batch, heads)
    _fa2_fwd_kernel[grid](
        q, k, v, out,
        softmax_scale * LOG2E,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        seqlen_q, seqlen_k, head_dim,
        IS_CAUSAL=causal,
        EVEN_N=seqlen_k % block_n == 0,
        EVEN_K=head_dim == block_d,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_D=block_d,
        num_warps=num_warps,
    )
    return out


# portq: ports flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim32
def fwd_hdim32(q, k, v, out, softmax_scale, causal):
    return launch_fwd(q, k, v, out, softmax_scale, causal, 128, 128)


# portq: ports flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim64
def fwd_hdim64(q, k, v, out, softmax_scale, causal):
    # Upstream's dropout path uses 128 x 64; without dropout 128 x 128 wins.
    return launch_fwd(q, k, v, out, softmax_scale, causal, 128, 128)


# portq: ports flashattn:csrc/flash_attn/src/flash_fwd_launch_template.h::run_mha_fwd_hdim128
def fwd_hdim128(q, k, v, out, softmax_scale, causal):
    if IS_SM8X:
        # sm86/sm89: square tiles for causal, 128 x 32 (two programs per SM) otherwise.
        if causal:
            return launch_fwd(q, k, v, out, softmax_scale, causal, 64, 64)
        return launch_fwd(q, k, v, out, softmax_scale, causal, 128, 32)
    return launch_fwd(q, k, v, out, softmax_scale, causal, 128, 64)


SERVED_HEAD_DIMS = (32, 64, 128)


def attention_forward(q, k, v, causal=False, softmax_scale=None):
    """softmax(q k^T * scale) v for (batch, seqlen, heads, head_dim) tensors;
    the head dimension is padded up to the next one this port serves."""
    if q.dim() != 4 or k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        raise ValueError(f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: expected (b, s, h, d) with k and v alike")
    head_dim = q.shape[-1]
    if head_dim > SERVED_HEAD_DIMS[-1]:
        raise ValueError(f"head_dim {head_dim}: expected at most {SERVED_HEAD_DIMS[-1]}")
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(head_dim)
    out = torch.empty_like(q)
    if head_dim <= 32:
        return fwd_hdim32(q, k, v, out, softmax_scale, causal)
    if head_dim <= 64:
        return fwd_hdim64(q, k, v, out, softmax_scale, causal)
    return fwd_hdim128(q, k, v, out, softmax_scale, causal)
