"""The split schedule: one Triton program walks the batch's KV blocks in
order and hands each SM part an equal payload (blocks plus a fixed overhead
per request it touches), recording where each part starts and ends and the
cumulative number of splits per request."""

import triton
import triton.language as tl

# The schedule row's width, as upstream's parameter header states it:
# [begin_idx, begin_seqlen, end_idx, end_seqlen, begin_n_split_idx, _, _, _]
TILE_SCHEDULER_METADATA_SIZE = 8

# Block sizes the decode kernel uses; the schedule must agree with them.
BLOCK_M = 64
BLOCK_N = 64
FIXED_OVERHEAD_NUM_BLOCKS = 5
MAX_BATCH_SIZE = 4096


# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::get_mla_metadata_kernel @414a2f3
@triton.jit
def _split_schedule_kernel(seqlens_ptr, meta_ptr, splits_ptr, batch, num_parts,
                           BLOCK_N: tl.constexpr, OVERHEAD: tl.constexpr,
                           META_SIZE: tl.constexpr, BATCH_P2: tl.constexpr):
    offs = tl.arange(0, BATCH_P2)
    in_batch = offs < batch
    lens = tl.load(seqlens_ptr + offs, mask=in_batch, other=0)
    blocks = (lens + BLOCK_N - 1) // BLOCK_N
    total = tl.sum(tl.where(in_batch, blocks + OVERHEAD, 0), axis=0)
    payload = (total + num_parts - 1) // num_parts + OVERHEAD

    now_idx = 0
    now_block = 0
    now_split = 0
    cum_splits = 0
    tl.store(splits_ptr, 0)
    for part in range(num_parts):
        begin_idx = now_idx
        begin_seqlen = now_block * BLOCK_N
        begin_split = now_split
        remain = payload
        walking = now_idx < batch
        while walking:
            n_blocks = (tl.load(seqlens_ptr + now_idx) + BLOCK_N - 1) // BLOCK_N
            left = n_blocks - now_block
            if remain >= left + OVERHEAD:
                cum_splits += now_split + 1
                tl.store(splits_ptr + now_idx + 1, cum_splits)
                remain -= left + OVERHEAD
                now_idx += 1
                now_block = 0
                now_split = 0
                walking = now_idx < batch
            else:
                if remain - OVERHEAD > 0:
                    now_block += remain - OVERHEAD
                    now_split += 1
                    remain = 0
                walking = now_idx < 0
        prev_len = tl.load(seqlens_ptr + now_idx - 1, mask=now_idx > 0, other=0)
        end_idx = tl.where(now_block > 0, now_idx, now_idx - 1)
        end_seqlen = tl.where(now_block > 0, now_block * BLOCK_N, prev_len)
        row = meta_ptr + part * META_SIZE
        tl.store(row + 0, begin_idx)
        tl.store(row + 1, begin_seqlen)
        tl.store(row + 2, end_idx)
        tl.store(row + 3, end_seqlen)
        tl.store(row + 4, begin_split)
    tl.device_assert(now_idx == batch, "the schedule must cover the batch")


# portq: ports flashmla:csrc/flash_fwd_mla_kernel.h::get_mla_metadata_func @414a2f3
def launch_split_schedule(seqlens, meta, splits, num_parts):
    batch = seqlens.shape[0]
    assert batch < MAX_BATCH_SIZE
    _split_schedule_kernel[(1,)](
        seqlens, meta, splits, batch, num_parts,
        BLOCK_N=BLOCK_N, OVERHEAD=FIXED_OVERHEAD_NUM_BLOCKS,
        META_SIZE=TILE_SCHEDULER_METADATA_SIZE, BATCH_P2=triton.next_power_of_2(max(batch, 2)))
