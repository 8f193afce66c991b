"""Page tasks: the launch geometry shared by the four paged gathers.

Upstream #51739 replaced "one CTA per output token, look the request up through a
token -> request back-map" by "one CTA per (request, logical cache page)": the
block table is read once per page, partial first/last pages (unaligned
``seq_starts``, ragged lengths) are ordinary tasks with a valid token range, and
no per-token request lookup exists at all. This module holds that mapping
(:func:`map_gather_page_task`, evaluated by every program for itself), the grid
size that is always sufficient (:func:`page_task_grid`), and the page-resolving
prologue the gather kernels share (:func:`resolve_page`).

Output ranges. Request ``r`` writes rows ``[o_b, o_e)`` with ``o_b = clamp(
output_starts[r], 0, T)`` and either ``o_e = clamp(output_starts[r+1], 0, T)``
(``cu_seq_lens`` style, ``HAS_TERMINAL_START``) or, for ``workspace_starts``,
the same except that the last request runs to ``T``. Row ``o_b + j`` receives
logical position ``seq_starts[r] + j``. Upstream clamps only from above; the
clamp at 0 is ours so that no index value can address memory before ``dst``.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import validation as check
from ..validation import next_power_of_2, record_scalar_violation, record_violation
from ._numerics import fp8_code_to_fp32, store_from_fp32

#: Requests examined per vector step of the mapping scan.
MAX_REQS_PER_SCAN = 256


def page_task_grid(num_tokens: int, block_size: int, num_reqs: int) -> tuple[int]:
    """``ceil(T / B) + 2 R`` programs: every request's pages cover its rows plus
    at most one partial page at each end, so this always suffices (surplus
    programs find no task and exit). Independent of index *values*, so it needs
    no device-to-host read."""
    return (triton.cdiv(num_tokens, block_size) + 2 * num_reqs,)


def reqs_per_scan(num_reqs: int) -> int:
    """Vector width of the mapping scan: the batch in one step when it is small,
    few compiled variants (powers of two from 16 to 256)."""
    return min(max(next_power_of_2(num_reqs), 16), MAX_REQS_PER_SCAN)


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::map_gather_page_task @c76a425278
@triton.jit
def map_gather_page_task(
    task,
    output_starts,
    seq_starts,
    num_reqs,
    num_tokens,
    block_size,
    index_flag,
    TRAP: tl.constexpr,
    HAS_TERMINAL_START: tl.constexpr,
    HAS_SEQ_STARTS: tl.constexpr,
    REQS_PER_SCAN: tl.constexpr,
):
    """Task id -> (found, req_id, logical_block, page_token_begin, page_token_end,
    output_token_begin).

    Tasks are numbered request by request, page by page. The scan is vectorised:
    for a slice of requests it counts each one's pages, takes the inclusive
    prefix sum, and picks the request whose page interval holds ``task``.
    A request with rows to copy and a negative ``seq_starts`` entry, a negative
    output start, or an output end before its start gets no pages and program 0
    clears ``index_flag`` (upstream would read blocks before the table row or
    write rows before ``dst``; a decreasing offset overlaps the ranges, so the
    grid of :func:`page_task_grid` could run out of programs).
    """
    found = task < 0
    req_id = task * 0
    logical_block = task * 0
    page_token_begin = task * 0
    page_token_end = task * 0
    output_token_begin = task * 0
    pages_before = task * 0
    for first_req in range(0, num_reqs, REQS_PER_SCAN):
        reqs = first_req + tl.arange(0, REQS_PER_SCAN)
        valid = reqs < num_reqs
        begin = tl.load(output_starts + reqs, mask=valid, other=0)
        if HAS_TERMINAL_START:
            end = tl.load(output_starts + reqs + 1, mask=valid, other=0)
        else:
            has_next = reqs + 1 < num_reqs
            end = tl.load(output_starts + reqs + 1, mask=has_next, other=0)
            # The last request runs to num_tokens (a start past it is clamped).
            end = tl.where(has_next, end, tl.maximum(begin, num_tokens))
        # Offsets that would address rows before ``dst`` (upstream writes there)
        # or that decrease (overlapping ranges: the grid's bound no longer holds,
        # rows would be left silently unwritten) are violations; the rows of such
        # a request are never written. Offsets past ``num_tokens`` are clamped to
        # it, as upstream does.
        bad_offsets = valid & ((begin < 0) | (end < begin))
        begin = tl.minimum(tl.maximum(begin, 0), num_tokens)
        end = tl.minimum(tl.maximum(end, 0), num_tokens)
        length = tl.where(bad_offsets, 0, tl.maximum(end - begin, 0))
        if HAS_SEQ_STARTS:
            source_begin = tl.load(seq_starts + reqs, mask=valid, other=0)
            negative = valid & (source_begin < 0) & (length > 0)
            length = tl.where(negative, 0, length)
            source_begin = tl.maximum(source_begin, 0)
            bad_offsets = bad_offsets | negative
        else:
            source_begin = reqs * 0
        record_violation(index_flag, bad_offsets & (task == 0), TRAP)
        first_block = source_begin // block_size
        num_pages = (source_begin + length + block_size - 1) // block_size - first_block
        num_pages = tl.where(valid, num_pages, 0)
        pages_through = tl.cumsum(num_pages, 0) + pages_before
        hit = (task >= pages_through - num_pages) & (task < pages_through)

        block = first_block + task - (pages_through - num_pages)
        page_begin = block * block_size
        copy_begin = tl.maximum(source_begin, page_begin)
        copy_end = tl.minimum(source_begin + length, page_begin + block_size)
        any_hit = tl.sum(hit.to(tl.int32), 0) > 0
        req_id = tl.where(any_hit, tl.sum(tl.where(hit, reqs, 0), 0), req_id)
        logical_block = tl.where(any_hit, tl.sum(tl.where(hit, block, 0), 0), logical_block)
        page_token_begin = tl.where(
            any_hit, tl.sum(tl.where(hit, copy_begin - page_begin, 0), 0), page_token_begin
        )
        page_token_end = tl.where(
            any_hit, tl.sum(tl.where(hit, copy_end - page_begin, 0), 0), page_token_end
        )
        output_token_begin = tl.where(
            any_hit,
            tl.sum(tl.where(hit, begin + copy_begin - source_begin, 0), 0),
            output_token_begin,
        )
        found = found | any_hit
        pages_before += tl.sum(num_pages, 0)
    return found, req_id, logical_block, page_token_begin, page_token_end, output_token_begin


@triton.jit
def resolve_page(
    output_starts,
    seq_starts,
    block_table,
    num_reqs,
    num_tokens,
    block_size,
    block_table_stride,
    block_table_width,
    num_blocks,
    index_flag,
    TRAP: tl.constexpr,
    HAS_TERMINAL_START: tl.constexpr,
    HAS_SEQ_STARTS: tl.constexpr,
    REQS_PER_SCAN: tl.constexpr,
    SKIP_PAST_TABLE: tl.constexpr = False,
):
    """This program's page: (num_page_tokens, physical_block, page_token_begin,
    output_token_begin). ``num_page_tokens`` is 0 when there is nothing to copy:
    no task, a logical block past the table width, or a physical block id outside
    the cache (never read: the rows stay untouched). A block id outside the cache
    is an index violation and clears ``index_flag``; so is a logical block past
    the table width, except with ``SKIP_PAST_TABLE``: upstream #49427's guard in
    ``gather_and_maybe_dequant_cache``, which skips such pages silently (the
    gathers without that guard upstream read past the table row instead)."""
    found, req_id, logical_block, page_token_begin, page_token_end, output_token_begin = (
        map_gather_page_task(
            tl.program_id(0),
            output_starts,
            seq_starts,
            num_reqs,
            num_tokens,
            block_size,
            index_flag,
            TRAP,
            HAS_TERMINAL_START,
            HAS_SEQ_STARTS,
            REQS_PER_SCAN,
        )
    )
    in_table = found & (logical_block < block_table_width)
    physical_block = tl.load(
        block_table + req_id.to(tl.int64) * block_table_stride + logical_block,
        mask=in_table,
        other=-1,
    )
    copy = in_table & (physical_block >= 0) & (physical_block < num_blocks)
    if SKIP_PAST_TABLE:
        record_scalar_violation(index_flag, in_table & ~copy, TRAP)
    else:
        record_scalar_violation(index_flag, found & ~copy, TRAP)
    num_page_tokens = tl.where(copy, page_token_end - page_token_begin, 0)
    return num_page_tokens, physical_block, page_token_begin, output_token_begin


#: What the gathers' index flag covers, for the violation message.
PAGE_INDICES = "block_table entries and seq_starts"


def page_index_flag(op, device, output_starts, has_terminal_start, seq_starts, block_table, num_reqs,
                    num_tokens, block_size, num_blocks, skip_past_table=False):
    """The flag a gather's kernel clears on a bad index; in debug mode, first
    the host check naming the bad entry (:func:`check_pages_on_host`)."""
    if check.debug_reads(op, device):
        check_pages_on_host(output_starts, has_terminal_start, seq_starts, block_table, num_reqs,
                            num_tokens, block_size, num_blocks, skip_past_table)
    return check.index_flag(device)


def check_pages_on_host(output_starts, has_terminal_start, seq_starts, block_table, num_reqs,
                        num_tokens, block_size, num_blocks, skip_past_table=False) -> None:
    """Debug mode: the index checks of :func:`resolve_page`, on the host, raising
    for the first bad offset (negative or decreasing ``cu_seq_lens`` /
    ``workspace_starts``), then for the first request whose ``seq_starts`` entry
    or block-table entries would be out of range (the same rows the kernel
    would copy; with ``skip_past_table`` the columns past the table's width are
    skipped, not checked)."""
    starts = output_starts.detach().cpu().to(torch.int64)
    name = "cu_seq_lens" if has_terminal_start else "workspace_starts"
    check.first_outside(name, starts[: num_reqs + has_terminal_start], 0, None)
    if has_terminal_start:
        end = starts[1 : num_reqs + 1]
    else:
        end = torch.cat([starts[1:num_reqs], starts[num_reqs - 1 :].clamp(min=num_tokens)])
    decreasing = (end < starts[:num_reqs]).nonzero().flatten().tolist()
    if decreasing:
        req = decreasing[0]
        check.fail(f"{name}[{req + 1}]", f"non-decreasing (>= {name}[{req}] = {int(starts[req])})",
                   int(end[req]))
    begin = starts[:num_reqs].clamp(0, num_tokens)
    length = (end.clamp(0, num_tokens) - begin).clamp(min=0)
    source = (seq_starts.detach().cpu().to(torch.int64) if seq_starts is not None
              else torch.zeros(num_reqs, dtype=torch.int64))
    table = block_table.detach().cpu()
    for req in (length > 0).nonzero().flatten().tolist():
        if source[req] < 0:
            check.fail(f"seq_starts[{req}]", ">= 0", int(source[req]))
        first = int(source[req]) // block_size
        last = (int(source[req]) + int(length[req]) - 1) // block_size
        if skip_past_table:
            last = min(last, table.shape[1] - 1)
        elif last >= table.shape[1]:
            check.fail(f"block_table[{req}]", f"{last + 1} columns wide for the rows request {req} "
                       "copies", f"{table.shape[1]} columns")
        check.first_outside(f"block_table[{req}, {first}:]", table[req, first : last + 1], 0, num_blocks,
                            " (the cache's blocks)")


@triton.jit
def _convert(values, scale, CONVERSION: tl.constexpr, NATIVE: tl.constexpr):
    """Cache elements -> values to store: bits as they are (AUTO), or
    ``float(fp8) * scale`` in fp32 (spec §1.3: fp8 -> half -> float is exact)."""
    if CONVERSION == 0:
        return values
    else:
        return fp8_code_to_fp32(values, CONVERSION == 2, NATIVE) * scale


@triton.jit
def _store(pointer, values, mask, CONVERSION: tl.constexpr, DST_IS_BF16: tl.constexpr, NATIVE: tl.constexpr):
    if CONVERSION == 0:
        tl.store(pointer, values, mask=mask)
    else:
        store_from_fp32(pointer, values, mask, DST_IS_BF16, NATIVE)


@triton.jit
def copy_page(
    src_page,
    dst_rows,
    num_page_tokens,
    cache_entry_stride,
    dst_entry_stride,
    scale,
    ENTRY_SIZE: tl.constexpr,
    CONVERSION: tl.constexpr,
    DST_IS_BF16: tl.constexpr,
    NATIVE: tl.constexpr,
    DENSE_ROWS: tl.constexpr,
    FLAT_BLOCK: tl.constexpr,
    TOKEN_BLOCK: tl.constexpr,
    COL_BLOCK: tl.constexpr,
):
    """Copy (and maybe dequantize) ``num_page_tokens`` entries of one page.

    ``DENSE_ROWS``: cache entries and ``dst`` rows are both ``ENTRY_SIZE`` apart,
    so the page's token range is one contiguous span on both sides and the copy
    is a flat, fully coalesced loop with no index arithmetic. Otherwise a
    (token, column) tile walks rows with their own strides (padded entries,
    non-contiguous ``dst`` rows)."""
    if DENSE_ROWS:
        # Two chunks per step, both loaded before either is stored: the compiler
        # may not move a load above a store (src and dst could alias), so this is
        # how two chunks' worth of reads get in flight per thread.
        num_elements = num_page_tokens * ENTRY_SIZE
        for step in range(0, tl.cdiv(num_elements, 2 * FLAT_BLOCK)):
            first = step * (2 * FLAT_BLOCK) + tl.arange(0, FLAT_BLOCK)
            second = first + FLAT_BLOCK
            first_mask = first < num_elements
            second_mask = second < num_elements
            first_values = tl.load(src_page + first, mask=first_mask)
            second_values = tl.load(src_page + second, mask=second_mask)
            first_values = _convert(first_values, scale, CONVERSION, NATIVE)
            second_values = _convert(second_values, scale, CONVERSION, NATIVE)
            _store(dst_rows + first, first_values, first_mask, CONVERSION, DST_IS_BF16, NATIVE)
            _store(dst_rows + second, second_values, second_mask, CONVERSION, DST_IS_BF16, NATIVE)
    else:
        for first_token in range(0, num_page_tokens, TOKEN_BLOCK):
            tokens = first_token + tl.arange(0, TOKEN_BLOCK)
            token_mask = tokens < num_page_tokens
            src_row = src_page + tokens.to(tl.int64)[:, None] * cache_entry_stride
            dst_row = dst_rows + tokens.to(tl.int64)[:, None] * dst_entry_stride
            for first_col in range(0, ENTRY_SIZE, COL_BLOCK):
                cols = first_col + tl.arange(0, COL_BLOCK)
                mask = token_mask[:, None] & (cols < ENTRY_SIZE)[None, :]
                values = _convert(tl.load(src_row + cols[None, :], mask=mask), scale, CONVERSION, NATIVE)
                _store(dst_row + cols[None, :], values, mask, CONVERSION, DST_IS_BF16, NATIVE)


#: Warps per program of the gathers (upstream: 256 threads per page CTA), and
#: elements per flat chunk of the dense copy; module-level so the benchmark can
#: sweep them.
GATHER_WARPS = 8
DENSE_CHUNK = 4096


def row_tiling(entry_size: int, block_size: int) -> dict:
    """Tile sizes for :func:`copy_page`: two 4096-element flat chunks per step for dense rows;
    otherwise up to 32 tokens x a power-of-two column chunk (64 when it divides
    the entry, as for 320/512/576, so no column is masked)."""
    if entry_size % 64 == 0:
        col_block = 64
    else:
        col_block = min(next_power_of_2(entry_size), 128)
    return dict(
        num_warps=GATHER_WARPS,
        FLAT_BLOCK=DENSE_CHUNK,
        TOKEN_BLOCK=min(next_power_of_2(block_size), 32),
        COL_BLOCK=col_block,
    )
