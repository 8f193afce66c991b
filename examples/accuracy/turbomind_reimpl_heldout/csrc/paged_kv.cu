// Paged KV-cache write of the engine (TurboMind's kv_cache_utils_v2.cu at the
// range's base, re-implemented): one CTA per (64-token tile, KV head,
// sequence); the new tokens' keys get rotary embedding at their position after
// the sequence's history, then keys and values are stored into the sequence's
// cache blocks. The cache is T only (no int8/int4 quantisation), plain RoPE
// only, and the engine's models carry no QKV bias.
#include "common.cuh"
#include "paged_kv.h"

namespace dec {

template<class T, int N>
__device__ void rotate_pairs(Vec<T, N>& x, int first_dim, int rope_dim, float base, float position)
{
    DEC_UNROLL
    for (int i = 0; i < N; i += 2) {
        const int d = first_dim + i;
        if (d < rope_dim) {
            const float inv_freq = __powf(base, -static_cast<float>(d) / rope_dim);
            float       s, c;
            __sincosf(position * inv_freq, &s, &c);
            const float x0 = to_float(x[i]);
            const float x1 = to_float(x[i + 1]);
            x[i]           = from_float<T>(x0 * c - x1 * s);
            x[i + 1]       = from_float<T>(x0 * s + x1 * c);
        }
    }
}

// portq: ports lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[k_bias] -- no QKV bias in the engine's models
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[v_bias] -- no QKV bias in the engine's models
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[rope_scaling_factor] -- plain RoPE only
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[llama3_inv_scaling_factor] -- no Llama 3 scaling
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[llama3_alpha] -- no Llama 3 scaling
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[llama3_beta] -- no Llama 3 scaling
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[yarn_ramp_inv_factor_div_2] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[yarn_ramp_inv_factor_mul_min] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[yarn_inv_scaling_factor] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::ProcessKV_v2[attention_scaling] -- no YaRN
template<class T, int kTileS, int kHeadDim, int kThreads>
__global__ void __launch_bounds__(kThreads) paged_kv_write_kernel(char**       blocks,
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
                                                                  int          head_num)
{
    constexpr int kVec           = 16 / sizeof(T);
    constexpr int kThreadsPerRow = kHeadDim / kVec;
    constexpr int kRowsPerPass   = kThreads / kThreadsPerRow;

    const int tile  = blockIdx.x * kTileS;
    const int head  = blockIdx.y;
    const int batch = blockIdx.z;

    const int q_begin = cu_q_len[batch];
    const int q_len   = cu_q_len[batch + 1] - q_begin;
    const int history = cu_k_len[batch + 1] - cu_k_len[batch] - q_len;
    if (tile >= q_len) {
        return;
    }

    const int    dim  = threadIdx.x % kThreadsPerRow * kVec;
    const float  base = rope_base ? rope_base[batch] : 0.f;
    char** const seq_blocks = blocks + cu_block_num[batch];

    for (int row = threadIdx.x / kThreadsPerRow; row < kTileS; row += kRowsPerPass) {
        const int qi = tile + row;
        if (qi >= q_len) {
            break;
        }
        const int64_t src = (batch * stride_b + q_begin * stride_c + qi * stride_s + head * stride_h) * kHeadDim + dim;
        Vec<T, kVec>  kv, vv;
        load_vec_readonly(kv, k + src);
        load_vec_readonly(vv, v + src);

        const int position = history + qi;
        if (rope_base) {
            rotate_pairs(kv, dim, rope_dim, base, position * rope_ti_scale);
        }

        char*         block  = seq_blocks[position / block_seq_len];
        const int     slot   = position % block_seq_len;
        const int64_t per_kv = (int64_t)block_seq_len * kHeadDim;
        T* k_dst = reinterpret_cast<T*>(block) + ((int64_t)layer_id * head_num + head) * 2 * per_kv + (int64_t)slot * kHeadDim + dim;
        store_vec(k_dst, kv);
        store_vec(k_dst + per_kv, vv);
    }
}

// portq: ports lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[k_bias] -- no QKV bias in the engine's models
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[v_bias] -- no QKV bias in the engine's models
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[rope_scaling_factor] -- plain RoPE only
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[llama3_inv_scaling_factor] -- no Llama 3 scaling
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[llama3_1_alpha] -- no Llama 3 scaling
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[llama3_1_beta] -- no Llama 3 scaling
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[yarn_ramp_inv_factor_div_2] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[yarn_ramp_inv_factor_mul_min] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[yarn_inv_scaling_factor] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[attention_scaling] -- no YaRN
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeProcessKV_v2[quant_policy] -- the cache stays in T, no int8/int4
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
                           cudaStream_t stream)
{
    constexpr int kTileS   = 64;
    constexpr int kThreads = 4 * kWarpSize;
    const dim3    grid(ceil_div(max_q_len, kTileS), head_num, batch_size);

    auto launch = [&](auto head_dim_c) {
        constexpr int kHeadDim = decltype(head_dim_c)::value;
        paged_kv_write_kernel<T, kTileS, kHeadDim, kThreads><<<grid, kThreads, 0, stream>>>(blocks,
                                                                                           k,
                                                                                           v,
                                                                                           cu_q_len,
                                                                                           cu_k_len,
                                                                                           cu_block_num,
                                                                                           rope_base,
                                                                                           rope_dim,
                                                                                           rope_ti_scale,
                                                                                           stride_b,
                                                                                           stride_c,
                                                                                           stride_h,
                                                                                           stride_s,
                                                                                           block_seq_len,
                                                                                           layer_id,
                                                                                           head_num);
    };
    switch (head_dim) {
        case 64:
            return launch(std::integral_constant<int, 64>{});
        case 128:
            return launch(std::integral_constant<int, 128>{});
        default:
            std::fprintf(stderr, "launch_paged_kv_write: head_dim %d is not 64 or 128\n", head_dim);
            std::abort();
    }
}

// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::flattenKV_v2 -- the engine's attention reads the paged cache in place
// portq: not-carried lmdeploy:src/turbomind/kernels/attention/kv_cache_utils_v2.cu::invokeFlattenKV_v2 -- the engine's attention reads the paged cache in place

template void launch_paged_kv_write(char**, const half*, const half*, const int*, const int*, const int*, const float*, int, float,
                                    int64_t, int64_t, int64_t, int64_t, int, int, int, int, int, int, cudaStream_t);
template void launch_paged_kv_write(char**, const __nv_bfloat16*, const __nv_bfloat16*, const int*, const int*, const int*,
                                    const float*, int, float, int64_t, int64_t, int64_t, int64_t, int, int, int, int, int, int,
                                    cudaStream_t);

}  // namespace dec
