// Torch ops of the engine's attention block over ExLlamaV2's kernels, which are
// vendored unmodified under third_party/exllamav2/cuda/: the input RMSNorm, RoPE
// applied in place to the packed queries or keys, and the FP8 (E5M2) KV cache's
// store and load of a token window.
// This file only checks tensors, fills the launchers' arguments and binds them.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <torch/all.h>

#include "third_party/exllamav2/cuda/cache.cuh"
#include "third_party/exllamav2/cuda/rms_norm.cuh"
#include "third_party/exllamav2/cuda/rope.cuh"

namespace engine_exl {

static void check_fp16(const at::Tensor& t, const char* name)
{
    TORCH_CHECK(t.is_cuda() && t.dtype() == torch::kFloat16, name, " must be an fp16 CUDA tensor");
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

// out, x: (rows, dim) fp16; weight: (dim,). The vendored kernel keeps up to
// 8 * 1024 columns in registers.
void rms_norm(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight, double eps)
{
    check_fp16(x, "rms_norm: x");
    check_fp16(out, "rms_norm: out");
    check_fp16(weight, "rms_norm: weight");
    TORCH_CHECK(x.dim() == 2 && weight.size(0) == x.size(1), "rms_norm: x (rows, dim), weight (dim,)");
    TORCH_CHECK(x.size(1) <= 8 * 1024, "rms_norm: dim must be at most 8192");
    at::cuda::CUDAGuard guard{x.device()};
    rms_norm_cuda((const half*)x.data_ptr(), (const half*)weight.data_ptr(), (half*)out.data_ptr(),
                  (float)eps, (int)x.size(0), (int)x.size(1));
}

// x: (batch, tokens, heads, head_dim) fp16, rotated in place (NeoX halves);
// sin, cos: (max_positions, head_dim) fp16 tables; past_len >= 0 is every
// sequence's first position, -1 reads it per sequence from past_lens (int32).
void rope_(at::Tensor& x, const at::Tensor& sin, const at::Tensor& cos, int64_t past_len,
           const c10::optional<at::Tensor>& past_lens)
{
    check_fp16(x, "rope_: x");
    check_fp16(sin, "rope_: sin");
    check_fp16(cos, "rope_: cos");
    TORCH_CHECK(x.dim() == 4, "rope_: x must be (batch, tokens, heads, head_dim)");
    TORCH_CHECK(past_len >= 0 || (past_lens.has_value() && past_lens->dtype() == torch::kInt32),
                "rope_: past_len -1 needs int32 past_lens");
    at::cuda::CUDAGuard guard{x.device()};
    const uint32_t* lens = past_len < 0 ? (const uint32_t*)past_lens->data_ptr() : nullptr;
    rope_cuda((half*)x.data_ptr(), (const half*)sin.data_ptr(), (const half*)cos.data_ptr(),
              (int)x.size(0), (int)(x.size(1) * x.size(2)), (int)x.size(3), (int)x.size(2),
              (int)past_len, lens);
}

// cache: (batch, max_tokens * heads * head_dim) uint8; values the same shape in
// fp16; one row a sequence. Columns [offset, offset + width) of every row are converted, 8 at a time.
void store_fp8(const at::Tensor& values, at::Tensor& cache, int64_t offset, int64_t width)
{
    check_fp16(values, "store_fp8: values");
    TORCH_CHECK(cache.is_cuda() && cache.dtype() == torch::kUInt8 && cache.is_contiguous(),
                "store_fp8: cache must be a contiguous uint8 CUDA tensor");
    TORCH_CHECK(cache.sizes() == values.sizes(), "store_fp8: cache and values must have one shape");
    const int stride = (int)values.size(-1);
    const int height = (int)(values.numel() / stride);
    at::cuda::CUDAGuard guard{values.device()};
    array_fp16_to_fp8_cuda((const half*)values.data_ptr(), (unsigned char*)cache.data_ptr(), stride, height,
                           (int)offset, (int)width);
}

void load_fp8(const at::Tensor& cache, at::Tensor& values, int64_t offset, int64_t width)
{
    check_fp16(values, "load_fp8: values");
    TORCH_CHECK(cache.is_cuda() && cache.dtype() == torch::kUInt8 && cache.is_contiguous(),
                "load_fp8: cache must be a contiguous uint8 CUDA tensor");
    TORCH_CHECK(cache.sizes() == values.sizes(), "load_fp8: cache and values must have one shape");
    const int stride = (int)values.size(-1);
    const int height = (int)(values.numel() / stride);
    at::cuda::CUDAGuard guard{values.device()};
    array_fp8_to_fp16_cuda((const unsigned char*)cache.data_ptr(), (half*)values.data_ptr(), stride, height,
                           (int)offset, (int)width);
}

}  // namespace engine_exl

TORCH_LIBRARY(engine_exl, m)
{
    m.def("rms_norm(Tensor! out, Tensor x, Tensor weight, float eps) -> ()");
    m.def("rope_(Tensor! x, Tensor sin, Tensor cos, int past_len, Tensor? past_lens) -> ()");
    m.def("store_fp8(Tensor values, Tensor! cache, int offset, int width) -> ()");
    m.def("load_fp8(Tensor cache, Tensor! values, int offset, int width) -> ()");
    m.impl("rms_norm", torch::kCUDA, &engine_exl::rms_norm);
    m.impl("rope_", torch::kCUDA, &engine_exl::rope_);
    m.impl("store_fp8", torch::kCUDA, &engine_exl::store_fp8);
    m.impl("load_fp8", torch::kCUDA, &engine_exl::load_fp8);
}
