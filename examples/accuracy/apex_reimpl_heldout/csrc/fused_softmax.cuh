// Scaled, masked softmax over the last dimension of attention scores
// (batch, heads, q_len, k_len), one warp per row: the engine's inference copy
// of Apex's Megatron fused softmax. Forward only; fp16 and bf16 scores with
// fp32 accumulation. A position whose mask byte is 1 is masked out.
// This header only defines the kernel and its launcher; tensors are checked
// by the host op in fused_softmax.cu.
#pragma once

#include <c10/cuda/CUDAStream.h>
#include <c10/macros/Macros.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <limits>

namespace engine_apex {

// Longest key row the warp kernel holds in registers.
constexpr int kMaxSoftmaxKeys = 2048;
// Threads of one softmax block, whatever the row length.
constexpr int kSoftmaxThreads = 128;
// Score a masked position gets before the exponent.
constexpr float kMaskedScore = -10000.0f;

// portq: ports apex:csrc/megatron/scaled_masked_softmax.h::log2_ceil
inline int ceil_log2(int n)
{
    int bits = 0;
    while ((1 << bits) < n) {
        ++bits;
    }
    return bits;
}

struct SumOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

struct MaxOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return b > a ? b : a; }
};

// Butterfly reduction of ROWS values per lane across a warp of LANES lanes:
// every lane ends with the reduced value of each of its rows.
// portq: ports apex:csrc/megatron/scaled_masked_softmax.h::warp_reduce
template <int ROWS, int LANES, typename Op>
__device__ __forceinline__ void warp_allreduce(float* vals, Op op)
{
#pragma unroll
    for (int stride = LANES / 2; stride > 0; stride >>= 1) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            vals[r] = op(vals[r], __shfl_xor_sync(0xffffffffu, vals[r], stride, LANES));
        }
    }
}

// grid (q_len / rows_per_block, heads, batch), block (lanes, warps_per_block):
// each warp owns ROWS consecutive rows of k_len scores. mask_batches is 1 when
// one (1, 1, q_len, k_len) mask serves the whole batch, else batch.
// portq: ports apex:csrc/megatron/scaled_masked_softmax.h::scaled_masked_softmax_warp_forward
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax.h::copy_vector -- scalar loads and stores; the engine's rows are short and the vector copy buys nothing it measured
template <typename scalar_t, int LOG2_KEYS>
__global__ void masked_softmax_fwd_kernel(scalar_t* __restrict__ out,
                                          const scalar_t* __restrict__ scores,
                                          const uint8_t* __restrict__ mask,
                                          const float scale,
                                          int rows,
                                          int k_len,
                                          int mask_batches)
{
    constexpr int KEYS = 1 << LOG2_KEYS;
    constexpr int LANES = KEYS < C10_WARP_SIZE ? KEYS : C10_WARP_SIZE;
    constexpr int PER_LANE = KEYS / LANES;
    constexpr int ROWS = KEYS <= 128 ? 2 : 1;

    const int warp_in_grid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const int row0 = (blockDim.y * warp_in_grid + threadIdx.y) * ROWS;
    // The mask has no head dimension: a broadcast mask restarts at every batch.
    const int mask_block = mask_batches == 1 ? blockIdx.x : blockIdx.x + gridDim.x * blockIdx.z;
    const int mask_row0 = (blockDim.y * mask_block + threadIdx.y) * ROWS;
    const int my_rows = rows - row0 < ROWS ? rows - row0 : ROWS;
    const int lane = threadIdx.x;

    float x[ROWS][PER_LANE];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const int n = r < my_rows ? k_len : 0;
        const scalar_t* src = scores + (size_t)(row0 + r) * k_len;
        const uint8_t* m = mask + (size_t)(mask_row0 + r) * k_len;
#pragma unroll
        for (int j = 0; j < PER_LANE; ++j) {
            const int col = lane + j * LANES;
            if (col < n) {
                x[r][j] = m[col] == 1 ? kMaskedScore : static_cast<float>(src[col]) * scale;
            } else {
                x[r][j] = -std::numeric_limits<float>::infinity();
            }
        }
    }

    float row_max[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        row_max[r] = x[r][0];
#pragma unroll
        for (int j = 1; j < PER_LANE; ++j) {
            row_max[r] = fmaxf(row_max[r], x[r][j]);
        }
    }
    warp_allreduce<ROWS, LANES>(row_max, MaxOp{});

    float row_sum[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        row_sum[r] = 0.f;
#pragma unroll
        for (int j = 0; j < PER_LANE; ++j) {
            x[r][j] = __expf(x[r][j] - row_max[r]);
            row_sum[r] += x[r][j];
        }
    }
    warp_allreduce<ROWS, LANES>(row_sum, SumOp{});

