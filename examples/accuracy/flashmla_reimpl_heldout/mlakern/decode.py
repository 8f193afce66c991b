"""Split-KV decode attention over a paged latent cache and the combine of
its splits (Triton). The query rows of one KV head are (s_q * ngroups) long,
row = s * ngroups + g; a program takes BLOCK_M of them for one KV head and
walks the (batch, KV range) pieces its schedule row assigns, writing the
output directly when a request is not split and fp32 partials otherwise."""

import os

import triton
import triton.language as tl

from .schedule import BLOCK_M, BLOCK_N, TILE_SCHEDULER_METADATA_SIZE

# The interpreter's bf16 dot is wrong: products run in fp32 there.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# portq: ports flashmla:csrc/softmax.h::Softmax @414a2f3
@triton.jit
def _online_softmax(scores, row_max, row_sum, scale_log2):
    """One step of the running softmax in base 2: the new maximum, the
    probabilities of this block, the factor that rescales what is
    accumulated and the new sum. Rows with no valid key keep a zero
    maximum so that nothing becomes NaN."""
    new_max = tl.maximum(row_max, tl.max(scores, axis=1))
    safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)
    probs = tl.exp2(scores * scale_log2 - (safe_max * scale_log2)[:, None])
    rescale = tl.exp2((tl.where(row_max == float("-inf"), safe_max, row_max) - safe_max) * scale_log2)
    new_sum = row_sum * rescale + tl.sum(probs, axis=1)
    return new_max, probs, rescale, new_sum


# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::compute_attn_1rowblock_splitkv_mla @414a2f3
# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::store @414a2f3
@triton.jit
def _attend_rowblock(q_ptr, k_ptr, o_ptr, lse_ptr, oacc_ptr, lseacc_ptr, table_ptr, splits_ptr,
                     bidb, bidh, m_block, n_split_idx, seqlen_k, n_block_min, n_block_max, no_split,
                     seqlen_q, h, ngroups, scale, scale_log2,
                     q_batch_stride, q_row_stride, q_head_stride,
                     k_batch_stride, k_row_stride, k_head_stride,
                     o_batch_stride, o_row_stride, o_head_stride, table_batch_stride,
                     IS_CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     DV: tl.constexpr, DR: tl.constexpr, DOT_FP32: tl.constexpr):
    rows = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < seqlen_q
    dv = tl.arange(0, DV)
    dr = tl.arange(0, DR)
    cols = tl.arange(0, BLOCK_N)
    q_base = q_ptr + bidb * q_batch_stride + bidh * q_head_stride + rows[:, None] * q_row_stride
    q_lat = tl.load(q_base + dv[None, :], mask=row_ok[:, None], other=0.0)
    q_rope = tl.load(q_base + DV + dr[None, :], mask=row_ok[:, None], other=0.0)
    if DOT_FP32:
        q_lat = q_lat.to(tl.float32)
        q_rope = q_rope.to(tl.float32)
    k_head = k_ptr + bidh * k_head_stride  # one query group per KV head after the host's reshape

    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, DV], tl.float32)
    for n_block in range(n_block_min, n_block_max):
        page = tl.load(table_ptr + bidb * table_batch_stride + n_block)
        pos = n_block * BLOCK_N + cols
        col_ok = pos < seqlen_k
        k_base = k_head + page.to(tl.int64) * k_batch_stride + cols[:, None] * k_row_stride
        k_lat = tl.load(k_base + dv[None, :], mask=col_ok[:, None], other=0.0)
        k_rope = tl.load(k_base + DV + dr[None, :], mask=col_ok[:, None], other=0.0)
        if DOT_FP32:
            k_lat = k_lat.to(tl.float32)
            k_rope = k_rope.to(tl.float32)
        scores = tl.dot(q_lat, tl.trans(k_lat)) + tl.dot(q_rope, tl.trans(k_rope))
        if IS_CAUSAL:
            limit = seqlen_k - 1 - (seqlen_q - 1 - rows) // ngroups
            keep = pos[None, :] <= limit[:, None]
        else:
            keep = col_ok[None, :] & (rows[:, None] >= 0)
        scores = tl.where(keep, scores, float("-inf"))
        row_max, probs, rescale, row_sum = _online_softmax(scores, row_max, row_sum, scale_log2)
        acc = acc * rescale[:, None] + tl.dot(probs.to(k_lat.dtype), k_lat)

    empty = (row_sum == 0.0) | (row_sum != row_sum)
    out = acc / tl.where(empty, 1.0, row_sum)[:, None]
    lse = tl.where(empty, float("inf"), row_max * scale + tl.log(row_sum))
    if no_split:
        o_base = o_ptr + bidb * o_batch_stride + bidh * o_head_stride + rows[:, None] * o_row_stride
        tl.store(o_base + dv[None, :], out.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
        tl.store(lse_ptr + (bidb * h + bidh) * seqlen_q + rows, lse, mask=row_ok)
    else:
        split = tl.load(splits_ptr + bidb) + n_split_idx
        lse = tl.where(empty, float("-inf"), lse)
        acc_base = oacc_ptr + ((split * h + bidh) * seqlen_q + rows[:, None]).to(tl.int64) * DV
        tl.store(acc_base + dv[None, :], out, mask=row_ok[:, None])
        tl.store(lseacc_ptr + (split * h + bidh) * seqlen_q + rows, lse, mask=row_ok)


# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::flash_fwd_splitkv_mla_kernel @414a2f3
@triton.jit
def _splitkv_mla_kernel(q_ptr, k_ptr, o_ptr, lse_ptr, oacc_ptr, lseacc_ptr, table_ptr, seqlens_ptr,
                        meta_ptr, splits_ptr, batch, seqlen_q, h, ngroups, scale, scale_log2,
                        q_batch_stride, q_row_stride, q_head_stride,
                        k_batch_stride, k_row_stride, k_head_stride,
                        o_batch_stride, o_row_stride, o_head_stride, table_batch_stride,
                        IS_CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        DV: tl.constexpr, DR: tl.constexpr, META_SIZE: tl.constexpr, DOT_FP32: tl.constexpr):
    m_block = tl.program_id(0)
    bidh = tl.program_id(1)
    part = tl.program_id(2)
    meta = meta_ptr + part * META_SIZE
    begin_idx = tl.load(meta + 0)
    begin_seqlen = tl.load(meta + 1)
    end_idx = tl.load(meta + 2)
    end_seqlen = tl.load(meta + 3)
    begin_split = tl.load(meta + 4)
    if begin_idx < batch:
        for batch_id in range(begin_idx, end_idx + 1):
            seqlen_k = tl.load(seqlens_ptr + batch_id)
            n_split_idx = tl.where(batch_id == begin_idx, begin_split, 0)
            n_block_min = tl.where(batch_id == begin_idx, begin_seqlen // BLOCK_N, 0)
            n_block_max = tl.where(batch_id == end_idx, tl.cdiv(end_seqlen, BLOCK_N), tl.cdiv(seqlen_k, BLOCK_N))
            no_split = (n_block_min == 0) & (n_block_max == tl.cdiv(seqlen_k, BLOCK_N))
            _attend_rowblock(q_ptr, k_ptr, o_ptr, lse_ptr, oacc_ptr, lseacc_ptr, table_ptr, splits_ptr,
                             batch_id, bidh, m_block, n_split_idx, seqlen_k, n_block_min, n_block_max, no_split,
                             seqlen_q, h, ngroups, scale, scale_log2,
                             q_batch_stride, q_row_stride, q_head_stride,
                             k_batch_stride, k_row_stride, k_head_stride,
                             o_batch_stride, o_row_stride, o_head_stride, table_batch_stride,
                             IS_CAUSAL, BLOCK_M, BLOCK_N, DV, DR, DOT_FP32)


# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::flash_fwd_splitkv_mla_combine_kernel @414a2f3
@triton.jit
def _combine_kernel(o_ptr, lse_ptr, oacc_ptr, lseacc_ptr, splits_ptr, h, seqlen_q,
                    o_batch_stride, o_row_stride, o_head_stride,
                    DV: tl.constexpr, MAX_SPLITS: tl.constexpr):
    bidx = tl.program_id(0)
    hs = h * seqlen_q
    batch_idx = bidx // hs
    hs_idx = bidx % hs
    split_offset = tl.load(splits_ptr + batch_idx)
    n_splits = tl.load(splits_ptr + batch_idx + 1) - split_offset
    tl.device_assert(n_splits <= MAX_SPLITS, "more splits than the combine holds")
    if n_splits > 1:
        s = tl.arange(0, MAX_SPLITS)
        part_lse = tl.load(lseacc_ptr + (split_offset + s) * hs + hs_idx, mask=s < n_splits, other=float("-inf"))
        max_lse = tl.max(part_lse, axis=0)
        max_lse = tl.where(max_lse == float("-inf"), 0.0, max_lse)
        sum_lse = tl.sum(tl.exp(part_lse - max_lse), axis=0)
        global_lse = tl.where((sum_lse == 0.0) | (sum_lse != sum_lse), float("inf"), tl.log(sum_lse) + max_lse)
        tl.store(lse_ptr + bidx, global_lse)
        dv = tl.arange(0, DV)
        acc = tl.zeros([DV], tl.float32)
        for i in range(0, n_splits):
            lse_i = tl.load(lseacc_ptr + (split_offset + i) * hs + hs_idx)
            part = tl.load(oacc_ptr + ((split_offset + i) * hs + hs_idx).to(tl.int64) * DV + dv)
            acc += tl.exp(lse_i - global_lse) * part
        head_idx = hs_idx // seqlen_q
        row = hs_idx % seqlen_q
        o_base = o_ptr + batch_idx * o_batch_stride + head_idx * o_head_stride + row * o_row_stride
        tl.store(o_base + dv, acc.to(o_ptr.dtype.element_ty))


# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::run_flash_splitkv_fwd_mla @414a2f3
# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::run_mha_fwd_splitkv_mla @414a2f3
def run_splitkv_mla(q, kcache, out, lse, out_accum, lse_accum, block_table, seqlens_k,
                    tile_scheduler_metadata, num_splits, ngroups, is_causal, scale, d_v):
    """q (b, seqlen_q, h_k, 576) with seqlen_q = s_q * ngroups; out (b,
    seqlen_q, h_k, 512); lse (b, h_k, seqlen_q); the accumulators carry
    b + num_sm_parts splits."""
    batch, seqlen_q, h, head = q.shape
    assert head == 576 and d_v == 512, "latent 512 plus rope 64"
    assert kcache.shape[1] == BLOCK_N, "the page block must be the kernel's block"
    num_sm_parts = tile_scheduler_metadata.shape[0]
    grid = (triton.cdiv(seqlen_q, BLOCK_M), h, num_sm_parts)
    _splitkv_mla_kernel[grid](
        q, kcache, out, lse, out_accum, lse_accum, block_table, seqlens_k,
        tile_scheduler_metadata, num_splits, batch, seqlen_q, h, ngroups, scale, scale * 1.4426950408889634,
        q.stride(0), q.stride(-3), q.stride(-2),
        kcache.stride(0), kcache.stride(-3), kcache.stride(-2),
        out.stride(0), out.stride(-3), out.stride(-2), block_table.stride(0),
        IS_CAUSAL=is_causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, DV=d_v, DR=head - d_v,
        META_SIZE=TILE_SCHEDULER_METADATA_SIZE, DOT_FP32=_INTERPRETED)
    _combine_kernel[(batch * h * seqlen_q,)](
        out, lse, out_accum, lse_accum, num_splits, h, seqlen_q,
        out.stride(0), out.stride(-3), out.stride(-2),
        DV=d_v, MAX_SPLITS=max(32, triton.next_power_of_2(num_sm_parts)))
