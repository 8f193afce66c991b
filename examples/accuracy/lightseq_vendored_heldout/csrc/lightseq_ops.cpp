// Torch ops of the engine's encoder over LightSeq's CUDA kernels, which are
// vendored unmodified under third_party/lightseq/ (normalize_kernels.cu,
// softmax_kernels.cu and includes/block_reduce.h; the launcher header
// kernels.h they include comes from LightSeq's kernel includes at the same
// commit on the build's include path): the LayerNorm forward and the in-place
// attention softmax with an additive key-padding mask. This file only checks
// tensors, allocates outputs and calls the launchers on the current stream; the
// vendored backward launchers are built but called by nothing here.

#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <torch/all.h>
#include <torch/library.h>

#include <vector>

#include "kernels.h"

namespace engine_lightseqv {

static bool is_half(const torch::Tensor& t) { return t.scalar_type() == at::ScalarType::Half; }

// x: (..., hidden) contiguous fp32/fp16; gamma, beta: (hidden,) of x's dtype. Returns (y, var, mean).
std::vector<torch::Tensor> layer_norm(const torch::Tensor& x, const torch::Tensor& gamma, const torch::Tensor& beta)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "layer_norm: contiguous CUDA x");
    TORCH_CHECK(x.scalar_type() == at::ScalarType::Float || is_half(x), "layer_norm: fp32 or fp16 x");
    const int64_t hidden = x.size(-1);
    TORCH_CHECK(gamma.sizes() == torch::IntArrayRef{hidden} && beta.sizes() == gamma.sizes() &&
                    gamma.scalar_type() == x.scalar_type() && beta.scalar_type() == x.scalar_type(),
                "layer_norm: gamma and beta must be (", hidden, ",) in x's dtype");
    const int64_t tokens = x.numel() / hidden;
    at::cuda::CUDAGuard guard{x.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    auto y = torch::empty_like(x);
    auto var = torch::empty({tokens}, x.options());
    auto mean = torch::empty({tokens}, x.options());
    auto g = gamma.contiguous();
    auto b = beta.contiguous();
    if (is_half(x)) {
        launch_layer_norm<__half>(reinterpret_cast<__half*>(y.data_ptr<at::Half>()),
                                  reinterpret_cast<__half*>(var.data_ptr<at::Half>()),
                                  reinterpret_cast<__half*>(mean.data_ptr<at::Half>()),
                                  reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
                                  reinterpret_cast<const __half*>(g.data_ptr<at::Half>()),
                                  reinterpret_cast<const __half*>(b.data_ptr<at::Half>()), (int)tokens, (int)hidden,
                                  stream);
    } else {
        launch_layer_norm<float>(y.data_ptr<float>(), var.data_ptr<float>(), mean.data_ptr<float>(),
                                 x.data_ptr<float>(), g.data_ptr<float>(), b.data_ptr<float>(), (int)tokens,
                                 (int)hidden, stream);
    }
    return {y, var, mean};
}

// scores: (batch, heads, q_len, k_len) contiguous, normalised in place and
// returned; key_mask: (batch, k_len) additive in the scores' dtype, or None.
// The engine never asks for the future mask: its decoder attends to cached keys.
torch::Tensor attn_softmax(const torch::Tensor& scores, const c10::optional<torch::Tensor>& key_mask)
{
    TORCH_CHECK(scores.is_cuda() && scores.is_contiguous() && scores.dim() == 4,
                "attn_softmax: contiguous 4-D CUDA scores");
    TORCH_CHECK(scores.scalar_type() == at::ScalarType::Float || is_half(scores), "attn_softmax: fp32 or fp16");
    const int batch = scores.size(0), heads = scores.size(1), q_len = scores.size(2), k_len = scores.size(3);
    torch::Tensor mask;
    if (key_mask.has_value()) {
        mask = key_mask->contiguous();
        TORCH_CHECK(mask.dim() == 2 && mask.size(0) == batch && mask.size(1) == k_len &&
                        mask.scalar_type() == scores.scalar_type(),
                    "attn_softmax: key_mask must be (batch, k_len) in the scores' dtype");
    }
    at::cuda::CUDAGuard guard{scores.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    if (is_half(scores)) {
        launch_attn_softmax<__half>(
            reinterpret_cast<__half*>(scores.data_ptr<at::Half>()),
            mask.defined() ? reinterpret_cast<const __half*>(mask.data_ptr<at::Half>()) : nullptr, batch, heads, q_len,
            k_len, /*mask_future=*/false, stream);
    } else {
        launch_attn_softmax<float>(scores.data_ptr<float>(), mask.defined() ? mask.data_ptr<float>() : nullptr, batch,
                                   heads, q_len, k_len, /*mask_future=*/false, stream);
    }
    return scores;
}

}  // namespace engine_lightseqv

TORCH_LIBRARY(engine_lightseqv, m)
{
    m.def("layer_norm(Tensor x, Tensor gamma, Tensor beta) -> Tensor[]");
    m.impl("layer_norm", torch::kCUDA, &engine_lightseqv::layer_norm);
    m.def("attn_softmax(Tensor(a!) scores, Tensor? key_mask) -> Tensor(a!)");
    m.impl("attn_softmax", torch::kCUDA, &engine_lightseqv::attn_softmax);
}
