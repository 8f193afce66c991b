// Writes a prefill chunk's keys and values into the engine's paged KV cache,
// the port of TurboMind's attention/kv_cache_utils_v2 (invokeProcessKV_v2).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace dec {

// Block layout: every cache block holds, per layer, per KV head, block_seq_len
// keys then block_seq_len values of head_dim elements of T.
template<class T>
void launch_paged_kv_write(char**       blocks,
                           const T*     k,
                           const T*     v,
                           const int*   cu_q_len,
                           const int*   cu_k_len,
                           const int*   cu_block_num,
                           const float* rope_base,
                           int          rope_dim,
                           float        rope_ti_scale,
                           int64_t      stride_b,
                           int64_t      stride_c,
                           int64_t      stride_h,
                           int64_t      stride_s,
                           int          block_seq_len,
                           int          layer_id,
                           int          max_q_len,
                           int          head_num,
                           int          head_dim,
                           int          batch_size,
                           cudaStream_t stream);

}  // namespace dec
