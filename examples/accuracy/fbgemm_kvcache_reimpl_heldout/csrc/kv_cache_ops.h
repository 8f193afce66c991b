// The engine's KV-cache write and read ops (kv_cache_ops.cu): the argument
// structs its kernels take and the host functions bindings.cpp registers.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include <ATen/ATen.h>
#include <cuda_bf16.h>

namespace kvc {

// The step's Q, K and V rows, (tokens, heads, head_dim) contiguous bf16.
struct QkvRows {
    const __nv_bfloat16* xq;
    const __nv_bfloat16* xk;
    const __nv_bfloat16* xv;
    int64_t              tokens;
    int64_t              n_heads;
    int64_t              n_kv_heads;
    int64_t              head_dim;
};

// A K/V cache pair, (B or 1, MAX_T, N_KVH, row_elems) each.
struct CacheView {
    void*   k;
    void*   v;
    int64_t max_t;
    int64_t row_elems;
};

// Llama 3 frequency scaling of RoPE.
struct RopeScaling {
    bool    enabled;
    int64_t old_context_len;
    double  scaling_factor;
    double  lo_freq_factor;
    double  hi_freq_factor;
};

at::Tensor nope_qkv_varseq_prefill(at::Tensor xq, at::Tensor xk, at::Tensor xv, at::Tensor cache_k, at::Tensor cache_v,
                                   at::Tensor varseq_batch, at::Tensor varseq_seqpos,
                                   std::optional<at::Tensor> block_tables, int64_t page_size,
                                   std::optional<at::Tensor> varseq_cache_seqpos);

at::Tensor nope_qkv_decoding(at::Tensor xq, at::Tensor xk, at::Tensor xv, at::Tensor cache_k, at::Tensor cache_v,
                             at::Tensor seqpos, std::optional<at::Tensor> block_tables, int64_t page_size,
                             std::optional<at::Tensor> actual_batch_size, std::optional<at::Tensor> batch,
                             std::optional<at::Tensor> cache_seqpos);

at::Tensor rope_qkv_varseq_prefill(at::Tensor xq, at::Tensor xk, at::Tensor xv, at::Tensor cache_k,
                                   at::Tensor cache_v, at::Tensor varseq_batch, at::Tensor varseq_seqpos,
                                   double theta, std::optional<at::Tensor> block_tables, int64_t page_size,
                                   std::optional<at::Tensor> varseq_cache_seqpos, bool rope_scaling,
                                   int64_t old_context_len, double scaling_factor, double lo_freq_factor,
                                   double hi_freq_factor, std::optional<at::Tensor> qparam_k,
                                   std::optional<at::Tensor> qparam_v, bool write_k_back);

at::Tensor rope_qkv_decoding(at::Tensor xq, at::Tensor xk, at::Tensor xv, at::Tensor cache_k, at::Tensor cache_v,
                             at::Tensor seqpos, double theta, std::optional<at::Tensor> block_tables,
                             int64_t page_size, std::optional<at::Tensor> actual_batch_size,
                             std::optional<at::Tensor> batch, std::optional<at::Tensor> cache_seqpos,
                             bool rope_scaling, int64_t old_context_len, double scaling_factor,
                             double lo_freq_factor, double hi_freq_factor, std::optional<at::Tensor> qparam_k,
                             std::optional<at::Tensor> qparam_v);

std::tuple<at::Tensor, at::Tensor> dequantize_fp8_cache(at::Tensor cache_k, at::Tensor cache_v, at::Tensor kv_seqlen,
                                                        std::optional<at::Tensor> qparam_k,
                                                        std::optional<at::Tensor> qparam_v);

std::tuple<at::Tensor, at::Tensor> allocate_kv_cache(int64_t batch, int64_t max_t, int64_t n_kv_heads,
                                                     int64_t head_dim, bool fp8, bool inline_qparams,
                                                     at::Device device);

}  // namespace kvc
