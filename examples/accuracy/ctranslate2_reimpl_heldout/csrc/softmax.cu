// Softmax over the last dimension for the engine's decoder (attention scores,
// output distributions): one block per row, max and sum of exponentials in
// fp32 through row_reduce.cuh, optional per-row lengths past which the output
// is zero. fp32 and fp16. Also the engine's own temperature scaling of logits,
// which upstream does not have. The log-softmax is not carried: the engine
// samples from probabilities and scores beams outside these kernels.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "row_reduce.cuh"

namespace dec {

constexpr float kLowest = -std::numeric_limits<float>::max();

template <typename T>
struct MaxAcc {
    __device__ __forceinline__ float operator()(float acc, T v) const { return fmaxf(acc, static_cast<float>(v)); }
};

struct MaxOf {
    __device__ __forceinline__ float operator()(float a, float b) const { return a < b ? b : a; }
};

template <typename T>
struct SumExpAcc {
    __device__ __forceinline__ explicit SumExpAcc(float row_max) : row_max(row_max) {}
    __device__ __forceinline__ float operator()(float acc, T v) const
    {
        return acc + __expf(static_cast<float>(v) - row_max);
    }
    const float row_max;
};

struct SumOf {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

template <typename T>
struct Normalize {
    __device__ __forceinline__ Normalize(float row_max, float row_sum) : row_max(row_max), row_sum(row_sum) {}
    __device__ __forceinline__ T operator()(T v) const
    {
        return static_cast<T>(__expf(static_cast<float>(v) - row_max) / row_sum);
    }
    const float row_max;
    const float row_sum;
};

// portq: not-carried ctranslate2:src/ops/softmax_gpu.cu::LogSoftMaxForwardEpilogue -- the engine takes no log-softmax on the GPU: see softmax_forward

// One block per row of y = softmax(x); with lengths, row r keeps its first
// lengths[r] columns and writes zeros past them. Dynamic shared memory: one
// float per thread.
// portq: ports ctranslate2:src/ops/softmax_gpu.cu::cunn_SoftMaxForward
template <typename T, typename Len>
__global__ void softmax_rows_kernel(T* y, const T* x, const idx_t cols, const Len* lengths)
{
    extern __shared__ unsigned char shared_bytes[];
    float* scratch = reinterpret_cast<float*>(shared_bytes);

    const idx_t row = blockIdx.x;
    x += row * cols;
    y += row * cols;

    idx_t len = cols;
    if (lengths != nullptr) {
        len = static_cast<idx_t>(lengths[row]);
        for (idx_t c = len + threadIdx.x; c < cols; c += blockDim.x) {
            y[c] = static_cast<T>(0.f);
        }
    }

    const float local_max = thread_reduce<MaxAcc<T>, T, float>(x, len, MaxAcc<T>(), kLowest);
    const float row_max = block_allreduce(scratch, local_max, MaxOf(), kLowest);
    const float local_sum = thread_reduce<SumExpAcc<T>, T, float>(x, len, SumExpAcc<T>(row_max), 0.f);
    const float row_sum = block_allreduce(scratch, local_sum, SumOf(), 0.f);
    thread_apply(x, len, Normalize<T>(row_max, row_sum), y);
}

// portq: ports ctranslate2:src/ops/softmax_gpu.cu::softmax_kernel_impl
template <typename T>
static void launch_softmax_rows(cudaStream_t stream, const T* x, long rows, long cols, const int32_t* lengths, T* y)
{
    const dim3 grid(static_cast<unsigned>(rows));
    const dim3 block = pick_block_size(static_cast<idx_t>(cols));
    softmax_rows_kernel<T, int32_t><<<grid, block, block.x * sizeof(float), stream>>>(
        y, x, static_cast<idx_t>(cols), lengths);
}

// portq: ports ctranslate2:src/ops/softmax_gpu.cu::softmax_kernel
// portq: not-carried ctranslate2:src/ops/softmax_gpu.cu::softmax_kernel[log_softmax] -- the engine takes no log-softmax on the GPU
template <typename T>
void softmax_forward(cudaStream_t stream, const T* x, long rows, long cols, const int32_t* lengths, T* y)
{
    launch_softmax_rows<T>(stream, x, rows, cols, lengths, y);
}

template void softmax_forward<float>(cudaStream_t, const float*, long, long, const int32_t*, float*);
template void softmax_forward<__half>(cudaStream_t, const __half*, long, long, const int32_t*, __half*);

// The engine's own: logits /= temperature in place before sampling.
template <typename T>
__global__ void scale_logits_kernel(T* logits, long n, float inv_temperature)
{
    for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long>(gridDim.x) * blockDim.x) {
        logits[i] = static_cast<T>(static_cast<float>(logits[i]) * inv_temperature);
    }
}

template <typename T>
void scale_logits(cudaStream_t stream, T* logits, long n, float temperature)
{
    const unsigned threads = 256;
    const unsigned blocks = static_cast<unsigned>(std::min<long>((n + threads - 1) / threads, 65535));
    scale_logits_kernel<T><<<blocks, threads, 0, stream>>>(logits, n, 1.f / temperature);
}

template void scale_logits<float>(cudaStream_t, float*, long, float);
template void scale_logits<__half>(cudaStream_t, __half*, long, float);

}  // namespace dec
