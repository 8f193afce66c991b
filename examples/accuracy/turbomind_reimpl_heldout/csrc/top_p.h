// Top-p candidate selection of the engine's sampler, the port of TurboMind's
// sampling_topp_kernels (sort, then cut at the nucleus).
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace dec {

// Upstream's TopPSortParams, field for field.
struct TopPSortArgs {
    void*  workspace;       // null: top_p_sort only sets workspace_size
    size_t workspace_size;
    void*  probs;           // (batch, vocab_padded) softmax output
    void*  sorted_probs;    // out, descending per row
    int*   sorted_ids;      // out
    int*   kept;            // rows' candidate counts
    int*   top_ks;          // rows with top_k > 0 were already sorted by top-k
    float* top_ps;
    int    batch_size;
    int    vocab_size;
    int    vocab_size_padded;
};

// Upstream's TopPMinPFilterParams less min_ps: the engine samples with top-p only.
struct TopPCutArgs {
    void*  sorted_probs;
    int*   sorted_ids;
    int*   kept;
    float* top_ps;
    int    batch_size;
    int    vocab_size;
    int    vocab_size_padded;
};

void launch_init_sort_segments(int          vocab_size_padded,
                               int          vocab_size,
                               size_t       batch_size,
                               const int*   top_ks,
                               int*         ids,
                               int*         segment_begin,
                               int*         segment_end,
                               cudaStream_t stream);

template<class T>
void top_p_sort(TopPSortArgs& args, cudaStream_t stream);

template<class T>
void launch_top_p_cut(TopPCutArgs& args, cudaStream_t stream);

// logits[b, :] /= temperatures[b], before the softmax
void launch_temperature_scale(float* logits, const float* temperatures, int vocab_size_padded, int batch_size, cudaStream_t stream);

}  // namespace dec
