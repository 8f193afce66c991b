// Rotate-half (NeoX) RoPE applied in place to fp16 heads, re-implemented from
// ExLlamaV2's rope.cu: x is (batch, rows, head_dim) with rows = tokens * heads,
// sin and cos are (positions, head_dim) tables, and a row's position is its
// sequence's past length plus its token index. Each thread rotates two
// adjacent pairs (x[c], x[c + d/2]) and (x[c + 1], x[c + 1 + d/2]) with half2
// arithmetic; rows beyond 65535 blocks move into the block's y dimension.
#pragma once

#include "common.cuh"

namespace engine_kernels {

constexpr int kRopeThreadsX = 32;
constexpr int kRopeThreadsY = 4;

// past_len >= 0 is every sequence's first position; -1 reads it per sequence
// from past_lens[batch].
// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rope.cu::rope_cuda_kernel
__global__ void rope_neox_kernel(half* __restrict__ x, const half* __restrict__ sin, const half* __restrict__ cos,
                                 int rows_per_batch, int head_dim, int num_heads, int past_len,
                                 const uint32_t* __restrict__ past_lens, int threads_y)
{
    const int half_dim = head_dim / 2;
    const int col = (blockIdx.x * kRopeThreadsX + threadIdx.x) * 2;
    if (col >= half_dim) return;
    const int row = blockIdx.y * threads_y + threadIdx.y;
    if (row >= rows_per_batch) return;

    const int start = past_len == -1 ? (int)past_lens[blockIdx.z] : past_len;
    const int pos = start + row / num_heads;
    half* x_row = x + ((size_t)blockIdx.z * rows_per_batch + row) * head_dim;
    const half* sin_row = sin + (size_t)pos * head_dim;
    const half* cos_row = cos + (size_t)pos * head_dim;

    const half2 c_lo = *reinterpret_cast<const half2*>(cos_row + col);
    const half2 c_hi = *reinterpret_cast<const half2*>(cos_row + col + half_dim);
    const half2 s_lo = __hneg2(*reinterpret_cast<const half2*>(sin_row + col));
    const half2 s_hi = *reinterpret_cast<const half2*>(sin_row + col + half_dim);

    half2* lo = reinterpret_cast<half2*>(x_row + col);
    half2* hi = reinterpret_cast<half2*>(x_row + col + half_dim);
    const half2 a = *lo;
    const half2 b = *hi;
    *lo = __hfma2(a, c_lo, __hmul2(b, s_lo));
    *hi = __hfma2(b, c_hi, __hmul2(a, s_hi));
}

// portq: not-carried exllamav2:exllamav2/exllamav2_ext/cuda/rope.cu::pick_rope_cuda_kernel -- the engine always takes the half2 path (head_dim is a multiple of 4); the scalar kernel and its selection are dropped

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/rope.cu::rope_cuda
inline cudaError_t launch_rope_neox(half* x, const half* sin, const half* cos, int batch_size, int rows_per_batch,
                                    int head_dim, int num_heads, int past_len, const uint32_t* past_lens,
                                    cudaStream_t stream)
{
    int threads_y = kRopeThreadsY;
    while (ceil_div(rows_per_batch, threads_y) > 65535) threads_y *= 2;
    const dim3 block(kRopeThreadsX, threads_y);
    const dim3 grid(ceil_div(head_dim / 2, kRopeThreadsX), ceil_div(rows_per_batch, threads_y), batch_size);
    rope_neox_kernel<<<grid, block, 0, stream>>>(x, sin, cos, rows_per_batch, head_dim, num_heads, past_len,
                                                 past_lens, threads_y);
    return last_launch_status();
}

}  // namespace engine_kernels
