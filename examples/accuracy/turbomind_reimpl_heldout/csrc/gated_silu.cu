// SiLU gate of the engine's MLP (TurboMind's activation_kernels.cu at the
// range's base, re-implemented): four elements per thread, one grid row per
// token. Only SiLU is carried, so the kernel calls it directly instead of
// taking the activation as a template; the engine's models gate with nothing else.
#include "common.cuh"
#include "gated_silu.h"

namespace dec {

// portq: ports lmdeploy:src/turbomind/kernels/activation_kernels.cu::SiluActivation
template<class T>
__device__ __forceinline__ T silu(T x)
{
    const float f = to_float(x);
    return from_float<T>(f / (1.f + __expf(-f)));
}

// portq: not-carried lmdeploy:src/turbomind/kernels/activation_kernels.cu::GeluActivation -- SiLU-gated models only
// portq: not-carried lmdeploy:src/turbomind/kernels/activation_kernels.cu::ReluActivation -- SiLU-gated models only
// portq: not-carried lmdeploy:src/turbomind/kernels/activation_kernels.cu::IdentityActivation -- no bias-only pass
// portq: not-carried lmdeploy:src/turbomind/kernels/activation_kernels.cu::generic_activation -- the older bias/IA3/int8 path; the engine has none of them
// portq: not-carried lmdeploy:src/turbomind/kernels/activation_kernels.cu::invokeGenericActivation -- the older bias/IA3/int8 path; the engine has none of them

// portq: ports lmdeploy:src/turbomind/kernels/activation_kernels.cu::activation_kernel
template<int kVec, class T>
__global__ void gated_silu_kernel(T* act, const T* __restrict__ up, int64_t row_stride, int tokens, int dims)
{
    const int chunk = threadIdx.x + blockIdx.x * blockDim.x;
    const int token = blockIdx.y;
    if (chunk >= dims / kVec) {
        return;
    }
    T*       a = act + token * row_stride + chunk * kVec;
    const T* u = up + token * row_stride + chunk * kVec;

    Vec<T, kVec> av, uv;
    load_vec(av, a);
    load_vec_readonly(uv, u);
    DEC_UNROLL
    for (int i = 0; i < kVec; ++i) {
        av[i] = from_float<T>(to_float(silu(av[i])) * to_float(uv[i]));
    }
    store_vec(a, av);
}

// portq: ports lmdeploy:src/turbomind/kernels/activation_kernels.cu::invokeGenericActivation_v2
template<class T>
void launch_gated_silu(T* act, const T* up, int64_t row_stride, int tokens, int dims, cudaStream_t stream)
{
    constexpr int kVec    = 4;
    constexpr int kThread = 256;
    const dim3    grid(ceil_div(dims, kThread * kVec), tokens);
    gated_silu_kernel<kVec, T><<<grid, kThread, 0, stream>>>(act, up, row_stride, tokens, dims);
}

template void launch_gated_silu(half*, const half*, int64_t, int, int, cudaStream_t);
template void launch_gated_silu(__nv_bfloat16*, const __nv_bfloat16*, int64_t, int, int, cudaStream_t);

}  // namespace dec
