// The engine's KV-cache write and read kernels (FBGEMM GenAI's kv_cache.cu at
// the range's base, re-implemented): the new tokens' Q, K and V are rotated by
// RoPE (or copied as they are, NoPE) and K, V stored into a contiguous or paged
// cache, bf16 or FP8 with a per-row (scale, shift) pair; the FP8 cache is read
// back to bf16 for the attention kernels that cannot read FP8.
//
// One warp per (token, head) row, four elements a lane: rows of Q, K and V
// heads are numbered together, Q first. Head dim is kHeadDim (128) for FP8
// rows and at most 4 * kThreadsPerWarp for bf16 ones.
//
// Not in the engine: xPos, the INT4 cache and its group-wise parameters, the
// RMS norm of K before quantisation, and paged FP8 dequantisation (the engine
// dequantises contiguous caches only).

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kv_cache_ops.h"

namespace kvc {

// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::xpos_qkv_varseq_prefill -- the engine's models use RoPE or NoPE, never xPos
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::xpos_qkv_decoding -- the engine's models use RoPE or NoPE, never xPos
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::quantize_int4_kv -- no INT4 cache: FP8 or bf16 only
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_int4_cache -- no INT4 cache: FP8 or bf16 only
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_int4_cache_kernel -- no INT4 cache: FP8 or bf16 only
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_fp8_cache_kernel_paged -- the engine dequantises contiguous FP8 caches only

constexpr int kThreadsPerWarp = 32;
constexpr int kWarpsPerBlock  = 4;
constexpr int kHeadDim        = 128;  // head dim of every FP8 row
constexpr int kQParamBytes    = 4;    // (scale, shift) as half2 at the start of an FP8 row
constexpr float kFp8E4M3Max   = 448.0f;

enum class Part { Q, K, V };

struct float4v {
    float x, y, z, w;
};

__device__ __forceinline__ float warp_max(float v, unsigned mask)
{
#pragma unroll
    for (int offset = kThreadsPerWarp / 2; offset > 0; offset /= 2) {
        v = fmaxf(v, __shfl_xor_sync(mask, v, offset));
    }
    return v;
}

__device__ __forceinline__ float4v load_bf16x4(const __nv_bfloat16* p)
{
    const __nv_bfloat162 lo = reinterpret_cast<const __nv_bfloat162*>(p)[0];
    const __nv_bfloat162 hi = reinterpret_cast<const __nv_bfloat162*>(p)[1];
    const float2         a  = __bfloat1622float2(lo);
    const float2         b  = __bfloat1622float2(hi);
    return {a.x, a.y, b.x, b.y};
}

__device__ __forceinline__ void store_bf16x4(__nv_bfloat16* p, float4v v)
{
    reinterpret_cast<__nv_bfloat162*>(p)[0] = __floats2bfloat162_rn(v.x, v.y);
    reinterpret_cast<__nv_bfloat162*>(p)[1] = __floats2bfloat162_rn(v.z, v.w);
}

// Address of the cache row of (sequence b, head h, position t): cache rows are
// [B][MAX_T][N_KVH][row_elems], or [1][pages * page_size][N_KVH][row_elems]
// when block_tables maps each sequence's logical pages to physical ones.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::get_dst_row
template<typename T>
__device__ __forceinline__ T* kv_cache_row(T*             cache,
                                           int64_t        max_t,
                                           int64_t        n_kv_heads,
                                           int64_t        row_elems,
                                           int32_t        b,
                                           int32_t        h,
                                           int32_t        t,
                                           int32_t        page_size,
                                           const int32_t* block_tables,
                                           int32_t        block_tables_b_stride)
{
    int64_t slot;
    if (block_tables == nullptr) {
        slot = static_cast<int64_t>(b) * max_t + t;
    }
    else {
        const int32_t page = block_tables[b * block_tables_b_stride + t / page_size];
        slot               = static_cast<int64_t>(page) * page_size + t % page_size;
    }
    return cache + (slot * n_kv_heads + h) * row_elems;
}

// Rotates one lane's four elements (two adjacent pairs) of a Q or K row by the
// angle of position `pos`; V passes through. With rope_scaling the
// frequencies are scaled as Llama 3 does (low frequencies divided by
// scaling_factor, a smooth blend between the two wavelength bounds).
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos[gamma] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos[scale_base] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos[exponent_offset] -- RoPE only, no xPos decay
__device__ __forceinline__ float4v rotate_lane(float4v v,
                                               int32_t pos,
                                               Part    part,
                                               int     head_dim,
                                               double  theta,
                                               bool    rope_scaling,
                                               int64_t old_context_len,
                                               double  scaling_factor,
                                               double  lo_freq_factor,
                                               double  hi_freq_factor)
{
    if (part == Part::V) {
        return v;
    }
    double freq[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int pair = 2 * threadIdx.x + i;  // this lane holds pairs 2*lane and 2*lane+1
        freq[i]        = pow(theta, -2.0 * pair / head_dim);
        if (rope_scaling) {
            const double wavelen = 2 * M_PI / freq[i];
            const double lo_wave = old_context_len / lo_freq_factor;
            const double hi_wave = old_context_len / hi_freq_factor;
            if (wavelen > lo_wave) {
                freq[i] /= scaling_factor;
            }
            else if (wavelen >= hi_wave) {
                const double smooth = (old_context_len / wavelen - lo_freq_factor) / (hi_freq_factor - lo_freq_factor);
                freq[i]             = (1 - smooth) * freq[i] / scaling_factor + smooth * freq[i];
            }
        }
    }
    double s0, c0, s1, c1;
    sincos(pos * freq[0], &s0, &c0);
    sincos(pos * freq[1], &s1, &c1);
    float4v out;
    out.x = static_cast<float>(v.x * c0 - v.y * s0);
    out.y = static_cast<float>(v.y * c0 + v.x * s0);
    out.z = static_cast<float>(v.z * c1 - v.w * s1);
    out.w = static_cast<float>(v.w * c1 + v.z * s1);
    return out;
}

// Quantises a warp's row of kHeadDim floats to FP8 e4m3 with a shift to the
// row's midpoint and a scale spanning its range; (scale, shift) go to
// `qparam` when the caller keeps them apart, else to the row's first 4 bytes.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::quantize_fp8_kv
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::quantize_fp8_kv[do_rms_norm] -- no K norm before the cache in the engine's models
__device__ void quantize_fp8_row(float4v v, uint8_t* row, __half2* qparam)
{
    const unsigned mask  = __ballot_sync(0xFFFFFFFFu, 4 * threadIdx.x < kHeadDim);
    const float    lo    = -warp_max(-fminf(fminf(v.x, v.y), fminf(v.z, v.w)), mask);
    const float    hi    = warp_max(fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)), mask);
    const float    half  = (hi - lo) / 2;
    const float    scale = fmaxf(half / kFp8E4M3Max, 1.0f / (kFp8E4M3Max * 512.0f));
    const float    shift = lo + kFp8E4M3Max * scale;
    const float    inv   = 1.0f / scale;

    const __nv_fp8_e4m3 q0((v.x - shift) * inv);
    const __nv_fp8_e4m3 q1((v.y - shift) * inv);
    const __nv_fp8_e4m3 q2((v.z - shift) * inv);
    const __nv_fp8_e4m3 q3((v.w - shift) * inv);
    const uint32_t      packed = uint32_t(q0.__x) | uint32_t(q1.__x) << 8 | uint32_t(q2.__x) << 16 | uint32_t(q3.__x) << 24;

    const int data_offset = qparam == nullptr ? kQParamBytes : 0;
    *reinterpret_cast<uint32_t*>(row + data_offset + 4 * threadIdx.x) = packed;
    if (threadIdx.x == 0) {
        __half2* dst = qparam != nullptr ? qparam : reinterpret_cast<__half2*>(row);
        *dst         = __floats2half2_rn(scale, shift);
    }
}

