// FP8 (E5M2) KV cache of the engine, re-implemented from ExLlamaV2's cache.cu:
// an fp16 value's upper byte is its E5M2 rounding toward zero, so storing keeps
// the high byte of each half and loading puts it back with a zero low byte.
// Each thread moves eight values (16 bytes of fp16, 8 bytes of cache) of one
// row; a launch covers the column window [offset, offset + width) of every
// row, widened to multiples of eight.
#pragma once

#include "common.cuh"

namespace engine_kernels {

constexpr int kCacheThreads = 32;

// Two fp16 values (one 32-bit word) -> their two high bytes, low value first.
// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/cache.cu::compress
__device__ __forceinline__ uint32_t pack_e5m2_pair(uint32_t halves)
{
    return ((halves >> 16) & 0xff00u) | ((halves >> 8) & 0x00ffu);
}

// Two E5M2 bytes (low 16 bits) -> two fp16 values with zero low bytes.
// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/cache.cu::decompress
__device__ __forceinline__ uint32_t unpack_e5m2_pair(uint32_t bytes)
{
    return ((bytes & 0xff00u) << 16) | ((bytes & 0x00ffu) << 8);
}

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/cache.cu::nv_fp16_to_fp8
__global__ void store_e5m2_kernel(const half* __restrict__ values, uint8_t* __restrict__ cache, int row_stride,
                                  int rows, int col_begin, int col_end)
{
    const int col = col_begin + (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    const int row = blockIdx.y;
    if (col >= col_end) return;

    const int4 in = *reinterpret_cast<const int4*>(values + (size_t)row * row_stride + col);
    const uint32_t lo = pack_e5m2_pair((uint32_t)in.x) | (pack_e5m2_pair((uint32_t)in.y) << 16);
    const uint32_t hi = pack_e5m2_pair((uint32_t)in.z) | (pack_e5m2_pair((uint32_t)in.w) << 16);
    *reinterpret_cast<int2*>(cache + (size_t)row * row_stride + col) = make_int2((int)lo, (int)hi);
}

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/cache.cu::nv_fp8_to_fp16
__global__ void load_e5m2_kernel(const uint8_t* __restrict__ cache, half* __restrict__ values, int row_stride,
                                 int rows, int col_begin, int col_end)
{
    const int col = col_begin + (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    const int row = blockIdx.y;
    if (col >= col_end) return;

    const int2 in = *reinterpret_cast<const int2*>(cache + (size_t)row * row_stride + col);
    int4 out;
    out.x = (int)unpack_e5m2_pair((uint32_t)in.x);
    out.y = (int)unpack_e5m2_pair((uint32_t)in.x >> 16);
    out.z = (int)unpack_e5m2_pair((uint32_t)in.y);
    out.w = (int)unpack_e5m2_pair((uint32_t)in.y >> 16);
    *reinterpret_cast<int4*>(values + (size_t)row * row_stride + col) = out;
}

// The window [offset, offset + width) widened to whole groups of eight.
struct E5m2Window {
    int begin;
    int end;
};

inline E5m2Window e5m2_window(int offset, int width)
{
    const int begin = offset / 8 * 8;
    const int end = begin + ceil_div(offset + width - begin, 8) * 8;
    return {begin, end};
}

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/cache.cu::array_fp16_to_fp8_cuda
inline cudaError_t launch_store_e5m2(const half* values, uint8_t* cache, int row_stride, int rows, int offset,
                                     int width, cudaStream_t stream)
{
    const E5m2Window w = e5m2_window(offset, width);
    const dim3 block(kCacheThreads);
    const dim3 grid(ceil_div((w.end - w.begin) / 8, kCacheThreads), rows);
    store_e5m2_kernel<<<grid, block, 0, stream>>>(values, cache, row_stride, rows, w.begin, w.end);
    return last_launch_status();
}

// portq: ports exllamav2:exllamav2/exllamav2_ext/cuda/cache.cu::array_fp8_to_fp16_cuda
inline cudaError_t launch_load_e5m2(const uint8_t* cache, half* values, int row_stride, int rows, int offset,
                                    int width, cudaStream_t stream)
{
    const E5m2Window w = e5m2_window(offset, width);
    const dim3 block(kCacheThreads);
    const dim3 grid(ceil_div((w.end - w.begin) / 8, kCacheThreads), rows);
    load_e5m2_kernel<<<grid, block, 0, stream>>>(cache, values, row_stride, rows, w.begin, w.end);
    return last_launch_status();
}

// The engine's own: keys and values of one layer stored by one launch, the
// grid's z selecting the pair (its caches share a layout).
__global__ void store_e5m2_kv_kernel(const half* __restrict__ k, const half* __restrict__ v,
                                     uint8_t* __restrict__ k_cache, uint8_t* __restrict__ v_cache, int row_stride,
                                     int col_begin, int col_end)
{
    const int col = col_begin + (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (col >= col_end) return;
    const half* src = blockIdx.z ? v : k;
    uint8_t* dst = blockIdx.z ? v_cache : k_cache;
    const size_t base = (size_t)blockIdx.y * row_stride + col;

    const int4 in = *reinterpret_cast<const int4*>(src + base);
    const uint32_t lo = pack_e5m2_pair((uint32_t)in.x) | (pack_e5m2_pair((uint32_t)in.y) << 16);
    const uint32_t hi = pack_e5m2_pair((uint32_t)in.z) | (pack_e5m2_pair((uint32_t)in.w) << 16);
    *reinterpret_cast<int2*>(dst + base) = make_int2((int)lo, (int)hi);
}

inline cudaError_t launch_store_e5m2_kv(const half* k, const half* v, uint8_t* k_cache, uint8_t* v_cache,
                                        int row_stride, int rows, int offset, int width, cudaStream_t stream)
{
    const E5m2Window w = e5m2_window(offset, width);
    const dim3 block(kCacheThreads);
    const dim3 grid(ceil_div((w.end - w.begin) / 8, kCacheThreads), rows, 2);
    store_e5m2_kv_kernel<<<grid, block, 0, stream>>>(k, v, k_cache, v_cache, row_stride, w.begin, w.end);
    return last_launch_status();
}

}  // namespace engine_kernels
