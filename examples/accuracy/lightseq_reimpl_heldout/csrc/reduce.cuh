// Warp and block reductions shared by the engine's encoder kernels (layer_norm.cu,
// attn_softmax.cu): one float summed (warp_sum, block_sum), or N independent
// floats reduced at once, sum or max (warp_reduce, block_reduce); the result in
// every lane of the warp or every thread of the block (at most 1024 threads).
// Nothing here launches a kernel.
#pragma once

#include <cuda_runtime.h>

namespace enc {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

// Stand-in for minus infinity in masked and padded lanes: finite, so that
// exp(x - max) of a fully padded row stays finite instead of NaN (upstream's
// REDUCE_FLOAT_INF_NEG).
constexpr float kNegInf = -1.0e8f;

enum class Reduce { kSum, kMax };

template <Reduce R>
__device__ __forceinline__ float combine(float a, float b)
{
    return R == Reduce::kSum ? a + b : fmaxf(a, b);
}

// Butterfly over the 32 lanes of a warp; every lane ends with the result.
// portq: ports lightseq:lightseq/training/csrc/kernels/includes/block_reduce.h::warpReduce
template <Reduce R, int N>
__device__ __forceinline__ void warp_reduce(float* vals)
{
#pragma unroll
    for (int delta = kWarp / 2; delta > 0; delta >>= 1) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            vals[i] = combine<R>(vals[i], __shfl_xor_sync(kFullMask, vals[i], delta, kWarp));
        }
    }
}

// Scalar sum over a warp, the result in every lane.
// portq: ports lightseq:lightseq/training/csrc/kernels/includes/block_reduce.h::warpReduceSum
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int delta = kWarp / 2; delta > 0; delta >>= 1) v += __shfl_xor_sync(kFullMask, v, delta, kWarp);
    return v;
}

// Scalar sum over the block, the result in every thread.
// portq: ports lightseq:lightseq/training/csrc/kernels/includes/block_reduce.h::blockReduceSum
__device__ __forceinline__ float block_sum(float v)
{
    __shared__ float partial[kWarp];
    const int lane = threadIdx.x & (kWarp - 1);
    const int warp = threadIdx.x / kWarp;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    const int warps = (blockDim.x + kWarp - 1) / kWarp;
    return warp_sum(lane < warps ? partial[lane] : 0.f);
}

// Warp results through shared memory, then a second warp pass. Lanes beyond
// the block's warp count contribute the operation's identity.
// portq: ports lightseq:lightseq/training/csrc/kernels/includes/block_reduce.h::blockReduce
template <Reduce R, int N>
__device__ __forceinline__ void block_reduce(float* vals)
{
    __shared__ float partial[N][kWarp];
    const int lane = threadIdx.x & (kWarp - 1);
    const int warp = threadIdx.x / kWarp;
    warp_reduce<R, N>(vals);
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) partial[i][warp] = vals[i];
    }
    __syncthreads();
    const int warps = (blockDim.x + kWarp - 1) / kWarp;
    const float identity = R == Reduce::kSum ? 0.f : kNegInf;
#pragma unroll
    for (int i = 0; i < N; ++i) vals[i] = lane < warps ? partial[i][lane] : identity;
    warp_reduce<R, N>(vals);
}

}  // namespace enc