struct RowTarget {
    const __nv_bfloat16* src;
    int32_t              b;
    int32_t              h;
    Part                 part;
};

// Which (Q, K or V) row the calling warp owns; -1 batch when it owns none.
__device__ __forceinline__ bool warp_row(const QkvRows& in, int64_t b_t_hh, const int32_t* varseq_batch, RowTarget& out)
{
    const int64_t hh_count = in.n_heads + 2 * in.n_kv_heads;
    const int64_t b_t      = b_t_hh / hh_count;
    const int64_t hh       = b_t_hh % hh_count;
    if (b_t >= in.tokens) {
        return false;
    }
    out.b = varseq_batch != nullptr ? varseq_batch[b_t] : static_cast<int32_t>(b_t);
    if (hh < in.n_heads) {
        out.h    = hh;
        out.part = Part::Q;
        out.src  = in.xq + (b_t * in.n_heads + hh) * in.head_dim;
    }
    else if (hh < in.n_heads + in.n_kv_heads) {
        out.h    = hh - in.n_heads;
        out.part = Part::K;
        out.src  = in.xk + (b_t * in.n_kv_heads + out.h) * in.head_dim;
    }
    else {
        out.h    = hh - in.n_heads - in.n_kv_heads;
        out.part = Part::V;
        out.src  = in.xv + (b_t * in.n_kv_heads + out.h) * in.head_dim;
    }
    return true;
}

