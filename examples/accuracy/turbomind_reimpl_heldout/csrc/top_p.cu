// Top-p sampling candidates of the engine (TurboMind's
// sampling_topp_kernels.cu at the range's base, re-implemented): each row of
// fp32 probabilities is sorted descending by one segmented radix sort (rows
// already cut by top-k become empty segments), then cut where the running sum
// passes top_p and renormalised. fp32 only; no min-p; every row takes the full
// sort (no single-candidate shortcut); the softmax stays in torch.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "common.cuh"
#include "top_p.h"

namespace dec {

// portq: not-carried lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::softmax -- the engine takes the softmax in torch
// portq: not-carried lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::invokeSoftmax -- the engine takes the softmax in torch
// portq: not-carried lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::topp_beam_topk_kernel -- every row takes the full segmented sort

// portq: ports lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::topPSortInitialize
__global__ void init_sort_segments_kernel(int        vocab_size_padded,
                                          int        vocab_size,
                                          size_t     batch_size,
                                          const int* top_ks,
                                          int*       ids,
                                          int*       segment_begin,
                                          int*       segment_end)
{
    if (blockIdx.x == 0) {
        for (int b = threadIdx.x; b < batch_size; b += blockDim.x) {
            segment_begin[b] = b * vocab_size_padded;
            // a row top-k already sorted is an empty segment
            segment_end[b] = top_ks[b] > 0 ? segment_begin[b] : segment_begin[b] + vocab_size;
        }
    }
    const size_t total = batch_size * vocab_size_padded;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < total; i += (size_t)blockDim.x * gridDim.x) {
        if (top_ks[i / vocab_size_padded] == 0) {
            ids[i] = i % vocab_size_padded;
        }
    }
}

// portq: ports lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::invokeTopPSortInitialize
void launch_init_sort_segments(int          vocab_size_padded,
                               int          vocab_size,
                               size_t       batch_size,
                               const int*   top_ks,
                               int*         ids,
                               int*         segment_begin,
                               int*         segment_end,
                               cudaStream_t stream)
{
    constexpr size_t kThreads = 512;
    const size_t     blocks   = ceil_div(batch_size * vocab_size_padded, kThreads);
    init_sort_segments_kernel<<<blocks, kThreads, 0, stream>>>(
        vocab_size_padded, vocab_size, batch_size, top_ks, ids, segment_begin, segment_end);
}

// portq: ports lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::invokeTopPSort
// portq: not-carried lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::invokeTopPSort[T] -- fp32 probabilities only
template<class T>
void top_p_sort(TopPSortArgs& args, cudaStream_t stream)
{
    const size_t ids_bytes   = round_up(sizeof(int) * args.batch_size * args.vocab_size_padded, size_t{256});
    const size_t begin_bytes = round_up(sizeof(int) * args.batch_size, size_t{256});
    const size_t end_bytes   = begin_bytes;
    const int    items       = args.batch_size * args.vocab_size;

    if (args.workspace == nullptr) {
        size_t sort_bytes = 0;
        DEC_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
            nullptr, sort_bytes, (T*)nullptr, (T*)nullptr, (int*)nullptr, (int*)nullptr, items, args.batch_size,
            (int*)nullptr, (int*)nullptr, 0, sizeof(T) * 8, stream));
        args.workspace_size = round_up(sort_bytes, size_t{256}) + ids_bytes + begin_bytes + end_bytes;
        return;
    }

    size_t sort_bytes = args.workspace_size - ids_bytes - begin_bytes - end_bytes;
    char*  base       = static_cast<char*>(args.workspace);
    int*   ids        = reinterpret_cast<int*>(base + sort_bytes);
    int*   seg_begin  = reinterpret_cast<int*>(base + sort_bytes + ids_bytes);
    int*   seg_end    = reinterpret_cast<int*>(base + sort_bytes + ids_bytes + begin_bytes);

    launch_init_sort_segments(
        args.vocab_size_padded, args.vocab_size, args.batch_size, args.top_ks, ids, seg_begin, seg_end, stream);
    DEC_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(base,
                                                                      sort_bytes,
                                                                      (const T*)args.probs,
                                                                      (T*)args.sorted_probs,
                                                                      ids,
                                                                      args.sorted_ids,
                                                                      items,
                                                                      args.batch_size,
                                                                      seg_begin,
                                                                      seg_end,
                                                                      0,
                                                                      sizeof(T) * 8,
                                                                      stream));
}

