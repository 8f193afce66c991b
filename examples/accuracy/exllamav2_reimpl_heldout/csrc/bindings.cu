// Torch ops of the engine's attention-block kernels (csrc/*.cuh), compiled as
// one CUDA translation unit by the engine's build: each op checks its tensors
// and calls one launcher on the current stream.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "kv_fp8.cuh"
#include "rms_norm.cuh"
#include "rope.cuh"

namespace {

cudaStream_t stream_of(const at::Tensor& t)
{
    return at::cuda::getCurrentCUDAStream(t.get_device()).stream();
}

void check(cudaError_t status, const char* op)
{
    TORCH_CHECK(status == cudaSuccess, op, ": ", cudaGetErrorString(status));
}

void check_fp16(const at::Tensor& t, const char* what)
{
    TORCH_CHECK(t.is_cuda() && t.scalar_type() == at::kHalf && t.is_contiguous(), what,
                ": expected a contiguous fp16 CUDA tensor");
}

void check_cache(const at::Tensor& cache, const at::Tensor& values, const char* what)
{
    TORCH_CHECK(cache.is_cuda() && cache.scalar_type() == at::kByte && cache.is_contiguous(), what,
                ": expected a contiguous uint8 CUDA cache");
    TORCH_CHECK(cache.sizes() == values.sizes(), what, ": cache and values must have one shape");
    TORCH_CHECK(values.size(-1) % 8 == 0, what, ": rows must be a multiple of 8 values");
}

// out, x: (rows, dim) fp16, dim <= 8192; weight: (dim,)
void launch_rms_norm(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight, double eps)
{
    check_fp16(x, "launch_rms_norm: x");
    check_fp16(out, "launch_rms_norm: out");
    check_fp16(weight, "launch_rms_norm: weight");
    TORCH_CHECK(x.dim() == 2 && weight.size(0) == x.size(1), "launch_rms_norm: x (rows, dim), weight (dim,)");
    const at::cuda::CUDAGuard guard(x.device());
    check(engine_kernels::launch_rms_norm((const half*)x.data_ptr(), (const half*)weight.data_ptr(),
                                          (half*)out.data_ptr(), (float)eps, (int)x.size(0), (int)x.size(1),
                                          stream_of(x)),
          "launch_rms_norm");
}

// x: (batch, tokens, heads, head_dim) fp16 rotated in place; sin, cos: (positions, head_dim);
// past_len >= 0 for every sequence, or -1 with past_lens (batch,) int32.
void launch_rope_neox(at::Tensor& x, const at::Tensor& sin, const at::Tensor& cos, int64_t past_len,
                      const c10::optional<at::Tensor>& past_lens)
{
    check_fp16(x, "launch_rope_neox: x");
    check_fp16(sin, "launch_rope_neox: sin");
    check_fp16(cos, "launch_rope_neox: cos");
    TORCH_CHECK(x.dim() == 4 && x.size(3) % 4 == 0, "launch_rope_neox: x (batch, tokens, heads, head_dim % 4 == 0)");
    TORCH_CHECK(past_len >= 0 || (past_lens.has_value() && past_lens->scalar_type() == at::kInt),
                "launch_rope_neox: past_len -1 needs int32 past_lens");
    const uint32_t* lens = past_len < 0 ? (const uint32_t*)past_lens->data_ptr() : nullptr;
    const at::cuda::CUDAGuard guard(x.device());
    check(engine_kernels::launch_rope_neox((half*)x.data_ptr(), (const half*)sin.data_ptr(),
                                           (const half*)cos.data_ptr(), (int)x.size(0),
                                           (int)(x.size(1) * x.size(2)), (int)x.size(3), (int)x.size(2),
                                           (int)past_len, lens, stream_of(x)),
          "launch_rope_neox");
}

// values, cache: (sequences, row) with the columns [offset, offset + width) converted.
void launch_store_e5m2(const at::Tensor& values, at::Tensor& cache, int64_t offset, int64_t width)
{
    check_fp16(values, "launch_store_e5m2: values");
    check_cache(cache, values, "launch_store_e5m2");
    const at::cuda::CUDAGuard guard(values.device());
    check(engine_kernels::launch_store_e5m2((const half*)values.data_ptr(), (uint8_t*)cache.data_ptr(),
                                            (int)values.size(-1), (int)values.size(0), (int)offset, (int)width,
                                            stream_of(values)),
          "launch_store_e5m2");
}

void launch_load_e5m2(const at::Tensor& cache, at::Tensor& values, int64_t offset, int64_t width)
{
    check_fp16(values, "launch_load_e5m2: values");
    check_cache(cache, values, "launch_load_e5m2");
    const at::cuda::CUDAGuard guard(values.device());
    check(engine_kernels::launch_load_e5m2((const uint8_t*)cache.data_ptr(), (half*)values.data_ptr(),
                                           (int)values.size(-1), (int)values.size(0), (int)offset, (int)width,
                                           stream_of(values)),
          "launch_load_e5m2");
}

void launch_store_e5m2_kv(const at::Tensor& k, const at::Tensor& v, at::Tensor& k_cache, at::Tensor& v_cache,
                          int64_t offset, int64_t width)
{
    check_fp16(k, "launch_store_e5m2_kv: k");
    check_fp16(v, "launch_store_e5m2_kv: v");
    TORCH_CHECK(k.sizes() == v.sizes(), "launch_store_e5m2_kv: k and v must have one shape");
    check_cache(k_cache, k, "launch_store_e5m2_kv");
    check_cache(v_cache, v, "launch_store_e5m2_kv");
    const at::cuda::CUDAGuard guard(k.device());
    check(engine_kernels::launch_store_e5m2_kv((const half*)k.data_ptr(), (const half*)v.data_ptr(),
                                               (uint8_t*)k_cache.data_ptr(), (uint8_t*)v_cache.data_ptr(),
                                               (int)k.size(-1), (int)k.size(0), (int)offset, (int)width,
                                               stream_of(k)),
          "launch_store_e5m2_kv");
}

}  // namespace

TORCH_LIBRARY(engine_exl, m)
{
    m.def("launch_rms_norm(Tensor! out, Tensor x, Tensor weight, float eps) -> ()");
    m.def("launch_rope_neox(Tensor! x, Tensor sin, Tensor cos, int past_len, Tensor? past_lens) -> ()");
    m.def("launch_store_e5m2(Tensor values, Tensor! cache, int offset, int width) -> ()");
    m.def("launch_load_e5m2(Tensor cache, Tensor! values, int offset, int width) -> ()");
    m.def("launch_store_e5m2_kv(Tensor k, Tensor v, Tensor! k_cache, Tensor! v_cache, int offset, int width) -> ()");
    m.impl("launch_rms_norm", torch::kCUDA, &launch_rms_norm);
    m.impl("launch_rope_neox", torch::kCUDA, &launch_rope_neox);
    m.impl("launch_store_e5m2", torch::kCUDA, &launch_store_e5m2);
    m.impl("launch_load_e5m2", torch::kCUDA, &launch_load_e5m2);
    m.impl("launch_store_e5m2_kv", torch::kCUDA, &launch_store_e5m2_kv);
}