// NoPE: Q copied to xq_out, K and V copied into the bf16 cache unrotated.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::nope_qkv_varseq_prefill_kernel
__global__ void copy_qkv_to_cache_kernel(QkvRows        in,
                                         CacheView      cache,
                                         __nv_bfloat16* xq_out,
                                         const int32_t* varseq_batch,
                                         const int32_t* varseq_seqpos,
                                         const int32_t* block_tables,
                                         int32_t        page_size,
                                         int32_t        block_tables_b_stride,
                                         const int32_t* varseq_cache_seqpos,
                                         const int64_t* actual_batch_size)
{
    const int64_t b_t_hh = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
    const int64_t b_t    = b_t_hh / (in.n_heads + 2 * in.n_kv_heads);
    RowTarget     row;
    if (!warp_row(in, b_t_hh, varseq_batch, row) || varseq_seqpos[b_t] == -1) {
        return;
    }
    if (actual_batch_size != nullptr && b_t >= *actual_batch_size) {
        return;
    }
    const int32_t  t = varseq_cache_seqpos[b_t];
    __nv_bfloat16* dst;
    if (row.part == Part::Q) {
        dst = xq_out + (b_t * in.n_heads + row.h) * in.head_dim;
    }
    else {
        auto* base = static_cast<__nv_bfloat16*>(row.part == Part::K ? cache.k : cache.v);
        dst = kv_cache_row(base, cache.max_t, in.n_kv_heads, cache.row_elems, row.b, row.h, t, page_size, block_tables,
                           block_tables_b_stride);
    }
    for (int d = 4 * threadIdx.x; d < in.head_dim; d += 4 * kThreadsPerWarp) {
        *reinterpret_cast<uint2*>(dst + d) = *reinterpret_cast<const uint2*>(row.src + d);
    }
}

// RoPE into a bf16 cache; write_k_back also stores the rotated K over xk.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel[gamma] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel[scale_base] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel[exponent_offset] -- RoPE only, no xPos decay
__global__ void rope_qkv_to_cache_kernel(QkvRows        in,
                                         CacheView      cache,
                                         __nv_bfloat16* xq_out,
                                         const int32_t* varseq_batch,
                                         const int32_t* varseq_seqpos,
                                         double         theta,
                                         const int32_t* block_tables,
                                         int32_t        page_size,
                                         int32_t        block_tables_b_stride,
                                         const int32_t* varseq_cache_seqpos,
                                         const int64_t* actual_batch_size,
                                         RopeScaling    scaling,
                                         bool           write_k_back)
{
    const int64_t b_t_hh = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
    const int64_t b_t    = b_t_hh / (in.n_heads + 2 * in.n_kv_heads);
    RowTarget     row;
    if (!warp_row(in, b_t_hh, varseq_batch, row)) {
        return;
    }
    const int32_t pos = varseq_seqpos[b_t];
    if (pos == -1 || (actual_batch_size != nullptr && b_t >= *actual_batch_size)) {
        return;
    }
    if (4 * threadIdx.x >= in.head_dim) {
        return;
    }
    const float4v v = rotate_lane(load_bf16x4(row.src + 4 * threadIdx.x), pos, row.part, in.head_dim, theta,
                                  scaling.enabled, scaling.old_context_len, scaling.scaling_factor,
                                  scaling.lo_freq_factor, scaling.hi_freq_factor);
    if (row.part == Part::Q) {
        store_bf16x4(xq_out + (b_t * in.n_heads + row.h) * in.head_dim + 4 * threadIdx.x, v);
        return;
    }
    if (write_k_back && row.part == Part::K) {
        store_bf16x4(const_cast<__nv_bfloat16*>(row.src) + 4 * threadIdx.x, v);
    }
    auto* base = static_cast<__nv_bfloat16*>(row.part == Part::K ? cache.k : cache.v);
    auto* dst  = kv_cache_row(base, cache.max_t, in.n_kv_heads, cache.row_elems, row.b, row.h,
                              varseq_cache_seqpos[b_t], page_size, block_tables, block_tables_b_stride);
    store_bf16x4(dst + 4 * threadIdx.x, v);
}

