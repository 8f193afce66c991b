"""Host side of the fused RoPE and KV-cache write: the padded cache layout
of a ragged decode batch, shape checks, the tile and the launch of
rope_kernels. Allocates the rotated queries; never computes on the host."""

from dataclasses import dataclass

import torch
import triton

from .rope_kernels import _rope_cache_kernel

# The widest row tile one program loads at a time.
_ROPE_MAX_TILE = 4096
_ROPE_MIN_TILE = 128


@dataclass
class PaddedKVLayout:
    """Where each batch element's tokens lie: new queries are packed
    (q_starts, length batch+1), each cache has a fixed-size slot starting at
    kv_starts[b] of which the first kv_lens[b] tokens are in use."""

    q_starts: torch.Tensor
    kv_starts: torch.Tensor
    kv_lens: torch.Tensor
    total_queries: int
    cache_tokens: int
    max_new: int

    @classmethod
    def from_lengths(cls, new_tokens, cache_used, slot_size, device="cpu"):
        """The layout of a batch whose element b adds new_tokens[b] tokens,
        has cache_used[b] tokens in its cache afterwards, in slots of slot_size."""
        if len(new_tokens) != len(cache_used):
            raise ValueError("new_tokens and cache_used must have one entry per batch element")
        if any(n > c or c > slot_size for n, c in zip(new_tokens, cache_used)):
            raise ValueError("each element needs new_tokens <= cache_used <= slot_size")
        q_starts = [0]
        for n in new_tokens:
            q_starts.append(q_starts[-1] + n)
        as_tensor = lambda xs: torch.tensor(xs, dtype=torch.int32, device=device)  # noqa: E731
        return cls(
            q_starts=as_tensor(q_starts),
            kv_starts=as_tensor([slot_size * b for b in range(len(new_tokens) + 1)]),
            kv_lens=as_tensor(list(cache_used)),
            total_queries=q_starts[-1],
            cache_tokens=slot_size * len(new_tokens),
            max_new=max(new_tokens),
        )

    def to(self, device):
        self.q_starts = self.q_starts.to(device)
        self.kv_starts = self.kv_starts.to(device)
        self.kv_lens = self.kv_lens.to(device)
        return self


# portq: ports xformers:xformers/ops/rope_padded.py::rope_padded
# portq: not-carried xformers:xformers/ops/rope_padded.py::rope_padded[out_q] -- the rotated queries are always a fresh tensor in the engine
def rope_into_cache(xq, xk, xv, k_cache, v_cache, layout, *, theta=10000.0,
                    adjacents=True, internal_dtype=""):
    """Rotate xq and xk (shape (1, tokens, heads, head_dim)), write the
    rotated keys and xv into k_cache / v_cache (shape (1, cache_tokens,
    kv_heads, head_dim), modified in place) at the tail of each element's
    used cache, and return the rotated queries."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in (xq, xk, xv, k_cache, v_cache)):
        raise ValueError("rope_into_cache is inference only: no gradients")
    if internal_dtype not in ("", "f32", "f64"):
        raise ValueError(f"internal_dtype={internal_dtype!r}: expected '', 'f32' or 'f64'")
    one, tokens, q_heads, head_dim = xq.shape
    if one != 1:
        raise ValueError("expected a leading dimension of 1: batches are packed along tokens")
    if tokens != layout.total_queries:
        raise ValueError("xq holds a different number of tokens than the layout")
    kv_heads = xk.shape[2]
    for name, t, want in (("xk", xk, tokens), ("xv", xv, tokens),
                          ("k_cache", k_cache, layout.cache_tokens),
                          ("v_cache", v_cache, layout.cache_tokens)):
        if tuple(t.shape) != (1, want, kv_heads, head_dim):
            raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {(1, want, kv_heads, head_dim)}")
    for name, t in (("xq", xq), ("xk", xk), ("xv", xv), ("k_cache", k_cache), ("v_cache", v_cache)):
        if t.stride(3) != 1:
            raise ValueError(f"each head of {name} must be contiguous")

    out = xq.new_empty(1, tokens, q_heads, head_dim)
    tile = max(min(65536 // xq.element_size(), triton.next_power_of_2(head_dim)), _ROPE_MIN_TILE)
    tile = min(tile, _ROPE_MAX_TILE)
    warps = min(max(tile // 256, 1), 8)
    layout.to(xq.device)
    heads = q_heads + 2 * kv_heads
    grid = (layout.q_starts.numel() - 1, layout.max_new, heads)
    _rope_cache_kernel[grid](
        xq, xk, xv, out, k_cache, v_cache,
        layout.q_starts, layout.kv_starts, layout.kv_lens, theta,
        q_heads, q_heads + kv_heads, head_dim,
        xq.stride(1), xq.stride(2), xk.stride(1), xk.stride(2), xv.stride(1), xv.stride(2),
        k_cache.stride(1), k_cache.stride(2), v_cache.stride(1), v_cache.stride(2),
        layout.q_starts.stride(0), layout.kv_starts.stride(0), layout.kv_lens.stride(0),
        out.stride(1), out.stride(2),
        internal_dtype,
        BLOCK=tile, PAIRS_ADJACENT=adjacents, num_warps=warps,
    )
    return out
