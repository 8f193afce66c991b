// Torch ops of the engine's transformer layer (namespace engine_layer) over the
// launchers of layer_kernels.cuh. Only checks tensors and fills arguments.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include <initializer_list>

#include "layer_kernels.cuh"

namespace engine_layer {

void check(const at::Tensor& t, const char* what)
{
    TORCH_CHECK(t.is_cuda() && t.is_contiguous(), what, " must be a contiguous CUDA tensor");
    TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf, what, " must be fp32 or fp16");
}

int rows_of(const at::Tensor& t) { return (int)(t.numel() / t.size(-1)); }

template <typename F>
void dispatch(const at::Tensor& t, F&& f)
{
    if (t.scalar_type() == at::kHalf)
        f(__half{});
    else
        f(float{});
}

template <typename T>
T* ptr(const at::Tensor& t)
{
    return reinterpret_cast<T*>(t.data_ptr());
}

void bias_gelu_op(at::Tensor& act, const at::Tensor& bias)
{
    check(act, "bias_gelu: act");
    check(bias, "bias_gelu: bias");
    const int width = (int)act.size(-1);
    TORCH_CHECK(width % 4 == 0 && bias.numel() == width, "bias_gelu: width must be a multiple of 4 and match bias");
    at::cuda::CUDAGuard guard{act.device()};
    dispatch(act, [&](auto tag) {
        using T = decltype(tag);
        layer_kernels::bias_gelu<T>(ptr<T>(act), ptr<T>(bias), width, rows_of(act), at::cuda::getCurrentCUDAStream());
    });
}

void bias_gelu_out_op(at::Tensor& out, const at::Tensor& act, const at::Tensor& bias)
{
    check(out, "bias_gelu_out: out");
    check(act, "bias_gelu_out: act");
    check(bias, "bias_gelu_out: bias");
    const int width = (int)act.size(-1);
    TORCH_CHECK(width % 4 == 0 && bias.numel() == width && out.sizes() == act.sizes(),
                "bias_gelu_out: width must be a multiple of 4, match bias, and out must match act");
    at::cuda::CUDAGuard guard{act.device()};
    dispatch(act, [&](auto tag) {
        using T = decltype(tag);
        layer_kernels::bias_gelu_out<T>(ptr<T>(out), ptr<T>(act), ptr<T>(bias), width, rows_of(act),
                                        at::cuda::getCurrentCUDAStream());
    });
}

void bias_add_op(at::Tensor& act, const at::Tensor& bias)
{
    check(act, "bias_add: act");
    check(bias, "bias_add: bias");
    const int width = (int)act.size(-1);
    TORCH_CHECK(width % 4 == 0 && bias.numel() == width, "bias_add: width must be a multiple of 4 and match bias");
    at::cuda::CUDAGuard guard{act.device()};
    dispatch(act, [&](auto tag) {
        using T = decltype(tag);
        layer_kernels::bias_add<T>(ptr<T>(act), ptr<T>(bias), width, rows_of(act), at::cuda::getCurrentCUDAStream());
    });
}

void residual_add_op(at::Tensor& mlp_out, const at::Tensor& residual, const at::Tensor& attn,
                     const at::Tensor& mlp_bias, const at::Tensor& attn_bias, int64_t mp_size)
{
    for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&mlp_out, &residual, &attn, &mlp_bias, &attn_bias})
        check(*t, "residual_add: operand");
    const int width = (int)mlp_out.size(-1);
    TORCH_CHECK(width % 4 == 0, "residual_add: the hidden size must be a multiple of 4");
    TORCH_CHECK(mp_size >= 1, "residual_add: mp_size must be at least 1");
    at::cuda::CUDAGuard guard{mlp_out.device()};
    dispatch(mlp_out, [&](auto tag) {
        using T = decltype(tag);
        layer_kernels::residual_add<T>(ptr<T>(residual), ptr<T>(mlp_out), ptr<T>(attn), ptr<T>(mlp_bias),
                                       ptr<T>(attn_bias), rows_of(mlp_out), width, (int)mp_size,
                                       at::cuda::getCurrentCUDAStream());
    });
}

void masked_softmax_op(at::Tensor& scores, const c10::optional<at::Tensor>& mask, double scale, bool causal)
{
    check(scores, "masked_softmax: scores");
    TORCH_CHECK(scores.dim() == 4, "masked_softmax: scores must be (batch, heads, queries, keys)");
    int mask_stride = 1;
    if (mask) {
        check(*mask, "masked_softmax: mask");
        TORCH_CHECK(mask->scalar_type() == scores.scalar_type(), "masked_softmax: mask must match the scores' dtype");
        mask_stride = (int)mask->size(-2);
    }
    at::cuda::CUDAGuard guard{scores.device()};
    dispatch(scores, [&](auto tag) {
        using T = decltype(tag);
        layer_kernels::masked_softmax<T>(ptr<T>(scores), mask ? ptr<T>(*mask) : nullptr, (float)scale, causal,
                                         (int)scores.size(0), (int)scores.size(1), (int)scores.size(2),
                                         (int)scores.size(3), mask_stride, at::cuda::getCurrentCUDAStream());
    });
}

}  // namespace engine_layer

TORCH_LIBRARY(engine_layer, m)
{
    m.def("bias_gelu(Tensor(a!) act, Tensor bias) -> ()");
    m.def("bias_gelu_out(Tensor(a!) out, Tensor act, Tensor bias) -> ()");
    m.def("bias_add(Tensor(a!) act, Tensor bias) -> ()");
    m.def("residual_add(Tensor(a!) mlp_out, Tensor residual, Tensor attn, Tensor mlp_bias, Tensor attn_bias, int mp_size) -> ()");
    m.def("masked_softmax(Tensor(a!) scores, Tensor? mask, float scale, bool causal) -> ()");
    m.impl("bias_gelu", torch::kCUDA, &engine_layer::bias_gelu_op);
    m.impl("bias_gelu_out", torch::kCUDA, &engine_layer::bias_gelu_out_op);
    m.impl("bias_add", torch::kCUDA, &engine_layer::bias_add_op);
    m.impl("residual_add", torch::kCUDA, &engine_layer::residual_add_op);
    m.impl("masked_softmax", torch::kCUDA, &engine_layer::masked_softmax_op);
}
