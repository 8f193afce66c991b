// Launchers of the engine's transformer-layer kernels (pointwise.cu,
// attn_softmax.cu): the MLP's bias-GeLU, bias-add, the pre-LN residual add and
// the masked attention softmax, for fp32 and fp16 activations. Declarations
// only; the torch ops in bindings.cpp are their one caller.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace layer_kernels {

template <typename T>
void bias_gelu(T* act, const T* bias, int width, int rows, cudaStream_t stream);

template <typename T>
void bias_gelu_out(T* out, const T* act, const T* bias, int width, int rows, cudaStream_t stream);

template <typename T>
void bias_add(T* act, const T* bias, int width, int rows, cudaStream_t stream);

template <typename T>
void residual_add(const T* residual, T* mlp_out, const T* attn, const T* mlp_bias, const T* attn_bias, int rows,
                  int width, int mp_size, cudaStream_t stream);

template <typename T>
void masked_softmax(T* scores, const T* mask, float scale, bool causal, int batch, int heads, int queries,
                    int keys, int mask_stride, cudaStream_t stream);

}  // namespace layer_kernels
