"""Row-softmax pieces of a FlashAttention-2 style forward pass, as Triton
device functions over one (BLOCK_M, BLOCK_N) score tile.

Re-implemented from the semantics of FlashAttention-2's CUDA softmax helpers:
exponentials are taken in base 2 with the softmax scale folded into log2(e),
and a row whose maximum is -inf (fully masked) keeps a zero offset so that it
never produces NaN. The warp-lane reductions of the CUDA code are a single
``tl.max``/``tl.sum`` here. This module only computes on tiles; it does not
launch kernels and does not pick tile sizes (that is ``launch``).
"""

import triton
import triton.language as tl

# log2(e): turns exp(x) into exp2(x * LOG2E), which fuses into one FMA.
LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)
# Value written into masked-out score positions.
MASKED: tl.constexpr = tl.constexpr(float("-inf"))

# portq: not-carried flashattn:csrc/flash_attn/src/softmax.h::thread_reduce_ -- per-thread MMA-fragment reduction; tl.max/tl.sum reduce whole rows
# portq: not-carried flashattn:csrc/flash_attn/src/softmax.h::quad_allreduce_ -- 4-lane shuffle reduction of the MMA layout; no lanes in Triton
# portq: not-carried flashattn:csrc/flash_attn/src/softmax.h::reduce_ -- generic operator reduction; the port only needs max and sum
# portq: not-carried flashattn:csrc/flash_attn/src/softmax.h::apply_mask_causal_w_idx -- index-tensor mask of the backward pass; the port is forward only
# portq: not-carried flashattn:csrc/flash_attn/src/softmax.h::apply_dropout -- the port has no dropout


# portq: ports flashattn:csrc/flash_attn/src/softmax.h::reduce_max
@triton.jit
def row_max(scores):
    """Maximum of every row of the tile."""
    return tl.max(scores, 1)


# portq: ports flashattn:csrc/flash_attn/src/softmax.h::reduce_sum
@triton.jit
def row_sum(probs):
    """Sum of every row of the tile."""
    return tl.sum(probs, 1)


# portq: ports flashattn:csrc/flash_attn/src/softmax.h::scale_apply_exp2
@triton.jit
def exp2_rescaled(scores, maxima, scale, SCALE_MAX: tl.constexpr):
    """exp2(scores * scale - maxima * s) row by row, with s = scale when
    SCALE_MAX, else log2(e); a -inf row maximum gives offset 0."""
    if SCALE_MAX:
        offset = maxima * scale
    else:
        offset = maxima * LOG2E
    offset = tl.where(maxima == MASKED, 0.0, offset)
    return tl.exp2(scores * scale - offset[:, None])


# portq: ports flashattn:csrc/flash_attn/src/softmax.h::max_scale_exp2_sum
# portq: not-carried flashattn:csrc/flash_attn/src/softmax.h::max_scale_exp2_sum[zero_init] -- the port always starts a row from its own maximum
@triton.jit
def max_exp2_sum(scores, scale):
    """Row maximum, exponentials against it and their row sum, in one pass."""
    maxima = row_max(scores)
    probs = exp2_rescaled(scores, maxima, scale, True)
    return maxima, probs, row_sum(probs)


# portq: ports flashattn:csrc/flash_attn/src/softmax.h::apply_mask
@triton.jit
def mask_kv_tail(scores, cols, seqlen_k):
    """Mask key columns at or beyond seqlen_k."""
    return tl.where(cols[None, :] < seqlen_k, scores, MASKED)


# portq: ports flashattn:csrc/flash_attn/src/softmax.h::apply_mask_causal
@triton.jit
def mask_causal(scores, rows, cols, seqlen_k):
    """Causal mask aligned to the top-left: query row r sees keys 0..r that
    exist (col < min(seqlen_k, r + 1))."""
    limit = tl.minimum(rows + 1, seqlen_k)
    return tl.where(cols[None, :] < limit[:, None], scores, MASKED)
