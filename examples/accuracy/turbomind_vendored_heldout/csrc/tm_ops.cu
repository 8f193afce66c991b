// Torch ops of the engine's decoder step over TurboMind's kernels, which are
// vendored unmodified under third_party/turbomind/ (with the core and utils
// headers they include): RMSNorm, the paged KV-cache write with rotary
// embedding, and the top-p sort and filter of the sampler.
// This file only checks tensors, fills the launchers' arguments and binds them.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "third_party/turbomind/kernels/attention/kv_cache_utils_v2.h"
#include "third_party/turbomind/kernels/norm/rms_norm.h"
#include "third_party/turbomind/kernels/sampling_topp_kernels.h"

namespace engine_tm {

static cudaStream_t current_stream()
{
    return at::cuda::getCurrentCUDAStream().stream();
}

// out, x: (tokens, dims) fp16; weight: (dims,)
void rms_norm(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight, double eps)
{
    TORCH_CHECK(x.dtype() == torch::kFloat16 && x.dim() == 2, "rms_norm: x must be 2-D fp16");
    TORCH_CHECK(x.stride(1) == 1 && out.stride(1) == 1, "rms_norm: rows must be contiguous");
    at::cuda::CUDAGuard guard{x.device()};
    turbomind::invokeRMSNorm((half*)out.data_ptr(),
                             (int)out.stride(0),
                             (const half*)x.data_ptr(),
                             (int)x.stride(0),
                             (const half*)weight.data_ptr(),
                             (int)x.size(1),
                             (int)x.size(0),
                             (float)eps,
                             current_stream());
}

// k, v: (tokens, kv_heads, head_dim) fp16, packed over the batch by cu_q_len;
// block_ptrs: one device pointer per cache block, cu_block_num per sequence.
void write_kv_cache(const at::Tensor& block_ptrs,
                    const at::Tensor& k,
                    const at::Tensor& v,
                    const at::Tensor& cu_q_len,
                    const at::Tensor& cu_k_len,
                    const at::Tensor& cu_block_num,
                    const at::Tensor& rope_base,
                    int64_t           rope_dim,
                    int64_t           block_seq_len,
                    int64_t           layer_id,
                    int64_t           max_q_len,
                    int64_t           quant_policy)
{
    TORCH_CHECK(k.dtype() == torch::kFloat16 && k.sizes() == v.sizes() && k.dim() == 3, "write_kv_cache: fp16 k, v");
    at::cuda::CUDAGuard guard{k.device()};
    const int head_num = (int)k.size(1);
    const int head_dim = (int)k.size(2);
    turbomind::invokeProcessKV_v2((char**)block_ptrs.data_ptr(),
                                  (const half*)k.data_ptr(),
                                  (const half*)v.data_ptr(),
                                  (const half*)nullptr,
                                  (const half*)nullptr,
                                  cu_q_len.data_ptr<int>(),
                                  cu_k_len.data_ptr<int>(),
                                  cu_block_num.data_ptr<int>(),
                                  rope_base.data_ptr<float>(),
                                  (int)rope_dim,
                                  1.f,   // rope_ti_scale
                                  1.f,   // rope_scaling_factor: plain RoPE
                                  0.f,
                                  0.f,
                                  0.f,
                                  0.f,
                                  0.f,
                                  0.f,
                                  1.f,   // attention_scaling
                                  0,     // stride_b: packed tokens
                                  k.stride(0) / head_dim,
                                  1,
                                  k.stride(0) / head_dim,
                                  (int)block_seq_len,
                                  (int)layer_id,
                                  (int)max_q_len,
                                  head_num,
                                  head_dim,
                                  (int)(cu_q_len.size(0) - 1),
                                  (int)quant_policy,
                                  current_stream());
}

// probs: (batch, vocab_padded) fp32 softmax output; sorts each row descending
// and cuts it at top_p / min_p. Returns how many entries each row keeps.
void top_p_filter(at::Tensor&       probs,
                  at::Tensor&       sorted_probs,
                  at::Tensor&       sorted_ids,
                  at::Tensor&       kept,
                  const at::Tensor& top_ks,
                  const at::Tensor& top_ps,
                  const at::Tensor& min_ps,
                  int64_t           vocab_size)
{
    TORCH_CHECK(probs.dtype() == torch::kFloat32 && probs.dim() == 2, "top_p_filter: 2-D fp32 probabilities");
    at::cuda::CUDAGuard guard{probs.device()};
    auto stream = current_stream();

    turbomind::TopPSortParams sort{};
    sort.logits            = probs.data_ptr();
    sort.sorted_logits     = sorted_probs.data_ptr();
    sort.sorted_indices    = sorted_ids.data_ptr<int>();
    sort.kept              = kept.data_ptr<int>();
    sort.top_ks            = top_ks.data_ptr<int>();
    sort.top_ps            = top_ps.data_ptr<float>();
    sort.batch_size        = (int)probs.size(0);
    sort.vocab_size        = (int)vocab_size;
    sort.vocab_size_padded = (int)probs.size(1);
    sort.workspace         = nullptr;
    turbomind::invokeTopPSort<float>(sort, stream);  // with no workspace: sizes it
    auto workspace = at::empty({(int64_t)sort.workspace_size}, probs.options().dtype(torch::kUInt8));
    sort.workspace = workspace.data_ptr();
    turbomind::invokeTopPSort<float>(sort, stream);

    turbomind::TopPMinPFilterParams filter{};
    filter.sorted_logits     = sorted_probs.data_ptr();
    filter.sorted_indices    = sorted_ids.data_ptr<int>();
    filter.kept              = kept.data_ptr<int>();
    filter.top_ps            = top_ps.data_ptr<float>();
    filter.min_ps            = min_ps.data_ptr<float>();
    filter.batch_size        = sort.batch_size;
    filter.vocab_size        = sort.vocab_size;
    filter.vocab_size_padded = sort.vocab_size_padded;
    turbomind::invokeTopPMinPFilter<float>(filter, stream);
}

}  // namespace engine_tm

TORCH_LIBRARY(engine_tm, m)
{
    m.def("rms_norm(Tensor! out, Tensor x, Tensor weight, float eps) -> ()");
    m.def("write_kv_cache(Tensor block_ptrs, Tensor k, Tensor v, Tensor cu_q_len, Tensor cu_k_len, Tensor cu_block_num, "
          "Tensor rope_base, int rope_dim, int block_seq_len, int layer_id, int max_q_len, int quant_policy) -> ()");
    m.def("top_p_filter(Tensor! probs, Tensor! sorted_probs, Tensor! sorted_ids, Tensor! kept, Tensor top_ks, "
          "Tensor top_ps, Tensor min_ps, int vocab_size) -> ()");
    m.impl("rms_norm", torch::kCUDA, &engine_tm::rms_norm);
    m.impl("write_kv_cache", torch::kCUDA, &engine_tm::write_kv_cache);
    m.impl("top_p_filter", torch::kCUDA, &engine_tm::top_p_filter);
}
