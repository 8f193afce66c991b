// Torch ops over the engine's RoPE and SwiGLU kernels: tensor checks, dtype
// dispatch and the current stream; the arithmetic lives in rope.cu and
// gated_silu.cu.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <torch/all.h>

#include "gated_silu.h"
#include "rope.h"

namespace engine_kernels {

static cudaStream_t current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

// x: (tokens, heads, head_dim) packed by cu_seqlens, or (batch, seq, heads,
// head_dim) when cu_seqlens is empty; angles: (max_pos, rot_dim) fp32;
// start_positions: (batch,) int32 or empty.
// portq: ports transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward[interleaved] -- half-rotation layout only
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward[cp_size] -- no context parallelism at inference
// portq: not-carried transformerengine:transformer_engine/common/fused_rope/fused_rope.cu::fused_rope_forward[cp_rank] -- no context parallelism at inference
at::Tensor rope_forward(const at::Tensor& x, const at::Tensor& cu_seqlens, const at::Tensor& angles,
                        const at::Tensor& start_positions)
{
    TORCH_CHECK(angles.scalar_type() == at::kFloat && angles.dim() == 2, "rope_forward: 2-D fp32 angles");
    at::cuda::CUDAGuard guard{x.device()};
    auto out            = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    const bool packed   = cu_seqlens.numel() > 0;
    const int d         = (int)x.size(-1);
    const int h         = (int)x.size(-2);
    const int b         = packed ? (int)cu_seqlens.size(0) - 1 : (int)x.size(0);
    const int s         = packed ? (int)angles.size(0) : (int)x.size(1);
    const int* cu       = packed ? cu_seqlens.data_ptr<int>() : nullptr;
    const int* starts   = start_positions.numel() > 0 ? start_positions.data_ptr<int>() : nullptr;
    const auto layout   = packed ? TokenLayout::kPacked : TokenLayout::kBatchSeq;
    const int stride_t  = packed ? (int)x.stride(0) : (int)x.stride(1);
    const int stride_b  = packed ? 0 : (int)x.stride(0);
    if (x.scalar_type() == at::kHalf) {
        launch_rope_forward<half>((const half*)x.data_ptr(), cu, angles.data_ptr<float>(), starts,
                                  (half*)out.data_ptr(), layout, s, b, h, d, (int)angles.size(1), stride_t, stride_b,
                                  (int)x.stride(-2), (int)x.stride(-1), current_stream());
    }
    else {
        TORCH_CHECK(x.scalar_type() == at::kBFloat16, "rope_forward: fp16 or bf16 x");
        launch_rope_forward<__nv_bfloat16>((const __nv_bfloat16*)x.data_ptr(), cu, angles.data_ptr<float>(), starts,
                                           (__nv_bfloat16*)out.data_ptr(), layout, s, b, h, d, (int)angles.size(1),
                                           stride_t, stride_b, (int)x.stride(-2), (int)x.stride(-1),
                                           current_stream());
    }
    return out;
}

at::Tensor rope_angles(int64_t max_positions, int64_t rot_dim, double theta, const at::Device& device)
{
    auto angles = at::empty({max_positions, rot_dim}, at::TensorOptions().dtype(at::kFloat).device(device));
    at::cuda::CUDAGuard guard{device};
    launch_rope_angles(angles.data_ptr<float>(), (int)max_positions, (int)rot_dim, (float)theta, current_stream());
    return angles;
}

// gate_up: (tokens, 2 * inter), gate first -> (tokens, inter).
at::Tensor swiglu_op(const at::Tensor& gate_up)
{
    TORCH_CHECK(gate_up.dim() == 2 && gate_up.size(1) % 2 == 0 && gate_up.is_contiguous(),
                "swiglu: contiguous (tokens, 2 * inter) input");
    at::cuda::CUDAGuard guard{gate_up.device()};
    const size_t rows = gate_up.size(0), n = gate_up.size(1) / 2;
    auto out          = at::empty({(int64_t)rows, (int64_t)n}, gate_up.options());
    if (gate_up.scalar_type() == at::kHalf) {
        swiglu<half>((const half*)gate_up.data_ptr(), (half*)out.data_ptr(), rows, n, current_stream());
    }
    else {
        TORCH_CHECK(gate_up.scalar_type() == at::kBFloat16, "swiglu: fp16 or bf16 input");
        swiglu<__nv_bfloat16>((const __nv_bfloat16*)gate_up.data_ptr(), (__nv_bfloat16*)out.data_ptr(), rows, n,
                              current_stream());
    }
    return out;
}

}  // namespace engine_kernels

TORCH_LIBRARY(engine_kernels, m)
{
    m.def("rope_forward(Tensor x, Tensor cu_seqlens, Tensor angles, Tensor start_positions) -> Tensor");
    m.def("rope_angles(int max_positions, int rot_dim, float theta, Device device) -> Tensor");
    m.def("swiglu(Tensor gate_up) -> Tensor");
    m.impl("rope_forward", torch::kCUDA, &engine_kernels::rope_forward);
    m.impl("swiglu", torch::kCUDA, &engine_kernels::swiglu_op);
}

TORCH_LIBRARY_IMPL(engine_kernels, CompositeExplicitAutograd, m)
{
    m.impl("rope_angles", &engine_kernels::rope_angles);
}
