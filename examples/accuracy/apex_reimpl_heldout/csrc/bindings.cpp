// Registers the engine's fused softmax and LayerNorm as torch.ops.engine_apex.*:
// checks shapes and dtypes, allocates outputs and calls the CUDA hosts.

#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>
#include <torch/all.h>

#include <vector>

namespace engine_apex {

torch::Tensor masked_softmax_forward(const torch::Tensor& scores, const torch::Tensor& mask, double scale);
torch::Tensor key_padding_mask(const torch::Tensor& seq_lens, int64_t q_len, int64_t k_len);
void layer_norm_forward(torch::Tensor& y, torch::Tensor& mean, torch::Tensor& rstd, const torch::Tensor& x, int rows,
                        int cols, const torch::Tensor* gamma, const torch::Tensor* beta, double eps);

// portq: ports apex:csrc/megatron/scaled_masked_softmax.cpp::fwd
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax.cpp::bwd -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax.cpp::get_batch_per_block -- the engine tries the fused op and falls back on its error
torch::Tensor masked_softmax(const torch::Tensor& scores, const torch::Tensor& mask, double scale)
{
    TORCH_CHECK(scores.dim() == 4, "masked_softmax: scores must be 4-D (batch, heads, q_len, k_len)");
    TORCH_CHECK(scores.scalar_type() == at::ScalarType::Half || scores.scalar_type() == at::ScalarType::BFloat16,
                "masked_softmax: fp16 or bf16 scores");
    TORCH_CHECK(mask.dim() == 4, "masked_softmax: mask must be 4-D");
    return masked_softmax_forward(scores, mask, scale);
}

// x: (..., hidden) contiguous; weight, bias: (hidden,) of x's dtype.
// Returns (y, mean, rstd), the statistics fp32 of shape (x.numel() / hidden,).
// portq: ports apex:csrc/layer_norm_cuda.cpp::layer_norm_affine
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::layer_norm_affine[normalized_shape] -- the engine normalises the last dimension only
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::layer_norm -- every norm of the engine's models has a weight and a bias
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::layer_norm_affine_mixed_dtypes -- weights are cast to the activation dtype at load time
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::layer_norm_gradient -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::layer_norm_gradient_affine -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::check_args -- shape checks written inline for the last dimension
// portq: not-carried apex:csrc/layer_norm_cuda.cpp::compute_n1_n2 -- rows and columns taken from the last dimension
std::vector<torch::Tensor> affine_layer_norm(const torch::Tensor& x, const torch::Tensor& weight,
                                                 const torch::Tensor& bias, double eps)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "layer_norm: x must be a contiguous CUDA tensor");
    TORCH_CHECK(weight.is_contiguous() && bias.is_contiguous(), "layer_norm: contiguous weight and bias");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.dim() == 1 && weight.size(0) == cols && bias.sizes() == weight.sizes(),
                "layer_norm: weight and bias must be (", cols, ",)");
    TORCH_CHECK(weight.scalar_type() == x.scalar_type() && bias.scalar_type() == x.scalar_type(),
                "layer_norm: weight and bias in x's dtype");
    const int64_t rows = x.numel() / cols;
    at::cuda::CUDAGuard guard{x.device()};
    auto y = torch::empty_like(x);
    auto stats = x.options().dtype(at::ScalarType::Float);
    auto mean = torch::empty({rows}, stats);
    auto rstd = torch::empty({rows}, stats);
    layer_norm_forward(y, mean, rstd, x, (int)rows, (int)cols, &weight, &bias, eps);
    return {y, mean, rstd};
}

}  // namespace engine_apex

TORCH_LIBRARY(engine_apex, m)
{
    m.def("masked_softmax(Tensor scores, Tensor mask, float scale) -> Tensor");
    m.impl("masked_softmax", torch::kCUDA, &engine_apex::masked_softmax);
    m.def("key_padding_mask(Tensor seq_lens, int q_len, int k_len) -> Tensor");
    m.impl("key_padding_mask", torch::kCUDA, &engine_apex::key_padding_mask);
    m.def("affine_layer_norm(Tensor x, Tensor weight, Tensor bias, float eps) -> Tensor[]");
    m.impl("affine_layer_norm", torch::kCUDA, &engine_apex::affine_layer_norm);
}
