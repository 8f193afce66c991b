// SwiGLU for the engine's MLP: a CUDA re-implementation of Transformer
// Engine's gated activation (nvte_swiglu, the gated_act_kernel of
// util/vectorized_pointwise.h and the silu of util/math.h).
//
// out[r, j] = silu(in[r, j]) * in[r, n + j] over rows of 2 * n values,
// 16-byte vectors when both halves and the output are aligned alike, scalar
// otherwise. Differences from upstream, by design: fp16/bf16 in and out only
// (no FP8 output, so no scale, amax or scale-inverse), SiLU only (no
// activation parameter), and the kernel is launched directly rather than
// through the quantising cast dispatch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstdint>

#include "gated_silu.h"

namespace engine_kernels {

constexpr int kGateThreads = 512;

// portq: ports transformerengine:transformer_engine/common/util/math.h::sigmoid
__device__ __forceinline__ float sigmoid_f(float x) { return 1.f / (1.f + expf(-x)); }

// portq: ports transformerengine:transformer_engine/common/util/math.h::silu
__device__ __forceinline__ float silu_f(float x) { return x * sigmoid_f(x); }

// portq: not-carried transformerengine:transformer_engine/common/util/math.h::dsilu -- inference only
// portq: not-carried transformerengine:transformer_engine/common/util/math.h::dsigmoid -- inference only

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
    T v[VEC];
};

// portq: ports transformerengine:transformer_engine/common/util/vectorized_pointwise.h::gated_act_kernel
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::gated_act_kernel[scale] -- no FP8 outputs
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::gated_act_kernel[amax] -- no FP8 outputs
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::gated_act_kernel[scale_inv] -- no FP8 outputs
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::gated_act_kernel[p] -- SiLU takes no parameter
template <typename T, int VEC>
__global__ void __launch_bounds__(kGateThreads)
    gated_silu_kernel(const T* __restrict__ gate_up, T* __restrict__ out, size_t rows, size_t n)
{
    // n is a multiple of VEC here (see swiglu): each thread handles one pack.
    const size_t packs_per_row = n / VEC;
    const size_t total         = packs_per_row * rows;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
         idx += (size_t)gridDim.x * blockDim.x) {
        const size_t row = idx / packs_per_row;
        const size_t col = idx % packs_per_row * VEC;
        const auto gate  = *reinterpret_cast<const Pack<T, VEC>*>(gate_up + row * 2 * n + col);
        const auto up    = *reinterpret_cast<const Pack<T, VEC>*>(gate_up + row * 2 * n + n + col);
        Pack<T, VEC> res;
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            res.v[i] = static_cast<T>(silu_f(static_cast<float>(gate.v[i])) * static_cast<float>(up.v[i]));
        }
        *reinterpret_cast<Pack<T, VEC>*>(out + row * n + col) = res;
    }
}

// portq: ports transformerengine:transformer_engine/common/util/vectorized_pointwise.h::GatedActivationKernelLauncher
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::GatedActivationKernelLauncher[scale] -- no FP8 outputs
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::GatedActivationKernelLauncher[amax] -- no FP8 outputs
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::GatedActivationKernelLauncher[scale_inv] -- no FP8 outputs
// portq: not-carried transformerengine:transformer_engine/common/util/vectorized_pointwise.h::GatedActivationKernelLauncher[p] -- SiLU takes no parameter
template <typename T>
void launch_gated_silu(const T* gate_up, T* out, size_t rows, size_t n, cudaStream_t stream)
{
    if (rows == 0 || n == 0) {
        return;
    }
    constexpr int kVec   = 16 / sizeof(T);
    const bool vectorize = n % kVec == 0 && reinterpret_cast<uintptr_t>(gate_up) % 16 == 0
                           && reinterpret_cast<uintptr_t>(out) % 16 == 0;
    const size_t work    = vectorize ? rows * (n / kVec) : rows * n;
    const size_t blocks  = std::min<size_t>((work + kGateThreads - 1) / kGateThreads, 65535);
    if (vectorize) {
        gated_silu_kernel<T, kVec><<<blocks, kGateThreads, 0, stream>>>(gate_up, out, rows, n);
    }
    else {
        gated_silu_kernel<T, 1><<<blocks, kGateThreads, 0, stream>>>(gate_up, out, rows, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// portq: ports transformerengine:transformer_engine/common/activation/swiglu.cu::nvte_swiglu
// portq: not-carried transformerengine:transformer_engine/common/activation/activation_template.h::gated_act_fn -- the quantising cast dispatch; the engine launches the gate kernel directly
// portq: not-carried transformerengine:transformer_engine/common/activation/swiglu.cu::nvte_dswiglu -- inference only
// portq: not-carried transformerengine:transformer_engine/common/activation/swiglu.cu::nvte_silu -- the engine's MLPs are all gated
// portq: not-carried transformerengine:transformer_engine/common/activation/swiglu.cu::nvte_dsilu -- inference only
template <typename T>
void swiglu(const T* gate_up, T* out, size_t rows, size_t n, cudaStream_t stream)
{
    launch_gated_silu<T>(gate_up, out, rows, n, stream);
}

template void swiglu<half>(const half*, half*, size_t, size_t, cudaStream_t);
template void swiglu<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, size_t, size_t, cudaStream_t);

}  // namespace engine_kernels