// Running total of a block-wide scan across the tiles of one row.
struct RunningPrefix {
    float total;
    __device__ float operator()(float tile_sum)
    {
        const float before = total;
        total += tile_sum;
        return before;
    }
};

// portq: ports lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::topPMinPFilter
// portq: not-carried lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::topPMinPFilter[min_ps] -- the engine samples with top-p only
template<int kThreads>
__global__ void top_p_cut_kernel(float* sorted_probs, int* kept, int vocab_size_padded, const float* top_ps)
{
    const int   row   = blockIdx.x;
    const float top_p = top_ps[row];
    if (top_p == 1.f) {
        return;
    }
    const int n = kept[row];
    sorted_probs += (int64_t)row * vocab_size_padded;

    using Scan = cub::BlockScan<float, kThreads>;
    __shared__ typename Scan::TempStorage scratch;
    __shared__ int                        cut;
    __shared__ float                      mass;
    if (threadIdx.x == 0) {
        cut  = n;
        mass = 1.f;
    }
    __syncthreads();

    RunningPrefix prefix{0.f};
    const int     tiles_end = round_up(n, kThreads);
    for (int i = threadIdx.x; i < tiles_end; i += kThreads) {
        const float p   = i < n ? sorted_probs[i] : 0.f;
        float       sum = 0.f;
        Scan(scratch).InclusiveSum(p, sum, prefix);
        const int past = __syncthreads_count(sum > top_p);
        if (past != 0 || i + kThreads >= tiles_end) {
            // the first thread whose running sum passes top_p closes the nucleus
            if (threadIdx.x == min(kThreads - past, kThreads - 1)) {
                cut  = min(i + 1, n);
                mass = sum;
            }
            break;
        }
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        kept[row] = cut;
    }
    for (int i = threadIdx.x; i < cut; i += kThreads) {
        sorted_probs[i] = sorted_probs[i] / mass;
    }
}

// portq: ports lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::invokeTopPMinPFilter
// portq: not-carried lmdeploy:src/turbomind/kernels/sampling_topp_kernels.cu::invokeTopPMinPFilter[T] -- fp32 probabilities only
template<class T>
void launch_top_p_cut(TopPCutArgs& args, cudaStream_t stream)
{
    static_assert(std::is_same_v<T, float>, "the engine's sampler works in fp32");
    top_p_cut_kernel<256><<<args.batch_size, 256, 0, stream>>>(
        static_cast<float*>(args.sorted_probs), args.kept, args.vocab_size_padded, args.top_ps);
}

__global__ void temperature_scale_kernel(float* logits, const float* temperatures, int vocab_size_padded)
{
    const float inv_t = 1.f / fmaxf(temperatures[blockIdx.x], 1e-6f);
    float*      row   = logits + (int64_t)blockIdx.x * vocab_size_padded;
    for (int i = threadIdx.x; i < vocab_size_padded; i += blockDim.x) {
        row[i] *= inv_t;
    }
}

void launch_temperature_scale(float* logits, const float* temperatures, int vocab_size_padded, int batch_size, cudaStream_t stream)
{
    temperature_scale_kernel<<<batch_size, 256, 0, stream>>>(logits, temperatures, vocab_size_padded);
}

template void top_p_sort<float>(TopPSortArgs&, cudaStream_t);
template void launch_top_p_cut<float>(TopPCutArgs&, cudaStream_t);

}  // namespace dec
