// The C++ tile scheduler of the engine's CUDA build: every (M block, N block)
// tile of a normal GEMM is visited exactly once by a persistent grid, in the
// swizzled order. Built and run by hand where nvcc is installed
// (nvcc -std=c++17 -I.. tests/test_scheduler.cu && ./a.out); the Python tests
// do not compile it.
#include <cstdio>
#include <vector>

#include "../fp8gemm/csrc/scheduler.h"

using namespace fp8gemm;

constexpr uint32_t kShapeM = 300, kShapeN = 1024, kBlockM = 64, kBlockN = 128;

__global__ void visit_tiles(uint32_t* visits) {
    auto scheduler = TileScheduler<Layout::Normal, kShapeN, kBlockM, kBlockN, 1>(kShapeM, nullptr);
    uint32_t m_block, n_block;
    while (scheduler.next(m_block, n_block))
        atomicAdd(visits + m_block * ceil_div(kShapeN, kBlockN) + n_block, 1u);
}

int main() {
    const uint32_t tiles = ceil_div(kShapeM, kBlockM) * ceil_div(kShapeN, kBlockN);
    uint32_t* visits;
    cudaMalloc(&visits, tiles * sizeof(uint32_t));
    cudaMemset(visits, 0, tiles * sizeof(uint32_t));
    visit_tiles<<<7, 1>>>(visits);
    std::vector<uint32_t> host(tiles);
    cudaMemcpy(host.data(), visits, tiles * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    for (uint32_t i = 0; i < tiles; ++i) {
        if (host[i] != 1) {
            std::printf("tile %u visited %u times\n", i, host[i]);
            return 1;
        }
    }
    std::printf("ok: %u tiles, each once\n", tiles);
    return 0;
}
