// Torch ops of the engine's decoder kernels (csrc/*.cuh), compiled as one CUDA
// translation unit by the engine's build: each op checks its tensors and
// calls one launcher on the current stream.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "gated_act.cuh"
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

template <typename F>
void dispatch_half_types(const at::Tensor& t, const char* op, F&& f)
{
    if (t.scalar_type() == at::kHalf) {
        f(half{});
    } else if (t.scalar_type() == at::kBFloat16) {
        f(__nv_bfloat16{});
    } else {
        TORCH_CHECK(false, op, ": expected fp16 or bf16, got ", t.scalar_type());
    }
}

// out, x: (rows, d), contiguous; weight: (d,)
void rms_norm(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight, double eps)
{
    TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && out.is_contiguous(), "rms_norm: x and out must be contiguous (rows, d)");
    TORCH_CHECK(weight.numel() == x.size(1), "rms_norm: weight must have d elements");
    const at::cuda::CUDAGuard guard(x.device());
    dispatch_half_types(x, "rms_norm", [&](auto tag) {
        using T = decltype(tag);
        check(engine_kernels::launch_rms_norm<T>(reinterpret_cast<const T*>(x.data_ptr()),
                                                 reinterpret_cast<const T*>(weight.data_ptr()),
                                                 reinterpret_cast<T*>(out.data_ptr()), x.size(0), x.size(1),
                                                 float(eps), stream_of(x)),
              "rms_norm");
    });
}

// q: (tokens, q_heads, head_dim), k: (tokens, kv_heads, head_dim), rotated in place;
// indptr (requests + 1,) and offsets (requests,) int32
void rope_inplace(at::Tensor& q, at::Tensor& k, const at::Tensor& indptr, const at::Tensor& offsets, double rope_scale,
                  double rope_theta)
{
    TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && q.stride(2) == 1 && k.stride(2) == 1, "rope_inplace: q, k (tokens, heads, head_dim)");
    TORCH_CHECK(indptr.scalar_type() == at::kInt && offsets.scalar_type() == at::kInt, "rope_inplace: int32 indptr, offsets");
    const at::cuda::CUDAGuard guard(q.device());
    dispatch_half_types(q, "rope_inplace", [&](auto tag) {
        using T = decltype(tag);
        check(engine_kernels::launch_rope_inplace<T, int32_t>(
                  reinterpret_cast<T*>(q.data_ptr()), reinterpret_cast<T*>(k.data_ptr()), indptr.data_ptr<int32_t>(),
                  offsets.data_ptr<int32_t>(), offsets.size(0), q.size(1), k.size(1), q.size(2), q.stride(0),
                  q.stride(1), k.stride(0), k.stride(1), float(rope_scale), float(rope_theta), stream_of(q)),
              "rope_inplace");
    });
}

// gate_up: (tokens, 2 * d) contiguous, out: (tokens, d)
void silu_and_mul(at::Tensor& out, const at::Tensor& gate_up)
{
    TORCH_CHECK(gate_up.is_contiguous() && out.is_contiguous(), "silu_and_mul: contiguous tensors");
    const int d = int(gate_up.size(-1) / 2);
    TORCH_CHECK(out.size(-1) == d, "silu_and_mul: out's last dimension must be half of gate_up's");
    TORCH_CHECK(d * gate_up.element_size() % 16 == 0, "silu_and_mul: each half of a row must be whole 16-byte vectors");
    const at::cuda::CUDAGuard guard(gate_up.device());
    dispatch_half_types(gate_up, "silu_and_mul", [&](auto tag) {
        using T = decltype(tag);
        check(engine_kernels::launch_silu_and_mul<T>(reinterpret_cast<T*>(out.data_ptr()),
                                                     reinterpret_cast<const T*>(gate_up.data_ptr()),
                                                     gate_up.numel() / gate_up.size(-1), d, stream_of(gate_up)),
              "silu_and_mul");
    });
}

}  // namespace

TORCH_LIBRARY(engine_fi, m)
{
    m.def("launch_rms_norm(Tensor! out, Tensor x, Tensor weight, float eps) -> ()");
    m.def("launch_rope_inplace(Tensor! q, Tensor! k, Tensor indptr, Tensor offsets, float rope_scale, float rope_theta) -> ()");
    m.def("launch_silu_and_mul(Tensor! out, Tensor gate_up) -> ()");
    m.impl("launch_rms_norm", torch::kCUDA, &rms_norm);
    m.impl("launch_rope_inplace", torch::kCUDA, &rope_inplace);
    m.impl("launch_silu_and_mul", torch::kCUDA, &silu_and_mul);
}
