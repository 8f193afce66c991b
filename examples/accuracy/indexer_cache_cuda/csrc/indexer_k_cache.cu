// DeepSeek-V3.2 sparse-indexer key cache for NVIDIA GPUs: a CUDA port of
// aiter's HIP kernels in csrc/kernels/cache_kernels.cu.
//
// Each token's indexer key (head_dim values, bf16/fp16) is quantised to fp8
// e4m3 in blocks of quant_block_size with one fp32 scale per block, and
// written into a paged cache whose blocks hold block_size keys followed by
// their scales: [block_size * head_dim fp8 | block_size * head_dim /
// quant_block_size fp32]. The gather copies a batch's keys and scales back
// out, token by token, through the block table.
//
// Differences from upstream, by design: warp shuffles instead of AMD DPP for
// the amax reduction; 32-lane warps; plain row-major blocks only.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <torch/all.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace dsv32 {

template <int LANES>
__device__ __forceinline__ float lane_group_max(float value)
{
#pragma unroll
    for(int offset = LANES / 2; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset, LANES));
    return value;
}

// portq: ports aiter:csrc/kernels/cache_kernels.cu::indexer_k_quant_and_cache_kernel @180eaf5331
// portq: not-carried aiter:csrc/kernels/cache_kernels.cu::indexer_k_quant_and_cache_kernel[preshuffle] -- AMD MFMA 16x16 tile layout; NVIDIA caches stay row-major
template <typename scalar_t, int BLOCK_X_SIZE, int BLOCK_Y_SIZE, int VEC_SIZE>
__global__ void indexer_k_quant_and_cache_kernel(
    const scalar_t* __restrict__ k,           // [num_tokens, head_dim]
    uint8_t* __restrict__ kv_cache,           // [num_blocks, block_size, cache_stride]
    const int64_t* __restrict__ slot_mapping, // [num_tokens]
    const int num_tokens,
    const int head_dim,
    const int quant_block_size,
    const int cache_block_size,
    const int cache_stride,
    const bool use_ue8m0)
{
    // One row of BLOCK_X_SIZE lanes quantises one block of one token.
    const int blocks_per_token = head_dim / quant_block_size;
    const int row              = blockIdx.x * BLOCK_Y_SIZE + threadIdx.y;
    const int64_t token        = row / blocks_per_token;
    if(token >= num_tokens)
        return;
    const int col      = row % blocks_per_token * quant_block_size + threadIdx.x * VEC_SIZE;
    const int64_t slot = slot_mapping[token];
    if(slot < 0 || col >= head_dim) // padded token, or lanes past the head
        return;
    const int64_t page = slot / cache_block_size;
    const int64_t pos  = slot % cache_block_size;

    float values[VEC_SIZE];
    float amax = 0.0f;
#pragma unroll
    for(int i = 0; i < VEC_SIZE; ++i)
    {
        values[i] = static_cast<float>(k[token * head_dim + col + i]);
        amax      = fmaxf(amax, fabsf(values[i]));
    }
    amax = lane_group_max<BLOCK_X_SIZE>(amax);

    float scale = fmaxf(amax, 1e-4f) / 448.0f; // e4m3 max
    if(use_ue8m0)
        scale = exp2f(ceilf(log2f(scale)));

    uint8_t* page_base = kv_cache + page * cache_block_size * cache_stride;
    if(threadIdx.x == 0)
    {
        float* scales = reinterpret_cast<float*>(page_base + cache_block_size * head_dim);
        scales[(pos * head_dim + col) / quant_block_size] = scale;
    }
    const float inv = 1.0f / scale;
#pragma unroll
    for(int i = 0; i < VEC_SIZE; ++i)
    {
        __nv_fp8_e4m3 q(values[i] * inv);
        page_base[pos * head_dim + col + i] = q.__x;
    }
}

