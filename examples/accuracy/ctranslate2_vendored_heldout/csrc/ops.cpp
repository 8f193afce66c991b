// Torch ops of the engine's decoder over CTranslate2's vendored CUDA LayerNorm
// and softmax kernels (layer_norm_op.cu, softmax_op.cu): checks tensors,
// allocates outputs and calls the engine's launch functions on the current
// stream, fp32 and fp16. Registered as torch.ops.engine_ct2v.*.

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_fp16.h>
#include <torch/all.h>
#include <torch/library.h>

#include <cstdint>

namespace engine_ct2v {
template <typename T>
void layer_norm_rows(const T* x, const T* gamma, const T* beta, T* y, long rows, long depth, float epsilon,
                     cudaStream_t stream);
template <typename T>
void softmax_rows(const T* x, const int32_t* lengths, T* y, long rows, long cols, cudaStream_t stream);

static bool is_half(const torch::Tensor& t) { return t.scalar_type() == at::ScalarType::Half; }

static void check_input(const torch::Tensor& t, const char* op)
{
    TORCH_CHECK(t.is_cuda() && t.is_contiguous(), op, ": expected a contiguous CUDA tensor");
    TORCH_CHECK(t.scalar_type() == at::ScalarType::Float || is_half(t), op, ": expected fp32 or fp16");
}

template <typename T>
static T* ptr(const torch::Tensor& t)
{
    return reinterpret_cast<T*>(t.data_ptr());
}

torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& gamma, const torch::Tensor& beta,
                         double epsilon)
{
    check_input(x, "layer_norm");
    const int64_t depth = x.size(-1);
    TORCH_CHECK(gamma.numel() == depth && beta.numel() == depth && gamma.scalar_type() == x.scalar_type() &&
                    beta.scalar_type() == x.scalar_type(),
                "layer_norm: gamma and beta must hold ", depth, " values of x's dtype");
    at::cuda::CUDAGuard guard{x.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    auto y = torch::empty_like(x);
    auto g = gamma.contiguous();
    auto b = beta.contiguous();
    const int64_t rows = x.numel() / depth;
    if (is_half(x)) {
        layer_norm_rows<__half>(ptr<__half>(x), ptr<__half>(g), ptr<__half>(b), ptr<__half>(y), rows, depth,
                                static_cast<float>(epsilon), stream);
    } else {
        layer_norm_rows<float>(ptr<float>(x), ptr<float>(g), ptr<float>(b), ptr<float>(y), rows, depth,
                               static_cast<float>(epsilon), stream);
    }
    return y;
}

torch::Tensor softmax(const torch::Tensor& x, const c10::optional<torch::Tensor>& lengths)
{
    check_input(x, "softmax");
    const int64_t cols = x.size(-1);
    const int64_t rows = x.numel() / cols;
    const int32_t* lens = nullptr;
    if (lengths.has_value()) {
        TORCH_CHECK(lengths->scalar_type() == at::ScalarType::Int && lengths->numel() == rows && lengths->is_cuda(),
                    "softmax: lengths must be ", rows, " int32 values on x's device");
        lens = lengths->data_ptr<int32_t>();
    }
    at::cuda::CUDAGuard guard{x.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    auto y = torch::empty_like(x);
    if (is_half(x)) {
        softmax_rows<__half>(ptr<__half>(x), lens, ptr<__half>(y), rows, cols, stream);
    } else {
        softmax_rows<float>(ptr<float>(x), lens, ptr<float>(y), rows, cols, stream);
    }
    return y;
}

}  // namespace engine_ct2v

TORCH_LIBRARY(engine_ct2v, m)
{
    m.def("layer_norm(Tensor x, Tensor gamma, Tensor beta, float epsilon) -> Tensor");
    m.impl("layer_norm", torch::kCUDA, &engine_ct2v::layer_norm);
    m.def("softmax(Tensor x, Tensor? lengths) -> Tensor");
    m.impl("softmax", torch::kCUDA, &engine_ct2v::softmax);
}
