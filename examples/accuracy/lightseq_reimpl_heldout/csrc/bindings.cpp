// Registers the engine's encoder kernels as torch.ops.engine_lightseq.*: checks
// shapes and dtypes (fp32 and fp16), allocates outputs and calls the launchers
// of layer_norm.cu and attn_softmax.cu on the current stream.

#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <torch/all.h>
#include <torch/library.h>

#include <vector>

namespace enc {
template <typename T>
void launch_layer_norm(T* out, T* vars, T* means, const T* x, const T* gamma, const T* beta, int tokens, int hidden,
                       cudaStream_t stream);
template <typename T>
void launch_attn_softmax(T* scores, const T* key_mask, int batch, int heads, int q_len, int k_len,
                         cudaStream_t stream);
template <typename T>
void launch_padding_mask(T* mask, const int* seq_lens, int batch, int k_len, cudaStream_t stream);
}  // namespace enc

namespace engine_lightseq {

static void check_dtype(const torch::Tensor& t, const char* what)
{
    TORCH_CHECK(t.scalar_type() == at::ScalarType::Float || t.scalar_type() == at::ScalarType::Half, what,
                ": fp32 or fp16");
}

// x: (..., hidden) contiguous; gamma, beta: (hidden,). Returns (y, var, mean) in x's dtype.
std::vector<torch::Tensor> layer_norm(const torch::Tensor& x, const torch::Tensor& gamma, const torch::Tensor& beta)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "layer_norm: x must be a contiguous CUDA tensor");
    check_dtype(x, "layer_norm");
    const int64_t hidden = x.size(-1);
    TORCH_CHECK(gamma.sizes() == torch::IntArrayRef{hidden} && beta.sizes() == gamma.sizes(),
                "layer_norm: gamma and beta must be (", hidden, ",)");
    TORCH_CHECK(gamma.scalar_type() == x.scalar_type() && beta.scalar_type() == x.scalar_type(),
                "layer_norm: gamma and beta in x's dtype");
    const int64_t tokens = x.numel() / hidden;
    at::cuda::CUDAGuard guard{x.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    auto y = torch::empty_like(x);
    auto var = torch::empty({tokens}, x.options());
    auto mean = torch::empty({tokens}, x.options());
    auto g = gamma.contiguous();
    auto b = beta.contiguous();
    if (x.scalar_type() == at::ScalarType::Float) {
        enc::launch_layer_norm<float>(y.data_ptr<float>(), var.data_ptr<float>(), mean.data_ptr<float>(),
                                      x.data_ptr<float>(), g.data_ptr<float>(), b.data_ptr<float>(), (int)tokens,
                                      (int)hidden, stream);
    } else {
        enc::launch_layer_norm<__half>(
            reinterpret_cast<__half*>(y.data_ptr<at::Half>()), reinterpret_cast<__half*>(var.data_ptr<at::Half>()),
            reinterpret_cast<__half*>(mean.data_ptr<at::Half>()), reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
            reinterpret_cast<const __half*>(g.data_ptr<at::Half>()),
            reinterpret_cast<const __half*>(b.data_ptr<at::Half>()), (int)tokens, (int)hidden, stream);
    }
    return {y, var, mean};
}

// scores: (batch, heads, q_len, k_len), normalised in place and returned;
// key_mask: (batch, k_len) additive, or None.
torch::Tensor attn_softmax(const torch::Tensor& scores, const c10::optional<torch::Tensor>& key_mask)
{
    TORCH_CHECK(scores.is_cuda() && scores.is_contiguous() && scores.dim() == 4,
                "attn_softmax: scores must be a contiguous 4-D CUDA tensor");
    check_dtype(scores, "attn_softmax");
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
    if (scores.scalar_type() == at::ScalarType::Float) {
        enc::launch_attn_softmax<float>(scores.data_ptr<float>(), mask.defined() ? mask.data_ptr<float>() : nullptr,
                                        batch, heads, q_len, k_len, stream);
    } else {
        enc::launch_attn_softmax<__half>(
            reinterpret_cast<__half*>(scores.data_ptr<at::Half>()),
            mask.defined() ? reinterpret_cast<const __half*>(mask.data_ptr<at::Half>()) : nullptr, batch, heads, q_len,
            k_len, stream);
    }
    return scores;
}

// seq_lens: (batch,) int32. Returns the additive (batch, k_len) mask in `dtype`.
torch::Tensor padding_mask(const torch::Tensor& seq_lens, int64_t k_len, at::ScalarType dtype)
{
    TORCH_CHECK(seq_lens.is_cuda() && seq_lens.dim() == 1 && seq_lens.scalar_type() == at::ScalarType::Int,
                "padding_mask: seq_lens must be a 1-D int32 CUDA tensor");
    at::cuda::CUDAGuard guard{seq_lens.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    auto lens = seq_lens.contiguous();
    const int batch = lens.size(0);
    auto mask = torch::empty({batch, k_len}, lens.options().dtype(dtype));
    if (dtype == at::ScalarType::Float) {
        enc::launch_padding_mask<float>(mask.data_ptr<float>(), lens.data_ptr<int>(), batch, (int)k_len, stream);
    } else {
        TORCH_CHECK(dtype == at::ScalarType::Half, "padding_mask: fp32 or fp16 mask");
        enc::launch_padding_mask<__half>(reinterpret_cast<__half*>(mask.data_ptr<at::Half>()), lens.data_ptr<int>(),
                                         batch, (int)k_len, stream);
    }
    return mask;
}

}  // namespace engine_lightseq

TORCH_LIBRARY(engine_lightseq, m)
{
    m.def("layer_norm(Tensor x, Tensor gamma, Tensor beta) -> Tensor[]");
    m.impl("layer_norm", torch::kCUDA, &engine_lightseq::layer_norm);
    m.def("attn_softmax(Tensor(a!) scores, Tensor? key_mask) -> Tensor(a!)");
    m.impl("attn_softmax", torch::kCUDA, &engine_lightseq::attn_softmax);
    m.def("padding_mask(Tensor seq_lens, int k_len, ScalarType dtype) -> Tensor");
    m.impl("padding_mask", torch::kCUDA, &engine_lightseq::padding_mask);
}
