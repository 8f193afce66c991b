// Small helpers shared by the engine's attention-block kernels: ceiling
// division and a launch-error check that returns the status to the caller.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cstdint>

namespace engine_kernels {

__host__ __device__ constexpr int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

inline cudaError_t last_launch_status()
{
    return cudaGetLastError();
}

}  // namespace engine_kernels
