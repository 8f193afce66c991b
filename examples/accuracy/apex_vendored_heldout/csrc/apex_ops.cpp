// Torch ops of the engine's encoder over Apex's fused kernels, which are
// vendored unmodified under third_party/apex/ (the type_shim.h and compat.h
// they include come from Apex's csrc/ at the same commit) and built with -DVERSION_GE_1_1
// -DVERSION_GE_1_3 -DVERSION_GE_1_5 as Apex's own setup builds them: the
// Megatron scaled masked softmax and the fused LayerNorm forward. Apex's
// pybind bindings are not vendored; this file only checks tensors, allocates
// outputs and calls the CUDA hosts.

#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>
#include <torch/library.h>

#include <vector>

namespace multihead_attn {
namespace fused_softmax {
namespace scaled_masked_softmax {
torch::Tensor fwd_cuda(torch::Tensor const& input, torch::Tensor const& mask, float scale_factor);
}  // namespace scaled_masked_softmax
}  // namespace fused_softmax
}  // namespace multihead_attn

void cuda_layer_norm(at::Tensor* output, at::Tensor* mean, at::Tensor* invvar, at::Tensor* input, int n1, int n2,
                     at::IntArrayRef normalized_shape, at::Tensor* gamma, at::Tensor* beta, double epsilon);

namespace engine_apexv {

// scores: (batch, heads, q_len, k_len) fp16/bf16; mask: (1 or batch, 1, q_len, k_len) uint8, 1 = masked.
torch::Tensor masked_softmax(const torch::Tensor& scores, const torch::Tensor& mask, double scale)
{
    TORCH_CHECK(scores.dim() == 4 && mask.dim() == 4, "masked_softmax: 4-D scores and mask");
    TORCH_CHECK(scores.scalar_type() == at::ScalarType::Half || scores.scalar_type() == at::ScalarType::BFloat16,
                "masked_softmax: fp16 or bf16 scores");
    at::cuda::CUDAGuard guard{scores.device()};
    return multihead_attn::fused_softmax::scaled_masked_softmax::fwd_cuda(scores.contiguous(), mask.contiguous(),
                                                                           (float)scale);
}

// x: (..., hidden) contiguous; weight, bias: (hidden,) of x's dtype. Returns (y, mean, invvar).
std::vector<torch::Tensor> affine_layer_norm(const torch::Tensor& x, const torch::Tensor& weight,
                                             const torch::Tensor& bias, double eps)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "affine_layer_norm: contiguous CUDA x");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.dim() == 1 && weight.size(0) == cols && bias.sizes() == weight.sizes(),
                "affine_layer_norm: weight and bias must be (", cols, ",)");
    at::cuda::CUDAGuard guard{x.device()};
    auto input = x;
    auto gamma = weight.contiguous();
    auto beta = bias.contiguous();
    auto y = torch::empty_like(x);
    const bool low = x.scalar_type() == at::ScalarType::Half || x.scalar_type() == at::ScalarType::BFloat16;
    auto mean = torch::empty({x.numel() / cols}, x.options().dtype(low ? at::ScalarType::Float : x.scalar_type()));
    auto invvar = torch::empty_like(mean);
    const std::vector<int64_t> shape{cols};
    cuda_layer_norm(&y, &mean, &invvar, &input, (int)(x.numel() / cols), (int)cols, shape, &gamma, &beta, eps);
    return {y, mean, invvar};
}

}  // namespace engine_apexv

TORCH_LIBRARY(engine_apexv, m)
{
    m.def("masked_softmax(Tensor scores, Tensor mask, float scale) -> Tensor");
    m.impl("masked_softmax", torch::kCUDA, &engine_apexv::masked_softmax);
    m.def("affine_layer_norm(Tensor x, Tensor weight, Tensor bias, float eps) -> Tensor[]");
    m.impl("affine_layer_norm", torch::kCUDA, &engine_apexv::affine_layer_norm);
}
