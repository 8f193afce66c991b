# SPDX-License-Identifier: MIT
# Copyright (C) 2024-2026, Advanced Micro Devices, Inc. All rights reserved.

from typing import Optional

import torch
import triton

from aiter.ops.triton._triton_kernels.gather_kv_b_proj import _triton_gather_kv_b_proj


def _next_pow2(x: int) -> int:
    return 1 << (x - 1).bit_length()


def gather_kv_b_proj(
    k_buffer: torch.Tensor,  # [num_pages, page_size, kv_lora_rank + rope_dim]
    k_scale: torch.Tensor,  # [1] per-tensor cache scale
    kv_indptr: torch.Tensor,  # [batch_size + 1]
    kv_indices: torch.Tensor,  # [>= kv_indptr[-1]]
    kv_prefix_sum_context_lens: torch.Tensor,  # [batch_size + 1]
    kv_proj_weight: torch.Tensor,  # [heads * (qk_nope + v), kv_lora_rank]
    kv_proj_scale: Optional[torch.Tensor],
    k_prefix: torch.Tensor,  # [total_tokens, heads, qk_nope + rope_dim]
    v_prefix: torch.Tensor,  # [total_tokens, heads, v_head_dim]
    weight_preshuffle: bool = False,
    shuffled_kv_cache: bool = False,
) -> None:
    batch_size = kv_indptr.shape[0] - 1
    num_heads = k_prefix.shape[1]
    v_head_dim = v_prefix.shape[2]
    qk_nope_head_dim = kv_proj_weight.shape[0] // num_heads - v_head_dim
    rope_dim = k_prefix.shape[2] - qk_nope_head_dim
    page_size = k_buffer.shape[1]
    is_fp4 = kv_proj_weight.dtype == torch.float4_e2m1fn_x2
    kv_c_dim = kv_proj_weight.shape[1] * (2 if is_fp4 else 1)
    assert k_prefix.shape[0] == v_prefix.shape[0]
    assert k_prefix.shape[1] == v_prefix.shape[1]

    if shuffled_kv_cache:
        # One page per chunk: the shuffled layout interleaves a page's tokens.
        assert page_size % 16 == 0
        chunk_k = page_size
    elif is_fp4:
        chunk_k = 64
    else:
        chunk_k = 16 if k_buffer.dtype in (torch.bfloat16, torch.float16) else 32
    assert chunk_k % page_size == 0

    no_scale = kv_proj_scale is None
    per_row_scale = not no_scale and (
        kv_proj_scale.dim() == 1 or kv_proj_scale.shape[-1] == 1)
    total_tokens = k_prefix.shape[0]
    if is_fp4:
        # Sized from the output rows, not from kv_indices, which may be a
        # preallocated buffer far larger than the valid prefix.
        num_chunks = max(1, triton.cdiv(total_tokens, chunk_k))
        grid = (batch_size * num_heads * num_chunks,)
    else:
        grid = (batch_size * num_heads,)

    _triton_gather_kv_b_proj[grid](
        batch_size,
        k_buffer,
        k_scale,
        kv_indptr,
        kv_indices,
        kv_prefix_sum_context_lens,
        kv_proj_weight,
        kv_proj_weight if no_scale else kv_proj_scale,
        k_prefix,
        v_prefix,
        KBlockSize=page_size,
        TpNumHeads=num_heads,
        QkNopeHeadDim=qk_nope_head_dim,
        VHeadDim=v_head_dim,
        KV_CDim=kv_c_dim,
        KV_PeDim=rope_dim,
        ChunkK=chunk_k,
        PaddedK=_next_pow2(qk_nope_head_dim),
        PaddedV=_next_pow2(v_head_dim),
        ScaleCols=kv_proj_scale.shape[1] if is_fp4 else 1,
        IS_FP4=is_fp4,
        WEIGHT_PRESHUFFLE=weight_preshuffle,
        PER_ROW_SCALE=per_row_scale,
        NO_SCALE=no_scale,
        SHUFFLED_KV_CACHE=shuffled_kv_cache,
        num_stages=3,
    )
