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

// The instance for a row of cols_per_thread columns a thread, launched one
// block per row; false when the row is wider than the port's eight per thread.
// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rms_norm.cu::pick_rms_norm_kernel
inline bool launch_rms_norm_instance(int cols_per_thread, const half* x, const half* w, half* y, float eps,
                                     int rows, int dim, cudaStream_t stream)
{
    const dim3 grid(rows), block(kNormThreads);
    const float inv_dim = 1.0f / (float)dim;
    switch (cols_per_thread) {
        case 1: rms_norm_rows_kernel<1><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 2: rms_norm_rows_kernel<2><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 3: rms_norm_rows_kernel<3><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 4: rms_norm_rows_kernel<4><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 5: rms_norm_rows_kernel<5><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 6: rms_norm_rows_kernel<6><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 7: rms_norm_rows_kernel<7><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        case 8: rms_norm_rows_kernel<8><<<grid, block, 0, stream>>>(x, w, y, eps, inv_dim, rows, dim); return true;
        default: return false;
    }
}

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rms_norm.cu::rms_norm_cuda
inline cudaError_t launch_rms_norm(const half* x, const half* w, half* y, float eps, int rows, int dim,
                                   cudaStream_t stream)
{
    if (!launch_rms_norm_instance(ceil_div(dim, kNormThreads), x, w, y, eps, rows, dim, stream)) {
        return cudaErrorInvalidValue;
    }
    return last_launch_status();
}

}  // namespace engine_kernels
