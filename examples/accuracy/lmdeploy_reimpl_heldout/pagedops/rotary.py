"""Rotary embedding of queries and keys laid out [tokens, heads, head_dim],
rotate-half form, cos/sin rows gathered by each token's position id.

Each tensor gets its own launch, whatever the head counts; the caller gives
one-dimensional position ids, one per packed token.
"""

import torch
import triton
import triton.language as tl

# Tokens one program rotates.
ROTARY_TOKENS_PER_PROGRAM = 32


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/apply_rotary_pos_emb.py::apply_rotary_pos_emb_kernel
@triton.jit
def rotate_half_kernel(x, cos, sin, positions, out, n_tokens,
                       token_stride: tl.constexpr, TOKENS: tl.constexpr, HALF: tl.constexpr):
    block = tl.program_id(0)
    head = tl.program_id(1)
    toks = block * TOKENS + tl.arange(0, TOKENS)
    in_range = toks < n_tokens
    pos = tl.load(positions + toks, in_range, other=-1)
    lo = tl.arange(0, HALF)
    hi = HALF + lo
    has_pos = pos[:, None] >= 0
    row = pos[:, None] * (2 * HALF)
    c_lo = tl.load(cos + row + lo[None, :], mask=has_pos)
    c_hi = tl.load(cos + row + hi[None, :], mask=has_pos)
    s_lo = tl.load(sin + row + lo[None, :], mask=has_pos)
    s_hi = tl.load(sin + row + hi[None, :], mask=has_pos)
    base = toks[:, None] * token_stride + head * (2 * HALF)
    keep = in_range[:, None]
    a = tl.load(x + base + lo[None, :], mask=keep)
    b = tl.load(x + base + hi[None, :], mask=keep)
    tl.store(out + base + lo[None, :], a * c_lo - b * s_lo, mask=keep)
    tl.store(out + base + hi[None, :], b * c_hi + a * s_hi, mask=keep)


def _rotate_one(x: torch.Tensor, cos, sin, positions, out: torch.Tensor) -> None:
    n_tokens = positions.shape[-1]
    grid = (triton.cdiv(n_tokens, ROTARY_TOKENS_PER_PROGRAM), x.shape[-2])
    rotate_half_kernel[grid](x, cos, sin, positions, out, n_tokens,
                             token_stride=x.stride(-3), TOKENS=ROTARY_TOKENS_PER_PROGRAM,
                             HALF=x.shape[-1] // 2, num_warps=4, num_stages=2)


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/apply_rotary_pos_emb.py::apply_rotary_pos_emb
# portq: not-carried lmdeploy:lmdeploy/pytorch/kernels/apply_rotary_pos_emb.py::apply_rotary_pos_emb_qk_kernel -- queries and keys are rotated by one launch each, equal head counts or not
# portq: not-carried lmdeploy:lmdeploy/pytorch/kernels/apply_rotary_pos_emb.py::apply_rotary_pos_emb[position_ids] -- the scheduler hands packed one-dimensional positions; no padded [batch, seq] ids
@torch.no_grad()
def rotate_qk(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
              positions: torch.Tensor, q_out: torch.Tensor | None = None,
              k_out: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """q and k rotated by cos/sin[positions] ([max_pos, head_dim] tables);
    q_out/k_out may be q/k themselves for an in-place rotation."""
    q, k = q.contiguous(), k.contiguous()
    cos = cos.to(device=q.device, dtype=q.dtype)
    sin = sin.to(device=q.device, dtype=q.dtype)
    q_out = torch.empty_like(q) if q_out is None else q_out
    k_out = torch.empty_like(k) if k_out is None else k_out
    _rotate_one(q, cos, sin, positions, q_out)
    _rotate_one(k, cos, sin, positions, k_out)
    return q_out, k_out
