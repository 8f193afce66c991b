// Blockwise 4-bit quantisation and dequantisation of fp16/bf16 weights,
// re-implemented from bitsandbytes' kQuantizeBlockwise/kDequantizeBlockwise
// and their launchers. Each block of `blocksize` consecutive values keeps its
// absolute maximum in fp32; values are divided by it and encoded as NF4 or
// FP4, two codes a byte, the first value in the high nibble.
//
// What the engine leaves out: the 8-bit dynamic format with its 256-entry
// code table, and stochastic rounding (weights are quantised once, at load).
// The launchers run on the legacy default stream, as upstream's do here.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "codebooks.cuh"
#include "common.cuh"

namespace engine_q4 {

// portq: not-carried bitsandbytes:csrc/kernels.cu::dQuantize -- the 8-bit dynamic format is not carried: weights are NF4/FP4 and the engine's checkpoints keep absmax in fp32

constexpr int kWarp = 32;

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// One thread block per quantisation block of BLOCK values; each of the
// BLOCK / PER_THREAD threads owns PER_THREAD consecutive values (an even count,
// so its codes fill whole bytes). The block's absmax is reduced through warp
// shuffles and one shared slot per warp.
// portq: ports bitsandbytes:csrc/kernels.cu::kQuantizeBlockwise
// portq: not-carried bitsandbytes:csrc/kernels.cu::kQuantizeBlockwise[code] -- no 8-bit dynamic format, so no code table
// portq: not-carried bitsandbytes:csrc/kernels.cu::kQuantizeBlockwise[rand] -- no stochastic rounding
// portq: not-carried bitsandbytes:csrc/kernels.cu::kQuantizeBlockwise[rand_offset] -- no stochastic rounding
template <typename T, int BLOCK, int PER_THREAD, int KIND>
__global__ void __launch_bounds__(BLOCK / PER_THREAD)
    quantize_4bit_blocks_kernel(const T* __restrict__ in, float* __restrict__ absmax, unsigned char* __restrict__ packed,
                                int n)
{
    static_assert(PER_THREAD % 2 == 0, "two codes a byte");
    constexpr int kThreads = BLOCK / PER_THREAD;
    constexpr int kWarps = (kThreads + kWarp - 1) / kWarp;
    __shared__ float warp_maxima[kWarps];
    __shared__ float block_scale;

    const long long block_start = (long long)blockIdx.x * BLOCK;
    const long long first = block_start + (long long)threadIdx.x * PER_THREAD;

    float vals[PER_THREAD];
    float local_max = 0.0f;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        vals[j] = first + j < n ? (float)in[first + j] : 0.0f;
        local_max = fmaxf(local_max, fabsf(vals[j]));
    }

    local_max = warp_max(local_max);
    if (threadIdx.x % kWarp == 0) warp_maxima[threadIdx.x / kWarp] = local_max;
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = warp_maxima[0];
        for (int w = 1; w < kWarps; ++w) m = fmaxf(m, warp_maxima[w]);
        absmax[blockIdx.x] = m;
        block_scale = 1.0f / m;
    }
    __syncthreads();
    const float scale = block_scale;

#pragma unroll
    for (int j = 0; j < PER_THREAD / 2; ++j) {
        const long long byte = first / 2 + j;
        if (2 * byte < n)
            packed[byte] = (encode_4bit<KIND>(vals[2 * j] * scale) << 4) | encode_4bit<KIND>(vals[2 * j + 1] * scale);
    }
}