// RoPE into an FP8 cache: K and V quantised per row; (scale, shift) inline in
// the row, or in qparam_k/qparam_v (one int32 a cache row) when given.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel_
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel_[KVQuantNumGroups] -- no INT4 cache, so no group-wise parameters
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel_[gamma] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel_[scale_base] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel_[exponent_offset] -- RoPE only, no xPos decay
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_xpos_qkv_varseq_prefill_kernel_[k_rms_norm] -- no K norm before the cache in the engine's models
__global__ void rope_qkv_to_fp8_cache_kernel(QkvRows        in,
                                             CacheView      cache,
                                             int32_t*       qparam_k,
                                             int32_t*       qparam_v,
                                             __nv_bfloat16* xq_out,
                                             const int32_t* varseq_batch,
                                             const int32_t* varseq_seqpos,
                                             double         theta,
                                             const int32_t* block_tables,
                                             int32_t        page_size,
                                             int32_t        block_tables_b_stride,
                                             const int32_t* varseq_cache_seqpos,
                                             const int64_t* actual_batch_size,
                                             RopeScaling    scaling,
                                             bool           write_k_back)
{
    const int64_t b_t_hh = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
    const int64_t b_t    = b_t_hh / (in.n_heads + 2 * in.n_kv_heads);
    RowTarget     row;
    if (!warp_row(in, b_t_hh, varseq_batch, row)) {
        return;
    }
    const int32_t pos = varseq_seqpos[b_t];
    if (pos == -1 || (actual_batch_size != nullptr && b_t >= *actual_batch_size)) {
        return;
    }
    if (4 * threadIdx.x >= in.head_dim) {
        return;
    }
    const float4v v = rotate_lane(load_bf16x4(row.src + 4 * threadIdx.x), pos, row.part, in.head_dim, theta,
                                  scaling.enabled, scaling.old_context_len, scaling.scaling_factor,
                                  scaling.lo_freq_factor, scaling.hi_freq_factor);
    if (row.part == Part::Q) {
        store_bf16x4(xq_out + (b_t * in.n_heads + row.h) * in.head_dim + 4 * threadIdx.x, v);
        return;
    }
    if (write_k_back && row.part == Part::K) {
        store_bf16x4(const_cast<__nv_bfloat16*>(row.src) + 4 * threadIdx.x, v);
    }
    const int32_t t    = varseq_cache_seqpos[b_t];
    auto*         base = static_cast<uint8_t*>(row.part == Part::K ? cache.k : cache.v);
    uint8_t*      dst  = kv_cache_row(base, cache.max_t, in.n_kv_heads, cache.row_elems, row.b, row.h, t, page_size,
                                      block_tables, block_tables_b_stride);
    __half2*      qparam = nullptr;
    if (qparam_k != nullptr) {
        // one qparam per cache row, laid out as the cache rows are
        int32_t* q = kv_cache_row(row.part == Part::K ? qparam_k : qparam_v, cache.max_t, in.n_kv_heads, 1, row.b,
                                  row.h, t, page_size, block_tables, block_tables_b_stride);
        qparam     = reinterpret_cast<__half2*>(q);
    }
    quantize_fp8_row(v, dst, qparam);
}

// Host-side helpers shared by the launchers below.
int64_t warp_blocks(int64_t warps)
{
    return (warps + kWarpsPerBlock - 1) / kWarpsPerBlock;
}

QkvRows rows_of(const at::Tensor& xq, const at::Tensor& xk, const at::Tensor& xv)
{
    TORCH_CHECK(xq.dim() == 3 && xk.dim() == 3 && xv.dim() == 3, "xq, xk, xv: (tokens, heads, head_dim)");
    TORCH_CHECK(xq.scalar_type() == at::kBFloat16 && xq.is_contiguous() && xk.is_contiguous() && xv.is_contiguous(),
                "xq, xk, xv: contiguous bf16");
    TORCH_CHECK(xq.size(2) % 4 == 0 && xq.size(2) <= 4 * kThreadsPerWarp, "head_dim: a multiple of 4, at most 128");
    QkvRows in;
    in.xq         = reinterpret_cast<const __nv_bfloat16*>(xq.data_ptr());
    in.xk         = reinterpret_cast<const __nv_bfloat16*>(xk.data_ptr());
    in.xv         = reinterpret_cast<const __nv_bfloat16*>(xv.data_ptr());
    in.tokens     = xq.size(0);
    in.n_heads    = xq.size(1);
    in.n_kv_heads = xk.size(1);
    in.head_dim   = xq.size(2);
    return in;
}

