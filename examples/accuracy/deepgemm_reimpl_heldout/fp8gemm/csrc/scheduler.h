// Persistent tile scheduler of the engine's CUDA build of the FP8 GEMM:
// which (M block, N block) a CTA takes next, walking N in groups of
// kNBlocksPerGroup for L2 reuse; the contiguous grouped layout reads the
// group of an M block from the first row's index. Not compiled by the Python
// tests; tests/test_scheduler.cu runs it where nvcc is installed.
#pragma once

#include <cstdint>

namespace fp8gemm {

enum class Layout { Normal, GroupedContiguous };

__host__ __device__ constexpr uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// portq: ports deepgemm:deep_gemm/include/deep_gemm/scheduler.cuh::Scheduler @a6d97a1
// portq: not-carried deepgemm:deep_gemm/include/deep_gemm/scheduler.cuh::Scheduler[GroupedMasked] -- the masked layout is not carried
template <Layout kLayout, uint32_t kShapeN, uint32_t kBlockM, uint32_t kBlockN,
          uint32_t kNumMulticast, uint32_t kNBlocksPerGroup = 16>
struct TileScheduler {
    static constexpr uint32_t kNBlocks = ceil_div(kShapeN, kBlockN);
    static_assert(kNBlocksPerGroup % kNumMulticast == 0, "N group must be a multiple of the multicast");

    int iter = -1;
    uint32_t m_blocks, total;
    const int* m_indices;

    __device__ explicit TileScheduler(uint32_t shape_m, const int* m_indices = nullptr)
        : m_blocks(ceil_div(shape_m, kBlockM)), total(ceil_div(shape_m, kBlockM) * kNBlocks), m_indices(m_indices) {}

    __device__ void swizzle(uint32_t idx, uint32_t& m_block, uint32_t& n_block) const {
        const uint32_t per_group = m_blocks * kNBlocksPerGroup;
        const uint32_t first_n = (idx / per_group) * kNBlocksPerGroup;
        const uint32_t width = kNBlocks - first_n < kNBlocksPerGroup ? kNBlocks - first_n : kNBlocksPerGroup;
        const uint32_t in_group = idx % per_group;
        m_block = in_group / width;
        n_block = first_n + in_group % width;
    }

    // Row offset of a block along a dimension; for B in the grouped layout,
    // shifted to the group's matrix.
    template <bool kIgnoreGroup = true>
    __device__ uint32_t global_offset(uint32_t dim, uint32_t block, uint32_t block_idx, uint32_t m_block = 0) const {
        if constexpr (kLayout == Layout::Normal || kIgnoreGroup)
            return block_idx * block;
        return static_cast<uint32_t>(__ldg(m_indices + m_block * kBlockM)) * dim + block_idx * block;
    }

    __device__ bool next(uint32_t& m_block, uint32_t& n_block) {
        const uint32_t idx = (++iter) * gridDim.x + blockIdx.x;
        if (idx >= total)
            return false;
        swizzle(idx, m_block, n_block);
        return true;
    }
};

}  // namespace fp8gemm
