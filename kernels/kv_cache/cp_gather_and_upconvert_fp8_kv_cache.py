"""``cp_gather_and_upconvert_fp8_kv_cache``: fp8_ds_mla entries -> bf16 rows.

The sparse-MLA prefill reads an ``fp8_ds_mla`` cache (656 bytes per token: 512
e4m3 NoPE, 4 fp32 tile scales, 64 bf16 RoPE) back as bf16 ``[T, 576]`` rows of
a workspace: ``out[i] = bf16_rn(float(e4m3(byte[i])) * scale[i // 128])`` and
the RoPE bits copied (spec §5.1). Rows are placed by ``workspace_starts`` (the
last request runs to ``dst.shape[0]``) and read from ``seq_starts[r]`` on
(spec §5.3); page-task launch as upstream #51739.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from .. import validation as check
from . import _formats as fmt
from ._numerics import fp32_to_bf16_bits, fp8_code_to_fp32, native_casts
from . import _page_task
from ._page_task import PAGE_INDICES, page_index_flag, page_task_grid, reqs_per_scan, resolve_page


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache_page @c76a425278
# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::gather_and_upconvert_fp8_token @c76a425278
@triton.jit
def cp_gather_and_upconvert_fp8_kv_cache_page(
    src_cache,
    src_cache_as_fp32,
    src_cache_as_16bit,
    dst,
    block_table,
    workspace_starts,
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
    REQS_PER_SCAN: tl.constexpr,
    TOKEN_BLOCK: tl.constexpr,
    NATIVE: tl.constexpr,
):
    """One program per page. A step covers ``TOKEN_BLOCK`` tokens as rows of
    (token, 128-wide scale tile) pairs, so each tile scale is one element of a
    row vector; every load of the step is issued before the first store (the
    compiler may not reorder them: ``src`` and ``dst`` could alias).
    ``cache_*_stride`` are in bytes; the fp32 and 16-bit views of the same cache
    are addressed with the byte offset divided by 4 and 2 (the wrapper checks
    alignment)."""
    num_page_tokens, physical_block, page_token_begin, output_token_begin = resolve_page(
        workspace_starts,
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
        False,
        HAS_SEQ_STARTS,
        REQS_PER_SCAN,
    )
    page_bytes = (
        physical_block.to(tl.int64) * cache_block_stride
        + page_token_begin.to(tl.int64) * cache_entry_stride
    )
    dst_page = dst + output_token_begin.to(tl.int64) * dst_entry_stride
    rows = tl.arange(0, TOKEN_BLOCK * 4)
    row_tile = rows % 4
    tile_cols = tl.arange(0, 128)
    rope_cols = tl.arange(0, 64)
    for first_token in range(0, num_page_tokens, TOKEN_BLOCK):
        row_token = first_token + rows // 4
        row_mask = row_token < num_page_tokens
        row_bytes = page_bytes + row_token.to(tl.int64) * cache_entry_stride
        tokens = first_token + tl.arange(0, TOKEN_BLOCK)
        token_mask = tokens < num_page_tokens
        token_bytes = page_bytes + tokens.to(tl.int64) * cache_entry_stride

        codes = tl.load(
            src_cache + row_bytes[:, None] + (row_tile * 128)[:, None] + tile_cols[None, :],
            mask=row_mask[:, None],
            other=0,
        )
        scale = tl.load(src_cache_as_fp32 + (row_bytes >> 2) + 128 + row_tile, mask=row_mask, other=0.0)
        rope = tl.load(
            src_cache_as_16bit + (token_bytes >> 1)[:, None] + 264 + rope_cols[None, :],
            mask=token_mask[:, None],
        )

        values = fp8_code_to_fp32(codes, False, NATIVE) * scale[:, None]
        row_dst = dst_page + row_token.to(tl.int64) * dst_entry_stride + row_tile * 128
        tl.store(row_dst[:, None] + tile_cols[None, :], fp32_to_bf16_bits(values, NATIVE), mask=row_mask[:, None])
        token_dst = dst_page + tokens.to(tl.int64) * dst_entry_stride
        tl.store(token_dst[:, None] + 512 + rope_cols[None, :], rope, mask=token_mask[:, None])


def upconvert_gather_checks(name, src_cache, dst, block_table, workspace_starts, batch_size, seq_starts, entry_bytes):
    """Checks shared by the two upconvert gathers (same contract, other entry);
    returns ``batch_size`` as a Python int."""
    check.paged_cache("src_cache", src_cache)
    device = src_cache.device
    if src_cache.element_size() != 1:
        check.fail("src_cache", f"1-byte storage (uint8/float8) for {name}",
                   check.dtype_name(src_cache.dtype), TypeError)
    if src_cache.shape[2] != entry_bytes:
        check.fail("src_cache", f"entries of {entry_bytes} bytes for {name}",
                   f"shape {tuple(src_cache.shape)}")
    check.unit_inner_stride("src_cache", src_cache)
    check.tensor("dst", dst, dtypes=(torch.bfloat16,), ndim=2, device=device)
    if dst.shape[1] != fmt.UPCONVERT_ROW:
        check.fail("dst", f"[T, {fmt.UPCONVERT_ROW}]", f"shape {tuple(dst.shape)}")
    check.unit_inner_stride("dst", dst)
    batch_size = check.integer("batch_size", batch_size)
    check.block_table(block_table, device, batch_size)
    check.index_tensor("workspace_starts", workspace_starts, device, length=batch_size)
    if seq_starts is not None:
        check.index_tensor("seq_starts", seq_starts, device, length=batch_size)
    return batch_size


def launch_upconvert(op, kernel, cache_views, src_cache, dst, block_table, workspace_starts, batch_size,
                     seq_starts, *, max_token_block, num_warps=None):
    """Launch one of the two upconvert page kernels: after the cache view(s) their
    arguments are the same. Nothing to do for an empty ``dst`` or batch."""
    total_tokens = dst.shape[0]
    if total_tokens == 0 or batch_size == 0:
        return
    block_size = src_cache.shape[1]
    flag = page_index_flag(op, src_cache.device, workspace_starts, False, seq_starts, block_table,
                           batch_size, total_tokens, block_size, src_cache.shape[0])
    kernel[page_task_grid(total_tokens, block_size, batch_size)](
        *cache_views,
        dst.view(torch.int16),
        block_table,
        workspace_starts,
        batch_size,
        block_size,
        total_tokens,
        block_table.stride(0),
        src_cache.stride(0),
        src_cache.stride(1),
        dst.stride(0),
        seq_starts if seq_starts is not None else workspace_starts,
        block_table.shape[1],
        src_cache.shape[0],
        flag,
        TRAP=check.trap_in_kernel(src_cache.device),
        HAS_SEQ_STARTS=seq_starts is not None,
        REQS_PER_SCAN=reqs_per_scan(batch_size),
        TOKEN_BLOCK=min(triton.next_power_of_2(block_size), max_token_block),
        NATIVE=native_casts(dst),
        num_warps=num_warps or _page_task.GATHER_WARPS,
    )
    check.after_launch(op, flag, PAGE_INDICES)


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache @c76a425278
def _cp_gather_and_upconvert_fp8_kv_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    workspace_starts: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """The body of ``torch.ops.portq.cp_gather_and_upconvert_fp8_kv_cache``: host checks, then the launch."""
    batch_size = upconvert_gather_checks(
        "fp8_ds_mla", src_cache, dst, block_table, workspace_starts, batch_size, seq_starts,
        fmt.DS_MLA_ENTRY_BYTES,
    )
    if src_cache.stride(0) % 4 or src_cache.stride(1) % 4 or src_cache.storage_offset() % 4:
        check.fail("src_cache", "blocks and entries starting at 4-byte boundaries (fp32 tile scales)",
                   f"strides {src_cache.stride()} and storage offset {src_cache.storage_offset()}")
    raw = src_cache.view(torch.uint8)
    launch_upconvert(
        "cp_gather_and_upconvert_fp8_kv_cache",
        cp_gather_and_upconvert_fp8_kv_cache_page,
        (raw, raw.view(torch.float32), raw.view(torch.int16)),
        src_cache, dst, block_table, workspace_starts, batch_size, seq_starts,
        max_token_block=32,
    )


_CP_GATHER_AND_UPCONVERT_FP8_KV_CACHE_OP = custom_ops.register("cp_gather_and_upconvert_fp8_kv_cache", _cp_gather_and_upconvert_fp8_kv_cache, mutates_args=("dst",),
    fake=custom_ops.no_output)


# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache[host_cache] -- HiSparse host-backed rows (v3 signature); no host-resident cache in this tree
# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache[host_row_ids] -- HiSparse host-backed rows (v3 signature)
# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache[device_row_ids] -- HiSparse host-backed rows (v3 signature)
def cp_gather_and_upconvert_fp8_kv_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    workspace_starts: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """Gather fp8_ds_mla entries and upconvert them to bf16 rows.

    Args:
        src_cache: ``[num_blocks, block_size, 656]`` 1-byte storage (uint8 or a
            float8 dtype; the bytes are always decoded as the ds_mla layout).
        dst: bf16 ``[T, 576]``; request ``r`` fills rows from
            ``workspace_starts[r]`` up to the next request's start (the last
            request up to ``T``), clamped to ``T``.
        block_table: int32 ``[>= batch_size, max_blocks]``.
        workspace_starts: int32 ``[batch_size]``.
        batch_size: number of requests.
        seq_starts: optional int32 ``[batch_size]``: row ``workspace_starts[r] + j``
            holds logical position ``seq_starts[r] + j``.

    Offsets past ``T`` are clamped to it, as upstream clamps.

    Deviation: a logical block past the table width, a block id outside the
    cache, a negative ``seq_starts`` entry, or a negative or decreasing
    ``workspace_starts`` entry is an index error (upstream has no #49427
    guard here and reads or writes out of bounds, or overlaps the ranges).
    Deviation: the HiSparse host-cache arguments of upstream's newest
    signature are not carried (refused as unexpected keywords).

    On an index error found inside the kernel (see ``portq_kernels.validation``):
    rows written before the error was seen may differ from their old contents,
    the rows of the offending request are not written, and nothing outside
    ``dst`` is touched; the inputs are never modified.
    """
    custom_ops.call("cp_gather_and_upconvert_fp8_kv_cache", src_cache, dst, block_table, workspace_starts, batch_size, seq_starts)
