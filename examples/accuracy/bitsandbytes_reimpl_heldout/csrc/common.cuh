// Shared definitions of the engine's 4-bit weight kernels: the launch check
// every launcher ends with (check_launch) and the two 4-bit formats, numbered as
// bitsandbytes numbers them so packed checkpoints carry the same tag.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace engine_q4 {

// A launch error here means a bad configuration, not bad data: stop loudly.
// portq: ports bitsandbytes:csrc/ops.cuh::CUDA_CHECK_RETURN
inline void check_launch(cudaError_t status, const char* file, int line)
{
    if (status != cudaSuccess) {
        fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(status), file, line);
        exit(1);
    }
}

// bitsandbytes' DataType_t values; its 8-bit dynamic format (General8bit = 0)
// is not carried: see blockwise.cuh.
typedef enum QuantKind {
    kFP4 = 1,
    kNF4 = 2,
} QuantKind;

}  // namespace engine_q4
