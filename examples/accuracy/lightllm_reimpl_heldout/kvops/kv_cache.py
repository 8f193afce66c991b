"""Writes the new tokens' keys or values [tokens, heads, head_dim] into the
cache at the slots the allocator chose, one program per token.

The cache keeps fp16/fp32 entries only: the int8 cache with per-head scales
is not carried.
"""

import torch
import triton
import triton.language as tl


# portq: ports lightllm:lightllm/common/basemodel/triton_kernel/destindex_copy_kv.py::_fwd_kernel_destindex_copy_kv
@triton.jit
def scatter_kv_kernel(
    src, slots, cache,
    src_tok_stride, src_head_stride, src_dim_stride,
    cache_slot_stride, cache_head_stride, cache_dim_stride,
    n_heads,
    HEAD_DIM: tl.constexpr, HEADS: tl.constexpr,
):
    tok = tl.program_id(0)
    heads = tl.arange(0, HEADS)
    dims = tl.arange(0, HEAD_DIM)
    slot = tl.load(slots + tok)
    ok = heads[:, None] < n_heads
    row = tl.load(src + tok * src_tok_stride + heads[:, None] * src_head_stride + dims[None, :] * src_dim_stride,
                  mask=ok, other=0.0)
    tl.store(cache + slot * cache_slot_stride + heads[:, None] * cache_head_stride + dims[None, :] * cache_dim_stride,
             row, mask=ok)


# portq: ports lightllm:lightllm/common/basemodel/triton_kernel/destindex_copy_kv.py::destindex_copy_kv
# portq: not-carried lightllm:lightllm/common/basemodel/triton_kernel/destindex_copy_kv.py::_fwd_kernel_destindex_copy_quantize_kv -- no int8 cache: entries are kept in the model's dtype
# portq: not-carried lightllm:lightllm/common/basemodel/triton_kernel/destindex_copy_kv.py::destindex_copy_quantize_kv -- no int8 cache
@torch.no_grad()
def scatter_kv(src: torch.Tensor, slots: torch.Tensor, cache: torch.Tensor) -> None:
    """cache[slots[i]] = src[i] for every token i."""
    n_heads, head_dim = src.shape[1], src.shape[2]
    if cache.shape[1] != n_heads or cache.shape[2] != head_dim:
        raise ValueError(f"scatter_kv: src {tuple(src.shape)} does not fit cache {tuple(cache.shape)}")
    scatter_kv_kernel[(slots.shape[0],)](
        src, slots, cache,
        src.stride(0), src.stride(1), src.stride(2),
        cache.stride(0), cache.stride(1), cache.stride(2),
        n_heads,
        HEAD_DIM=head_dim, HEADS=triton.next_power_of_2(n_heads),
        num_warps=1, num_stages=1,
    )


def scatter_kv_pair(keys: torch.Tensor, values: torch.Tensor, slots: torch.Tensor,
                    key_cache: torch.Tensor, value_cache: torch.Tensor) -> None:
    """Both halves of one layer's new entries into their caches at the same slots."""
    scatter_kv(keys, slots, key_cache)
    scatter_kv(values, slots, value_cache)
