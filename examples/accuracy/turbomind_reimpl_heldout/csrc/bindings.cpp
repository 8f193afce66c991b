// Torch ops of the engine's decoder kernels (csrc/*.cu): shape and dtype checks,
// then the launchers on the current stream. Registered as torch.ops.dec_ops,
// each op under the name of the launcher it runs.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "gated_silu.h"
#include "paged_kv.h"
#include "rms_norm.h"
#include "top_p.h"

namespace {

cudaStream_t stream_of(const at::Tensor& t)
{
    return at::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

template<class F>
void dispatch_half_types(const at::Tensor& t, const char* op, F&& f)
{
    if (t.scalar_type() == at::kHalf) {
        f(half{});
    }
    else if (t.scalar_type() == at::kBFloat16) {
        f(__nv_bfloat16{});
    }
    else {
        TORCH_CHECK(false, op, ": expected fp16 or bf16, got ", t.scalar_type());
    }
}

void op_launch_rms_norm(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight, double eps)
{
    TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && out.is_contiguous(), "launch_rms_norm: packed 2-D rows");
    TORCH_CHECK(weight.size(0) == x.size(1) && weight.scalar_type() == x.scalar_type(), "launch_rms_norm: weight of x's width and dtype");
    const at::cuda::CUDAGuard guard{x.device()};
    dispatch_half_types(x, "launch_rms_norm", [&](auto t) {
        using T = decltype(t);
        dec::launch_rms_norm<T>((T*)out.data_ptr(), (const T*)x.data_ptr(), (const T*)weight.data_ptr(), (int)x.size(1),
                                (int)x.size(0), (float)eps, stream_of(x));
    });
}

void op_launch_gated_silu(at::Tensor& act, const at::Tensor& up)
{
    TORCH_CHECK(act.dim() == 2 && act.sizes() == up.sizes() && act.stride(0) == up.stride(0), "launch_gated_silu: equal 2-D views");
    TORCH_CHECK(act.stride(1) == 1 && act.size(1) % 4 == 0, "launch_gated_silu: contiguous rows, width a multiple of 4");
    const at::cuda::CUDAGuard guard{act.device()};
    dispatch_half_types(act, "launch_gated_silu", [&](auto t) {
        using T = decltype(t);
        dec::launch_gated_silu<T>((T*)act.data_ptr(), (const T*)up.data_ptr(), act.stride(0), (int)act.size(0),
                                  (int)act.size(1), stream_of(act));
    });
}

void op_launch_paged_kv_write(const at::Tensor& block_ptrs,
                    const at::Tensor& k,
                    const at::Tensor& v,
                    const at::Tensor& cu_q_len,
                    const at::Tensor& cu_k_len,
                    const at::Tensor& cu_block_num,
                    const at::Tensor& rope_base,
                    int64_t           rope_dim,
                    double            rope_ti_scale,
                    int64_t           block_seq_len,
                    int64_t           layer_id,
                    int64_t           max_q_len)
{
    TORCH_CHECK(k.dim() == 3 && k.sizes() == v.sizes() && k.stride(1) == k.size(2), "launch_paged_kv_write: k, v (tokens, heads, dim)");
    const at::cuda::CUDAGuard guard{k.device()};
    const int64_t             head_dim = k.size(2);
    dispatch_half_types(k, "launch_paged_kv_write", [&](auto t) {
        using T = decltype(t);
        dec::launch_paged_kv_write<T>((char**)block_ptrs.data_ptr(), (const T*)k.data_ptr(), (const T*)v.data_ptr(),
                                      cu_q_len.data_ptr<int>(), cu_k_len.data_ptr<int>(), cu_block_num.data_ptr<int>(),
                                      rope_base.numel() ? rope_base.data_ptr<float>() : nullptr, (int)rope_dim,
                                      (float)rope_ti_scale, 0, k.stride(0) / head_dim, 1, k.stride(0) / head_dim,
                                      (int)block_seq_len, (int)layer_id, (int)max_q_len, (int)k.size(1), (int)head_dim,
                                      (int)(cu_q_len.size(0) - 1), stream_of(k));
    });
}

void op_top_p_sort(const at::Tensor& probs,
                   at::Tensor&       sorted_probs,
                   at::Tensor&       sorted_ids,
                   at::Tensor&       kept,
                   const at::Tensor& top_ks,
                   const at::Tensor& top_ps,
                   int64_t           vocab_size)
{
    TORCH_CHECK(probs.scalar_type() == at::kFloat && probs.dim() == 2 && probs.is_contiguous(), "top_p_sort: fp32 rows");
    const at::cuda::CUDAGuard guard{probs.device()};
    const auto                stream = stream_of(probs);

    dec::TopPSortArgs sort{};
    sort.probs             = probs.data_ptr();
    sort.sorted_probs      = sorted_probs.data_ptr();
    sort.sorted_ids        = sorted_ids.data_ptr<int>();
    sort.kept              = kept.data_ptr<int>();
    sort.top_ks            = top_ks.data_ptr<int>();
    sort.top_ps            = top_ps.data_ptr<float>();
    sort.batch_size        = (int)probs.size(0);
    sort.vocab_size        = (int)vocab_size;
    sort.vocab_size_padded = (int)probs.size(1);
    dec::top_p_sort<float>(sort, stream);  // sizes the workspace
    auto workspace = at::empty({(int64_t)sort.workspace_size}, probs.options().dtype(at::kByte));
    sort.workspace = workspace.data_ptr();
    dec::top_p_sort<float>(sort, stream);
}

void op_launch_top_p_cut(at::Tensor& sorted_probs, at::Tensor& sorted_ids, at::Tensor& kept, const at::Tensor& top_ps, int64_t vocab_size)
{
    TORCH_CHECK(sorted_probs.scalar_type() == at::kFloat && sorted_probs.dim() == 2, "launch_top_p_cut: fp32 rows");
    const at::cuda::CUDAGuard guard{sorted_probs.device()};
    dec::TopPCutArgs cut{};
    cut.sorted_probs      = sorted_probs.data_ptr();
    cut.sorted_ids        = sorted_ids.data_ptr<int>();
    cut.kept              = kept.data_ptr<int>();
    cut.top_ps            = top_ps.data_ptr<float>();
    cut.batch_size        = (int)sorted_probs.size(0);
    cut.vocab_size        = (int)vocab_size;
    cut.vocab_size_padded = (int)sorted_probs.size(1);
    dec::launch_top_p_cut<float>(cut, stream_of(sorted_probs));
}

void op_launch_temperature_scale(at::Tensor& logits, const at::Tensor& temperatures)
{
    TORCH_CHECK(logits.scalar_type() == at::kFloat && logits.dim() == 2 && logits.is_contiguous(), "launch_temperature_scale: fp32 rows");
    const at::cuda::CUDAGuard guard{logits.device()};
    dec::launch_temperature_scale(logits.data_ptr<float>(), temperatures.data_ptr<float>(), (int)logits.size(1),
                                  (int)logits.size(0), stream_of(logits));
}

}  // namespace

