# SPDX-License-Identifier: MIT
# Copyright (C) 2024-2026, Advanced Micro Devices, Inc. All rights reserved.

import pytest
import torch

from aiter.ops.triton.gather_kv_b_proj import gather_kv_b_proj
from aiter.test_common import checkAllclose


def ref_gather_kv_b_proj(k_buffer, k_scale, kv_indptr, kv_indices, cu, weight,
                         weight_scale, num_heads, qk_nope, v_dim):
    page_size = k_buffer.shape[1]
    rows = []
    for b in range(kv_indptr.numel() - 1):
        n = int(cu[b + 1] - cu[b])
        i = torch.arange(n, device=k_buffer.device)
        pages = kv_indices[int(kv_indptr[b]) + i // page_size].long()
        rows.append(k_buffer[pages, i % page_size].float())
    lat = torch.cat(rows)
    out = lat[:, :512] @ (weight.float() * weight_scale.float().repeat_interleave(128, 0)
                          .repeat_interleave(128, 1)).T
    return out.view(-1, num_heads, qk_nope + v_dim) * k_scale.float()


@pytest.mark.parametrize("batch, page_size, num_tp, dtype, ctx", [
    (4, 1, 4, torch.float8_e4m3fn, 512),
    (8, 16, 4, torch.float8_e4m3fn, 1024),
    (1, 1, 4, torch.bfloat16, 512),
])
def test_gather_kv_b_proj(batch, page_size, num_tp, dtype, ctx, perf=False):
    num_heads, qk_nope, v_dim = 128 // num_tp, 128, 128
    lens = torch.randint(int(0.8 * ctx), int(1.2 * ctx), (batch,), dtype=torch.int32)
    cu = torch.zeros(batch + 1, dtype=torch.int32)
    torch.cumsum(lens, 0, out=cu[1:])
    pages = (lens + page_size - 1) // page_size
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32)
    torch.cumsum(pages, 0, out=kv_indptr[1:])
    num_pages = int(kv_indptr[-1])
    kv_indices = torch.randperm(num_pages, dtype=torch.int32)
    k_buffer = torch.randn(num_pages, page_size, 576).to(dtype).cuda()
    weight = torch.randn(num_heads * (qk_nope + v_dim), 512).to(torch.float8_e4m3fn).cuda()
    scale = torch.rand(num_heads * (qk_nope + v_dim) // 128, 4).cuda()
    k_scale = torch.tensor([0.5], device="cuda")
    k_prefix = torch.zeros(int(cu[-1]), num_heads, qk_nope + 64, dtype=torch.bfloat16, device="cuda")
    v_prefix = torch.zeros(int(cu[-1]), num_heads, v_dim, dtype=torch.bfloat16, device="cuda")
    gather_kv_b_proj(k_buffer, k_scale, kv_indptr.cuda(), kv_indices.cuda(), cu.cuda(),
                     weight, scale, k_prefix, v_prefix)
    ref = ref_gather_kv_b_proj(k_buffer, k_scale, kv_indptr, kv_indices, cu, weight, scale,
                               num_heads, qk_nope, v_dim)
    checkAllclose(k_prefix[..., :qk_nope].float(), ref[..., :qk_nope], atol=1e-2, rtol=1e-2)


if __name__ == "__main__":
    test_gather_kv_b_proj(8, 16, 4, torch.float8_e4m3fn, 32000, perf=True)