// portq: ports aiter:csrc/kernels/cache_kernels.cu::cp_gather_indexer_k_quant_cache_kernel @180eaf5331
// portq: not-carried aiter:csrc/kernels/cache_kernels.cu::cp_gather_indexer_k_quant_cache_kernel[preshuffle] -- AMD MFMA 16x16 tile layout; NVIDIA caches stay row-major
template <int BLOCK_X_SIZE, int BLOCK_Y_SIZE>
__global__ void cp_gather_indexer_k_quant_cache_kernel(
    const uint8_t* __restrict__ kv_cache, // [num_blocks, block_size, cache_stride]
    uint8_t* __restrict__ dst_k,          // [num_tokens, head_dim]
    uint8_t* __restrict__ dst_scale,      // [num_tokens, head_dim / quant_block_size * 4]
    const int* __restrict__ block_table,  // [batch_size, num_blocks]
    const int* __restrict__ cu_seq_lens,  // [batch_size + 1]
    const int batch_size,
    const int64_t token_stride,
    const int64_t head_dim,
    const int64_t block_stride,
    const int64_t cache_token_stride,
    const int64_t cache_block_size,
    const int num_blocks,
    const int num_tokens,
    const int quant_block_size)
{
    constexpr int VEC_SIZE = sizeof(float4);
    const int token        = blockIdx.x * BLOCK_Y_SIZE + threadIdx.y;
    const int col          = (blockIdx.y * BLOCK_X_SIZE + threadIdx.x) * VEC_SIZE;

    // Which request the token belongs to: the lanes of a row scan the
    // cumulative lengths together.
    __shared__ int request_of[BLOCK_Y_SIZE];
    for(int first = 0; first < batch_size; first += BLOCK_X_SIZE)
    {
        const int r = first + threadIdx.x;
        if(r < batch_size && token >= cu_seq_lens[r] && token < cu_seq_lens[r + 1])
            request_of[threadIdx.y] = r;
    }
    __syncthreads();
    if(col >= head_dim || token >= num_tokens)
        return;

    const int request   = request_of[threadIdx.y];
    const int in_seq    = token - cu_seq_lens[request];
    const int page      = block_table[request * num_blocks + in_seq / cache_block_size];
    const int64_t pos   = in_seq % cache_block_size;
    const int64_t src   = page * block_stride + pos * head_dim + col;
    const int64_t dst   = token * token_stride + col;

    reinterpret_cast<float4*>(dst_k)[dst / VEC_SIZE] =
        reinterpret_cast<const float4*>(kv_cache)[src / VEC_SIZE];
    if(threadIdx.x == 0)
    {
        const int64_t scale_src =
            page * block_stride + cache_block_size * head_dim + (pos * head_dim + col) * 4 / quant_block_size;
        reinterpret_cast<float*>(dst_scale)[dst / quant_block_size] =
            reinterpret_cast<const float*>(kv_cache)[scale_src / 4];
    }
}

} // namespace dsv32

// portq: ports aiter:csrc/kernels/cache_kernels.cu::indexer_k_quant_and_cache @180eaf5331
// portq: not-carried aiter:csrc/kernels/cache_kernels.cu::indexer_k_quant_and_cache[preshuffle] -- AMD MFMA 16x16 tile layout; NVIDIA caches stay row-major
void indexer_k_quant_and_cache(torch::Tensor& k,            // [num_tokens, head_dim]
                               torch::Tensor& kv_cache,     // [num_blocks, block_size, cache_stride]
                               torch::Tensor& slot_mapping, // [num_tokens]
                               int64_t quant_block_size,
                               const std::string& scale_fmt)
{
    const int num_tokens       = k.size(0);
    const int head_dim         = k.size(1);
    const int cache_block_size = kv_cache.size(1);
    const int cache_stride     = kv_cache.size(2);
    const bool use_ue8m0       = scale_fmt == "ue8m0";
    TORCH_CHECK(head_dim % quant_block_size == 0, "head_dim must be divisible by quant_block_size");

    constexpr int vec_size  = 16;
    constexpr int lanes     = 8;
    constexpr int rows      = 32 / lanes;
    const int quant_blocks  = num_tokens * head_dim / quant_block_size;
    const dim3 grid((quant_blocks + rows - 1) / rows);
    const dim3 block(lanes, rows);
    const at::cuda::OptionalCUDAGuard guard(k.device());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();

    AT_DISPATCH_REDUCED_FLOATING_TYPES(k.scalar_type(), "indexer_k_quant_and_cache", [&] {
        dsv32::indexer_k_quant_and_cache_kernel<scalar_t, lanes, rows, vec_size>
            <<<grid, block, 0, stream>>>(k.data_ptr<scalar_t>(),
                                         kv_cache.data_ptr<uint8_t>(),
                                         slot_mapping.data_ptr<int64_t>(),
                                         num_tokens,
                                         head_dim,
                                         quant_block_size,
                                         cache_block_size,
                                         cache_stride,
                                         use_ue8m0);
    });
}

