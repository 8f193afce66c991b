// The engine's pointwise kernels of a transformer layer, re-implemented from
// DeepSpeed's inference gelu.cu: bias-GeLU (tanh form) in place and out of
// place, bias-add, and the pre-LN residual add that closes the layer. Each
// thread handles four consecutive elements of a row; rows are contiguous and
// their width is a multiple of four. fp32 and fp16, computed in fp32.
#include "layer_kernels.cuh"

namespace layer_kernels {

// portq: not-carried deepspeed:csrc/transformer/inference/csrc/gelu.cu::gptj_residual_add -- the engine serves sequential (attention then MLP) layers only
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/gelu.cu::launch_gptj_residual_add -- the engine serves sequential (attention then MLP) layers only

namespace {

constexpr int kThreads = 1024;
constexpr int kVec = 4;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

}  // namespace

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::gelu
__device__ __forceinline__ float gelu_tanh(float x)
{
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    const float k0 = 0.7978845608028654f;
    const float k1 = 0.044715f;
    const float inner = k0 * x * (1.0f + k1 * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::fused_bias_gelu
template <typename T>
__global__ void bias_gelu_kernel(T* act, const T* bias, int n_vec, int width_vec)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n_vec) return;
    const int base = v * kVec;
    const int col = (v % width_vec) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i)
        act[base + i] = from_float<T>(gelu_tanh(to_float(act[base + i]) + to_float(bias[col + i])));
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::launch_bias_gelu
template <typename T>
void bias_gelu(T* act, const T* bias, int width, int rows, cudaStream_t stream)
{
    const int n_vec = rows * (width / kVec);
    bias_gelu_kernel<T><<<(n_vec + kThreads - 1) / kThreads, kThreads, 0, stream>>>(act, bias, n_vec, width / kVec);
}

// The engine's own: GeLU of act + bias into a separate buffer, so the
// pre-activation survives for the LoRA adapters that read it.
template <typename T>
__global__ void bias_gelu_out_kernel(T* out, const T* act, const T* bias, int n_vec, int width_vec)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n_vec) return;
    const int base = v * kVec;
    const int col = (v % width_vec) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i)
        out[base + i] = from_float<T>(gelu_tanh(to_float(act[base + i]) + to_float(bias[col + i])));
}

template <typename T>
void bias_gelu_out(T* out, const T* act, const T* bias, int width, int rows, cudaStream_t stream)
{
    const int n_vec = rows * (width / kVec);
    bias_gelu_out_kernel<T>
        <<<(n_vec + kThreads - 1) / kThreads, kThreads, 0, stream>>>(out, act, bias, n_vec, width / kVec);
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::fused_bias_add
template <typename T>
__global__ void bias_add_kernel(T* act, const T* bias, int n_vec, int width_vec)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n_vec) return;
    const int base = v * kVec;
    const int col = (v % width_vec) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i) act[base + i] = from_float<T>(to_float(act[base + i]) + to_float(bias[col + i]));
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::launch_bias_add
template <typename T>
void bias_add(T* act, const T* bias, int width, int rows, cudaStream_t stream)
{
    const int n_vec = rows * (width / kVec);
    bias_add_kernel<T><<<(n_vec + kThreads - 1) / kThreads, kThreads, 0, stream>>>(act, bias, n_vec, width / kVec);
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::fused_bias_residual
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/gelu.cu::fused_bias_residual[preln] -- pre-LN layers only
template <typename T>
__global__ void residual_add_kernel(const T* residual, T* mlp_out, const T* attn, const T* mlp_bias,
                                    const T* attn_bias, int n_vec, int width_vec, float mp_scale)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n_vec) return;
    const int base = v * kVec;
    const int col = (v % width_vec) * kVec;
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
        // the residual and attention shares are divided by the tensor-parallel
        // degree, so the all-reduce of mlp_out counts them once
        const float shared = to_float(residual[base + i]) + to_float(attn[base + i]) + to_float(mlp_bias[col + i]) +
                             to_float(attn_bias[col + i]);
        mlp_out[base + i] = from_float<T>(to_float(mlp_out[base + i]) + shared * mp_scale);
    }
}

// portq: ports deepspeed:csrc/transformer/inference/csrc/gelu.cu::launch_bias_residual
// portq: not-carried deepspeed:csrc/transformer/inference/csrc/gelu.cu::launch_bias_residual[preln] -- pre-LN layers only
template <typename T>
void residual_add(const T* residual, T* mlp_out, const T* attn, const T* mlp_bias, const T* attn_bias, int rows,
                  int width, int mp_size, cudaStream_t stream)
{
    const int n_vec = rows * (width / kVec);
    residual_add_kernel<T><<<(n_vec + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        residual, mlp_out, attn, mlp_bias, attn_bias, n_vec, width / kVec, 1.0f / mp_size);
}

#define LAYER_KERNELS_POINTWISE(T)                                                                       \
    template void bias_gelu<T>(T*, const T*, int, int, cudaStream_t);                                    \
    template void bias_gelu_out<T>(T*, const T*, const T*, int, int, cudaStream_t);                      \
    template void bias_add<T>(T*, const T*, int, int, cudaStream_t);                                     \
    template void residual_add<T>(const T*, T*, const T*, const T*, const T*, int, int, int, cudaStream_t);

LAYER_KERNELS_POINTWISE(float)
LAYER_KERNELS_POINTWISE(__half)

}  // namespace layer_kernels
