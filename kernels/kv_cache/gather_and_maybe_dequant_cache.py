"""``gather_and_maybe_dequant_cache``: paged MLA cache -> dense rows, dequantizing fp8.

The first step of every chunked-context prefill iteration: each request's
cached context chunk (``seq_starts[r]`` .. + its length) is copied out of the
paged cache into consecutive rows of a workspace, bit for bit (``auto``) or
converted ``float(fp8) * scale[0]`` to fp32/fp16/bf16 (spec §3).

Page-task design (upstream #51739): one program per (request, logical page);
the request comes from ``cu_seq_lens`` alone. The pre-#51739 per-token launch
and its token -> request back-map are not carried (seed 000; the back-map
parameter is dead upstream since #51739 and absent here); the benchmark
keeps a per-token variant only to measure the difference.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from .. import validation as check
from ._formats import Conversion, element_conversion
from ._numerics import native_casts
from ._page_task import PAGE_INDICES, copy_page, page_index_flag, page_task_grid, reqs_per_scan, resolve_page, row_tiling


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::gather_and_maybe_dequant_cache_page @c76a425278
@triton.jit
def gather_and_maybe_dequant_cache_page(
    src_cache,
    dst,
    block_table,
    cu_seq_lens,
    num_reqs,
    num_tokens,
    block_size,
    block_table_stride,
    cache_block_stride,
    cache_entry_stride,
    dst_entry_stride,
    scale,
    seq_starts,
    block_table_width,
    num_blocks,
    index_flag,
    TRAP: tl.constexpr,
    ENTRY_SIZE: tl.constexpr,
    CONVERSION: tl.constexpr,
    DST_IS_BF16: tl.constexpr,
    NATIVE: tl.constexpr,
    HAS_SEQ_STARTS: tl.constexpr,
    DENSE_ROWS: tl.constexpr,
    REQS_PER_SCAN: tl.constexpr,
    FLAT_BLOCK: tl.constexpr,
    TOKEN_BLOCK: tl.constexpr,
    COL_BLOCK: tl.constexpr,
):
    num_page_tokens, physical_block, page_token_begin, output_token_begin = resolve_page(
        cu_seq_lens,
        seq_starts,
        block_table,
        num_reqs,
        num_tokens,
        block_size,
        block_table_stride,
        block_table_width,
        num_blocks,
        index_flag,
        TRAP,
        True,
        HAS_SEQ_STARTS,
        REQS_PER_SCAN,
        True,
    )
    scale_value = 1.0
    if CONVERSION != 0:
        scale_value = tl.load(scale)
    src_page = (
        src_cache
        + physical_block.to(tl.int64) * cache_block_stride
        + page_token_begin.to(tl.int64) * cache_entry_stride
    )
    dst_rows = dst + output_token_begin.to(tl.int64) * dst_entry_stride
    copy_page(
        src_page,
        dst_rows,
        num_page_tokens,
        cache_entry_stride,
        dst_entry_stride,
        scale_value,
        ENTRY_SIZE,
        CONVERSION,
        DST_IS_BF16,
        NATIVE,
        DENSE_ROWS,
        FLAT_BLOCK,
        TOKEN_BLOCK,
        COL_BLOCK,
    )


_BIT_VIEW = {4: torch.int32, 2: torch.int16}


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::gather_and_maybe_dequant_cache @c76a425278
def _gather_and_maybe_dequant_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    num_tokens: int,
    kv_cache_dtype: str,
    scale: torch.Tensor,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """The body of ``torch.ops.portq.gather_and_maybe_dequant_cache``: host checks, then the launch."""
    conversion = element_conversion(kv_cache_dtype)
    check.paged_cache("src_cache", src_cache)
    device = src_cache.device
    check.tensor("dst", dst, dtypes=check.FLOAT_DTYPES, ndim=2, device=device)
    num_tokens = check.integer("num_tokens", num_tokens)
    check.tensor("cu_seq_lens", cu_seq_lens, dtypes=(torch.int32,), ndim=1, device=device)
    if cu_seq_lens.shape[0] < 1:
        check.fail("cu_seq_lens", "num_reqs + 1 >= 1 entries", 0)
    num_reqs = cu_seq_lens.shape[0] - 1
    check.block_table(block_table, device, num_reqs, "requests (len(cu_seq_lens) - 1)")
    if seq_starts is not None:
        check.index_tensor("seq_starts", seq_starts, device, length=num_reqs)
    check.scale_tensor("scale", scale, device)
    entry = dst.shape[1]
    if src_cache.shape[2] != entry:
        check.fail("src_cache", f"entries of {entry} elements (dst's row width)",
                   f"shape {tuple(src_cache.shape)}")
    check.unit_inner_stride("src_cache", src_cache)
    check.unit_inner_stride("dst", dst)
    if conversion == Conversion.AUTO and src_cache.dtype != dst.dtype:
        check.fail("src_cache", f"{check.dtype_name(dst.dtype)} like dst (kv_cache_dtype "
                   f"{kv_cache_dtype!r} copies bits)", check.dtype_name(src_cache.dtype), TypeError)
    if conversion != Conversion.AUTO and src_cache.element_size() != 1:
        check.fail("src_cache", f"1-byte storage (uint8 or float8) for kv_cache_dtype "
                   f"{kv_cache_dtype!r}", check.dtype_name(src_cache.dtype), TypeError)
    if num_tokens > dst.shape[0]:
        check.fail("num_tokens", f"<= dst's {dst.shape[0]} rows", num_tokens)
    if num_tokens == 0 or num_reqs == 0 or entry == 0:
        return

    dst_is_bf16 = dst.dtype == torch.bfloat16
    if conversion == Conversion.AUTO:
        bits = _BIT_VIEW[dst.element_size()]
        src_view, dst_view = src_cache.view(bits), dst.view(bits)
    else:
        src_view = src_cache.view(torch.uint8)
        dst_view = dst.view(torch.int16) if dst_is_bf16 else dst
    block_size = src_cache.shape[1]
    dense = src_cache.stride(1) == entry and dst.stride(0) == entry
    flag = page_index_flag("gather_and_maybe_dequant_cache", device, cu_seq_lens, True, seq_starts,
                           block_table, num_reqs, num_tokens, block_size, src_cache.shape[0],
                           skip_past_table=True)
    gather_and_maybe_dequant_cache_page[page_task_grid(num_tokens, block_size, num_reqs)](
        src_view,
        dst_view,
        block_table,
        cu_seq_lens,
        num_reqs,
        num_tokens,
        block_size,
        block_table.stride(0),
        src_cache.stride(0),
        src_cache.stride(1),
        dst.stride(0),
        scale,
        seq_starts if seq_starts is not None else cu_seq_lens,
        block_table.shape[1],
        src_cache.shape[0],
        flag,
        TRAP=check.trap_in_kernel(device),
        ENTRY_SIZE=entry,
        CONVERSION=int(conversion),
        DST_IS_BF16=dst_is_bf16,
        NATIVE=native_casts(dst),
        HAS_SEQ_STARTS=seq_starts is not None,
        DENSE_ROWS=dense,
        REQS_PER_SCAN=reqs_per_scan(num_reqs),
        **row_tiling(entry, block_size),
    )
    check.after_launch("gather_and_maybe_dequant_cache", flag, PAGE_INDICES)


_GATHER_AND_MAYBE_DEQUANT_CACHE_OP = custom_ops.register("gather_and_maybe_dequant_cache", _gather_and_maybe_dequant_cache, mutates_args=("dst",),
    fake=custom_ops.no_output)


def gather_and_maybe_dequant_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    num_tokens: int,
    kv_cache_dtype: str,
    scale: torch.Tensor,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """Gather ``cu_seq_lens``-delimited rows of each request out of the paged cache.

    Args:
        src_cache: ``[num_blocks, block_size, E]``; ``dst.dtype`` for ``auto``,
            1-byte storage (uint8 / float8) for the fp8 formats.
        dst: ``[>= num_tokens, E]`` fp32, fp16 or bf16; rows may be strided.
        block_table: int32 ``[>= num_reqs, max_blocks]``.
        cu_seq_lens: int32 ``[num_reqs + 1]``, non-negative and non-decreasing;
            request ``r`` fills rows ``[cu[r], cu[r+1])`` clamped to
            ``num_tokens`` (as upstream clamps).
        num_tokens: rows ``>= num_tokens`` are never written (an upper bound is
            fine: it only sizes the grid); ``0`` is a no-op.
        kv_cache_dtype: ``auto``/``float16``/``bfloat16`` (bit copy),
            ``fp8``/``fp8_e4m3``/``fp8_e5m2`` (dequantize with ``scale[0]``).
        scale: float32, element 0 is the per-tensor scale.
        seq_starts: optional int32 ``[num_reqs]``: request ``r`` starts reading at
            logical position ``seq_starts[r]`` (any non-negative value).

    Positions whose logical block is at or past the table's width are skipped:
    their rows stay untouched, with no error (upstream #49427), and the
    in-range part of the request is still gathered.

    Deviation: ``fp8_ds_mla``/``nvfp4_ds_mla`` are refused with a pointer to
    the upconvert gathers (upstream would treat ``fp8_ds_mla`` as per-element
    e4m3, which is never what a 656-byte entry means).
    Deviation: the width skipped at is ``block_table.shape[1]``, not upstream's
    ``block_table.stride(0)`` (the same for a row-contiguous table; a column
    slice of a wider table is not read past its columns).
    Deviation: a block id outside the cache, a negative ``seq_starts`` entry, a
    negative ``cu_seq_lens`` entry or a decreasing ``cu_seq_lens`` is an index
    error (upstream reads or writes out of bounds, or, for a decreasing one,
    overlaps the ranges so that its grid can run out of programs).

    On an index error found inside the kernel (see ``portq_kernels.validation``):
    rows written before the error was seen may differ from their old contents,
    the rows of the offending request are not written, and nothing outside
    ``dst`` is touched; the inputs are never modified.
    """
    custom_ops.call("gather_and_maybe_dequant_cache", src_cache, dst, block_table, cu_seq_lens, num_tokens, kv_cache_dtype, scale, seq_starts)
