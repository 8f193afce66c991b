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

template<class T, int N>
__device__ __forceinline__ void load_vec_readonly(Vec<T, N>& dst, const T* src)
{
    dst = __ldg(reinterpret_cast<const Vec<T, N>*>(src));
}

template<class T, int N>
__device__ __forceinline__ void store_vec(T* dst, const Vec<T, N>& src)
{
    *reinterpret_cast<Vec<T, N>*>(dst) = src;
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
