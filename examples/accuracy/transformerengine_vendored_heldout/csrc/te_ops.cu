// Torch ops of the engine's decoder layer over Transformer Engine's kernels,
// which are vendored unmodified under third_party/transformer_engine/: the
// fused RoPE forward (packed THD or padded BSHD, with per-sequence start
// positions for decode) and the gated SiLU of the MLP, both called through
// Transformer Engine's C API (nvte_fused_rope_forward, nvte_swiglu). The
// rest of Transformer Engine's core (tensor objects, the quantising dispatch
// the activation template calls) is linked from the source the build points
// at. This file only checks tensors, wraps them and calls the C API.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>
#include <transformer_engine/activation.h>
#include <transformer_engine/fused_rope.h>
#include <transformer_engine/transformer_engine.h>

#include <vector>

namespace engine_te {

static cudaStream_t current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

static transformer_engine::DType te_dtype(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return transformer_engine::DType::kFloat16;
    case at::kBFloat16: return transformer_engine::DType::kBFloat16;
    case at::kFloat: return transformer_engine::DType::kFloat32;
    case at::kInt: return transformer_engine::DType::kInt32;
    default: TORCH_CHECK(false, "engine_te: unsupported dtype ", t);
  }
}

// A non-owning view of a torch tensor for the C API; an empty tensor is the
// API's "not given" (null data pointer).
static transformer_engine::TensorWrapper wrap(const at::Tensor& t) {
  std::vector<size_t> shape(t.sizes().begin(), t.sizes().end());
  return transformer_engine::TensorWrapper(t.numel() ? t.data_ptr() : nullptr, shape, te_dtype(t.scalar_type()));
}

// x: (tokens, heads, head_dim) packed by cu_seqlens, or (batch, seq, heads,
// head_dim) when cu_seqlens is empty; freqs: (max_pos, rot_dim) fp32
// angles; start_positions: (batch,) int32 position of each sequence's first
// token, or empty.
at::Tensor rope_forward(const at::Tensor& x, const at::Tensor& cu_seqlens, const at::Tensor& freqs,
                        const at::Tensor& start_positions) {
  TORCH_CHECK(x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16, "rope_forward: fp16 or bf16 x");
  TORCH_CHECK(freqs.scalar_type() == at::kFloat, "rope_forward: fp32 freqs");
  at::cuda::CUDAGuard guard{x.device()};
  auto out = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  const bool packed = cu_seqlens.numel() > 0;
  const int d = (int)x.size(-1), h = (int)x.size(-2), d2 = (int)freqs.size(-1);
  const int b = packed ? (int)cu_seqlens.size(0) - 1 : (int)x.size(0);
  const int s = packed ? (int)freqs.size(0) : (int)x.size(1);
  const int stride_s_or_t = packed ? (int)x.stride(0) : (int)x.stride(1);
  const int stride_b = packed ? 0 : (int)x.stride(0);
  const auto format = packed ? NVTE_QKV_Format::NVTE_THD : NVTE_QKV_Format::NVTE_BSHD;
  auto x_te = wrap(x), cu_te = wrap(cu_seqlens), freqs_te = wrap(freqs);
  auto starts_te = wrap(start_positions), out_te = wrap(out);
  nvte_fused_rope_forward(x_te.data(), cu_te.data(), freqs_te.data(), starts_te.data(), out_te.data(), format,
                          /*interleaved=*/false, /*cp_size=*/1, /*cp_rank=*/0, s, b, h, d, d2, stride_s_or_t,
                          stride_b, (int)x.stride(-2), (int)x.stride(-1), current_stream());
  return out;
}

// gate_up: (tokens, 2 * inter) with the gate in the first half; returns
// silu(gate) * up as (tokens, inter) in the input's dtype.
at::Tensor swiglu(const at::Tensor& gate_up) {
  TORCH_CHECK(gate_up.dim() == 2 && gate_up.size(1) % 2 == 0 && gate_up.is_contiguous(),
              "swiglu: contiguous (tokens, 2 * inter) input");
  at::cuda::CUDAGuard guard{gate_up.device()};
  auto out = at::empty({gate_up.size(0), gate_up.size(1) / 2}, gate_up.options());
  auto in_te = wrap(gate_up), out_te = wrap(out);
  nvte_swiglu(in_te.data(), out_te.data(), current_stream());
  return out;
}

}  // namespace engine_te

TORCH_LIBRARY(engine_te, m) {
  m.def("rope_forward(Tensor x, Tensor cu_seqlens, Tensor freqs, Tensor start_positions) -> Tensor");
  m.def("swiglu(Tensor gate_up) -> Tensor");
  m.impl("rope_forward", torch::kCUDA, &engine_te::rope_forward);
  m.impl("swiglu", torch::kCUDA, &engine_te::swiglu);
}
