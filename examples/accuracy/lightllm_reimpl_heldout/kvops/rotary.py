"""The NeoX (rotate-half) rotary embedding, applied in place to packed
tokens [tokens, heads, head_dim] from per-token cos/sin [tokens, head_dim/2].

Holds the kernel and its launcher; the cos/sin tables are the caller's.
"""

import torch
import triton
import triton.language as tl

# Heads and tokens one program rotates.
HEADS_PER_PROGRAM = 4
TOKENS_PER_PROGRAM = 32


# portq: ports lightllm:lightllm/models/llama/triton_kernel/rotary_emb.py::_rotary_kernel
@triton.jit
def rotary_inplace_kernel(
    x, cos, sin,
    x_tok_stride, x_head_stride, x_dim_stride,
    cos_tok_stride, cos_dim_stride,
    sin_tok_stride, sin_dim_stride,
    n_tokens, n_heads,
    HEADS: tl.constexpr, TOKENS: tl.constexpr, HEAD_DIM: tl.constexpr,
):
    heads = tl.program_id(0) * HEADS + tl.arange(0, HEADS)
    toks = tl.program_id(1) * TOKENS + tl.arange(0, TOKENS)
    half = tl.arange(0, HEAD_DIM // 2)
    base = toks[:, None, None] * x_tok_stride + heads[None, :, None] * x_head_stride
    lo_ptr = x + base + half[None, None, :] * x_dim_stride
    hi_ptr = x + base + (half[None, None, :] + HEAD_DIM // 2) * x_dim_stride
    tok_ok = toks[:, None, None] < n_tokens
    ok = tok_ok & (heads[None, :, None] < n_heads)
    lo = tl.load(lo_ptr, mask=ok, other=0.0)
    hi = tl.load(hi_ptr, mask=ok, other=0.0)
    c = tl.load(cos + toks[:, None, None] * cos_tok_stride + half[None, None, :] * cos_dim_stride,
                mask=tok_ok, other=0.0)
    s = tl.load(sin + toks[:, None, None] * sin_tok_stride + half[None, None, :] * sin_dim_stride,
                mask=tok_ok, other=0.0)
    tl.store(lo_ptr, lo * c - hi * s, mask=ok)
    tl.store(hi_ptr, lo * s + hi * c, mask=ok)


# portq: ports lightllm:lightllm/models/llama/triton_kernel/rotary_emb.py::rotary_emb_fwd
@torch.no_grad()
def apply_rotary_inplace(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> None:
    """Rotate x [tokens, heads, head_dim] in place by the rows of cos and sin."""
    n_tokens, n_heads, head_dim = x.shape
    if cos.shape[0] != n_tokens or sin.shape[0] != n_tokens:
        raise ValueError(f"apply_rotary_inplace: {n_tokens} tokens but cos {tuple(cos.shape)}, sin {tuple(sin.shape)}")
    grid = (triton.cdiv(n_heads, HEADS_PER_PROGRAM), triton.cdiv(n_tokens, TOKENS_PER_PROGRAM))
    rotary_inplace_kernel[grid](
        x, cos, sin,
        x.stride(0), x.stride(1), x.stride(2),
        cos.stride(0), cos.stride(1),
        sin.stride(0), sin.stride(1),
        n_tokens, n_heads,
        HEADS=HEADS_PER_PROGRAM, TOKENS=TOKENS_PER_PROGRAM, HEAD_DIM=head_dim,
        num_warps=8 if head_dim >= 128 else 4, num_stages=1,
    )
