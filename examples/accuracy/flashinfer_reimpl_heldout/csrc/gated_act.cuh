// SiLU-gated MLP activation, re-implemented from FlashInfer's activation.cuh:
// one block per token, out = act(gate) * up over the two halves of the
// token's [gate | up] row, 16-byte vectors then a scalar tail.
#pragma once

#include <algorithm>

#include "common.cuh"

namespace engine_kernels {

// portq: ports flashinfer:include/flashinfer/activation.cuh::silu_kernel
__device__ __forceinline__ float silu(const float& x)
{
    return x / (1.0f + __expf(-x));
}

// portq: ports flashinfer:include/flashinfer/activation.cuh::act_and_mul_kernel
template <typename T, float (*Act)(const float&)>
__global__ void gated_act_kernel(T* __restrict__ out, const T* __restrict__ gate_up, const int d)
{
    constexpr uint32_t kVec = 16 / sizeof(T);
    const int64_t token = blockIdx.x;
    const int64_t stride = blockDim.x;
    const T* gate = gate_up + token * 2 * d;
    const T* up = gate + d;
    T* y = out + token * d;

#pragma unroll 1
    for (int64_t i = threadIdx.x; i < d / kVec; i += stride) {
        Packed<T, kVec> g, u, o;
        g.load(gate + i * kVec);
        u.load(up + i * kVec);
#pragma unroll
        for (uint32_t j = 0; j < kVec; ++j) {
            o.set(j, Act(g.get(j)) * u.get(j));
        }
        o.store(y + i * kVec);
    }

    // columns past the last full vector of the row
    const int64_t tail = d - d % kVec;
#pragma unroll 1
    for (int64_t i = tail + threadIdx.x; i < d; i += stride) {
        y[i] = from_float<T>(Act(to_float(gate[i])) * to_float(up[i]));
    }
}

// The engine's own launcher (upstream leaves the launch to its bindings):
// one block per token, at most 1024 threads.
template <typename T>
cudaError_t launch_silu_and_mul(T* out, const T* gate_up, int64_t num_tokens, int d, cudaStream_t stream)
{
    if (num_tokens == 0) {
        return cudaSuccess;
    }
    constexpr int kVec = 16 / sizeof(T);
    const dim3 grid(num_tokens);
    const dim3 block(std::max(1, std::min(d / kVec, 1024)));
    gated_act_kernel<T, silu><<<grid, block, 0, stream>>>(out, gate_up, d);
    return cudaGetLastError();
}

}  // namespace engine_kernels