// portq: ports bitsandbytes:csrc/ops.cu::quantizeBlockwise
// portq: not-carried bitsandbytes:csrc/ops.cu::quantizeBlockwise[code] -- no 8-bit dynamic format, so no code table
// portq: not-carried bitsandbytes:csrc/ops.cu::quantizeBlockwise[rand] -- no stochastic rounding
// portq: not-carried bitsandbytes:csrc/ops.cu::quantizeBlockwise[rand_offset] -- no stochastic rounding
template <typename T, int KIND>
void quantize_blockwise_4bit(const T* in, float* absmax, unsigned char* packed, int blocksize, int n)
{
    const int blocks = (n + blocksize - 1) / blocksize;
    switch (blocksize) {
    case 4096: quantize_4bit_blocks_kernel<T, 4096, 4, KIND><<<blocks, 1024>>>(in, absmax, packed, n); break;
    case 2048: quantize_4bit_blocks_kernel<T, 2048, 4, KIND><<<blocks, 512>>>(in, absmax, packed, n); break;
    case 1024: quantize_4bit_blocks_kernel<T, 1024, 4, KIND><<<blocks, 256>>>(in, absmax, packed, n); break;
    case 512: quantize_4bit_blocks_kernel<T, 512, 2, KIND><<<blocks, 256>>>(in, absmax, packed, n); break;
    case 256: quantize_4bit_blocks_kernel<T, 256, 2, KIND><<<blocks, 128>>>(in, absmax, packed, n); break;
    case 128: quantize_4bit_blocks_kernel<T, 128, 2, KIND><<<blocks, 64>>>(in, absmax, packed, n); break;
    case 64: quantize_4bit_blocks_kernel<T, 64, 2, KIND><<<blocks, 32>>>(in, absmax, packed, n); break;
    default: break;  // the torch op admits only the sizes above
    }
    check_launch(cudaPeekAtLastError(), __FILE__, __LINE__);
}

// Each thread block decodes a tile of kDequantTileBytes packed bytes (twice as
// many values); each thread 8 consecutive bytes, which never straddle an
// absmax block (blocks are at least 64 values).
constexpr int kDequantThreads = 64;
constexpr int kDequantBytesPerThread = 8;
constexpr int kDequantTileBytes = 512;

// portq: ports bitsandbytes:csrc/kernels.cu::kDequantizeBlockwise
// portq: not-carried bitsandbytes:csrc/kernels.cu::kDequantizeBlockwise[code] -- no 8-bit dynamic format, so no code table
template <typename T, int KIND>
__global__ void __launch_bounds__(kDequantThreads)
    dequantize_4bit_blocks_kernel(const unsigned char* __restrict__ packed, const float* __restrict__ absmax,
                                  T* __restrict__ out, int block_bytes, int n)
{
    const int packed_bytes = (n + 1) / 2;
    for (long long tile = (long long)blockIdx.x * kDequantTileBytes; tile < packed_bytes;
         tile += (long long)gridDim.x * kDequantTileBytes) {
        const long long first = tile + (long long)threadIdx.x * kDequantBytesPerThread;
        if (first >= packed_bytes) continue;
        const float scale = __ldg(&absmax[first / block_bytes]);
#pragma unroll
        for (int j = 0; j < kDequantBytesPerThread; ++j) {
            const long long byte = first + j;
            if (byte >= packed_bytes) break;
            const unsigned char codes = packed[byte];
            out[2 * byte] = (T)decode_4bit_scaled<KIND>(codes >> 4, scale);
            if (2 * byte + 1 < n) out[2 * byte + 1] = (T)decode_4bit_scaled<KIND>(codes & 0x0F, scale);
        }
    }
}

// portq: ports bitsandbytes:csrc/ops.cu::dequantizeBlockwise
// portq: not-carried bitsandbytes:csrc/ops.cu::dequantizeBlockwise[code] -- no 8-bit dynamic format, so no code table
template <typename T, int KIND>
void dequantize_blockwise_4bit(const unsigned char* packed, const float* absmax, T* out, int blocksize, int n)
{
    const int values_per_tile = 2 * kDequantTileBytes;
    const int tiles = (n + values_per_tile - 1) / values_per_tile;
    dequantize_4bit_blocks_kernel<T, KIND><<<tiles, kDequantThreads>>>(packed, absmax, out, blocksize / 2, n);
    check_launch(cudaPeekAtLastError(), __FILE__, __LINE__);
}

}  // namespace engine_q4
