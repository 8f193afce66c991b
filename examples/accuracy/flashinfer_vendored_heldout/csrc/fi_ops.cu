// Torch ops of the engine's decoder layer over FlashInfer's kernels, which are
// vendored unmodified under third_party/flashinfer/ (with utils.cuh and
// vec_dtypes.cuh, which they include): RMSNorm, RoPE applied in place to the
// packed queries and keys, and the SiLU gate of the MLP.
// This file only checks tensors, fills the launchers' arguments and binds them.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_fp16.h>
#include <torch/all.h>

#include "third_party/flashinfer/activation.cuh"
#include "third_party/flashinfer/norm.cuh"
#include "third_party/flashinfer/pos_enc.cuh"

namespace engine_fi {

static cudaStream_t current_stream()
{
    return at::cuda::getCurrentCUDAStream().stream();
}

static void check_fp16_rows(const at::Tensor& t, const char* name)
{
    TORCH_CHECK(t.is_cuda() && t.dtype() == torch::kFloat16, name, " must be an fp16 CUDA tensor");
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
}

// out, x: (tokens, hidden) fp16; weight: (hidden,)
void rms_norm(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight, double eps)
{
    check_fp16_rows(x, "rms_norm: x");
    check_fp16_rows(out, "rms_norm: out");
    TORCH_CHECK(x.dim() == 2 && weight.size(0) == x.size(1), "rms_norm: x (tokens, hidden), weight (hidden,)");
    at::cuda::CUDAGuard guard{x.device()};
    cudaError_t status = flashinfer::norm::RMSNorm<half>((half*)x.data_ptr(),
                                                         (half*)weight.data_ptr(),
                                                         (half*)out.data_ptr(),
                                                         (uint32_t)x.size(0),
                                                         (uint32_t)x.size(1),
                                                         (float)eps,
                                                         current_stream());
    TORCH_CHECK(status == cudaSuccess, "rms_norm: ", cudaGetErrorString(status));
}

// q: (tokens, q_heads, head_dim), k: (tokens, kv_heads, head_dim) fp16, rotated in place;
// indptr: (batch + 1,) int32 token offsets of each request, offsets: (batch,) int32 position of
// each request's first token.
void apply_rope_inplace(at::Tensor& q, at::Tensor& k, const at::Tensor& indptr, const at::Tensor& offsets,
                        bool interleave, double rope_scale, double rope_theta)
{
    check_fp16_rows(q, "apply_rope_inplace: q");
    check_fp16_rows(k, "apply_rope_inplace: k");
    TORCH_CHECK(indptr.dtype() == torch::kInt32 && offsets.dtype() == torch::kInt32,
                "apply_rope_inplace: indptr and offsets must be int32");
    at::cuda::CUDAGuard guard{q.device()};
    cudaError_t status = flashinfer::BatchQKApplyRotaryInPlace<half, int32_t>((half*)q.data_ptr(),
                                                                              (half*)k.data_ptr(),
                                                                              indptr.data_ptr<int32_t>(),
                                                                              offsets.data_ptr<int32_t>(),
                                                                              (uint32_t)offsets.size(0),
                                                                              (uint32_t)q.size(1),
                                                                              (uint32_t)k.size(1),
                                                                              (uint32_t)q.size(2),
                                                                              q.stride(0),
                                                                              q.stride(1),
                                                                              k.stride(0),
                                                                              k.stride(1),
                                                                              interleave,
                                                                              (float)rope_scale,
                                                                              (float)rope_theta,
                                                                              current_stream());
    TORCH_CHECK(status == cudaSuccess, "apply_rope_inplace: ", cudaGetErrorString(status));
}

// gate_up: (tokens, 2 * d) fp16, the gate half first; out: (tokens, d)
void silu_and_mul(at::Tensor& out, const at::Tensor& gate_up)
{
    check_fp16_rows(gate_up, "silu_and_mul: gate_up");
    check_fp16_rows(out, "silu_and_mul: out");
    const int d = (int)(gate_up.size(-1) / 2);
    TORCH_CHECK(out.size(-1) == d && out.numel() * 2 == gate_up.numel(), "silu_and_mul: out must be (tokens, d)");
    TORCH_CHECK(d % 8 == 0, "silu_and_mul: d must be a multiple of 8 (the kernel loads each half in 16-byte vectors)");
    const int64_t tokens = gate_up.numel() / gate_up.size(-1);
    if (tokens == 0) {
        return;
    }
    at::cuda::CUDAGuard guard{gate_up.device()};
    constexpr uint32_t vec_size = 16 / sizeof(half);
    dim3 grid(tokens);
    dim3 block(std::min(d / (int)vec_size, 1024));
    flashinfer::activation::act_and_mul_kernel<half, flashinfer::activation::silu_kernel>
        <<<grid, block, 0, current_stream()>>>((half*)out.data_ptr(), (const half*)gate_up.data_ptr(), d);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace engine_fi

TORCH_LIBRARY(engine_fi, m)
{
    m.def("rms_norm(Tensor! out, Tensor x, Tensor weight, float eps) -> ()");
    m.def("apply_rope_inplace(Tensor! q, Tensor! k, Tensor indptr, Tensor offsets, bool interleave, "
          "float rope_scale, float rope_theta) -> ()");
    m.def("silu_and_mul(Tensor! out, Tensor gate_up) -> ()");
    m.impl("rms_norm", torch::kCUDA, &engine_fi::rms_norm);
    m.impl("apply_rope_inplace", torch::kCUDA, &engine_fi::apply_rope_inplace);
    m.impl("silu_and_mul", torch::kCUDA, &engine_fi::silu_and_mul);
}
