// RMSNorm of fp16 rows, re-implemented from ExLlamaV2's rms_norm.cu: one block
// of 32 warps per row, each thread keeping its columns in registers (up to
// eight per thread, so rows of at most 8192), inputs clamped to the fp16 range
// before squaring, a shuffle reduction inside each warp, then across the
// warps' partial sums. y = x * w / sqrt(mean(x * x) + eps).
#pragma once

#include "common.cuh"

namespace engine_kernels {

constexpr int kNormWarpSize = 32;
constexpr int kNormWarps = 32;
constexpr int kNormThreads = kNormWarps * kNormWarpSize;
constexpr int kNormMaxColsPerThread = 8;

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rms_norm.cu::rms_norm_kernel
template <int COLS_PER_THREAD>
__global__ void rms_norm_rows_kernel(const half* __restrict__ x, const half* __restrict__ w, half* __restrict__ y,
                                     float eps, float inv_dim, int rows, int dim)
{
    const int warp = threadIdx.x / kNormWarpSize;
    const int lane = threadIdx.x % kNormWarpSize;
    const half* x_row = x + (size_t)blockIdx.x * dim;
    half* y_row = y + (size_t)blockIdx.x * dim;

    float vals[COLS_PER_THREAD];
    float sum_sq = 0.0f;
#pragma unroll
    for (int i = 0; i < COLS_PER_THREAD; ++i) {
        const int col = threadIdx.x + i * kNormThreads;
        if (col >= dim) break;
        // An fp16 overflow upstream of the norm (+/-inf) must not poison the row.
        const float v = fmaxf(-65504.0f, fminf(__half2float(x_row[col]), 65504.0f));
        vals[i] = v;
        sum_sq = fmaf(v, v, sum_sq);
    }

    __shared__ float warp_sums[kNormWarps];
#pragma unroll
    for (int step = kNormWarpSize / 2; step > 0; step /= 2) {
        sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, step);
    }
    if (lane == 0) warp_sums[warp] = sum_sq;
    __syncthreads();

    sum_sq = warp_sums[lane];
#pragma unroll
    for (int step = kNormWarpSize / 2; step > 0; step /= 2) {
        sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, step);
    }
    const float scale = rsqrtf(sum_sq * inv_dim + eps);

#pragma unroll
    for (int i = 0; i < COLS_PER_THREAD; ++i) {
        const int col = threadIdx.x + i * kNormThreads;
        if (col >= dim) return;
        y_row[col] = __float2half_rn(vals[i] * __half2float(w[col]) * scale);
    }
}

using RmsNormRowsKernel = void (*)(const half*, const half*, half*, float, float, int, int);

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rms_norm.cu::pick_rms_norm_kernel
inline RmsNormRowsKernel select_rms_norm_kernel(int cols_per_thread)
{
    switch (cols_per_thread) {
        case 1: return rms_norm_rows_kernel<1>;
        case 2: return rms_norm_rows_kernel<2>;
        case 3: return rms_norm_rows_kernel<3>;
        case 4: return rms_norm_rows_kernel<4>;
        case 5: return rms_norm_rows_kernel<5>;
        case 6: return rms_norm_rows_kernel<6>;
        case 7: return rms_norm_rows_kernel<7>;
        case 8: return rms_norm_rows_kernel<8>;
        default: return nullptr;
    }
}

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rms_norm.cu::rms_norm_cuda
inline cudaError_t launch_rms_norm(const half* x, const half* w, half* y, float eps, int rows, int dim,
                                   cudaStream_t stream)
{
    RmsNormRowsKernel kernel = select_rms_norm_kernel(ceil_div(dim, kNormThreads));
    if (kernel == nullptr) return cudaErrorInvalidValue;
    kernel<<<dim3(rows), dim3(kNormThreads), 0, stream>>>(x, w, y, eps, 1.0f / (float)dim, rows, dim);
    return last_launch_status();
}

}  // namespace engine_kernels
