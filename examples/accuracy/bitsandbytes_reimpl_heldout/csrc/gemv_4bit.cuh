// Decode-time GEMV against a 4-bit weight, re-implemented from bitsandbytes'
// kgemm_4bit_inference_naive and its launcher: out (1, m) = x (1, k) times the
// packed weight (m, k) transposed. One warp per output row, four rows per
// 128-thread block; each lane walks the row 32 codes (16 bytes) at a time,
// decodes them through the 16-entry table the caller passes (NF4 or FP4
// levels), scales by the block's absmax and accumulates in fp32.
//
// The engine's own addition: an optional bias added to each output row in the
// same pass (nullptr for none). Activations are fp16 or bf16; the fp32 path
// is not carried.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common.cuh"

namespace engine_q4 {

constexpr int kGemvThreads = 128;
constexpr int kGemvRowsPerBlock = kGemvThreads / 32;
constexpr int kGemvCodesPerLane = 32;

// portq: ports bitsandbytes:csrc/kernels.cu::kgemm_4bit_inference_naive
template <typename T>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_4bit_kernel(int m, int n, int k, const T* __restrict__ x, const unsigned char* __restrict__ w,
                     const float* __restrict__ absmax, const float* __restrict__ table, const T* __restrict__ bias,
                     T* __restrict__ out, int ldw, int blocksize)
{
    __shared__ float levels[16];
    if (threadIdx.x < 16) levels[threadIdx.x] = table[threadIdx.x];
    __syncthreads();

    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * kGemvRowsPerBlock + threadIdx.x / 32;
    if (row >= m) return;

    const long long row_offset = (long long)ldw * row;  // in bytes; two codes a byte
    float acc = 0.0f;
    for (int col = lane * kGemvCodesPerLane; col < k; col += 32 * kGemvCodesPerLane) {
        const float scale = __ldg(&absmax[(2 * row_offset + col) / blocksize]);
#pragma unroll 4
        for (int j = 0; j < kGemvCodesPerLane / 2; ++j) {
            const int c = col + 2 * j;
            if (c >= k) break;
            const unsigned char codes = w[row_offset + c / 2];
            acc += (float)x[c] * levels[codes >> 4] * scale;
            if (c + 1 < k) acc += (float)x[c + 1] * levels[codes & 0x0F] * scale;
        }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (lane == 0) out[row] = (T)(bias != nullptr ? acc + (float)bias[row] : acc);
}

// m output rows, n = 1 (one token), k inputs; ldw is the packed row stride in bytes.
// portq: ports bitsandbytes:csrc/ops.cu::gemm_4bit_inference_naive
template <typename T>
void gemv_4bit_inference(int m, int n, int k, const T* x, const unsigned char* w, const float* absmax,
                         const float* table, const T* bias, T* out, int ldw, int blocksize)
{
    const int blocks = (m + kGemvRowsPerBlock - 1) / kGemvRowsPerBlock;
    gemv_4bit_kernel<T><<<blocks, kGemvThreads>>>(m, n, k, x, w, absmax, table, bias, out, ldw, blocksize);
    check_launch(cudaPeekAtLastError(), __FILE__, __LINE__);
}

}  // namespace engine_q4
