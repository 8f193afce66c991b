// Host side of the engine's fused attention softmax: checks the score and
// mask tensors, allocates the probabilities and launches the warp kernel of
// fused_softmax.cuh; plus the engine's own key-padding mask builder.
// It registers nothing: bindings.cpp binds these functions as torch ops.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>

#include "fused_softmax.cuh"

namespace engine_apex {

// scores: (batch, heads, q_len, k_len) fp16/bf16; mask: (1 or batch, 1, q_len,
// k_len) uint8, 1 = masked. Returns softmax(scores * scale) with masked
// positions at kMaskedScore before the exponent.
// portq: ports apex:csrc/megatron/scaled_masked_softmax_cuda.cu::fwd_cuda
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax_cuda.cu::bwd_cuda -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax_cuda.cu::get_batch_per_block_cuda -- the launcher checks the block's row count itself
torch::Tensor masked_softmax_forward(const torch::Tensor& scores, const torch::Tensor& mask, double scale)
{
    const int batch = scores.size(0);
    const int heads = scores.size(1);
    const int q_len = scores.size(2);
    const int k_len = scores.size(3);
    const int mask_batches = mask.size(0);
    TORCH_CHECK(k_len <= kMaxSoftmaxKeys, "masked_softmax: k_len ", k_len, " is over ", kMaxSoftmaxKeys);
    TORCH_CHECK(q_len > 1, "masked_softmax: q_len must be over 1 (decode steps use the torch softmax)");
    TORCH_CHECK(mask_batches == 1 || mask_batches == batch, "masked_softmax: mask batch must be 1 or ", batch);
    TORCH_CHECK(mask.size(1) == 1 && mask.size(2) == q_len && mask.size(3) == k_len,
                "masked_softmax: mask must be (B, 1, q_len, k_len)");
    TORCH_CHECK(scores.is_contiguous() && mask.is_contiguous(), "masked_softmax: contiguous scores and mask");

    at::cuda::CUDAGuard guard{scores.device()};
    auto probs = torch::empty_like(scores);
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    bool launched = false;
    if (scores.scalar_type() == at::ScalarType::Half) {
        launched = launch_masked_softmax_fwd<__half>(reinterpret_cast<__half*>(probs.data_ptr()),
                                                      reinterpret_cast<const __half*>(scores.data_ptr()),
                                                      mask.data_ptr<uint8_t>(), (float)scale, q_len, k_len,
                                                      batch, heads, mask_batches, stream);
    } else if (scores.scalar_type() == at::ScalarType::BFloat16) {
        launched = launch_masked_softmax_fwd<__nv_bfloat16>(
            reinterpret_cast<__nv_bfloat16*>(probs.data_ptr()),
            reinterpret_cast<const __nv_bfloat16*>(scores.data_ptr()), mask.data_ptr<uint8_t>(), (float)scale,
            q_len, k_len, batch, heads, mask_batches, stream);
    } else {
        TORCH_CHECK(false, "masked_softmax: fp16 or bf16 scores, got ", scores.scalar_type());
    }
    TORCH_CHECK(launched, "masked_softmax: q_len ", q_len, " is not a multiple of the block's rows for k_len ", k_len);
    return probs;
}

// The engine's own: one thread per (sequence, query, key) writes 1 where the
// key lies past the sequence's length, so a padded batch needs no mask on
// the host.
__global__ void key_padding_mask_kernel(uint8_t* __restrict__ mask,
                                        const int32_t* __restrict__ seq_lens,
                                        int q_len,
                                        int k_len)
{
    const int b = blockIdx.y;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (int64_t)q_len * k_len) {
        return;
    }
    const int key = (int)(i % k_len);
    mask[(int64_t)b * q_len * k_len + i] = key >= seq_lens[b] ? 1 : 0;
}

torch::Tensor key_padding_mask(const torch::Tensor& seq_lens, int64_t q_len, int64_t k_len)
{
    TORCH_CHECK(seq_lens.scalar_type() == at::ScalarType::Int && seq_lens.dim() == 1,
                "key_padding_mask: seq_lens must be 1-D int32");
    at::cuda::CUDAGuard guard{seq_lens.device()};
    const int batch = seq_lens.size(0);
    auto mask = torch::empty({batch, 1, q_len, k_len}, seq_lens.options().dtype(at::ScalarType::Byte));
    const int threads = 256;
    const dim3 grid((unsigned)((q_len * k_len + threads - 1) / threads), batch);
    key_padding_mask_kernel<<<grid, threads, 0, at::cuda::getCurrentCUDAStream().stream()>>>(
        mask.data_ptr<uint8_t>(), seq_lens.data_ptr<int32_t>(), (int)q_len, (int)k_len);
    return mask;
}

}  // namespace engine_apex
