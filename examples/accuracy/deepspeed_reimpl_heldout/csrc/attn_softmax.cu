// The engine's attention softmax, re-implemented from DeepSpeed's inference
// softmax.cu: in place over raw scores laid out (batch, heads, queries, keys),
// scaled, with an optional additive mask (one row per query or one for all
// queries, per batch) and an optional causal bound, then normalised in fp32.
// One block per score row. ALiBi, local (windowed) attention and the
// recompute switch are not carried.
#include <cfloat>

#include "layer_kernels.cuh"

namespace layer_kernels {

// Fill of masked-out scores, finite as upstream's minus_infinity: an all-masked
// row stays a uniform row.
constexpr float kMaskedScore = -10000.0f;

namespace {

constexpr int kSoftmaxThreads = 256;

__device__ __forceinline__ float load_f(const float* p, int i) { return p[i]; }
__device__ __forceinline__ float load_f(const __half* p, int i) { return __half2float(p[i]); }
__device__ __forceinline__ void store_f(float* p, int i, float v) { p[i] = v; }
__device__ __forceinline__ void store_f(__half* p, int i, float v) { p[i] = __float2half_rn(v); }

// Block-wide reductions through one shared slot per warp.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = kMax ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < warps ? scratch[lane] : (kMax ? -FLT_MAX : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = kMax ? fmaxf(v, other) : v + other;
    }
    __syncthreads();
    return v;
}

}  // namespace

// portq: ports deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2[alibi] -- no ALiBi models in the engine
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2[recompute] -- the mask is applied whenever one is given
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2[local_attention] -- no windowed attention
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2[window_size] -- no windowed attention
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2[head_offset] -- only the ALiBi offset reads it
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::attn_softmax_v2[mp_size] -- only the ALiBi offset reads it
template <typename T>
__global__ void masked_softmax_kernel(T* scores, const T* mask, float scale, bool causal, int heads, int queries,
                                      int keys, int mask_stride)
{
    __shared__ float scratch[32];
    const int row = blockIdx.x;
    const int query = row % queries;
    const int batch = row / (queries * heads);
    T* x = scores + (size_t)row * keys;
    const T* m = mask ? mask + ((size_t)batch * mask_stride + row % mask_stride) * keys : nullptr;

    float row_max = -FLT_MAX;
    for (int k = threadIdx.x; k < keys; k += blockDim.x) {
        float s = (causal && k > query) ? kMaskedScore : load_f(x, k) * scale;
        if (m) s += load_f(m, k);
        row_max = fmaxf(row_max, s);
    }
    row_max = block_reduce<true>(row_max, scratch);

    float row_sum = 0.f;
    for (int k = threadIdx.x; k < keys; k += blockDim.x) {
        float s = (causal && k > query) ? kMaskedScore : load_f(x, k) * scale;
        if (m) s += load_f(m, k);
        row_sum += __expf(s - row_max);
    }
    row_sum = block_reduce<false>(row_sum, scratch) + 1e-6f;

    for (int k = threadIdx.x; k < keys; k += blockDim.x) {
        float s = (causal && k > query) ? kMaskedScore : load_f(x, k) * scale;
        if (m) s += load_f(m, k);
        store_f(x, k, __expf(s - row_max) / row_sum);
    }
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2[alibi] -- no ALiBi models in the engine
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2[recompute] -- the mask is applied whenever one is given
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2[local_attention] -- no windowed attention
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2[window_size] -- no windowed attention
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2[head_offset] -- only the ALiBi offset reads it
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/softmax.cu::launch_attn_softmax_v2[mp_size] -- only the ALiBi offset reads it
template <typename T>
void masked_softmax(T* scores, const T* mask, float scale, bool causal, int batch, int heads, int queries, int keys,
                    int mask_stride, cudaStream_t stream)
{
    const int rows = batch * heads * queries;
    masked_softmax_kernel<T><<<rows, kSoftmaxThreads, 0, stream>>>(scores, mask, scale, causal, heads, queries, keys,
                                                                   mask_stride > 0 ? mask_stride : 1);
}

template void masked_softmax<float>(float*, const float*, float, bool, int, int, int, int, int, cudaStream_t);
template void masked_softmax<__half>(__half*, const __half*, float, bool, int, int, int, int, int, cudaStream_t);

}  // namespace layer_kernels
