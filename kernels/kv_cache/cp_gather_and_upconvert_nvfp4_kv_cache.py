"""``cp_gather_and_upconvert_nvfp4_kv_cache``: nvfp4_ds_mla entries -> bf16 rows.

Reads the 352-byte nvfp4_ds_mla format (512 e2m1 NoPE values packed low nibble
first, 64 unscaled e4m3 RoPE, 32 e4m3 tile scales stored permuted) back as bf16
``[T, 576]`` rows (spec §6); every product ``e2m1 * scale`` is exact in bf16.

With ``seq_starts``, as the upstream fix of seed 002 defines it:
``token_offset = out_token - workspace_starts[req] + seq_starts[req]``, so a
continuation chunk reads from its context start instead of the request's first
token. Upstream runs this only on SM100 (native e2m1 conversion instructions);
here the decoding is integer arithmetic, so it runs on any GPU Triton supports
and on the CPU interpreter. Page-task launch like its fp8 twin.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from . import _formats as fmt
from ._numerics import e2m1_code_to_fp32, fp32_to_bf16_bits, fp8_code_to_fp32
from ._page_task import resolve_page
from .cp_gather_and_upconvert_fp8_kv_cache import launch_upconvert, upconvert_gather_checks


#: (tokens per step, warps per page program). 8 tokens in 4 warps ran the
#: unchecked kernel faster on the H200 (28.5 against 32.3 us at 60K tokens) but
#: the default, trapping kernel at 33.8 us (1.19x its unchecked twin), so the
#: page programs keep 16 tokens in 8 warps (31.7 us, 0.98x).
NVFP4_TILING = (16, 8)


# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::cp_gather_and_upconvert_nvfp4_kv_cache_kernel @03b6016490
# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::nvfp4_unpack16_e2m1 @03b6016490
@triton.jit
def cp_gather_and_upconvert_nvfp4_kv_cache_kernel(
    src_cache,
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
    """One program per page (upstream: one warp per token with a binary search
    over ``workspace_starts``). Tiles ``[tokens, 32 scale tiles, 8 bytes]``: the
    scale of tile ``s`` is byte ``320 + 8*(s&3) + (s>>2)``; byte ``i`` of a tile
    holds elements ``2i`` (low nibble) and ``2i+1`` (high nibble)."""
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
    src_page = (
        src_cache
        + physical_block.to(tl.int64) * cache_block_stride
        + page_token_begin.to(tl.int64) * cache_entry_stride
    )
    dst_page = dst + output_token_begin.to(tl.int64) * dst_entry_stride
    tiles = tl.arange(0, 32)
    tile_bytes = tl.arange(0, 8)
    scale_bytes = 320 + 8 * (tiles & 3) + (tiles >> 2)
    nope_cols = tl.arange(0, 512)
    rope_cols = tl.arange(0, 64)
    for first_token in range(0, num_page_tokens, TOKEN_BLOCK):
        tokens = first_token + tl.arange(0, TOKEN_BLOCK)
        token_mask = tokens < num_page_tokens
        entry = src_page + tokens.to(tl.int64) * cache_entry_stride
        dst_row = dst_page + tokens.to(tl.int64)[:, None] * dst_entry_stride

        packed = tl.load(
            entry[:, None, None] + tiles[None, :, None] * 8 + tile_bytes[None, None, :],
            mask=token_mask[:, None, None],
            other=0,
        ).to(tl.int32)
        scale_codes = tl.load(entry[:, None] + scale_bytes[None, :], mask=token_mask[:, None], other=0)
        rope_codes = tl.load(entry[:, None] + 256 + rope_cols[None, :], mask=token_mask[:, None], other=0)

        scale = fp8_code_to_fp32(scale_codes, False, NATIVE)[:, :, None]
        even = e2m1_code_to_fp32(packed & 0xF) * scale
        odd = e2m1_code_to_fp32(packed >> 4) * scale
        nope = tl.join(even, odd).reshape([TOKEN_BLOCK, 512])
        tl.store(dst_row + nope_cols[None, :], fp32_to_bf16_bits(nope, NATIVE), mask=token_mask[:, None])
        rope = fp32_to_bf16_bits(fp8_code_to_fp32(rope_codes, False, NATIVE), NATIVE)
        tl.store(dst_row + 512 + rope_cols[None, :], rope, mask=token_mask[:, None])


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_nvfp4_kv_cache @00eb0c874e
# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::launch_cp_gather_and_upconvert_nvfp4_kv_cache @03b6016490
def _cp_gather_and_upconvert_nvfp4_kv_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    workspace_starts: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """The body of ``torch.ops.portq.cp_gather_and_upconvert_nvfp4_kv_cache``: host checks, then the launch."""
    batch_size = upconvert_gather_checks(
        "nvfp4_ds_mla", src_cache, dst, block_table, workspace_starts, batch_size, seq_starts,
        fmt.NVFP4_ENTRY_BYTES,
    )
    launch_upconvert(
        "cp_gather_and_upconvert_nvfp4_kv_cache",
        cp_gather_and_upconvert_nvfp4_kv_cache_kernel,
        (src_cache.view(torch.uint8),),
        src_cache, dst, block_table, workspace_starts, batch_size, seq_starts,
        max_token_block=NVFP4_TILING[0], num_warps=NVFP4_TILING[1],
    )


_CP_GATHER_AND_UPCONVERT_NVFP4_KV_CACHE_OP = custom_ops.register("cp_gather_and_upconvert_nvfp4_kv_cache", _cp_gather_and_upconvert_nvfp4_kv_cache, mutates_args=("dst",),
    fake=custom_ops.no_output)


def cp_gather_and_upconvert_nvfp4_kv_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    workspace_starts: torch.Tensor,
    batch_size: int,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """Gather nvfp4_ds_mla entries and upconvert them to bf16 rows.

    Args:
        src_cache: ``[num_blocks, block_size, 352]`` 1-byte storage (uint8).
        dst: bf16 ``[T, 576]``; request ``r`` fills rows from
            ``workspace_starts[r]`` up to the next request's start (the last
            request up to ``T``), clamped to ``T``.
        block_table: int32 ``[>= batch_size, max_blocks]``.
        workspace_starts: int32 ``[batch_size]``.
        batch_size: number of requests.
        seq_starts: optional int32 ``[batch_size]``: row ``workspace_starts[r] + j``
            holds logical position ``seq_starts[r] + j`` (seed 002's fix; upstream
            @03b6016490 has no ``seq_starts`` yet).

    Offsets past ``T`` are clamped to it, as upstream clamps.

    Deviation: a logical block past the table width, a block id outside the
    cache, a negative ``seq_starts`` entry, or a negative or decreasing
    ``workspace_starts`` entry is an index error (upstream has no #49427
    guard here and reads or writes out of bounds, or overlaps the ranges).
    Deviation: no SM100 requirement (the decoding does not need e2m1 instructions).
    Deviation: ``seq_starts`` (the upstream fix not yet in the version read).

    On an index error found inside the kernel (see ``portq_kernels.validation``):
    rows written before the error was seen may differ from their old contents,
    the rows of the offending request are not written, and nothing outside
    ``dst`` is touched; the inputs are never modified.
    """
    custom_ops.call("cp_gather_and_upconvert_nvfp4_kv_cache", src_cache, dst, block_table, workspace_starts, batch_size, seq_starts)
