// In-place attention softmax of the engine's encoder and cross-attention over
// scores (batch, heads, q_len, k_len) with an optional additive key mask
// (batch, k_len): 0 for a real key, a large negative value for padding. Rows of
// up to 64 keys go to a one-warp kernel, up to 512 keys to a block kernel;
// longer rows are refused. Also the engine's own kernel that turns sequence
// lengths into that additive mask. Inference only: no backward, no causal mask.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "reduce.cuh"

namespace enc {

// Keeps the reciprocal of the row sum finite (upstream's EPSILON).
constexpr float kSoftmaxEps = 1e-8f;

// Each thread owns keys [threadIdx.x * PER, threadIdx.x * PER + PER); keys past
// k_len read as kNegInf and are not written.
template <typename T, int PER>
__device__ __forceinline__ void load_row(const T* row, const T* mask, int k_len, float* v)
{
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int key = threadIdx.x * PER + j;
        v[j] = key < k_len ? float(row[key]) + (mask ? float(mask[key]) : 0.f) : kNegInf;
    }
}

template <typename T, int PER>
__device__ __forceinline__ void store_row(T* row, int k_len, const float* v, float scale)
{
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int key = threadIdx.x * PER + j;
        if (key < k_len) row[key] = T(v[j] * scale);
    }
}

// grid: (row blocks, batch, heads); block: THREADS threads, THREADS * PER >= k_len.
// portq: ports lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::ker_attn_softmax
// portq: not-carried lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::ker_attn_softmax[mask_future] -- no causal mask: see launch_attn_softmax
template <typename T, int THREADS, int PER>
__global__ void attn_softmax_block_kernel(T* scores, const T* key_mask, int q_len, int k_len)
{
    const int b = blockIdx.y;
    const int h = blockIdx.z;
    const T* mask = key_mask ? key_mask + (size_t)b * k_len : nullptr;
    T* base = scores + ((size_t)b * gridDim.z + h) * q_len * k_len;
    __shared__ float s_max, s_inv;
    for (int q = blockIdx.x; q < q_len; q += gridDim.x) {
        T* row = base + (size_t)q * k_len;
        float v[PER];
        load_row<T, PER>(row, mask, k_len, v);
        float m[1] = {kNegInf};
#pragma unroll
        for (int j = 0; j < PER; ++j) m[0] = fmaxf(m[0], v[j]);
        block_reduce<Reduce::kMax, 1>(m);
        if (threadIdx.x == 0) s_max = m[0];
        __syncthreads();
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            v[j] = __expf(v[j] - s_max);
            s += v[j];
        }
        s = block_sum(s);
        if (threadIdx.x == 0) s_inv = __fdividef(1.f, s + kSoftmaxEps);
        __syncthreads();
        store_row<T, PER>(row, k_len, v, s_inv);
        __syncthreads();
    }
}

// One warp per row block: no shared memory, the warp reduction leaves the
// result in every lane.
// portq: ports lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::ker_attn_softmax_lt32
// portq: not-carried lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::ker_attn_softmax_lt32[mask_future] -- no causal mask: see launch_attn_softmax
template <typename T, int PER>
__global__ void attn_softmax_warp_kernel(T* scores, const T* key_mask, int q_len, int k_len)
{
    const int b = blockIdx.y;
    const int h = blockIdx.z;
    const T* mask = key_mask ? key_mask + (size_t)b * k_len : nullptr;
    T* base = scores + ((size_t)b * gridDim.z + h) * q_len * k_len;
    for (int q = blockIdx.x; q < q_len; q += gridDim.x) {
        T* row = base + (size_t)q * k_len;
        float v[PER];
        load_row<T, PER>(row, mask, k_len, v);
        float m[1] = {kNegInf};
#pragma unroll
        for (int j = 0; j < PER; ++j) m[0] = fmaxf(m[0], v[j]);
        warp_reduce<Reduce::kMax, 1>(m);
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            v[j] = __expf(v[j] - m[0]);
            s += v[j];
        }
        s = warp_sum(s);
        store_row<T, PER>(row, k_len, v, __fdividef(1.f, s + kSoftmaxEps));
    }
}

// portq: ports lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::launch_attn_softmax
// portq: not-carried lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::launch_attn_softmax[mask_future] -- the engine runs no causal self-attention over whole sequences: its decoder attends to the cached keys so far, which need no future mask
// portq: not-carried lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::ker_attn_softmax_bw -- inference engine: no autograd, forward only
// portq: not-carried lightseq:lightseq/training/csrc/kernels/softmax_kernels.cu::launch_attn_softmax_bw -- inference engine: no autograd, forward only
template <typename T>
void launch_attn_softmax(T* scores, const T* key_mask, int batch, int heads, int q_len, int k_len,
                         cudaStream_t stream)
{
    dim3 grid(1, batch, heads);
    if (k_len <= 32) {
        attn_softmax_warp_kernel<T, 1><<<grid, 32, 0, stream>>>(scores, key_mask, q_len, k_len);
    } else if (k_len <= 64) {
        attn_softmax_warp_kernel<T, 2><<<grid, 32, 0, stream>>>(scores, key_mask, q_len, k_len);
    } else if (k_len <= 128) {
        grid.x = std::min(q_len, 16);
        attn_softmax_block_kernel<T, 64, 2><<<grid, 64, 0, stream>>>(scores, key_mask, q_len, k_len);
    } else if (k_len <= 256) {
        grid.x = std::min(q_len, 32);
        attn_softmax_block_kernel<T, 128, 2><<<grid, 128, 0, stream>>>(scores, key_mask, q_len, k_len);
    } else if (k_len <= 512) {
        grid.x = std::min(q_len, 64);
        attn_softmax_block_kernel<T, 256, 2><<<grid, 256, 0, stream>>>(scores, key_mask, q_len, k_len);
    } else {
        throw std::runtime_error("launch_attn_softmax: at most 512 keys per row");
    }
}

template void launch_attn_softmax<float>(float*, const float*, int, int, int, int, cudaStream_t);
template void launch_attn_softmax<__half>(__half*, const __half*, int, int, int, int, cudaStream_t);

// The engine's own: additive key mask (batch, k_len) from per-sequence lengths.
template <typename T>
__global__ void padding_mask_kernel(T* mask, const int* seq_lens, int k_len)
{
    const int b = blockIdx.x;
    for (int key = threadIdx.x; key < k_len; key += blockDim.x) {
        mask[(size_t)b * k_len + key] = T(key < seq_lens[b] ? 0.f : kNegInf);
    }
}

template <typename T>
void launch_padding_mask(T* mask, const int* seq_lens, int batch, int k_len, cudaStream_t stream)
{
    padding_mask_kernel<T><<<batch, 128, 0, stream>>>(mask, seq_lens, k_len);
}

template void launch_padding_mask<float>(float*, const int*, int, int, cudaStream_t);
template void launch_padding_mask<__half>(__half*, const int*, int, int, cudaStream_t);

}  // namespace enc
