// nvfp4_ds_mla cache format (SM100): 352 bytes per token = 256 bytes of e2m1
// NoPE pairs, 64 unscaled e4m3 RoPE values, 32 e4m3 tile scales stored in the
// permuted order FlashMLA reads.
#include <cuda_fp8.h>
#include <cuda_bf16.h>

#include "nvfp4_ds_mla_cache.h"

namespace vllm {

__device__ __forceinline__ int nvfp4_sf_byte(int tile) {
  return 8 * (tile & 3) + (tile >> 2);
}

__device__ __forceinline__ float e2m1_to_float(uint8_t nibble) {
  constexpr float kValues[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  const float magnitude = kValues[nibble & 0x7];
  return (nibble & 0x8) ? -magnitude : magnitude;
}

// One warp per output token, 8 warps per CTA. Lane l owns NoPE tile l and the
// RoPE pair (2l, 2l+1).
__global__ void cp_gather_and_upconvert_nvfp4_kv_cache_kernel(
    const uint8_t* __restrict__ src_cache,         // [NUM_BLOCKS, BLOCK_SIZE, 352]
    __nv_bfloat16* __restrict__ dst,               // [TOT_TOKENS, 576]
    const int32_t* __restrict__ block_table,       // [BATCH, BLOCK_INDICES]
    const int32_t* __restrict__ workspace_starts,  // [BATCH]
    const int32_t num_reqs, const int32_t block_size,
    const int32_t total_tokens, const int64_t block_table_stride,
    const int64_t cache_block_stride, const int64_t cache_entry_stride,
    const int64_t dst_entry_stride) {
  const int lane = threadIdx.x % 32;
  const int out_token_id = blockIdx.x * 8 + threadIdx.x / 32;
  if (out_token_id >= total_tokens) {
    return;
  }
  int req_id = 0;
  for (int r = 1; r < num_reqs; ++r) {
    if (workspace_starts[r] <= out_token_id) {
      req_id = r;
    }
  }
  const int token_offset = out_token_id - workspace_starts[req_id];
  const int64_t physical_block =
      block_table[req_id * block_table_stride + token_offset / block_size];
  const uint8_t* entry = src_cache + physical_block * cache_block_stride +
                         (token_offset % block_size) * cache_entry_stride;
  __nv_bfloat16* out = dst + out_token_id * dst_entry_stride;

  const float scale = float(__nv_fp8_e4m3(entry[320 + nvfp4_sf_byte(lane)]));
  for (int i = 0; i < 8; ++i) {
    const uint8_t packed = entry[8 * lane + i];
    out[16 * lane + 2 * i] = __float2bfloat16(e2m1_to_float(packed & 0xF) * scale);
    out[16 * lane + 2 * i + 1] = __float2bfloat16(e2m1_to_float(packed >> 4) * scale);
  }
  out[512 + 2 * lane] = __float2bfloat16(float(__nv_fp8_e4m3(entry[256 + 2 * lane])));
  out[513 + 2 * lane] = __float2bfloat16(float(__nv_fp8_e4m3(entry[257 + 2 * lane])));
}

}  // namespace vllm

void launch_cp_gather_and_upconvert_nvfp4_kv_cache(
    torch::Tensor const& src_cache, torch::Tensor const& dst,
    torch::Tensor const& block_table, torch::Tensor const& workspace_starts,
    int64_t num_reqs, int64_t block_size, int64_t total_tokens,
    int64_t block_table_stride, int64_t cache_block_stride,
    int64_t cache_entry_stride, int64_t dst_entry_stride, cudaStream_t stream) {
  dim3 grid((total_tokens + 7) / 8);
  dim3 block(256);
  vllm::cp_gather_and_upconvert_nvfp4_kv_cache_kernel<<<grid, block, 0, stream>>>(
      src_cache.data_ptr<uint8_t>(),
      reinterpret_cast<__nv_bfloat16*>(dst.data_ptr()),
      block_table.data_ptr<int32_t>(), workspace_starts.data_ptr<int32_t>(),
      num_reqs, block_size, total_tokens, block_table_stride,
      cache_block_stride, cache_entry_stride, dst_entry_stride);
}
