// RMSNorm over packed rows, the engine's port of TurboMind's norm/rms_norm.
#pragma once

#include <cuda_runtime.h>

namespace dec {

// out[t, :] = x[t, :] * rsqrt(mean(x[t, :]^2) + eps) * weight, rows of `dims` packed
template<class T>
void launch_rms_norm(T* out, const T* x, const T* weight, int dims, int tokens, float eps, cudaStream_t stream);

}  // namespace dec
