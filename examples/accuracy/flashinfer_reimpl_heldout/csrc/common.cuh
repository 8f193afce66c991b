// Device helpers shared by the engine's decoder kernels: packed vector
// loads/stores, the PTX reciprocal square root and the warp butterfly
// shuffle that the norm's reductions use (after FlashInfer's math.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace engine_kernels {

__host__ __device__ constexpr uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ half from_float<half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// N elements of T moved as one aligned access (N * sizeof(T) is 4, 8 or 16 bytes).
template <typename T, uint32_t N>
struct alignas(sizeof(T) * N) Packed {
    T v[N];

    __device__ __forceinline__ void fill(float x)
    {
#pragma unroll
        for (uint32_t i = 0; i < N; ++i) {
            v[i] = from_float<T>(x);
        }
    }
    __device__ __forceinline__ void load(const T* ptr) { *this = *reinterpret_cast<const Packed*>(ptr); }
    __device__ __forceinline__ void store(T* ptr) const { *reinterpret_cast<Packed*>(ptr) = *this; }
    __device__ __forceinline__ float get(uint32_t i) const { return to_float(v[i]); }
    __device__ __forceinline__ void set(uint32_t i, float x) { v[i] = from_float<T>(x); }
};

// portq: ports flashinfer:include/flashinfer/math.cuh::rsqrt
__device__ __forceinline__ float fast_rsqrt(float x)
{
    float y;
    asm volatile("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// portq: ports flashinfer:include/flashinfer/math.cuh::shfl_xor_sync
__device__ __forceinline__ float shfl_xor(float x, int lane_mask)
{
    return __shfl_xor_sync(0xffffffffu, x, lane_mask);
}

}  // namespace engine_kernels
