// The MLP gate of the engine's decoder, the port of TurboMind's
// activation_kernels (the SiLU gate of invokeGenericActivation_v2).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace dec {

// act[t, :] <- silu(act[t, :]) * up[t, :], in place; both share the row stride
template<class T>
void launch_gated_silu(T* act, const T* up, int64_t row_stride, int tokens, int dims, cudaStream_t stream);

}  // namespace dec
