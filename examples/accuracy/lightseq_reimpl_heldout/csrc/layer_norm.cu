// LayerNorm forward of the engine's encoder: one block per token, each thread
// holding one 16-byte pack of the hidden vector (4 floats or 8 halves), so the
// hidden size must be a multiple of the pack and at most 1024 packs. Writes the
// normalised row and the per-token variance (epsilon included), and the mean
// when the caller passes somewhere to put it. Inference only: no backward.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>

#include "reduce.cuh"

namespace enc {

// Added to the variance before the reciprocal square root (upstream's LN_EPSILON).
constexpr float kLnEps = 1e-8f;

template <typename T>
struct Pack16;
template <>
struct Pack16<float> {
    static constexpr int kElems = 4;
    __device__ static void unpack(const float4& p, float* out) { out[0] = p.x; out[1] = p.y; out[2] = p.z; out[3] = p.w; }
    __device__ static float4 pack(const float* in) { return make_float4(in[0], in[1], in[2], in[3]); }
};
template <>
struct Pack16<__half> {
    static constexpr int kElems = 8;
    __device__ static void unpack(const float4& p, float* out)
    {
        const __half2* h = reinterpret_cast<const __half2*>(&p);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float2 f = __half22float2(h[i]);
            out[2 * i] = f.x;
            out[2 * i + 1] = f.y;
        }
    }
    __device__ static float4 pack(const float* in)
    {
        float4 p;
        __half2* h = reinterpret_cast<__half2*>(&p);
#pragma unroll
        for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(in[2 * i], in[2 * i + 1]);
        return p;
    }
};

// grid: tokens; block: hidden / Pack16<T>::kElems threads.
// portq: ports lightseq:lightseq/training/csrc/kernels/normalize_kernels.cu::ker_layer_norm
template <typename T>
__global__ void layer_norm_kernel(T* out, T* vars, T* means, const T* x, const T* gamma, const T* beta,
                                  int packs_per_row)
{
    constexpr int E = Pack16<T>::kElems;
    const int token = blockIdx.x;
    const int idx = token * packs_per_row + threadIdx.x;
    float v[E];
    Pack16<T>::unpack(reinterpret_cast<const float4*>(x)[idx], v);

    float acc[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < E; ++i) {
        acc[0] += v[i];
        acc[1] += v[i] * v[i];
    }
    block_reduce<Reduce::kSum, 2>(acc);

    __shared__ float s_mean, s_rstd;
    if (threadIdx.x == 0) {
        const float n = float(packs_per_row * E);
        const float mean = acc[0] / n;
        const float var = acc[1] / n - mean * mean + kLnEps;
        if (means != nullptr) means[token] = T(mean);
        vars[token] = T(var);
        s_mean = mean;
        s_rstd = rsqrtf(var);
    }
    __syncthreads();

    float g[E], b[E];
    Pack16<T>::unpack(__ldg(reinterpret_cast<const float4*>(gamma) + threadIdx.x), g);
    Pack16<T>::unpack(__ldg(reinterpret_cast<const float4*>(beta) + threadIdx.x), b);
#pragma unroll
    for (int i = 0; i < E; ++i) v[i] = (v[i] - s_mean) * s_rstd * g[i] + b[i];
    reinterpret_cast<float4*>(out)[idx] = Pack16<T>::pack(v);
}

// portq: ports lightseq:lightseq/training/csrc/kernels/normalize_kernels.cu::launch_layer_norm
// portq: not-carried lightseq:lightseq/training/csrc/kernels/normalize_kernels.cu::ker_ln_bw_dgamma_dbetta -- inference engine: no autograd, forward only
// portq: not-carried lightseq:lightseq/training/csrc/kernels/normalize_kernels.cu::ker_ln_bw_dinp -- inference engine: no autograd, forward only
// portq: not-carried lightseq:lightseq/training/csrc/kernels/normalize_kernels.cu::launch_ln_bw -- inference engine: no autograd, forward only
template <typename T>
void launch_layer_norm(T* out, T* vars, T* means, const T* x, const T* gamma, const T* beta, int tokens, int hidden,
                       cudaStream_t stream)
{
    constexpr int E = Pack16<T>::kElems;
    if (hidden % E != 0 || hidden / E > 1024) {
        throw std::runtime_error("launch_layer_norm: hidden size must be a multiple of the 16-byte pack and fit 1024 threads");
    }
    const int packs = hidden / E;
    layer_norm_kernel<T><<<tokens, packs, 0, stream>>>(out, vars, means, x, gamma, beta, packs);
}

template void launch_layer_norm<float>(float*, float*, float*, const float*, const float*, const float*, int, int,
                                       cudaStream_t);
template void launch_layer_norm<__half>(__half*, __half*, __half*, const __half*, const __half*, const __half*, int,
                                        int, cudaStream_t);

}  // namespace enc
