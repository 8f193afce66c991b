// Torch ops of the engine's transformer layer over DeepSpeed's inference
// kernels, which are vendored unmodified under third_party/deepspeed/: the
// MLP's bias-GeLU, the attention output's bias-add, the sequential and the
// parallel (GPT-J) residual adds after the MLP, and the masked attention
// softmax. The MoE residual matmul comes with the vendored file, unused. This
// file only checks tensors, fills the launchers' arguments and binds them.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <torch/all.h>

#include "third_party/deepspeed/custom_cuda_layers.h"

namespace engine_ds {

static void check_cuda(const at::Tensor& t, const char* name)
{
    TORCH_CHECK(t.is_cuda() && t.is_contiguous(), name, " must be a contiguous CUDA tensor");
    TORCH_CHECK(t.scalar_type() == at::kHalf || t.scalar_type() == at::kFloat, name, " must be fp16 or fp32");
}

static int rows_of(const at::Tensor& t) { return (int)(t.numel() / t.size(-1)); }

// input (..., intermediate) in place: input = gelu(input + bias).
void bias_gelu_(at::Tensor& input, const at::Tensor& bias)
{
    check_cuda(input, "bias_gelu_: input");
    check_cuda(bias, "bias_gelu_: bias");
    const int width = (int)input.size(-1);
    TORCH_CHECK(width % 4 == 0 && bias.numel() == width, "bias_gelu_: the last dimension must be a multiple of 4 and match bias");
    at::cuda::CUDAGuard guard{input.device()};
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (input.scalar_type() == at::kHalf)
        launch_bias_gelu<__half>((__half*)input.data_ptr(), (const __half*)bias.data_ptr(), width, rows_of(input), stream);
    else
        launch_bias_gelu<float>(input.data_ptr<float>(), bias.data_ptr<float>(), width, rows_of(input), stream);
}

// input (..., hidden) in place: input = input + bias.
void bias_add_(at::Tensor& input, const at::Tensor& bias)
{
    check_cuda(input, "bias_add_: input");
    check_cuda(bias, "bias_add_: bias");
    const int width = (int)input.size(-1);
    TORCH_CHECK(width % 4 == 0 && bias.numel() == width, "bias_add_: the last dimension must be a multiple of 4 and match bias");
    at::cuda::CUDAGuard guard{input.device()};
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (input.scalar_type() == at::kHalf)
        launch_bias_add<__half>((__half*)input.data_ptr(), (const __half*)bias.data_ptr(), width, rows_of(input), stream);
    else
        launch_bias_add<float>(input.data_ptr<float>(), bias.data_ptr<float>(), width, rows_of(input), stream);
}

// The layer's closing residual (pre-LN): the sum lands in mlp_out,
// mlp_out += (residual + attn + bias + attn_bias) / mp_size, so that the
// tensor-parallel all-reduce of mlp_out counts the residual once.
void residual_add_(at::Tensor& mlp_out, at::Tensor& residual, at::Tensor& attn, at::Tensor& bias,
                   at::Tensor& attn_bias, int64_t mp_size, bool preln)
{
    for (auto* t : {&mlp_out, &residual, &attn, &bias, &attn_bias}) check_cuda(*t, "residual_add_: operand");
    const int width = (int)mlp_out.size(-1);
    TORCH_CHECK(width % 4 == 0, "residual_add_: the hidden size must be a multiple of 4");
    at::cuda::CUDAGuard guard{mlp_out.device()};
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (mlp_out.scalar_type() == at::kHalf)
        launch_bias_residual<__half>((__half*)residual.data_ptr(), (__half*)mlp_out.data_ptr(), (__half*)attn.data_ptr(),
                                     (__half*)bias.data_ptr(), (__half*)attn_bias.data_ptr(), rows_of(mlp_out), width,
                                     (int)mp_size, preln, stream);
    else
        launch_bias_residual<float>(residual.data_ptr<float>(), mlp_out.data_ptr<float>(), attn.data_ptr<float>(),
                                    bias.data_ptr<float>(), attn_bias.data_ptr<float>(), rows_of(mlp_out), width,
                                    (int)mp_size, preln, stream);
}

// GPT-J/GPT-NeoX parallel residual: the sum lands in mlp_out,
// mlp_out += attn + bias + (residual + attn_bias) / mp_size, attn_bias optional.
void parallel_residual_add_(at::Tensor& mlp_out, at::Tensor& residual, at::Tensor& attn, at::Tensor& bias,
                            const c10::optional<at::Tensor>& attn_bias, int64_t mp_size)
{
    for (auto* t : {&mlp_out, &residual, &attn, &bias}) check_cuda(*t, "parallel_residual_add_: operand");
    if (attn_bias) check_cuda(*attn_bias, "parallel_residual_add_: attn_bias");
    const int width = (int)mlp_out.size(-1);
    TORCH_CHECK(width % 4 == 0, "parallel_residual_add_: the hidden size must be a multiple of 4");
    at::cuda::CUDAGuard guard{mlp_out.device()};
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (mlp_out.scalar_type() == at::kHalf)
        launch_gptj_residual_add<__half>((__half*)residual.data_ptr(), (__half*)mlp_out.data_ptr(),
                                         (__half*)attn.data_ptr(), (__half*)bias.data_ptr(),
                                         attn_bias ? (__half*)attn_bias->data_ptr() : nullptr, width,
                                         rows_of(mlp_out), (int)mp_size, stream);
    else
        launch_gptj_residual_add<float>(residual.data_ptr<float>(), mlp_out.data_ptr<float>(), attn.data_ptr<float>(),
                                        bias.data_ptr<float>(), attn_bias ? attn_bias->data_ptr<float>() : nullptr,
                                        width, rows_of(mlp_out), (int)mp_size, stream);
}

// scores (batch, heads, queries, keys) in place: softmax over keys of
// scores * layer_scale + mask (+ alibi), causal when triangular.
void attn_softmax_(at::Tensor& scores, const c10::optional<at::Tensor>& mask, const c10::optional<at::Tensor>& alibi,
                   double layer_scale, bool triangular, bool local_attention, int64_t window_size, int64_t head_offset,
                   int64_t mp_size)
{
    check_cuda(scores, "attn_softmax_: scores");
    TORCH_CHECK(scores.dim() == 4, "attn_softmax_: scores must be (batch, heads, queries, keys)");
    const int batch = (int)scores.size(0), heads = (int)scores.size(1);
    const int queries = (int)scores.size(2), keys = (int)scores.size(3);
    int mask_stride = 0;
    if (mask) {
        check_cuda(*mask, "attn_softmax_: mask");
        mask_stride = mask->size(-2) > 1 ? (int)mask->size(-2) : 1;
    }
    if (alibi) check_cuda(*alibi, "attn_softmax_: alibi");
    at::cuda::CUDAGuard guard{scores.device()};
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (scores.scalar_type() == at::kHalf)
        launch_attn_softmax_v2<__half>((__half*)scores.data_ptr(), mask ? (__half*)mask->data_ptr() : nullptr,
                                       alibi ? (__half*)alibi->data_ptr() : nullptr, (float)layer_scale, triangular,
                                       false, local_attention, (int)window_size, batch, heads, queries, keys,
                                       (int)head_offset, mask_stride, (int)mp_size, stream);
    else
        launch_attn_softmax_v2<float>(scores.data_ptr<float>(), mask ? mask->data_ptr<float>() : nullptr,
                                      alibi ? alibi->data_ptr<float>() : nullptr, (float)layer_scale, triangular,
                                      false, local_attention, (int)window_size, batch, heads, queries, keys,
                                      (int)head_offset, mask_stride, (int)mp_size, stream);
}

}  // namespace engine_ds

TORCH_LIBRARY(engine_ds, m)
{
    m.def("bias_gelu_(Tensor(a!) input, Tensor bias) -> ()", &engine_ds::bias_gelu_);
    m.def("bias_add_(Tensor(a!) input, Tensor bias) -> ()", &engine_ds::bias_add_);
    m.def("residual_add_(Tensor(a!) mlp_out, Tensor residual, Tensor attn, Tensor bias, Tensor attn_bias, int mp_size, bool preln) -> ()",
          &engine_ds::residual_add_);
    m.def("parallel_residual_add_(Tensor(a!) mlp_out, Tensor residual, Tensor attn, Tensor bias, Tensor? attn_bias, int mp_size) -> ()",
          &engine_ds::parallel_residual_add_);
    m.def("attn_softmax_(Tensor(a!) scores, Tensor? mask, Tensor? alibi, float layer_scale, bool triangular, bool local_attention, int window_size, int head_offset, int mp_size) -> ()",
          &engine_ds::attn_softmax_);
}
