"""RoPE on new queries and keys, with the rotated keys and the untouched
values written into a padded KV cache, in one Triton launch.

One program handles one row of one head of one new token: query heads are
rotated into the output, key heads are rotated into the key cache, value
heads are copied into the value cache. The cache of batch element b starts
at kv_starts[b] and holds kv_lens[b] tokens, the last of which are the new
ones. Host-side checks and the launch shape are the caller's (rope.py).
"""

import triton
import triton.language as tl

# Math functions the kernel calls: libdevice's where this triton exposes it
# under tl, else tl.math's.
_libm = tl.libdevice if hasattr(tl, "libdevice") else tl.math


# portq: ports xformers:xformers/ops/_triton/rope_padded_kernels.py::_rope_padded_kernel
# portq: not-carried xformers:xformers/ops/_triton/rope_padded_kernels.py::_rope_padded_kernel[const_batch_strides] -- upstream's host always passes False; the engine's batches are ragged
# portq: not-carried xformers:xformers/ops/_triton/rope_padded_kernels.py::_rope_padded_kernel[cache_padding_length] -- only read with const_batch_strides
# portq: not-carried xformers:xformers/ops/_triton/rope_padded_kernels.py::_rope_padded_kernel[seqlenk_shift] -- upstream's host always passes 0
@triton.jit
def _rope_cache_kernel(
    q_in, k_in, v_in, q_out, k_cache, v_cache,
    q_starts, kv_starts, kv_lens, theta,
    K_FIRST: tl.constexpr, V_FIRST: tl.constexpr, HEAD_DIM: tl.constexpr,
    q_in_tok, q_in_head, k_in_tok, k_in_head, v_in_tok, v_in_head,
    k_cache_tok, k_cache_head, v_cache_tok, v_cache_head,
    q_starts_step, kv_starts_step, kv_lens_step,
    q_out_tok, q_out_head,
    COMPUTE_DTYPE: tl.constexpr, BLOCK: tl.constexpr, PAIRS_ADJACENT: tl.constexpr,
):
    b = tl.program_id(0)
    i = tl.program_id(1)  # index of the new token within batch element b
    head = tl.program_id(2)  # over q heads, then k heads, then v heads

    if COMPUTE_DTYPE == "f32":
        theta = tl.cast(theta, tl.float32)
    elif COMPUTE_DTYPE == "f64":
        theta = tl.cast(theta, tl.float64)

    first = tl.load(q_starts + b * q_starts_step)
    last = tl.load(q_starts + (b + 1) * q_starts_step)
    tok = first + i
    if tok >= last:
        return

    cache_begin = tl.load(kv_starts + b * kv_starts_step)
    cache_end = cache_begin + tl.load(kv_lens + b * kv_lens_step)
    slot = cache_end - (last - tok)  # new tokens fill the tail of the used cache
    position = slot - cache_begin

    rotate = head < V_FIRST
    if head < K_FIRST:
        src = q_in + tok * q_in_tok + head * q_in_head
        dst = q_out + tok * q_out_tok + head * q_out_head
    elif head < V_FIRST:
        src = k_in + tok * k_in_tok + (head - K_FIRST) * k_in_head
        dst = k_cache + slot * k_cache_tok + (head - K_FIRST) * k_cache_head
    else:
        src = v_in + tok * v_in_tok + (head - V_FIRST) * v_in_head
        dst = v_cache + slot * v_cache_tok + (head - V_FIRST) * v_cache_head

    for start in range(0, HEAD_DIM // 2, BLOCK // 2):
        pair = start + tl.arange(0, BLOCK // 2)
        if PAIRS_ADJACENT:
            even = pair * 2
            odd = even + 1
        else:
            even = pair
            odd = pair + HEAD_DIM // 2
        mask = odd < HEAD_DIM
        x0 = tl.load(src + even, mask=mask)
        x1 = tl.load(src + odd, mask=mask)
        # angle = position * theta ** (-2 * pair / HEAD_DIM)
        inv_freq = _libm.exp2(_libm.log2(theta) * (pair * -2.0 / HEAD_DIM))
        angle = position * inv_freq
        cos = tl.cos(angle)
        sin = tl.sin(angle)
        y0 = tl.where(rotate, x0 * cos - x1 * sin, x0)
        y1 = tl.where(rotate, x1 * cos + x0 * sin, x1)
        if COMPUTE_DTYPE == "f64":
            # narrow through float32: some tritons cannot cast float64 to bfloat16
            y0 = y0.to(tl.float32)
            y1 = y1.to(tl.float32)
        tl.store(dst + even, y0, mask=mask)
        tl.store(dst + odd, y1, mask=mask)
