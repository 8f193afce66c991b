// RMSNorm of the engine's decoder (TurboMind's norm/rms_norm.cu at the
// range's base, re-implemented): one block per token, a block-wide sum of
// squares in fp32, the inverse RMS rounded to T before the weight, as upstream
// does. Rows are packed: the caller never norms a strided view.
#include <cub/block/block_reduce.cuh>

#include "common.cuh"
#include "rms_norm.h"

namespace dec {

// portq: ports lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::RMSNormKernel
// portq: not-carried lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::RMSNormKernel[dst_ld] -- rows are packed
// portq: not-carried lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::RMSNormKernel[src_ld] -- rows are packed
template<class T, int kThreads, int kVec>
__global__ void rms_norm_rows_kernel(T* out, const T* __restrict__ x, const T* __restrict__ weight, int dims, int tokens, float eps, float inv_dims)
{
    const int token = blockIdx.x;
    if (token >= tokens) {
        return;
    }
    const T* row = x + (int64_t)token * dims;

    float partial = 0.f;
    for (int i = threadIdx.x * kVec; i < dims; i += kThreads * kVec) {
        Vec<T, kVec> xs;
        load_vec(xs, row + i);
        DEC_UNROLL
        for (int c = 0; c < kVec; ++c) {
            const float f = to_float(xs[c]);
            partial += f * f;
        }
    }

    using Reduce = cub::BlockReduce<float, kThreads>;
    __shared__ typename Reduce::TempStorage scratch;
    __shared__ float                        inv_rms;
    const float total = Reduce{scratch}.Sum(partial);
    if (threadIdx.x == 0) {
        inv_rms = rsqrtf(total * inv_dims + eps);
    }
    __syncthreads();

    T* dst = out + (int64_t)token * dims;
    for (int i = threadIdx.x * kVec; i < dims; i += kThreads * kVec) {
        Vec<T, kVec> xs, ws;
        load_vec(xs, row + i);
        load_vec_readonly(ws, weight + i);
        DEC_UNROLL
        for (int c = 0; c < kVec; ++c) {
            // rounded to T before the weight, as upstream does
            const T normed = from_float<T>(to_float(xs[c]) * inv_rms);
            xs[c]          = from_float<T>(to_float(normed) * to_float(ws[c]));
        }
        store_vec(dst + i, xs);
    }
}

// portq: ports lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::invokeRMSNorm
// portq: not-carried lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::invokeRMSNorm[dst_ld] -- rows are packed
// portq: not-carried lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::invokeRMSNorm[src_ld] -- rows are packed
template<class T>
void launch_rms_norm(T* out, const T* x, const T* weight, int dims, int tokens, float eps, cudaStream_t stream)
{
    constexpr int kVec     = 16 / sizeof(T);
    constexpr int kThreads = 512;
    rms_norm_rows_kernel<T, kThreads, kVec><<<tokens, kThreads, 0, stream>>>(out, x, weight, dims, tokens, eps, 1.f / dims);
}

// portq: not-carried lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::BiasResidualRMSNormKernel -- the residual add lives in the engine's GEMM epilogue
// portq: not-carried lmdeploy:src/turbomind/kernels/norm/rms_norm.cu::invokeBiasResidualRMSNorm -- the residual add lives in the engine's GEMM epilogue

template void launch_rms_norm(half*, const half*, const half*, int, int, float, cudaStream_t);
template void launch_rms_norm(__nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, int, int, float, cudaStream_t);

}  // namespace dec
