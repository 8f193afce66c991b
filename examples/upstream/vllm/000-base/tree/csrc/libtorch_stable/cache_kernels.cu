// Paged KV-cache kernels for MLA: the cache write (concat_and_cache_mla), the
// context gather with optional fp8 dequantisation, the raw context-parallel
// gather and the fp8_ds_mla upconvert used by the sparse prefill.
#include <torch/all.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <optional>
#include <string>

#include "cuda_compat.h"
#include "dispatch_utils.h"
#include "nvfp4_ds_mla_cache.h"
#include "quantization/w8a8/fp8/nvidia/quant_utils.cuh"

namespace vllm {

template <typename scalar_t, typename cache_t, Fp8KVCacheDataType kv_dt>
__global__ void concat_and_cache_mla_kernel(
    const scalar_t* __restrict__ kv_c,       // [num_tokens, kv_lora_rank]
    const scalar_t* __restrict__ k_pe,       // [num_tokens, pe_dim]
    cache_t* __restrict__ kv_cache,          // [num_blocks, block_size, entry]
    const int64_t* __restrict__ slot_mapping,  // [num_tokens]
    const int block_stride, const int entry_stride, const int kv_c_stride,
    const int k_pe_stride, const int kv_lora_rank, const int pe_dim,
    const int block_size, const float* scale) {
  const int64_t token_idx = blockIdx.x;
  const int64_t slot_idx = slot_mapping[token_idx];
  // A negative slot is a padding token of a CUDA-graph batch.
  if (slot_idx < 0) {
    return;
  }
  const int block_idx = slot_idx / block_size;
  const int block_offset = slot_idx % block_size;
  const int dst_base = block_idx * block_stride + block_offset * entry_stride;

  for (int i = threadIdx.x; i < kv_lora_rank; i += blockDim.x) {
    const scalar_t value = kv_c[token_idx * kv_c_stride + i];
    if constexpr (kv_dt == Fp8KVCacheDataType::kAuto) {
      kv_cache[dst_base + i] = value;
    } else {
      kv_cache[dst_base + i] =
          fp8::scaled_convert<cache_t, scalar_t, kv_dt>(value, *scale);
    }
  }
  for (int i = threadIdx.x; i < pe_dim; i += blockDim.x) {
    const scalar_t value = k_pe[token_idx * k_pe_stride + i];
    if constexpr (kv_dt == Fp8KVCacheDataType::kAuto) {
      kv_cache[dst_base + kv_lora_rank + i] = value;
    } else {
      kv_cache[dst_base + kv_lora_rank + i] =
          fp8::scaled_convert<cache_t, scalar_t, kv_dt>(value, *scale);
    }
  }
}

// One CTA per output token. token_to_seq maps every output token back to the
// request it belongs to; the host builds it with repeat_interleave.
template <typename scalar_t, typename cache_t, Fp8KVCacheDataType kv_dt,
          int ENTRY_SIZE, int CTA_SIZE>
__global__ void gather_and_maybe_dequant_cache(
    const cache_t* __restrict__ src_cache,     // [NUM_BLOCKS, BLOCK_SIZE, ENTRY]
    scalar_t* __restrict__ dst,                // [TOT_TOKENS, ENTRY]
    const int32_t* __restrict__ block_table,   // [BATCH, BLOCK_INDICES]
    const int32_t* __restrict__ cu_seq_lens,   // [BATCH+1]
    const int32_t* __restrict__ token_to_seq,  // [MAX_TOKEN_ACROSS_CHUNK]
    const int32_t num_tokens, const int32_t block_size,
    const int64_t block_table_stride, const int64_t cache_block_stride,
    const int64_t cache_entry_stride, const int64_t dst_entry_stride,
    const float* __restrict__ scale,
    const int32_t* __restrict__ seq_starts) {  // nullptr: start at token 0
  for (int token_id = blockIdx.x; token_id < num_tokens;
       token_id += gridDim.x) {
    const int batch_id = token_to_seq[token_id];
    const int batch_start = cu_seq_lens[batch_id];
    const int batch_end = cu_seq_lens[batch_id + 1];
    if (token_id >= batch_end) {
      return;
    }
    int offset = token_id - batch_start;
    if (seq_starts != nullptr) {
      offset += seq_starts[batch_id];
    }
    const int32_t logical_block = offset / block_size;
    const int32_t slot = offset % block_size;
    const int64_t physical_block =
        block_table[batch_id * block_table_stride + logical_block];
    const cache_t* src = src_cache + physical_block * cache_block_stride +
                         slot * cache_entry_stride;
    scalar_t* out = dst + token_id * dst_entry_stride;
    for (int idx = threadIdx.x; idx < ENTRY_SIZE; idx += CTA_SIZE) {
      if constexpr (kv_dt == Fp8KVCacheDataType::kAuto) {
        out[idx] = src[idx];
      } else {
        out[idx] = fp8::scaled_convert<scalar_t, cache_t, kv_dt>(src[idx], *scale);
      }
    }
  }
}

// Raw byte copy for the DCP path: grid (batch, split), each split walks its
// share of one request serially.
template <typename T>
__global__ void cp_gather_cache(
    const T* __restrict__ src_cache,          // [NUM_BLOCKS, BLOCK_SIZE, ENTRY]
    T* __restrict__ dst,                      // [TOT_TOKENS, ENTRY]
    const int32_t* __restrict__ block_table,  // [BATCH, BLOCK_INDICES]
    const int32_t* __restrict__ cu_seq_lens,  // [BATCH+1]
    const int32_t block_size, const int32_t entry_size,
    const int64_t block_table_stride, const int64_t cache_block_stride,
    const int64_t cache_entry_stride, const int64_t dst_entry_stride,
    const int32_t* __restrict__ seq_starts) {
  const int64_t bid = blockIdx.x;
  const int32_t split = blockIdx.y;
  const int32_t seq_start = cu_seq_lens[bid];
  const int32_t seq_len = cu_seq_lens[bid + 1] - seq_start;
  const int32_t tokens_per_split = (seq_len + gridDim.y - 1) / gridDim.y;
  const int32_t split_start = split * tokens_per_split;
  const int32_t split_end = min((split + 1) * tokens_per_split, seq_len);
  const int32_t offset = seq_starts != nullptr ? seq_starts[bid] : 0;
  for (int32_t t = split_start; t < split_end; ++t) {
    const int32_t pos = offset + t;
    const int64_t physical_block =
        block_table[bid * block_table_stride + pos / block_size];
    const T* src = src_cache + physical_block * cache_block_stride +
                   (pos % block_size) * cache_entry_stride;
    T* out = dst + (seq_start + t) * dst_entry_stride;
    for (int i = threadIdx.x; i < entry_size; i += blockDim.x) {
      out[i] = src[i];
    }
  }
}

// fp8_ds_mla (656 bytes: 512 e4m3, 4 fp32 tile scales, 64 bf16 rope) to bf16
// 576. One warp per output token; the owning request is found by binary search
// over workspace_starts.
__global__ void cp_gather_and_upconvert_fp8_kv_cache(
    const uint8_t* __restrict__ src_cache,          // [NUM_BLOCKS, BLOCK_SIZE, 656]
    __nv_bfloat16* __restrict__ dst,                // [TOT_TOKENS, 576]
    const int32_t* __restrict__ block_table,        // [BATCH, BLOCK_INDICES]
    const int32_t* __restrict__ seq_lens,           // [BATCH]
    const int32_t* __restrict__ workspace_starts,   // [BATCH]
    const int32_t num_reqs, const int32_t block_size,
    const int32_t total_tokens, const int64_t block_table_stride,
    const int64_t cache_block_stride, const int64_t cache_entry_stride,
    const int64_t dst_entry_stride) {
  const int warp_id = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int out_token = blockIdx.x * 8 + warp_id;
  if (out_token >= total_tokens) {
    return;
  }
  int lo = 0, hi = num_reqs - 1, req = 0;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    if (workspace_starts[mid] <= out_token) {
      req = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const int token_offset = out_token - workspace_starts[req];
  const int64_t physical_block =
      block_table[req * block_table_stride + token_offset / block_size];
  const uint8_t* entry = src_cache + physical_block * cache_block_stride +
                         (token_offset % block_size) * cache_entry_stride;
  const float* tile_scales = reinterpret_cast<const float*>(entry + 512);
  __nv_bfloat16* out = dst + out_token * dst_entry_stride;
  for (int i = lane * 16; i < lane * 16 + 16; ++i) {
    out[i] = __float2bfloat16(fp8::e4m3_to_float(entry[i]) * tile_scales[i / 128]);
  }
  const uint32_t* rope = reinterpret_cast<const uint32_t*>(entry + 528);
  reinterpret_cast<uint32_t*>(out + 512)[lane] = rope[lane];
}

}  // namespace vllm

void concat_and_cache_mla(torch::Tensor& kv_c, torch::Tensor& k_pe,
                          torch::Tensor& kv_cache, torch::Tensor& slot_mapping,
                          const std::string& kv_cache_dtype,
                          torch::Tensor& scale) {
  const int num_tokens = slot_mapping.size(0);
  const int kv_lora_rank = kv_c.size(1);
  const int pe_dim = k_pe.size(1);
  const int block_size = kv_cache.size(1);
  TORCH_CHECK(kv_cache.size(2) == kv_lora_rank + pe_dim,
              "kv_cache entry must hold kv_c and k_pe");
  dim3 grid(num_tokens);
  dim3 block(std::min(kv_lora_rank, 512));
  const at::cuda::OptionalCUDAGuard device_guard(device_of(kv_c));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  DISPATCH_BY_KV_CACHE_DTYPE(kv_c.dtype(), kv_cache_dtype, [&] {
    vllm::concat_and_cache_mla_kernel<scalar_t, cache_t, kv_dt>
        <<<grid, block, 0, stream>>>(
            kv_c.data_ptr<scalar_t>(), k_pe.data_ptr<scalar_t>(),
            kv_cache.data_ptr<cache_t>(), slot_mapping.data_ptr<int64_t>(),
            kv_cache.stride(0), kv_cache.stride(1), kv_c.stride(0),
            k_pe.stride(0), kv_lora_rank, pe_dim, block_size,
            scale.data_ptr<float>());
  });
}

void gather_and_maybe_dequant_cache(
    torch::Tensor const& src_cache,     // [NUM_BLOCKS, BLOCK_SIZE, ENTRIES...]
    torch::Tensor const& dst,           // [TOT_TOKENS, ENTRIES...]
    torch::Tensor const& block_table,   // [BATCH, BLOCK_INDICES]
    torch::Tensor const& cu_seq_lens,   // [BATCH+1]
    torch::Tensor const& token_to_seq,  // [MAX_TOKEN_ACROSS_CHUNKS]
    int64_t num_tokens, const std::string& kv_cache_dtype,
    torch::Tensor const& scale,
    std::optional<torch::Tensor> seq_starts = std::nullopt) {
  const at::cuda::OptionalCUDAGuard device_guard(device_of(src_cache));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int32_t block_size = src_cache.size(1);
  const int32_t entry_size = dst.size(-1);
  TORCH_CHECK(entry_size == 576 || entry_size == 320,
              "gather_and_maybe_dequant_cache: unsupported entry size");
  TORCH_CHECK(block_table.dtype() == torch::kInt32, "block_table must be int32");
  TORCH_CHECK(cu_seq_lens.dtype() == torch::kInt32, "cu_seq_lens must be int32");
  TORCH_CHECK(token_to_seq.dtype() == torch::kInt32, "token_to_seq must be int32");

  constexpr int32_t thread_block_size = 64;
  dim3 grid(num_tokens);
  dim3 block(thread_block_size);
  const int32_t* seq_starts_ptr =
      seq_starts.has_value() ? seq_starts->data_ptr<int32_t>() : nullptr;

  DISPATCH_BY_KV_CACHE_DTYPE(dst.dtype(), kv_cache_dtype, [&] {
    vllm::gather_and_maybe_dequant_cache<scalar_t, cache_t, kv_dt, 576,
                                         thread_block_size>
        <<<grid, block, 0, stream>>>(
            reinterpret_cast<cache_t*>(src_cache.data_ptr()),
            reinterpret_cast<scalar_t*>(dst.data_ptr()),
            block_table.data_ptr<int32_t>(), cu_seq_lens.data_ptr<int32_t>(),
            token_to_seq.data_ptr<int32_t>(), num_tokens, block_size,
            block_table.stride(0), src_cache.stride(0), src_cache.stride(1),
            dst.stride(0), reinterpret_cast<const float*>(scale.data_ptr()),
            seq_starts_ptr);
  });
}

void cp_gather_cache(
    torch::Tensor const& src_cache,    // [NUM_BLOCKS, BLOCK_SIZE, ENTRIES...]
    torch::Tensor const& dst,          // [TOT_TOKENS, ENTRIES...]
    torch::Tensor const& block_table,  // [BATCH, BLOCK_INDICES]
    torch::Tensor const& cu_seq_lens,  // [BATCH+1]
    int64_t batch_size,
    std::optional<torch::Tensor> seq_starts = std::nullopt) {
  const at::cuda::OptionalCUDAGuard device_guard(device_of(src_cache));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int32_t block_size = src_cache.size(1);
  const int32_t entry_size = src_cache.numel() / (src_cache.size(0) * block_size);
  TORCH_CHECK(src_cache.dtype() == dst.dtype(), "src_cache and dst must match");

  const int num_splits = batch_size > 128 ? 2 : batch_size > 64 ? 4 : 16;
  dim3 grid(batch_size, num_splits);
  dim3 block(1024);
  const int32_t* seq_starts_ptr =
      seq_starts.has_value() ? seq_starts->data_ptr<int32_t>() : nullptr;

  vllm::cp_gather_cache<uint8_t><<<grid, block, 0, stream>>>(
      reinterpret_cast<uint8_t*>(src_cache.data_ptr()),
      reinterpret_cast<uint8_t*>(dst.data_ptr()),
      block_table.data_ptr<int32_t>(), cu_seq_lens.data_ptr<int32_t>(),
      block_size, entry_size * src_cache.element_size(), block_table.stride(0),
      src_cache.stride(0) * src_cache.element_size(),
      src_cache.stride(1) * src_cache.element_size(),
      dst.stride(0) * dst.element_size(), seq_starts_ptr);
}

void cp_gather_and_upconvert_fp8_kv_cache(
    torch::Tensor const& src_cache,         // [NUM_BLOCKS, BLOCK_SIZE, 656]
    torch::Tensor const& dst,               // [TOT_TOKENS, 576]
    torch::Tensor const& block_table,       // [BATCH, BLOCK_INDICES]
    torch::Tensor const& seq_lens,          // [BATCH]
    torch::Tensor const& workspace_starts,  // [BATCH]
    int64_t batch_size) {
  const at::cuda::OptionalCUDAGuard device_guard(device_of(src_cache));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  TORCH_CHECK(dst.dtype() == torch::kBFloat16, "dst must be bfloat16");
  TORCH_CHECK(dst.size(1) == 576, "dst rows must hold 576 values");
  TORCH_CHECK(seq_lens.dtype() == torch::kInt32, "seq_lens must be int32");
  TORCH_CHECK(workspace_starts.dtype() == torch::kInt32,
              "workspace_starts must be int32");
  const int32_t total_tokens = dst.size(0);
  dim3 grid((total_tokens + 7) / 8);
  dim3 block(256);
  vllm::cp_gather_and_upconvert_fp8_kv_cache<<<grid, block, 0, stream>>>(
      src_cache.data_ptr<uint8_t>(),
      reinterpret_cast<__nv_bfloat16*>(dst.data_ptr()),
      block_table.data_ptr<int32_t>(), seq_lens.data_ptr<int32_t>(),
      workspace_starts.data_ptr<int32_t>(), batch_size, src_cache.size(1),
      total_tokens, block_table.stride(0), src_cache.stride(0),
      src_cache.stride(1), dst.stride(0));
}

void cp_gather_and_upconvert_nvfp4_kv_cache(
    torch::Tensor const& src_cache,         // [NUM_BLOCKS, BLOCK_SIZE, 352]
    torch::Tensor const& dst,               // [TOT_TOKENS, 576]
    torch::Tensor const& block_table,       // [BATCH, BLOCK_INDICES]
    torch::Tensor const& workspace_starts,  // [BATCH]
    int64_t batch_size) {
  TORCH_CHECK(src_cache.dtype() == torch::kUInt8, "src_cache must be uint8");
  TORCH_CHECK(src_cache.size(2) == 352, "nvfp4_ds_mla entries are 352 bytes");
  TORCH_CHECK(dst.dtype() == torch::kBFloat16, "dst must be bfloat16");
  const at::cuda::OptionalCUDAGuard device_guard(device_of(src_cache));
  launch_cp_gather_and_upconvert_nvfp4_kv_cache(
      src_cache, dst, block_table, workspace_starts, batch_size,
      src_cache.size(1), dst.size(0), block_table.stride(0),
      src_cache.stride(0), src_cache.stride(1), dst.stride(0),
      at::cuda::getCurrentCUDAStream());
}

void swap_blocks(torch::Tensor& src, torch::Tensor& dst,
                 const torch::Tensor& block_mapping) {
  TORCH_CHECK(block_mapping.device().is_cpu(), "block_mapping must be on CPU");
  const int64_t block_size_in_bytes = src.element_size() * src[0].numel();
  char* src_ptr = static_cast<char*>(src.data_ptr());
  char* dst_ptr = static_cast<char*>(dst.data_ptr());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  for (int64_t i = 0; i < block_mapping.size(0); ++i) {
    const int64_t src_block = block_mapping[i][0].item<int64_t>();
    const int64_t dst_block = block_mapping[i][1].item<int64_t>();
    cudaMemcpyAsync(dst_ptr + dst_block * block_size_in_bytes,
                    src_ptr + src_block * block_size_in_bytes,
                    block_size_in_bytes, cudaMemcpyDefault, stream);
  }
}
