// Torch ops of the engine's KV-cache kernels (kv_cache_ops.cu), registered as
// torch.ops.kv_ops under the host functions' names; the page size defaults to
// the engine's 64-token pages.
#include <torch/library.h>

#include "kv_cache_ops.h"

namespace {

std::tuple<at::Tensor, at::Tensor> op_allocate_kv_cache(int64_t batch, int64_t max_t, int64_t n_kv_heads,
                                                        int64_t head_dim, bool fp8, bool inline_qparams,
                                                        at::Device device)
{
    return kvc::allocate_kv_cache(batch, max_t, n_kv_heads, head_dim, fp8, inline_qparams, device);
}

}  // namespace

TORCH_LIBRARY(kv_ops, m)
{
    m.def("nope_qkv_varseq_prefill(Tensor xq, Tensor xk, Tensor xv, Tensor(a!) cache_k, Tensor(b!) cache_v, "
          "Tensor varseq_batch, Tensor varseq_seqpos, Tensor? block_tables=None, int page_size=64, "
          "Tensor? varseq_cache_seqpos=None) -> Tensor");
    m.def("nope_qkv_decoding(Tensor xq, Tensor xk, Tensor xv, Tensor(a!) cache_k, Tensor(b!) cache_v, Tensor seqpos, "
          "Tensor? block_tables=None, int page_size=64, Tensor? actual_batch_size=None, Tensor? batch=None, "
          "Tensor? cache_seqpos=None) -> Tensor");
    m.def("rope_qkv_varseq_prefill(Tensor xq, Tensor(c!) xk, Tensor xv, Tensor(a!) cache_k, Tensor(b!) cache_v, "
          "Tensor varseq_batch, Tensor varseq_seqpos, float theta, Tensor? block_tables=None, int page_size=64, "
          "Tensor? varseq_cache_seqpos=None, bool rope_scaling=False, int old_context_len=8192, "
          "float scaling_factor=16, float lo_freq_factor=1, float hi_freq_factor=32, Tensor? qparam_k=None, "
          "Tensor? qparam_v=None, bool write_k_back=False) -> Tensor");
    m.def("rope_qkv_decoding(Tensor xq, Tensor xk, Tensor xv, Tensor(a!) cache_k, Tensor(b!) cache_v, Tensor seqpos, "
          "float theta, Tensor? block_tables=None, int page_size=64, Tensor? actual_batch_size=None, "
          "Tensor? batch=None, Tensor? cache_seqpos=None, bool rope_scaling=False, int old_context_len=8192, "
          "float scaling_factor=16, float lo_freq_factor=1, float hi_freq_factor=32, Tensor? qparam_k=None, "
          "Tensor? qparam_v=None) -> Tensor");
    m.def("dequantize_fp8_cache(Tensor cache_k, Tensor cache_v, Tensor kv_seqlen, Tensor? qparam_k=None, "
          "Tensor? qparam_v=None) -> (Tensor, Tensor)");
    m.def("allocate_kv_cache(int batch, int max_t, int n_kv_heads, int head_dim, bool fp8, bool inline_qparams, "
          "Device device) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(kv_ops, CUDA, m)
{
    m.impl("nope_qkv_varseq_prefill", &kvc::nope_qkv_varseq_prefill);
    m.impl("nope_qkv_decoding", &kvc::nope_qkv_decoding);
    m.impl("rope_qkv_varseq_prefill", &kvc::rope_qkv_varseq_prefill);
    m.impl("rope_qkv_decoding", &kvc::rope_qkv_decoding);
    m.impl("dequantize_fp8_cache", &kvc::dequantize_fp8_cache);
}

TORCH_LIBRARY_IMPL(kv_ops, CompositeExplicitAutograd, m)
{
    m.impl("allocate_kv_cache", &op_allocate_kv_cache);
}
