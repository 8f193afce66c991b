// LayerNorm forward of the engine's decoder over the last dimension: one block
// of kLayerNormThreads per row, mean and variance from one pass of sums and
// sums of squares accumulated in fp32, y = (x - mean) * rstd * gamma + beta.
// fp32 and fp16. Inference only: no saved statistics, no backward.
#include <cub/block/block_reduce.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "row_reduce.cuh"

namespace dec {

constexpr int kLayerNormThreads = 512;

// Added to the variance before the reciprocal square root.
constexpr float kLayerNormEpsilon = 1e-4f;

// portq: ports ctranslate2:src/ops/layer_norm_gpu.cu::LayerNormForwardCUDAKernel
template <typename T, typename SizeT>
__global__ void layer_norm_rows_kernel(SizeT depth, T eps, const T* x, const T* gamma, const T* beta, T* y)
{
    using Reduce = cub::BlockReduce<float, kLayerNormThreads>;
    __shared__ typename Reduce::TempStorage sum_storage;
    __shared__ typename Reduce::TempStorage sq_storage;
    __shared__ float row_mean;
    __shared__ float row_rstd;

    const SizeT offset = blockIdx.x * depth;
    float sum = 0.f;
    float sum_sq = 0.f;
    for (SizeT c = threadIdx.x; c < depth; c += blockDim.x) {
        const float v = static_cast<float>(x[offset + c]);
        sum += v;
        sum_sq += v * v;
    }
    sum = Reduce(sum_storage).Sum(sum);
    sum_sq = Reduce(sq_storage).Sum(sum_sq);

    if (threadIdx.x == 0) {
        const float mean = sum / static_cast<float>(depth);
        const float var = fmaxf(sum_sq / static_cast<float>(depth) - mean * mean, 0.f);
        row_mean = mean;
        row_rstd = rsqrtf(var + static_cast<float>(eps));
    }
    __syncthreads();

    for (SizeT c = threadIdx.x; c < depth; c += blockDim.x) {
        const float v = static_cast<float>(x[offset + c]);
        y[offset + c] = static_cast<T>((v - row_mean) * row_rstd * static_cast<float>(gamma[c]) +
                                       static_cast<float>(beta[c]));
    }
}

// x, y: (rows, depth) contiguous; gamma, beta: (depth,). One block per row.
// portq: ports ctranslate2:src/ops/layer_norm_gpu.cu::LayerNorm::compute
template <typename T>
void layer_norm_forward(const T* beta, const T* gamma, const T* x, T* y, long rows, long depth, cudaStream_t stream)
{
    layer_norm_rows_kernel<T, idx_t><<<static_cast<unsigned>(rows), kLayerNormThreads, 0, stream>>>(
        static_cast<idx_t>(depth), static_cast<T>(kLayerNormEpsilon), x, gamma, beta, y);
}

template void layer_norm_forward<float>(const float*, const float*, const float*, float*, long, long, cudaStream_t);
template void layer_norm_forward<__half>(const __half*, const __half*, const __half*, __half*, long, long,
                                         cudaStream_t);

}  // namespace dec
