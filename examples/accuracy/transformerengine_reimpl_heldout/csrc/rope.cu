// Rotary position embedding for the engine's attention: a CUDA
// re-implementation of Transformer Engine's fused RoPE forward
// (transformer_engine/common/fused_rope/fused_rope.cu).
//
// One thread block per (position, sequence); the 32 lanes of a warp walk the
// rotated dimensions and the warps walk the heads. Packed (varlen) batches
// are addressed through cu_seqlens, padded ones through the batch stride; a
// decode step offsets each sequence's positions by its start position.
// Differences from upstream, by design: inference only (no backward), no
// context parallelism, the half-rotation (GPT-NeoX) layout only, and the
// output is always written packed in the input's token order.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include "rope.h"

namespace engine_kernels {

constexpr int kWarpLanes = 32;

// portq: ports transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_block_forward
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_block_forward[interleaved] -- the engine's checkpoints all use the half-rotation layout
template <typename T>
__device__ void rope_half_rotate_block(const T* src, const float* angles, T* dst, int pos, int src_base,
                                       int dst_base, int h, int d, int rot_dim, int stride_h, int stride_d,
                                       int dst_stride_h, int dst_stride_d)
{
    const int half = rot_dim / 2;
    for (int i = threadIdx.x; i < rot_dim; i += blockDim.x) {
        float sin_v, cos_v;
        sincosf(angles[pos * rot_dim + i], &sin_v, &cos_v);
        // Partner of i in the other half: x[i + half] (negated) below half, x[i - half] above.
        const int partner = i < half ? i + half : i - half;
        const float sign = i < half ? -1.f : 1.f;
        for (int head = threadIdx.y; head < h; head += blockDim.y) {
            const int at = src_base + head * stride_h;
            const float x = static_cast<float>(src[at + i * stride_d]);
            const float y = sign * static_cast<float>(src[at + partner * stride_d]);
            dst[dst_base + head * dst_stride_h + i * dst_stride_d] = static_cast<T>(x * cos_v + y * sin_v);
        }
    }
    // Dimensions past rot_dim pass through unrotated.
    for (int head = threadIdx.y; head < h; head += blockDim.y) {
        for (int i = rot_dim + threadIdx.x; i < d; i += blockDim.x) {
            dst[dst_base + head * dst_stride_h + i * dst_stride_d] = src[src_base + head * stride_h + i * stride_d];
        }
    }
}

// portq: ports transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_kernel
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_kernel[interleaved] -- half-rotation layout only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_kernel[cp_size] -- no context parallelism at inference
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_kernel[cp_rank] -- no context parallelism at inference
template <typename T>
__global__ void rope_forward_kernel(const T* src, const int* cu_seqlens, const float* angles,
                                    const int* start_positions, T* dst, int s, int h, int d, int rot_dim,
                                    int stride_token, int stride_b, int stride_h, int stride_d, int dst_stride_token,
                                    int dst_stride_b, int dst_stride_h, int dst_stride_d)
{
    const int seq_pos = blockIdx.x;
    const int seq     = blockIdx.y;
    int src_base, dst_base;
    if (cu_seqlens != nullptr) {
        const int token = cu_seqlens[seq] + seq_pos;
        if (token >= cu_seqlens[seq + 1]) {
            return;
        }
        src_base = token * stride_token;
        dst_base = token * dst_stride_token;
    }
    else {
        src_base = seq_pos * stride_token + seq * stride_b;
        dst_base = seq_pos * dst_stride_token + seq * dst_stride_b;
    }
    const int pos = seq_pos + (start_positions != nullptr ? start_positions[seq] : 0);
    rope_half_rotate_block(src, angles, dst, pos, src_base, dst_base, h, d, rot_dim, stride_h, stride_d,
                           dst_stride_h, dst_stride_d);
}

// portq: ports transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_launcher
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_launcher[interleaved] -- half-rotation layout only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_launcher[cp_size] -- no context parallelism at inference
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward_launcher[cp_rank] -- no context parallelism at inference
template <typename T>
void launch_rope_forward(const T* input, const int* cu_seqlens, const float* angles, const int* start_positions,
                         T* output, TokenLayout layout, int s, int b, int h, int d, int rot_dim, int stride_token,
                         int stride_b, int stride_h, int stride_d, cudaStream_t stream)
{
    TORCH_CHECK(rot_dim % 2 == 0 && rot_dim <= d, "launch_rope_forward: rot_dim must be even and at most d");
    const dim3 grid(s, b);
    const dim3 block(kWarpLanes, h < 16 ? 4 : 8);
    int dst_stride_token, dst_stride_b;
    switch (layout) {
        case TokenLayout::kPacked:
            TORCH_CHECK(cu_seqlens != nullptr, "launch_rope_forward: packed tokens need cu_seqlens");
            dst_stride_token = h * d;
            dst_stride_b     = 0;
            break;
        case TokenLayout::kSeqBatch:
            dst_stride_token = b * h * d;
            dst_stride_b     = h * d;
            break;
        default:
            dst_stride_token = h * d;
            dst_stride_b     = s * h * d;
    }
    rope_forward_kernel<<<grid, block, 0, stream>>>(input, cu_seqlens, angles, start_positions, output, s, h, d,
                                                    rot_dim, stride_token, stride_b, stride_h, stride_d,
                                                    dst_stride_token, dst_stride_b, d, 1);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_block_backward -- inference only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_backward_kernel -- inference only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_backward_launcher -- inference only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_backward -- inference only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::nvte_fused_rope_backward -- inference only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::nvte_fused_rope_forward -- the engine calls the typed launchers from its own torch ops, not the NVTETensor C API

// The engine's own: the angle table the kernel reads, built on the device so
// a long-context model does not copy it from the host at start-up.
__global__ void rope_angles_kernel(float* angles, int max_positions, int rot_dim, float log_theta)
{
    const int pos = blockIdx.x;
    if (pos >= max_positions) {
        return;
    }
    const int half = rot_dim / 2;
    for (int i = threadIdx.x; i < rot_dim; i += blockDim.x) {
        const int pair         = i < half ? i : i - half;
        const float inv_freq   = __expf(-log_theta * (2.f * pair) / rot_dim);
        angles[pos * rot_dim + i] = pos * inv_freq;
    }
}

void launch_rope_angles(float* angles, int max_positions, int rot_dim, float theta, cudaStream_t stream)
{
    if (max_positions == 0) {
        return;
    }
    rope_angles_kernel<<<max_positions, 128, 0, stream>>>(angles, max_positions, rot_dim, logf(theta));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template void launch_rope_forward<half>(const half*, const int*, const float*, const int*, half*, TokenLayout, int,
                                        int, int, int, int, int, int, int, int, cudaStream_t);
template void launch_rope_forward<__nv_bfloat16>(const __nv_bfloat16*, const int*, const float*, const int*,
                                                 __nv_bfloat16*, TokenLayout, int, int, int, int, int, int, int,
                                                 int, int, cudaStream_t);

}  // namespace engine_kernels
