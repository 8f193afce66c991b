// RMSNorm over packed rows, re-implemented from FlashInfer's norm.cuh: one
// block per row, each thread moving 16-byte vectors, a warp-shuffle then
// shared-memory reduction of the sum of squares.
#pragma once

#include <algorithm>
#include <numeric>

#include "common.cuh"

namespace engine_kernels {

// portq: ports flashinfer:include/flashinfer/norm.cuh::RMSNormKernel
template <uint32_t VEC, typename T>
__global__ void rms_norm_kernel(const T* __restrict__ input, const T* __restrict__ weight, T* __restrict__ output,
                                const uint32_t d, float eps)
{
    constexpr uint32_t kWarp = 32;
    const uint32_t row = blockIdx.x;
    const uint32_t lane = threadIdx.x, warp = threadIdx.y;
    const uint32_t num_warps = blockDim.y;
    const uint32_t tid = lane + warp * kWarp;
    const uint32_t num_threads = num_warps * kWarp;
    const uint32_t rounds = ceil_div(d, VEC * num_threads);
    extern __shared__ float partial[];

    const T* x_row = input + size_t(row) * d;
    T* y_row = output + size_t(row) * d;

    float sum_sq = 0.f;
    for (uint32_t r = 0; r < rounds; ++r) {
        const uint32_t col = (r * num_threads + tid) * VEC;
        Packed<T, VEC> x;
        x.fill(0.f);
        if (col < d) {
            x.load(x_row + col);
        }
#pragma unroll
        for (uint32_t j = 0; j < VEC; ++j) {
            sum_sq += x.get(j) * x.get(j);
        }
    }

#pragma unroll
    for (uint32_t offset = kWarp / 2; offset > 0; offset /= 2) {
        sum_sq += shfl_xor(sum_sq, offset);
    }
    partial[warp] = sum_sq;
    __syncthreads();
    if (warp == 0) {
        sum_sq = lane < num_warps ? partial[lane] : 0.f;
#pragma unroll
        for (uint32_t offset = kWarp / 2; offset > 0; offset /= 2) {
            sum_sq += shfl_xor(sum_sq, offset);
        }
        partial[0] = sum_sq;
    }
    __syncthreads();

    const float inv_rms = fast_rsqrt(partial[0] / float(d) + eps);

    for (uint32_t r = 0; r < rounds; ++r) {
        const uint32_t col = (r * num_threads + tid) * VEC;
        Packed<T, VEC> x, w, y;
        x.fill(0.f);
        w.fill(0.f);
        if (col < d) {
            x.load(x_row + col);
            w.load(weight + col);
        }
#pragma unroll
        for (uint32_t j = 0; j < VEC; ++j) {
            y.set(j, x.get(j) * inv_rms * w.get(j));
        }
        if (col < d) {
            y.store(y_row + col);
        }
    }
}

// portq: ports flashinfer:include/flashinfer/norm.cuh::RMSNorm
template <typename T>
cudaError_t launch_rms_norm(const T* input, const T* weight, T* output, uint32_t num_rows, uint32_t d, float eps,
                            cudaStream_t stream)
{
    const uint32_t vec = std::gcd(uint32_t(16 / sizeof(T)), d);
    const uint32_t block = std::min<uint32_t>(1024, d / vec);
    const uint32_t num_warps = ceil_div(block, 32);
    const dim3 grid(num_rows);
    const dim3 threads(32, num_warps);
    const size_t smem = num_warps * sizeof(float);
    switch (vec) {
    case 8: rms_norm_kernel<8, T><<<grid, threads, smem, stream>>>(input, weight, output, d, eps); break;
    case 4: rms_norm_kernel<4, T><<<grid, threads, smem, stream>>>(input, weight, output, d, eps); break;
    case 2: rms_norm_kernel<2, T><<<grid, threads, smem, stream>>>(input, weight, output, d, eps); break;
    default: rms_norm_kernel<1, T><<<grid, threads, smem, stream>>>(input, weight, output, d, eps); break;
    }
    return cudaGetLastError();
}

// portq: not-carried flashinfer:include/flashinfer/norm.cuh::FusedAddRMSNormKernel -- the residual add is fused into the engine's GEMM epilogue
// portq: not-carried flashinfer:include/flashinfer/norm.cuh::FusedAddRMSNorm -- the residual add is fused into the engine's GEMM epilogue

}  // namespace engine_kernels
