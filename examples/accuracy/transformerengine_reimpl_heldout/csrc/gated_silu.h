// SwiGLU gate of the engine's MLP (see gated_silu.cu).
#pragma once

#include <cstddef>
#include <cuda_runtime.h>

namespace engine_kernels {

// gate_up: rows of 2 * n values, the gate first; out: rows of n values.
template <typename T>
void swiglu(const T* gate_up, T* out, size_t rows, size_t n, cudaStream_t stream);

}  // namespace engine_kernels
