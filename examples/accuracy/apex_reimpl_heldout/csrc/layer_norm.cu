// The engine's fused LayerNorm forward, a re-implementation of Apex's
// (layer_norm_cuda_kernel.cu): one block of 32x4 threads per row, Welford
// mean and variance merged across lanes and warps, the affine transform
// applied in the same pass; the row mean and inverse deviation are written
// out for callers that keep them. Same dtype in and out (fp32, fp16, bf16),
// fp32 statistics. Forward only; bindings.cpp binds the host function.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <torch/all.h>

namespace engine_apex {

// One more value into a running (mean, M2, count).
// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::cuWelfordOnlineSum
__device__ __forceinline__ void welford_update(float x, float& mean, float& m2, float& count)
{
    count += 1.f;
    const float d = x - mean;
    mean += d / count;
    m2 += d * (x - mean);
}

// Chan's merge of a second partial (mean_b, m2_b, count_b) into the first.
// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::cuChanOnlineSum
__device__ __forceinline__ void welford_merge(float mean_b, float m2_b, float count_b, float& mean, float& m2,
                                              float& count)
{
    const float total = count + count_b;
    if (total <= 0.f) {
        mean = 0.f;
        m2 = 0.f;
        count = 0.f;
        return;
    }
    const float d = mean_b - mean;
    const float wa = count / total;
    const float wb = count_b / total;
    mean = wa * mean + wb * mean_b;
    m2 = m2 + m2_b + d * d * wa * wb * total;
    count = total;
}

// Mean and biased variance of row `row` of x (rows x cols, contiguous), over
// the whole block; scratch holds 3 * blockDim.y floats of shared memory.
// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::cuWelfordMuSigma2
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::rsqrt -- fp32 statistics only: the kernel calls rsqrtf
template <typename T>
__device__ void row_mean_var(const T* __restrict__ x, int rows, int cols, int row, float& mean, float& var,
                             float* scratch)
{
    float m2 = 0.f, count = 0.f;
    mean = 0.f;
    var = 0.f;
    if (row >= rows) {
        return;
    }
    const int nthreads = blockDim.x * blockDim.y;
    const int tid = threadIdx.x + threadIdx.y * blockDim.x;
    const T* xr = x + (size_t)row * cols;
    for (int c = tid; c < cols; c += nthreads) {
        welford_update(static_cast<float>(xr[c]), mean, m2, count);
    }
    // Across the warp: after log2(32) exchanges every lane holds the warp's partial.
#pragma unroll
    for (int step = 1; step < 32; step <<= 1) {
        const float mb = __shfl_xor_sync(0xffffffffu, mean, step);
        const float m2b = __shfl_xor_sync(0xffffffffu, m2, step);
        const float cb = __shfl_xor_sync(0xffffffffu, count, step);
        welford_merge(mb, m2b, cb, mean, m2, count);
    }
    // Across warps: halve the number of live partials through shared memory.
    for (int half = blockDim.y / 2; half > 0; half >>= 1) {
        if (threadIdx.x == 0 && threadIdx.y >= half && threadIdx.y < 2 * half) {
            const int slot = threadIdx.y - half;
            scratch[3 * slot] = mean;
            scratch[3 * slot + 1] = m2;
            scratch[3 * slot + 2] = count;
        }
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y < half) {
            welford_merge(scratch[3 * threadIdx.y], scratch[3 * threadIdx.y + 1], scratch[3 * threadIdx.y + 2], mean,
                          m2, count);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        scratch[0] = mean;
        scratch[1] = m2 / (float)cols;
    }
    __syncthreads();
    mean = scratch[0];
    var = scratch[1];
}

// Normalises the rows blockIdx.y, blockIdx.y + gridDim.y, ... of x into y;
// with a null gamma/beta the affine transform is skipped.
// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::cuApplyLayerNorm_
template <typename T>
__device__ void layer_norm_rows(T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out,
                                const T* __restrict__ x, int rows, int cols, float eps, const T* __restrict__ gamma,
                                const T* __restrict__ beta)
{
    extern __shared__ float scratch[];
    const int nthreads = blockDim.x * blockDim.y;
    const int tid = threadIdx.x + threadIdx.y * blockDim.x;
    for (int row = blockIdx.y; row < rows; row += gridDim.y) {
        float mean, var;
        row_mean_var(x, rows, cols, row, mean, var, scratch);
        const float rstd = rsqrtf(var + eps);
        const T* xr = x + (size_t)row * cols;
        T* yr = y + (size_t)row * cols;
        for (int c = tid; c < cols; c += nthreads) {
            const float n = (static_cast<float>(xr[c]) - mean) * rstd;
            yr[c] = gamma != nullptr && beta != nullptr
                        ? static_cast<T>(static_cast<float>(gamma[c]) * n + static_cast<float>(beta[c]))
                        : static_cast<T>(n);
        }
        if (tid == 0) {
            mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
    }
}

// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::cuApplyLayerNorm
template <typename T>
__global__ void layer_norm_fwd_kernel(T* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                                      const T* __restrict__ x, int rows, int cols, float eps,
                                      const T* __restrict__ gamma, const T* __restrict__ beta)
{
    layer_norm_rows<T>(y, mean, rstd, x, rows, cols, eps, gamma, beta);
}

// Launches the forward on stream: blocks of 32x4 threads, one grid row per
// input row up to the device's grid limit (the kernel strides over the rest).
// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::HostApplyLayerNorm
template <typename T>
void launch_layer_norm_fwd(T* y, float* mean, float* rstd, const T* x, int rows, int cols, double eps,
                           const T* gamma, const T* beta, cudaStream_t stream)
{
    const dim3 block(32, 4, 1);
    const int64_t max_grid_y = at::cuda::getCurrentDeviceProperties()->maxGridSize[1];
    const dim3 grid(1, (unsigned)std::min<int64_t>(rows, max_grid_y), 1);
    const size_t shared = block.y > 1 ? 3 * block.y * sizeof(float) : 0;
    layer_norm_fwd_kernel<T><<<grid, block, shared, stream>>>(y, mean, rstd, x, rows, cols, (float)eps, gamma, beta);
}

// Dispatches on x's dtype; y, gamma and beta share it, mean and rstd are fp32.
// portq: ports apex:csrc/layer_norm_cuda_kernel.cu::cuda_layer_norm
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuda_layer_norm[normalized_shape] -- the engine normalises the last dimension only and passes its size
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::HostLayerNormGradient -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuda_layer_norm_gradient -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuComputeGradInput -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuComputePartGradGammaBeta -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuComputeGradGammaBeta -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuLoadWriteStridedInputs -- inference engine: no autograd, forward only
// portq: not-carried apex:csrc/layer_norm_cuda_kernel.cu::cuLoadAddStridedInputs -- inference engine: no autograd, forward only
void layer_norm_forward(torch::Tensor& y, torch::Tensor& mean, torch::Tensor& rstd, const torch::Tensor& x, int rows,
                        int cols, const torch::Tensor* gamma, const torch::Tensor* beta, double eps)
{
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    float* mean_p = mean.data_ptr<float>();
    float* rstd_p = rstd.data_ptr<float>();
    switch (x.scalar_type()) {
        case at::ScalarType::Float:
            launch_layer_norm_fwd<float>(y.data_ptr<float>(), mean_p, rstd_p, x.data_ptr<float>(), rows, cols, eps,
                                         gamma ? gamma->data_ptr<float>() : nullptr,
                                         beta ? beta->data_ptr<float>() : nullptr, stream);
            break;
        case at::ScalarType::Half:
            launch_layer_norm_fwd<__half>(
                reinterpret_cast<__half*>(y.data_ptr()), mean_p, rstd_p, reinterpret_cast<const __half*>(x.data_ptr()),
                rows, cols, eps, gamma ? reinterpret_cast<const __half*>(gamma->data_ptr()) : nullptr,
                beta ? reinterpret_cast<const __half*>(beta->data_ptr()) : nullptr, stream);
            break;
        case at::ScalarType::BFloat16:
            launch_layer_norm_fwd<__nv_bfloat16>(
                reinterpret_cast<__nv_bfloat16*>(y.data_ptr()), mean_p, rstd_p,
                reinterpret_cast<const __nv_bfloat16*>(x.data_ptr()), rows, cols, eps,
                gamma ? reinterpret_cast<const __nv_bfloat16*>(gamma->data_ptr()) : nullptr,
                beta ? reinterpret_cast<const __nv_bfloat16*>(beta->data_ptr()) : nullptr, stream);
            break;
        default:
            TORCH_CHECK(false, "layer_norm: fp32, fp16 or bf16 input, got ", x.scalar_type());
    }
}

}  // namespace engine_apex
