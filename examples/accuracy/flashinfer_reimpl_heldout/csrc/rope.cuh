// Rotary position embedding applied in place to packed queries and keys,
// re-implemented from FlashInfer's pos_enc.cuh: requests are given by an
// indptr over the packed tokens and the position of their first token; one
// block per (request, head), rows of the head spread over blockDim.y, the
// head dimension over blockDim.x in vectors. Rotate-half (Llama/NeoX) layout.
#pragma once

#include <algorithm>
#include <type_traits>

#include "common.cuh"

namespace engine_kernels {

// portq: ports flashinfer:include/flashinfer/pos_enc.cuh::vec_apply_llama_rope
template <uint32_t VEC, uint32_t BDX, typename T>
__device__ __forceinline__ Packed<float, VEC> rotate_half_vec(const T* x, const Packed<float, VEC>& freq,
                                                              int32_t pos)
{
    constexpr uint32_t kHeadDim = VEC * BDX;
    const uint32_t col = threadIdx.x * VEC;
    const bool first_half = col < kHeadDim / 2;
    const uint32_t partner = first_half ? col + kHeadDim / 2 : col - kHeadDim / 2;
    Packed<float, VEC> out;
#pragma unroll
    for (uint32_t i = 0; i < VEC; ++i) {
        float s, c;
        __sincosf(float(pos) * freq.v[i], &s, &c);
        const float self = to_float(x[col + i]);
        const float other = to_float(x[partner + i]);
        out.v[i] = self * c + (first_half ? -other : other) * s;
    }
    return out;
}

// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::vec_apply_llama_rope_interleave -- the engine serves rotate-half checkpoints only; GPT-J interleaved pairs are converted at load time

// portq: ports flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryInPlaceKernel
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryInPlaceKernel[interleave] -- the engine serves rotate-half checkpoints only
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryInPlaceKernel[smooth_a] -- no Llama 3.1 frequency smoothing
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryInPlaceKernel[smooth_b] -- no Llama 3.1 frequency smoothing
template <uint32_t HEAD_DIM, uint32_t VEC, uint32_t BDX, typename T, typename IdT>
__global__ void rope_inplace_kernel(T* __restrict__ q, T* __restrict__ k, const IdT* __restrict__ indptr,
                                    const IdT* __restrict__ offsets, uint32_t batch_size, uint32_t num_q_heads,
                                    uint32_t num_kv_heads, size_t q_stride_n, size_t q_stride_h, size_t k_stride_n,
                                    size_t k_stride_h, float inv_scale, float inv_theta)
{
    const uint32_t bx = blockIdx.x, tx = threadIdx.x, ty = threadIdx.y;
    const uint32_t bdy = blockDim.y;

    Packed<float, VEC> freq;
#pragma unroll
    for (uint32_t i = 0; i < VEC; ++i) {
        const uint32_t pair = (tx * VEC + i) % (HEAD_DIM / 2);
        freq.v[i] = __powf(inv_theta, float(2 * pair) / float(HEAD_DIM)) * inv_scale;
    }

    const bool is_q = bx < batch_size * num_q_heads;
    const uint32_t heads = is_q ? num_q_heads : num_kv_heads;
    const uint32_t slot = is_q ? bx : bx - batch_size * num_q_heads;
    const uint32_t req = slot / heads, head = slot % heads;
    T* base = is_q ? q : k;
    const size_t stride_n = is_q ? q_stride_n : k_stride_n;
    const size_t stride_h = is_q ? q_stride_h : k_stride_h;
    const uint32_t first = indptr[req];
    const uint32_t len = indptr[req + 1] - first;
    const int32_t pos0 = offsets[req];

#pragma unroll 2
    for (uint32_t row0 = 0; row0 < len; row0 += bdy) {
        // the trip count is the same for every thread of the block, so the
        // whole warp meets at the barrier between reading and writing
        const uint32_t row = row0 + ty;
        T* x = base + (first + row) * stride_n + head * stride_h;
        Packed<float, VEC> y;
        if (row < len) {
            y = rotate_half_vec<VEC, BDX>(x, freq, pos0 + int32_t(row));
        }
        __syncwarp();
        if (row < len) {
#pragma unroll
            for (uint32_t i = 0; i < VEC; ++i) {
                x[tx * VEC + i] = from_float<T>(y.v[i]);
            }
        }
    }
}

// portq: ports flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryInPlace
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryInPlace[interleave] -- the engine serves rotate-half checkpoints only
template <typename T, typename IdT>
cudaError_t launch_rope_inplace(T* q, T* k, const IdT* indptr, const IdT* offsets, uint32_t batch_size,
                                uint32_t num_q_heads, uint32_t num_kv_heads, uint32_t head_dim, size_t q_stride_n,
                                size_t q_stride_h, size_t k_stride_n, size_t k_stride_h, float rope_scale,
                                float rope_theta, cudaStream_t stream)
{
    const float inv_scale = 1.0f / rope_scale;
    const float inv_theta = 1.0f / rope_theta;
    const dim3 grid(batch_size * (num_q_heads + num_kv_heads));
    // one (request, head) per block; 16-byte vectors across the head, rows over blockDim.y
    auto launch = [&](auto head_dim_tag) {
        constexpr uint32_t kHeadDim = decltype(head_dim_tag)::value;
        constexpr uint32_t kVec = std::max<uint32_t>(16 / sizeof(T), kHeadDim / 32);
        constexpr uint32_t kBdx = kHeadDim / kVec;
        const dim3 block(kBdx, std::max(128u, kBdx) / kBdx);
        rope_inplace_kernel<kHeadDim, kVec, kBdx, T, IdT><<<grid, block, 0, stream>>>(
            q, k, indptr, offsets, batch_size, num_q_heads, num_kv_heads, q_stride_n, q_stride_h, k_stride_n,
            k_stride_h, inv_scale, inv_theta);
    };
    switch (head_dim) {
    case 64: launch(std::integral_constant<uint32_t, 64>{}); break;
    case 128: launch(std::integral_constant<uint32_t, 128>{}); break;
    case 256: launch(std::integral_constant<uint32_t, 256>{}); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyLlama31RotaryInPlace -- no Llama 3.1 frequency smoothing
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotaryKernel -- the engine rotates q and k in place, never into new buffers
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyRotary -- the engine rotates q and k in place, never into new buffers
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::BatchQKApplyLlama31Rotary -- no Llama 3.1 frequency smoothing
// portq: not-carried flashinfer:include/flashinfer/pos_enc.cuh::get_alibi_slope -- the engine's models use rotary positions only

}  // namespace engine_kernels
