// Registers the engine's decoder kernels as torch.ops.engine_ct2.*: checks
// shapes and dtypes (fp32 and fp16), allocates outputs and calls the
// launchers of layer_norm.cu and softmax.cu on the current stream.

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_fp16.h>
#include <torch/all.h>
#include <torch/library.h>

#include <cstdint>

namespace dec {
template <typename T>
void layer_norm_forward(const T* beta, const T* gamma, const T* x, T* y, long rows, long depth, cudaStream_t stream);
template <typename T>
void softmax_forward(cudaStream_t stream, const T* x, long rows, long cols, const int32_t* lengths, T* y);
template <typename T>
void scale_logits(cudaStream_t stream, T* logits, long n, float temperature);
}  // namespace dec

namespace engine_ct2 {

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

// x: (..., depth); gamma, beta: (depth,) in x's dtype.
torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& gamma, const torch::Tensor& beta)
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
        dec::layer_norm_forward<__half>(ptr<__half>(b), ptr<__half>(g), ptr<__half>(x), ptr<__half>(y), rows, depth,
                                        stream);
    } else {
        dec::layer_norm_forward<float>(ptr<float>(b), ptr<float>(g), ptr<float>(x), ptr<float>(y), rows, depth,
                                       stream);
    }
    return y;
}

// x: (..., cols); lengths: int32, one per row of x, or None.
// portq: ports ctranslate2:src/ops/softmax_gpu.cu::SoftMax::compute
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
        dec::softmax_forward<__half>(stream, ptr<__half>(x), rows, cols, lens, ptr<__half>(y));
    } else {
        dec::softmax_forward<float>(stream, ptr<float>(x), rows, cols, lens, ptr<float>(y));
    }
    return y;
}

// In place: logits /= temperature.
torch::Tensor scale_logits(torch::Tensor logits, double temperature)
{
    check_input(logits, "scale_logits");
    TORCH_CHECK(temperature > 0, "scale_logits: temperature must be positive, got ", temperature);
    at::cuda::CUDAGuard guard{logits.device()};
    auto stream = c10::cuda::getCurrentCUDAStream();
    if (is_half(logits)) {
        dec::scale_logits<__half>(stream, ptr<__half>(logits), logits.numel(), static_cast<float>(temperature));
    } else {
        dec::scale_logits<float>(stream, ptr<float>(logits), logits.numel(), static_cast<float>(temperature));
    }
    return logits;
}

}  // namespace engine_ct2

TORCH_LIBRARY(engine_ct2, m)
{
    m.def("layer_norm(Tensor x, Tensor gamma, Tensor beta) -> Tensor");
    m.impl("layer_norm", torch::kCUDA, &engine_ct2::layer_norm);
    m.def("softmax(Tensor x, Tensor? lengths) -> Tensor");
    m.impl("softmax", torch::kCUDA, &engine_ct2::softmax);
    m.def("scale_logits(Tensor(a!) logits, float temperature) -> Tensor(a!)");
    m.impl("scale_logits", torch::kCUDA, &engine_ct2::scale_logits);
}
