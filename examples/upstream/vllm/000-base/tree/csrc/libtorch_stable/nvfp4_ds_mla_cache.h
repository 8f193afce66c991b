#pragma once

#include <torch/all.h>
#include <cuda_runtime.h>

void launch_cp_gather_and_upconvert_nvfp4_kv_cache(
    torch::Tensor const& src_cache, torch::Tensor const& dst,
    torch::Tensor const& block_table, torch::Tensor const& workspace_starts,
    int64_t num_reqs, int64_t block_size, int64_t total_tokens,
    int64_t block_table_stride, int64_t cache_block_stride,
    int64_t cache_entry_stride, int64_t dst_entry_stride, cudaStream_t stream);
