"""``cp_gather_cache``: paged cache -> dense rows, a raw bit copy of any entry.

Used where the bytes must arrive unchanged: the decode-context-parallel
chunked-context path, the fp8-query prefill (fp8 bytes gathered without
dequantization), and as the pure-bandwidth baseline of the benchmark (spec §4).
Same page-task mapping as the other gathers with ``T = dst.shape[0]``; entries
of 1-, 2- or 4-byte elements and any shape (flattened, contiguous).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from .. import validation as check
from ._page_task import PAGE_INDICES, copy_page, page_index_flag, page_task_grid, reqs_per_scan, resolve_page, row_tiling

_BIT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32}


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_cache_page @c76a425278
@triton.jit
def cp_gather_cache_page(
    src_cache,
    dst,
    block_table,
    cu_seq_lens,
    num_reqs,
    block_size,
    total_tokens,
    block_table_stride,
    cache_block_stride,
    cache_entry_stride,
    dst_entry_stride,
    seq_starts,
    block_table_width,
    num_blocks,
    index_flag,
    TRAP: tl.constexpr,
    HAS_SEQ_STARTS: tl.constexpr,
    DENSE_ROWS: tl.constexpr,
    REQS_PER_SCAN: tl.constexpr,
    FLAT_BLOCK: tl.constexpr,
    TOKEN_BLOCK: tl.constexpr,
    COL_BLOCK: tl.constexpr,
    ENTRY_SIZE: tl.constexpr,
):
    """``ENTRY_SIZE`` counts elements of the bit view (upstream:
    ``entry_size_bytes``); the wrapper views 2- and 4-byte caches as int16/int32."""
    num_page_tokens, physical_block, page_token_begin, output_token_begin = resolve_page(
        cu_seq_lens,
        seq_starts,
        block_table,
        num_reqs,
        total_tokens,
        block_size,
        block_table_stride,
        block_table_width,
        num_blocks,
        index_flag,
        TRAP,
        True,
        HAS_SEQ_STARTS,
        REQS_PER_SCAN,
    )
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
        1.0,
        ENTRY_SIZE,
        0,
        False,
        False,
        DENSE_ROWS,
        FLAT_BLOCK,
        TOKEN_BLOCK,
        COL_BLOCK,
    )


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_cache @c76a425278
def _cp_gather_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """The body of ``torch.ops.portq.cp_gather_cache``: host checks, then the launch."""
    check.paged_cache("src_cache", src_cache, ndim=None)
    device = src_cache.device
    check.tensor("dst", dst, device=device)
    batch_size = check.integer("batch_size", batch_size)
    check.index_tensor("cu_seq_lens", cu_seq_lens, device, length=batch_size + 1)
    check.block_table(block_table, device, batch_size)
    if seq_starts is not None:
        check.index_tensor("seq_starts", seq_starts, device, length=batch_size)
    if dst.dtype != src_cache.dtype:
        check.fail("dst", f"{check.dtype_name(src_cache.dtype)} (src_cache's dtype)",
                   check.dtype_name(dst.dtype), TypeError)
    if src_cache.element_size() not in _BIT_VIEW:
        check.fail("src_cache", "a dtype of 1, 2 or 4 bytes",
                   f"{check.dtype_name(src_cache.dtype)} ({src_cache.element_size()} bytes)", TypeError)
    entry_shape = tuple(src_cache.shape[2:])
    if dst.dim() < 1 or tuple(dst.shape[1:]) != entry_shape:
        check.fail("dst", f"[T, {', '.join(map(str, entry_shape))}] to hold src_cache entries",
                   f"shape {tuple(dst.shape)}")
    entry = check.contiguous_trailing("src_cache", src_cache, 2)
    check.contiguous_trailing("dst", dst, 1)
    total_tokens = dst.shape[0]
    if total_tokens == 0 or batch_size == 0 or entry == 0:
        return

    bits = _BIT_VIEW[src_cache.element_size()]
    block_size = src_cache.shape[1]
    dst_stride = dst.stride(0)
    dense = src_cache.stride(1) == entry and dst_stride == entry
    flag = page_index_flag("cp_gather_cache", device, cu_seq_lens, True, seq_starts, block_table,
                           batch_size, total_tokens, block_size, src_cache.shape[0])
    cp_gather_cache_page[page_task_grid(total_tokens, block_size, batch_size)](
        src_cache.view(bits),
        dst.view(bits),
        block_table,
        cu_seq_lens,
        batch_size,
        block_size,
        total_tokens,
        block_table.stride(0),
        src_cache.stride(0),
        src_cache.stride(1),
        dst_stride,
        seq_starts if seq_starts is not None else cu_seq_lens,
        block_table.shape[1],
        src_cache.shape[0],
        flag,
        TRAP=check.trap_in_kernel(device),
        HAS_SEQ_STARTS=seq_starts is not None,
        DENSE_ROWS=dense,
        REQS_PER_SCAN=reqs_per_scan(batch_size),
        ENTRY_SIZE=entry,
        **row_tiling(entry, block_size),
    )
    check.after_launch("cp_gather_cache", flag, PAGE_INDICES)


_CP_GATHER_CACHE_OP = custom_ops.register("cp_gather_cache", _cp_gather_cache, mutates_args=("dst",),
    fake=custom_ops.no_output)


# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_indexer_k_quant_cache_kernel -- gathers the indexer-key cache, whose writer is not carried either
def cp_gather_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """Copy each request's rows ``[cu[r], cu[r+1])`` (clamped to ``dst.shape[0]``)
    from logical positions ``seq_starts[r] + j`` of the paged ``src_cache``.

    Args:
        src_cache: ``[num_blocks, block_size, *entry]``, element size 1, 2 or 4,
            each entry contiguous (blocks and tokens may be strided/padded).
        dst: ``[T, *entry]``, same dtype, each row contiguous.
        block_table: int32 ``[>= batch_size, max_blocks]``.
        cu_seq_lens: int32 ``[batch_size + 1]``.
        batch_size: number of requests (``len(cu_seq_lens) - 1``).
        seq_starts: optional int32 ``[batch_size]``, any non-negative offsets.

    Offsets past ``dst.shape[0]`` are clamped to it, as upstream clamps.

    Deviation: a logical block past the table width, a block id outside the
    cache or a negative ``seq_starts`` entry is never read (the rows stay
    untouched) and is an index error of ``portq_kernels.validation``
    (upstream reads out of bounds, #45462, open; it has no #49427 guard).
    Deviation: a negative or decreasing ``cu_seq_lens`` entry is an index
    error (upstream writes before ``dst``, or overlaps the ranges so that its
    grid can run out of programs).

    On an index error found inside the kernel (see ``portq_kernels.validation``):
    rows written before the error was seen may differ from their old contents,
    the rows of the offending request are not written, and nothing outside
    ``dst`` is touched; the inputs are never modified.
    """
    custom_ops.call("cp_gather_cache", src_cache, dst, block_table, cu_seq_lens, batch_size, seq_starts)