#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        if (r >= my_rows) {
            break;
        }
        scalar_t* dst = out + (size_t)(row0 + r) * k_len;
#pragma unroll
        for (int j = 0; j < PER_LANE; ++j) {
            const int col = lane + j * LANES;
            if (col < k_len) {
                dst[col] = static_cast<scalar_t>(x[r][j] / row_sum[r]);
            }
        }
    }
}

// Picks the kernel instance for k_len (rounded up to a power of two) and
// launches it over (batch, heads, q_len) rows on stream. q_len must be a
// multiple of the rows one block covers; returns false where it is not, or
// where k_len is over kMaxSoftmaxKeys.
// portq: ports apex:csrc/megatron/scaled_masked_softmax.h::dispatch_scaled_masked_softmax_forward
template <typename scalar_t>
bool launch_masked_softmax_fwd(scalar_t* out,
                               const scalar_t* scores,
                               const uint8_t* mask,
                               float scale,
                               int q_len,
                               int k_len,
                               int batch,
                               int heads,
                               int mask_batches,
                               cudaStream_t stream)
{
    if (k_len <= 0 || k_len > kMaxSoftmaxKeys) {
        return false;
    }
    const int log2_keys = ceil_log2(k_len);
    const int keys = 1 << log2_keys;
    const int lanes = keys < C10_WARP_SIZE ? keys : C10_WARP_SIZE;
    const int rows_per_warp = keys <= 128 ? 2 : 1;
    const int warps_per_block = kSoftmaxThreads / lanes;
    const int rows_per_block = warps_per_block * rows_per_warp;
    if (q_len % rows_per_block != 0) {
        return false;
    }
    const int rows = batch * heads * q_len;
    const dim3 grid(q_len / rows_per_block, heads, batch);
    const dim3 block(lanes, warps_per_block, 1);

    // One instance per power of two of the row length, up to kMaxSoftmaxKeys.
    switch (log2_keys) {
        case 0:
            masked_softmax_fwd_kernel<scalar_t, 0>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 1:
            masked_softmax_fwd_kernel<scalar_t, 1>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 2:
            masked_softmax_fwd_kernel<scalar_t, 2>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 3:
            masked_softmax_fwd_kernel<scalar_t, 3>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 4:
            masked_softmax_fwd_kernel<scalar_t, 4>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 5:
            masked_softmax_fwd_kernel<scalar_t, 5>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 6:
            masked_softmax_fwd_kernel<scalar_t, 6>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 7:
            masked_softmax_fwd_kernel<scalar_t, 7>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 8:
            masked_softmax_fwd_kernel<scalar_t, 8>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 9:
            masked_softmax_fwd_kernel<scalar_t, 9>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 10:
            masked_softmax_fwd_kernel<scalar_t, 10>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        case 11:
            masked_softmax_fwd_kernel<scalar_t, 11>
                <<<grid, block, 0, stream>>>(out, scores, mask, scale, rows, k_len, mask_batches);
            break;
        default:
            return false;
    }
    return true;
}

// portq: not-carried apex:csrc/megatron/scaled_masked_softmax.h::scaled_masked_softmax_warp_backward -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax.h::dispatch_scaled_masked_softmax_backward -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/megatron/scaled_masked_softmax.h::get_batch_per_block -- the launcher checks the block's row count itself and reports false

}  // namespace engine_apex