TORCH_LIBRARY(dec_ops, m)
{
    m.def("launch_rms_norm(Tensor! out, Tensor x, Tensor weight, float eps) -> ()");
    m.def("launch_gated_silu(Tensor! act, Tensor up) -> ()");
    m.def("launch_paged_kv_write(Tensor block_ptrs, Tensor k, Tensor v, Tensor cu_q_len, Tensor cu_k_len, Tensor cu_block_num, "
          "Tensor rope_base, int rope_dim, float rope_ti_scale, int block_seq_len, int layer_id, int max_q_len) -> ()");
    m.def("top_p_sort(Tensor probs, Tensor! sorted_probs, Tensor! sorted_ids, Tensor! kept, Tensor top_ks, Tensor top_ps, "
          "int vocab_size) -> ()");
    m.def("launch_top_p_cut(Tensor! sorted_probs, Tensor! sorted_ids, Tensor! kept, Tensor top_ps, int vocab_size) -> ()");
    m.def("launch_temperature_scale(Tensor! logits, Tensor temperatures) -> ()");
}

TORCH_LIBRARY_IMPL(dec_ops, CUDA, m)
{
    m.impl("launch_rms_norm", &op_launch_rms_norm);
    m.impl("launch_gated_silu", &op_launch_gated_silu);
    m.impl("launch_paged_kv_write", &op_launch_paged_kv_write);
    m.impl("top_p_sort", &op_top_p_sort);
    m.impl("launch_top_p_cut", &op_launch_top_p_cut);
    m.impl("launch_temperature_scale", &op_launch_temperature_scale);
}
