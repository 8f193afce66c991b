// Row-wise reductions shared by the engine's decoder kernels (layer_norm.cu,
// softmax.cu): one thread block owns one row, every thread folds a strided
// slice of the row into a register (thread_reduce), the block combines the
// registers through shared memory (block_allreduce), and a functor is applied
// element-wise back over the row (thread_apply). pick_block_size chooses the
// block for a row length. Nothing here launches a kernel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

namespace dec {

// Index type of the kernels: 32 bits, rows and columns of a decoder step fit.
using idx_t = unsigned int;

constexpr idx_t kWarpSize = 32;
constexpr idx_t kMaxThreads = 1024;

// Power of two covering row_len / ILP, at least one warp and at most
// kMaxThreads: the reductions below assume whole warps.
// portq: ports ctranslate2:src/cuda/helpers.h::get_block_size
template <idx_t ILP = 2>
inline dim3 pick_block_size(idx_t row_len)
{
    const idx_t cap = std::min(row_len / ILP, kMaxThreads);
    idx_t threads = 1;
    while (threads < cap) {
        threads <<= 1;
    }
    return dim3(std::max(threads, kWarpSize));
}

// Combines one value per thread into one per block, returned to every thread.
// smem holds blockDim.x accumulators. The leading barrier lets two calls run
// back to back on the same buffer.
// portq: ports ctranslate2:src/cuda/helpers.h::block_reduce
template <typename Op, typename Acc>
__device__ __forceinline__ Acc block_allreduce(Acc* smem, Acc value, const Op& op, Acc identity)
{
    __syncthreads();
    smem[threadIdx.x] = value;
    __syncthreads();

    const idx_t warps = blockDim.x / kWarpSize;
    if (threadIdx.x < kWarpSize && threadIdx.x < warps) {
        // Thread w of the first warp folds the 32 values of warp w.
        Acc acc = identity;
#pragma unroll
        for (idx_t i = 0; i < kWarpSize; ++i) {
            acc = op(acc, smem[threadIdx.x * kWarpSize + i]);
        }
        __syncwarp(static_cast<unsigned>((1ull << warps) - 1));
        smem[threadIdx.x] = acc;
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        Acc total = identity;
        for (idx_t w = 0; w < warps; ++w) {
            total = op(total, smem[w]);
        }
        smem[0] = total;
    }
    __syncthreads();
    return smem[0];
}

// Folds row[threadIdx.x], row[threadIdx.x + blockDim.x], ... into one value,
// ILP loads in flight per step, the tail one at a time.
// portq: ports ctranslate2:src/cuda/helpers.h::ilp_reduce
template <typename Op, typename T, typename Acc = T, idx_t ILP = 2>
__device__ __forceinline__ Acc thread_reduce(const T* row, idx_t len, const Op& op, Acc identity)
{
    Acc acc = identity;
    const idx_t stride = blockDim.x * ILP;
    const idx_t body = len - len % stride;
    idx_t col = threadIdx.x;
    for (; col < body; col += stride) {
        T vals[ILP];
#pragma unroll
        for (idx_t k = 0; k < ILP; ++k) {
            vals[k] = row[col + k * blockDim.x];
        }
#pragma unroll
        for (idx_t k = 0; k < ILP; ++k) {
            acc = op(acc, vals[k]);
        }
    }
    for (; col < len; col += blockDim.x) {
        acc = op(acc, row[col]);
    }
    return acc;
}

// out[c] = f(in[c]) over the row, with thread_reduce's access pattern.
// portq: ports ctranslate2:src/cuda/helpers.h::apply_epilogue
template <typename F, typename T, typename Out, idx_t ILP = 2>
__device__ __forceinline__ void thread_apply(const T* in, idx_t len, const F& f, Out* out)
{
    const idx_t stride = blockDim.x * ILP;
    const idx_t body = len - len % stride;
    idx_t col = threadIdx.x;
    for (; col < body; col += stride) {
        T vals[ILP];
#pragma unroll
        for (idx_t k = 0; k < ILP; ++k) {
            vals[k] = in[col + k * blockDim.x];
        }
#pragma unroll
        for (idx_t k = 0; k < ILP; ++k) {
            out[col + k * blockDim.x] = f(vals[k]);
        }
    }
    for (; col < len; col += blockDim.x) {
        out[col] = f(in[col]);
    }
}

}  // namespace dec
