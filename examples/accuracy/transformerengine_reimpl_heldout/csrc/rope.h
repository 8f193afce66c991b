// Rotary embedding of the engine's attention inputs (see rope.cu).
#pragma once

#include <cuda_runtime.h>

namespace engine_kernels {

// Token layout of the rotated tensor: packed tokens of a varlen batch, or a
// padded (batch, seq) grid.
enum class TokenLayout { kPacked, kSeqBatch, kBatchSeq };

template <typename T>
void launch_rope_forward(const T* input, const int* cu_seqlens, const float* angles, const int* start_positions,
                         T* output, TokenLayout layout, int s, int b, int h, int d, int rot_dim, int stride_token,
                         int stride_b, int stride_h, int stride_d, cudaStream_t stream);

// Fills angles[pos, i] = pos * theta^(-2(i mod rot_dim/2)/rot_dim) for the
// half-rotation layout the RoPE kernel reads.
void launch_rope_angles(float* angles, int max_positions, int rot_dim, float theta, cudaStream_t stream);

}  // namespace engine_kernels