CacheView view_of(at::Tensor& cache_k, at::Tensor& cache_v)
{
    TORCH_CHECK(cache_k.dim() == 4 && cache_k.sizes() == cache_v.sizes(), "cache_k, cache_v: equal 4-D caches");
    return {cache_k.data_ptr(), cache_v.data_ptr(), cache_k.size(1), cache_k.size(3)};
}

const int32_t* table_of(const std::optional<at::Tensor>& block_tables, int32_t& b_stride)
{
    b_stride = block_tables ? static_cast<int32_t>(block_tables->stride(0)) : 0;
    return block_tables ? block_tables->data_ptr<int32_t>() : nullptr;
}

at::Tensor launch_nope(const at::Tensor& xq, const at::Tensor& xk, const at::Tensor& xv, at::Tensor& cache_k,
                       at::Tensor& cache_v, const int32_t* batch, const at::Tensor& seqpos,
                       const std::optional<at::Tensor>& block_tables, int64_t page_size, const at::Tensor& cache_seqpos,
                       const int64_t* actual_batch_size)
{
    TORCH_CHECK(cache_k.scalar_type() == at::kBFloat16, "NoPE caches are bf16");
    const at::cuda::CUDAGuard guard{xq.device()};
    const QkvRows             in  = rows_of(xq, xk, xv);
    auto                      out = at::empty_like(xq);
    int32_t                   b_stride;
    const int32_t*            table = table_of(block_tables, b_stride);
    const int64_t             warps = in.tokens * (in.n_heads + 2 * in.n_kv_heads);
    TORCH_CHECK(warps > 0, "no rows to write");
    copy_qkv_to_cache_kernel<<<warp_blocks(warps), dim3(kThreadsPerWarp, kWarpsPerBlock), 0,
                               at::cuda::getCurrentCUDAStream()>>>(
        in, view_of(cache_k, cache_v), reinterpret_cast<__nv_bfloat16*>(out.data_ptr()), batch,
        seqpos.data_ptr<int32_t>(), table, static_cast<int32_t>(page_size), b_stride, cache_seqpos.data_ptr<int32_t>(),
        actual_batch_size);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

at::Tensor launch_rope(const at::Tensor& xq, const at::Tensor& xk, const at::Tensor& xv, at::Tensor& cache_k,
                       at::Tensor& cache_v, const int32_t* batch, const at::Tensor& seqpos, double theta,
                       const std::optional<at::Tensor>& block_tables, int64_t page_size, const at::Tensor& cache_seqpos,
                       const int64_t* actual_batch_size, RopeScaling scaling, const std::optional<at::Tensor>& qparam_k,
                       const std::optional<at::Tensor>& qparam_v, bool write_k_back)
{
    const at::cuda::CUDAGuard guard{xq.device()};
    const QkvRows             in  = rows_of(xq, xk, xv);
    auto                      out = at::empty_like(xq);
    int32_t                   b_stride;
    const int32_t*            table = table_of(block_tables, b_stride);
    const int64_t             warps = in.tokens * (in.n_heads + 2 * in.n_kv_heads);
    TORCH_CHECK(warps > 0, "no rows to write");
    const dim3 blocks(warp_blocks(warps));
    const dim3 threads(kThreadsPerWarp, kWarpsPerBlock);
    auto       stream = at::cuda::getCurrentCUDAStream();
    auto*      xq_out = reinterpret_cast<__nv_bfloat16*>(out.data_ptr());
    if (cache_k.scalar_type() == at::kBFloat16) {
        rope_qkv_to_cache_kernel<<<blocks, threads, 0, stream>>>(
            in, view_of(cache_k, cache_v), xq_out, batch, seqpos.data_ptr<int32_t>(), theta, table,
            static_cast<int32_t>(page_size), b_stride, cache_seqpos.data_ptr<int32_t>(), actual_batch_size, scaling,
            write_k_back);
    }
    else {
        TORCH_CHECK(cache_k.scalar_type() == at::kByte, "cache_k: bf16, or uint8 holding FP8 rows");
        TORCH_CHECK(in.head_dim == kHeadDim, "FP8 caches need head_dim 128");
        TORCH_CHECK(qparam_k.has_value() == qparam_v.has_value(), "qparam_k and qparam_v: both or neither");
        const int64_t row_bytes = kHeadDim + (qparam_k ? 0 : kQParamBytes);
        TORCH_CHECK(cache_k.size(3) == row_bytes, "cache_k: rows of ", row_bytes, " bytes");
        rope_qkv_to_fp8_cache_kernel<<<blocks, threads, 0, stream>>>(
            in, view_of(cache_k, cache_v), qparam_k ? qparam_k->data_ptr<int32_t>() : nullptr,
            qparam_v ? qparam_v->data_ptr<int32_t>() : nullptr, xq_out, batch, seqpos.data_ptr<int32_t>(), theta, table,
            static_cast<int32_t>(page_size), b_stride, cache_seqpos.data_ptr<int32_t>(), actual_batch_size, scaling,
            write_k_back);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// Prefill: the chunk's tokens of every sequence, packed; varseq_batch names
// each token's sequence, varseq_seqpos its position (-1: padding, skipped).
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::nope_qkv_varseq_prefill
at::Tensor nope_qkv_varseq_prefill(at::Tensor                xq,
                                   at::Tensor                xk,
                                   at::Tensor                xv,
                                   at::Tensor                cache_k,
                                   at::Tensor                cache_v,
                                   at::Tensor                varseq_batch,
                                   at::Tensor                varseq_seqpos,
                                   std::optional<at::Tensor> block_tables,
                                   int64_t                   page_size,
                                   std::optional<at::Tensor> varseq_cache_seqpos)
{
    TORCH_CHECK(varseq_batch.is_contiguous() && varseq_batch.numel() == xq.size(0), "varseq_batch: one per token");
    const at::Tensor cache_seqpos = varseq_cache_seqpos.value_or(varseq_seqpos);
    return launch_nope(xq, xk, xv, cache_k, cache_v, varseq_batch.data_ptr<int32_t>(), varseq_seqpos, block_tables,
                       page_size, cache_seqpos, nullptr);
}

// Decoding: one token per sequence (batch optional), under CUDA graphs with
// actual_batch_size bounding the live rows.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::nope_qkv_decoding
at::Tensor nope_qkv_decoding(at::Tensor                xq,
                             at::Tensor                xk,
                             at::Tensor                xv,
                             at::Tensor                cache_k,
                             at::Tensor                cache_v,
                             at::Tensor                seqpos,
                             std::optional<at::Tensor> block_tables,
                             int64_t                   page_size,
                             std::optional<at::Tensor> actual_batch_size,
                             std::optional<at::Tensor> batch,
                             std::optional<at::Tensor> cache_seqpos)
{
    const at::Tensor cache_pos = cache_seqpos.value_or(seqpos);
    return launch_nope(xq, xk, xv, cache_k, cache_v, batch ? batch->data_ptr<int32_t>() : nullptr, seqpos,
                       block_tables, page_size, cache_pos,
                       actual_batch_size ? actual_batch_size->data_ptr<int64_t>() : nullptr);
}

// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_varseq_prefill
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_varseq_prefill[num_groups] -- no INT4 cache, so no group-wise parameters
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_varseq_prefill[cache_logical_dtype_int] -- the cache's dtype says it: bf16, or uint8 holding FP8 (no INT4)
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_varseq_prefill[k_rms_norm] -- no K norm before the cache in the engine's models
at::Tensor rope_qkv_varseq_prefill(at::Tensor                xq,
                                   at::Tensor                xk,
                                   at::Tensor                xv,
                                   at::Tensor                cache_k,
                                   at::Tensor                cache_v,
                                   at::Tensor                varseq_batch,
                                   at::Tensor                varseq_seqpos,
                                   double                    theta,
                                   std::optional<at::Tensor> block_tables,
                                   int64_t                   page_size,
                                   std::optional<at::Tensor> varseq_cache_seqpos,
                                   bool                      rope_scaling,
                                   int64_t                   old_context_len,
                                   double                    scaling_factor,
                                   double                    lo_freq_factor,
                                   double                    hi_freq_factor,
                                   std::optional<at::Tensor> qparam_k,
                                   std::optional<at::Tensor> qparam_v,
                                   bool                      write_k_back)
{
    TORCH_CHECK(varseq_batch.is_contiguous() && varseq_batch.numel() == xq.size(0), "varseq_batch: one per token");
    const at::Tensor cache_seqpos = varseq_cache_seqpos.value_or(varseq_seqpos);
    const RopeScaling scaling{rope_scaling, old_context_len, scaling_factor, lo_freq_factor, hi_freq_factor};
    return launch_rope(xq, xk, xv, cache_k, cache_v, varseq_batch.data_ptr<int32_t>(), varseq_seqpos, theta,
                       block_tables, page_size, cache_seqpos, nullptr, scaling, qparam_k, qparam_v, write_k_back);
}

// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_decoding
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_decoding[num_groups] -- no INT4 cache, so no group-wise parameters
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_decoding[cache_logical_dtype_int] -- the cache's dtype says it: bf16, or uint8 holding FP8 (no INT4)
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::rope_qkv_decoding[k_rms_norm] -- no K norm before the cache in the engine's models
at::Tensor rope_qkv_decoding(at::Tensor                xq,
                             at::Tensor                xk,
                             at::Tensor                xv,
                             at::Tensor                cache_k,
                             at::Tensor                cache_v,
                             at::Tensor                seqpos,
                             double                    theta,
                             std::optional<at::Tensor> block_tables,
                             int64_t                   page_size,
                             std::optional<at::Tensor> actual_batch_size,
                             std::optional<at::Tensor> batch,
                             std::optional<at::Tensor> cache_seqpos,
                             bool                      rope_scaling,
                             int64_t                   old_context_len,
                             double                    scaling_factor,
                             double                    lo_freq_factor,
                             double                    hi_freq_factor,
                             std::optional<at::Tensor> qparam_k,
                             std::optional<at::Tensor> qparam_v)
{
    const at::Tensor  cache_pos = cache_seqpos.value_or(seqpos);
    const RopeScaling scaling{rope_scaling, old_context_len, scaling_factor, lo_freq_factor, hi_freq_factor};
    return launch_rope(xq, xk, xv, cache_k, cache_v, batch ? batch->data_ptr<int32_t>() : nullptr, seqpos, theta,
                       block_tables, page_size, cache_pos,
                       actual_batch_size ? actual_batch_size->data_ptr<int64_t>() : nullptr, scaling, qparam_k,
                       qparam_v, false);
}

// One CTA row per sequence (blockIdx.x), its warps striding over the
// sequence's (position, head) rows up to kv_seqlen; rows after it, up to the
// next multiple of 128, are zeroed so a 128-wide attention tile reads zeros.
// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_fp8_cache_kernel
template<bool kExternalQParam>
__global__ void dequant_fp8_kv_kernel(const uint8_t* cache_k,
                                      const uint8_t* cache_v,
                                      int64_t        max_t,
                                      int64_t        n_kv_heads,
                                      int64_t        row_bytes,
                                      const int32_t* kv_seqlen,
                                      __nv_bfloat16* k_out,
                                      __nv_bfloat16* v_out,
                                      const int32_t* qparam_k,
                                      const int32_t* qparam_v)
{
    constexpr int offset = kExternalQParam ? 0 : kQParamBytes;
    const int64_t b      = blockIdx.x;
    const int64_t live   = kv_seqlen[b];
    int64_t       t_h    = threadIdx.y + static_cast<int64_t>(blockIdx.y) * blockDim.y;
    const int64_t step   = static_cast<int64_t>(blockDim.y) * gridDim.y;
    for (; t_h < live * n_kv_heads; t_h += step) {
        const int64_t  row = b * max_t * n_kv_heads + t_h;  // (b, t, h) flattened
        const uint8_t* rk  = cache_k + row * row_bytes;
        const uint8_t* rv  = cache_v + row * row_bytes;
        const __half2  pk  = kExternalQParam ? reinterpret_cast<const __half2*>(qparam_k)[row] :
                                               *reinterpret_cast<const __half2*>(rk);
        const __half2  pv  = kExternalQParam ? reinterpret_cast<const __half2*>(qparam_v)[row] :
                                               *reinterpret_cast<const __half2*>(rv);
        const float2   sk  = __half22float2(pk);  // (scale, shift)
        const float2   sv  = __half22float2(pv);
        float4v        kf, vf;
        float*         kd  = &kf.x;
        float*         vd  = &vf.x;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            __nv_fp8_e4m3 qk, qv;
            qk.__x = rk[offset + 4 * threadIdx.x + i];
            qv.__x = rv[offset + 4 * threadIdx.x + i];
            kd[i]  = static_cast<float>(qk) * sk.x + sk.y;
            vd[i]  = static_cast<float>(qv) * sv.x + sv.y;
        }
        store_bf16x4(k_out + row * kHeadDim + 4 * threadIdx.x, kf);
        store_bf16x4(v_out + row * kHeadDim + 4 * threadIdx.x, vf);
    }
    const int64_t padded = std::min<int64_t>((live + 127) / 128 * 128, max_t);
    for (; t_h < padded * n_kv_heads; t_h += step) {
        const int64_t row = b * max_t * n_kv_heads + t_h;
        store_bf16x4(k_out + row * kHeadDim + 4 * threadIdx.x, {0.f, 0.f, 0.f, 0.f});
        store_bf16x4(v_out + row * kHeadDim + 4 * threadIdx.x, {0.f, 0.f, 0.f, 0.f});
    }
}

// portq: ports fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_fp8_cache
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_fp8_cache[block_tables] -- the engine dequantises contiguous FP8 caches only
// portq: not-carried fbgemm:fbgemm_gpu/experimental/gen_ai/src/kv_cache/kv_cache.cu::dequantize_fp8_cache[page_size] -- the engine dequantises contiguous FP8 caches only
std::tuple<at::Tensor, at::Tensor> dequantize_fp8_cache(at::Tensor                cache_k,
                                                        at::Tensor                cache_v,
                                                        at::Tensor                kv_seqlen,
                                                        std::optional<at::Tensor> qparam_k,
                                                        std::optional<at::Tensor> qparam_v)
{
    TORCH_CHECK(cache_k.is_cuda() && cache_v.is_cuda() && kv_seqlen.is_cuda(), "dequantize_fp8_cache: CUDA tensors");
    TORCH_CHECK(cache_k.scalar_type() == at::kByte && cache_k.dim() == 4, "cache_k: uint8 (B, MAX_T, N_KVH, row)");
    const int64_t offset = qparam_k ? 0 : kQParamBytes;
    TORCH_CHECK(cache_k.size(3) - offset == kHeadDim, "FP8 cache rows hold head_dim 128");
    const at::cuda::CUDAGuard guard{cache_k.device()};
    const auto                opts = cache_k.options().dtype(at::kBFloat16);
    auto k_out = at::empty({cache_k.size(0), cache_k.size(1), cache_k.size(2), kHeadDim}, opts);
    auto v_out = at::empty_like(k_out);
    const int64_t batch = kv_seqlen.size(0);
    if (batch == 0) {
        return {k_out, v_out};
    }
    constexpr int64_t kMaxBlocks = 512;
    const dim3        blocks(batch, std::max<int64_t>(1, kMaxBlocks / batch));
    const dim3        threads(kThreadsPerWarp, kWarpsPerBlock);
    auto              stream = at::cuda::getCurrentCUDAStream();
    auto*             ko     = reinterpret_cast<__nv_bfloat16*>(k_out.data_ptr());
    auto*             vo     = reinterpret_cast<__nv_bfloat16*>(v_out.data_ptr());
    if (qparam_k) {
        dequant_fp8_kv_kernel<true><<<blocks, threads, 0, stream>>>(
            cache_k.data_ptr<uint8_t>(), cache_v.data_ptr<uint8_t>(), cache_k.size(1), cache_k.size(2),
            cache_k.size(3), kv_seqlen.data_ptr<int32_t>(), ko, vo, qparam_k->data_ptr<int32_t>(),
            qparam_v->data_ptr<int32_t>());
    }
    else {
        dequant_fp8_kv_kernel<false><<<blocks, threads, 0, stream>>>(
            cache_k.data_ptr<uint8_t>(), cache_v.data_ptr<uint8_t>(), cache_k.size(1), cache_k.size(2),
            cache_k.size(3), kv_seqlen.data_ptr<int32_t>(), ko, vo, nullptr, nullptr);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {k_out, v_out};
}

// The engine's own: a zeroed cache pair for `layers` layers of FP8 rows (with
// room for the inline (scale, shift) unless the caller keeps them apart) or
// bf16 rows.
std::tuple<at::Tensor, at::Tensor> allocate_kv_cache(int64_t batch, int64_t max_t, int64_t n_kv_heads,
                                                     int64_t head_dim, bool fp8, bool inline_qparams,
                                                     at::Device device)
{
    TORCH_CHECK(!fp8 || head_dim == kHeadDim, "FP8 caches need head_dim 128");
    const int64_t row  = fp8 ? head_dim + (inline_qparams ? kQParamBytes : 0) : head_dim;
    const auto    opts = at::TensorOptions().device(device).dtype(fp8 ? at::kByte : at::kBFloat16);
    return {at::zeros({batch, max_t, n_kv_heads, row}, opts), at::zeros({batch, max_t, n_kv_heads, row}, opts)};
}

}  // namespace kvc
