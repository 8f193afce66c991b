// Small device and host helpers shared by the engine's decoder kernels:
// vector loads of 16 bytes, a checked launch, rounding. The engine's own; the
// upstream kernels use TurboMind's core/array_ops.h for the same jobs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define DEC_UNROLL _Pragma("unroll")

#define DEC_CUDA_CHECK(expr)                                                                                           \
    do {                                                                                                               \
        cudaError_t err_ = (expr);                                                                                     \
        if (err_ != cudaSuccess) {                                                                                     \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));                       \
            std::abort();                                                                                              \
        }                                                                                                              \
    } while (0)

namespace dec {

constexpr int kWarpSize = 32;

template<class T, int N>
struct alignas(sizeof(T) * N) Vec {
    T v[N];
    __device__ T&       operator[](int i) { return v[i]; }
    __device__ const T& operator[](int i) const { return v[i]; }
};

template<class T, int N>
__device__ __forceinline__ void load_vec(Vec<T, N>& dst, const T* src)
{
    dst = *reinterpret_cast<const Vec<T, N>*>(src);
}

// through the read-only cache, 8 or 16 bytes at a time
template<class T, int N>
__device__ __forceinline__ void load_vec_readonly(Vec<T, N>& dst, const T* src)
{
    static_assert(sizeof(Vec<T, N>) == 16 || sizeof(Vec<T, N>) == 8, "16- or 8-byte vectors");
    if constexpr (sizeof(Vec<T, N>) == 16) {
        *reinterpret_cast<uint4*>(&dst) = __ldg(reinterpret_cast<const uint4*>(src));
    }
    else {
        *reinterpret_cast<uint2*>(&dst) = __ldg(reinterpret_cast<const uint2*>(src));
    }
}

template<class T, int N>
__device__ __forceinline__ void store_vec(T* dst, const Vec<T, N>& src)
{
    *reinterpret_cast<Vec<T, N>*>(dst) = src;
}

// Conversions spelled out: torch extensions build with the half operators and
// implicit conversions switched off.
__device__ __forceinline__ float to_float(float x)
{
    return x;
}
__device__ __forceinline__ float to_float(half x)
{
    return __half2float(x);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

template<class T>
__device__ __forceinline__ T from_float(float x);
template<>
__device__ __forceinline__ float from_float<float>(float x)
{
    return x;
}
template<>
__device__ __forceinline__ half from_float<half>(float x)
{
    return __float2half_rn(x);
}
template<>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

template<class T>
__host__ __device__ constexpr T round_up(T x, T multiple)
{
    return (x + multiple - 1) / multiple * multiple;
}

template<class T>
__host__ __device__ constexpr T ceil_div(T x, T y)
{
    return (x + y - 1) / y;
}

}  // namespace dec
