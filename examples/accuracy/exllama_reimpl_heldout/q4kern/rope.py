"""Rotary embedding applied in place, half layout: the first and second
halves of each head are the pair; a row of x (one head of one position) at
row r takes the sin/cos table's row past_len + r // num_heads."""

import triton
import triton.language as tl


# portq: ports exllama:exllama_ext/cuda_func/rope.cu::rope_cuda_kernel @3dc7cd9
@triton.jit
def _rope_kernel(x_ptr, sin_ptr, cos_ptr, rows, head_dim, num_heads, past_len, HALF: tl.constexpr):
    row = tl.program_id(0)
    pos = (past_len + row // num_heads).to(tl.int64)
    cols = tl.arange(0, HALF)
    base = row.to(tl.int64) * head_dim
    left = tl.load(x_ptr + base + cols).to(tl.float32)
    right = tl.load(x_ptr + base + HALF + cols).to(tl.float32)
    cos_l = tl.load(cos_ptr + pos * head_dim + cols).to(tl.float32)
    cos_r = tl.load(cos_ptr + pos * head_dim + HALF + cols).to(tl.float32)
    sin_l = tl.load(sin_ptr + pos * head_dim + cols).to(tl.float32)
    sin_r = tl.load(sin_ptr + pos * head_dim + HALF + cols).to(tl.float32)
    new_left = left * cos_l - right * sin_l
    new_right = right * cos_r + left * sin_r
    tl.store(x_ptr + base + cols, new_left.to(tl.float16))
    tl.store(x_ptr + base + HALF + cols, new_right.to(tl.float16))


# portq: ports exllama:exllama_ext/cuda_func/rope.cu::rope_cuda @3dc7cd9
def rope(x, sin, cos, rows, head_dim, num_heads, past_len):
    _rope_kernel[(rows,)](x, sin, cos, rows, head_dim, num_heads, past_len, HALF=head_dim // 2)
