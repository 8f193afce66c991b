// Host side of the engine's attention op: FlashAttention-2's forward launch
// template, kernel and softmax helpers are vendored unmodified under
// third_party/flash_attn/ (with the rest of FlashAttention-2's csrc/flash_attn/src
// headers they include); this file only fills the parameter block from
// torch tensors and picks the head-dimension instantiation.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "third_party/flash_attn/flash_fwd_launch_template.h"

namespace engine_attn {

static void fill_forward_params(Flash_fwd_params &params, const at::Tensor &q, const at::Tensor &k,
                                const at::Tensor &v, at::Tensor &out, float softmax_scale, bool causal)
{
    params = {};
    params.is_bf16 = q.dtype() == torch::kBFloat16;
    params.q_ptr = q.data_ptr();
    params.k_ptr = k.data_ptr();
    params.v_ptr = v.data_ptr();
    params.o_ptr = out.data_ptr();
    params.q_batch_stride = q.stride(0);
    params.k_batch_stride = k.stride(0);
    params.v_batch_stride = v.stride(0);
    params.o_batch_stride = out.stride(0);
    params.q_row_stride = q.stride(1);
    params.k_row_stride = k.stride(1);
    params.v_row_stride = v.stride(1);
    params.o_row_stride = out.stride(1);
    params.q_head_stride = q.stride(2);
    params.k_head_stride = k.stride(2);
    params.v_head_stride = v.stride(2);
    params.o_head_stride = out.stride(2);
    params.b = q.size(0);
    params.seqlen_q = q.size(1);
    params.seqlen_k = k.size(1);
    params.h = q.size(2);
    params.h_k = k.size(2);
    params.h_h_k_ratio = params.h / params.h_k;
    params.d = q.size(3);
    params.d_rounded = params.d;
    params.seqlen_q_rounded = (params.seqlen_q + 127) / 128 * 128;
    params.seqlen_k_rounded = (params.seqlen_k + 127) / 128 * 128;
    params.scale_softmax = softmax_scale;
    params.scale_softmax_log2 = softmax_scale * float(M_LOG2E);
    params.p_dropout = 1.f;  // keep probability: the engine never trains
    params.is_causal = causal;
}

void attention_forward(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v, at::Tensor &out,
                       at::Tensor &softmax_lse, double softmax_scale, bool causal)
{
    TORCH_CHECK(q.dtype() == torch::kFloat16, "attention_forward: fp16 only");
    TORCH_CHECK(q.size(3) % 32 == 0 && q.size(3) <= 256, "attention_forward: head_dim a multiple of 32 up to 256");
    at::cuda::CUDAGuard guard{q.device()};
    Flash_fwd_params params;
    fill_forward_params(params, q, k, v, out, float(softmax_scale), causal);
    params.softmax_lse_ptr = softmax_lse.data_ptr();
    auto stream = at::cuda::getCurrentCUDAStream().stream();
    switch (params.d) {
    case 32: run_mha_fwd_hdim32<cutlass::half_t>(params, stream); break;
    case 64: run_mha_fwd_hdim64<cutlass::half_t>(params, stream); break;
    case 96: run_mha_fwd_hdim96<cutlass::half_t>(params, stream); break;
    case 128: run_mha_fwd_hdim128<cutlass::half_t>(params, stream); break;
    case 160: run_mha_fwd_hdim160<cutlass::half_t>(params, stream); break;
    case 192: run_mha_fwd_hdim192<cutlass::half_t>(params, stream); break;
    case 224: run_mha_fwd_hdim224<cutlass::half_t>(params, stream); break;
    default: run_mha_fwd_hdim256<cutlass::half_t>(params, stream); break;
    }
}

}  // namespace engine_attn

TORCH_LIBRARY(engine_attn, m)
{
    m.def("attention_forward(Tensor q, Tensor k, Tensor v, Tensor! out, Tensor! softmax_lse, float softmax_scale, bool causal) -> ()");
    m.impl("attention_forward", torch::kCUDA, &engine_attn::attention_forward);
}