// portq: ports aiter:csrc/kernels/cache_kernels.cu::cp_gather_indexer_k_quant_cache @180eaf5331
// portq: not-carried aiter:csrc/kernels/cache_kernels.cu::cp_gather_indexer_k_quant_cache[preshuffle] -- AMD MFMA 16x16 tile layout; NVIDIA caches stay row-major
void cp_gather_indexer_k_quant_cache(const torch::Tensor& kv_cache,    // [num_blocks, block_size, cache_stride]
                                     torch::Tensor& dst_k,             // [num_tokens, head_dim]
                                     torch::Tensor& dst_scale,         // [num_tokens, head_dim / quant_block_size] fp32
                                     const torch::Tensor& block_table, // [batch_size, num_blocks]
                                     const torch::Tensor& cu_seq_lens) // [batch_size + 1]
{
    const int batch_size       = block_table.size(0);
    const int num_tokens       = dst_k.size(0);
    const int head_dim         = dst_k.size(1);
    const int quant_block_size = head_dim / (dst_scale.size(1) * dst_scale.element_size() / 4);
    TORCH_CHECK(head_dim % quant_block_size == 0, "head_dim must be divisible by quant_block_size");

    constexpr int vec_size = 16;
    const at::cuda::OptionalCUDAGuard guard(kv_cache.device());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    // More tokens per block as the batch grows, as upstream picks them.
    const int rows = num_tokens < 32    ? 1
                     : num_tokens < 64  ? 2
                     : num_tokens < 128 ? 4
                     : num_tokens < 256 ? 8
                     : num_tokens < 512 ? 16
                                        : 32;
    const dim3 grid((num_tokens + rows - 1) / rows, (head_dim + 8 * vec_size - 1) / (8 * vec_size));
    const dim3 block(8, rows);
    const auto launch = [&](auto rows_tag) {
        constexpr int ROWS = decltype(rows_tag)::value;
        dsv32::cp_gather_indexer_k_quant_cache_kernel<8, ROWS><<<grid, block, 0, stream>>>(
            kv_cache.data_ptr<uint8_t>(), dst_k.data_ptr<uint8_t>(),
            reinterpret_cast<uint8_t*>(dst_scale.data_ptr()), block_table.data_ptr<int>(),
            cu_seq_lens.data_ptr<int>(), batch_size, dst_k.stride(0), dst_k.size(1),
            kv_cache.stride(0), kv_cache.stride(1), kv_cache.size(1), block_table.size(1),
            num_tokens, quant_block_size);
    };
    switch(rows)
    {
    case 1: launch(std::integral_constant<int, 1>{}); break;
    case 2: launch(std::integral_constant<int, 2>{}); break;
    case 4: launch(std::integral_constant<int, 4>{}); break;
    case 8: launch(std::integral_constant<int, 8>{}); break;
    case 16: launch(std::integral_constant<int, 16>{}); break;
    default: launch(std::integral_constant<int, 32>{}); break;
    }
}
