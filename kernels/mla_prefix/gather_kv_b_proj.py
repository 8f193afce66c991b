"""``gather_kv_b_proj``: the MLA cached-prefix expansion as one tiled Triton GEMM.

A prefix-cache hit in MLA prefill needs full per-head K and V for every cached
token, but the paged cache holds only the compressed latent (``R = 512``
values) and the rope key (``E = 64``). This op gathers each cached token's
latent row, multiplies it by every local head's ``kv_b_proj`` rows and writes
``K = [K_nope | k_pe]`` and ``V`` into token-packed outputs, in place. The
semantics are ``reference.py`` (aiter's op, spec ``aiter-gather-kv-b-proj.md``).

Why this shape of kernel. The op is a GEMM ``[T, R] x [R, H*(Dn+Dv)]`` whose
A rows are gathered through a page table and whose C columns are scattered
into two outputs; at 32000 tokens x 12 heads it is about 100 GFLOP against
about 0.26 GB of traffic, so it is tensor-core bound on Hopper in bf16.
Upstream walks (batch, head) programs over a serial chunk loop (12 programs
for 12 heads: a few percent of the device), and its page-size-1 kernel walks
chunks persistently per head. Here every geometry works on the same unit: a
tile of ``ChunkK`` consecutive *output rows* (which may span sequences: the
sequence of a row is found by a binary search in ``cu``) by ``BLOCK_N``
consecutive weight rows of one head. The number of tiles depends only on the
token count and the head count, never on how the tokens split into
sequences, so long single sequences and large batches fill the 132 SMs alike,
and tiles are visited in groups of ``GROUP_ROWS`` row tiles so that the
latent tiles and the head's weight tiles being used are L2-resident.
``GRID_STRIDE`` selects a persistent grid (programs stride over the tiles)
instead of one program per tile; the per-tile arithmetic is identical, so
both give bit-identical outputs. The GPU defaults use it, with the tile loop
and the K loop flattened into one software-pipelined loop so that a tile's
first loads are issued under the previous tile's last MMAs and epilogue. On Hopper the weight tiles are loaded and
whole K/V tiles stored as TMA boxes through tensor descriptors
(``TileConfig.weight_tma``/``store_tma``): the same arithmetic, 1-11% faster
on the H200; the gathered latent rows are pointer loads (TMA has no row
gather there), and so is any tile with rows outside ``cu``.

Numerics. Operands are bf16 on the tensor cores (fp8 cache values and fp8
weights upcast exactly), accumulation is fp32, in 128-wide K segments for the
128x128 block scales (``acc += dot(segment) * s[row // 128, segment]``).
Per-row scales are applied once after the whole K sum (upstream applies the
same factor after each segment: the same value up to fp32 rounding). The
exception: an fp8 cache with an fp8 weight (unscaled or per-row scale) runs
fp8 x fp8 tensor-core operands (``TileConfig.fp8_dot``), like upstream's
fp8 path: the products are exact, but Hopper's fp8 MMA adds products at
reduced precision until the partial sum is promoted into the fp32
accumulator, once per 128-wide K step (``GPU_FP8_CONFIG``), so those
outputs carry an extra error of at most about 2^-7 of ``sum |x*w*s|``
(2^-9 when promoting after every 32-deep instruction; measured on random
data: 4.7% of the elements differ from the exact-operand result, 2.0% with
per-instruction promotion, by at most 0.25 in absolute value either way). The fp8
block-scale path keeps bf16 operands. A deliberate difference from
upstream, more accurate: an fp8 cache with a bf16 weight keeps the bf16
weight (upstream truncates the weight to fp8 on its paged path and on its
page-size-1 path with a scale); the outputs then differ from upstream's by
the weight's fp8 quantisation error, and match the fp32 reference to
rounding.

Stores round fp32 to bf16 to nearest-even. Triton's interpreter truncates
that cast, so under ``TRITON_INTERPRET=1`` the rounding is done on the bits
(``INTERPRETER``; its bf16 ``tl.dot`` is wrong too, so there the same
exact operand values go through an fp32 dot); on the GPU the hardware conversion is already
round-to-nearest-even, and both give the same bits. The rope part
(``k_pe * k_scale``, one fp32 multiply) is therefore bit-exact on both.

Index arithmetic is int64 wherever a page id or a row number is multiplied by
a stride. Index *values* follow ``portq_kernels.validation``: an out-of-range
page position or page id is a masked load (the row reads zeros, never memory
outside ``kv_indices`` or ``k_buffer``) and clears the index flag; debug mode
also reads ``kv_indptr``, ``kv_indices`` and ``cu`` back and names the bad
value (including orderings the kernel cannot see, such as a decreasing ``cu``).

Not carried (AMD-only or not implemented): the preshuffled weight layout, the
shuffled KV-cache layout and the MXFP4 weight path; each is rejected with a
``ValueError``.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from .. import custom_ops
from .. import validation as check
from ..validation import record_violation

SCALE_BLOCK = 128
"""Rows and columns covered by one entry of a 128x128 block weight scale."""

_CACHE_DTYPES = (torch.bfloat16, torch.float8_e4m3fn)
_WEIGHT_DTYPES = (torch.bfloat16, torch.float8_e4m3fn)
_SCALE_DTYPES = (torch.float32, torch.bfloat16)
_OUTPUT_DTYPE = torch.bfloat16
_INDEX_DTYPE = torch.int32


@triton.jit
def _round_fp32_to_bf16(x):
    """Round fp32 to the nearest-even bf16 value, on the bits (exact cast after)."""
    bits = x.to(tl.uint32, bitcast=True)
    odd = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + odd) >> 16) << 16
    return tl.where(x != x, float("nan"), rounded.to(tl.float32, bitcast=True))


@triton.jit
def _tile_dot(x, w, acc, INTERPRETER: tl.constexpr, FP8_DOT: tl.constexpr):
    """``acc + x @ w`` on the tensor cores. Default: bf16 operands (exact for
    fp8 and bf16 values). ``FP8_DOT`` > 0 (both operands fp8): fp8 operands,
    the partial sum promoted into the fp32 accumulator every ``FP8_DOT``
    values of K (32: after every instruction). Triton 3.9's interpreter computes bf16
    dots wrongly, so there the operands are fp32, which hold the same exact
    values (and fp32 dots are exact numpy there)."""
    if INTERPRETER:
        return tl.dot(x.to(tl.float32), w.to(tl.float32), acc)
    elif FP8_DOT:
        return tl.dot(x, w, acc, max_num_imprecise_acc=FP8_DOT)
    else:
        return tl.dot(x.to(tl.bfloat16), w.to(tl.bfloat16), acc)


@triton.jit
def _store_bf16(ptrs, values, mask, INTERPRETER: tl.constexpr):
    tl.store(ptrs, _as_bf16(values, INTERPRETER), mask=mask)


@triton.jit
def _weight_tile(kv_proj_weight, weight_rows, col_ok, first_weight_row, k0, offs_k,
                 KV_CDim: tl.constexpr, WEIGHT_TMA: tl.constexpr):
    """The ``[BLOCK_K, BLOCK_N]`` weight operand at K offset ``k0``. ``WEIGHT_TMA``:
    ``kv_proj_weight`` is a tensor descriptor of the ``[H*(Dn+Dv), R]`` weight and
    the tile is one TMA box (rows past the head are the next head's, computed and
    never stored; rows past the tensor read zeros)."""
    if WEIGHT_TMA:
        w = kv_proj_weight.load([first_weight_row, k0]).T
    else:
        w = tl.load(kv_proj_weight + weight_rows[None, :] * KV_CDim + (k0 + offs_k)[:, None],
                    mask=col_ok[None, :], other=0.0)
    return w


@triton.jit
def _store_kv_masked(acc, k_prefix, v_prefix, out_rows, row_ok, head, col_start, cols, col_ok,
                     TpNumHeads, QkNopeHeadDim: tl.constexpr, VHeadDim: tl.constexpr,
                     K_OUT_DIM: tl.constexpr, BLOCK_N: tl.constexpr, INTERPRETER: tl.constexpr):
    """The tile's K-nope and V columns through masked pointer stores."""
    if col_start < QkNopeHeadDim:
        k_ptrs = (k_prefix + out_rows[:, None] * (TpNumHeads * K_OUT_DIM)
                  + head * K_OUT_DIM + cols[None, :])
        _store_bf16(k_ptrs, acc, row_ok[:, None] & (cols < QkNopeHeadDim)[None, :],
                    INTERPRETER)
    if col_start + BLOCK_N > QkNopeHeadDim:
        v_ptrs = (v_prefix + out_rows[:, None] * (TpNumHeads * VHeadDim)
                  + head * VHeadDim + (cols - QkNopeHeadDim)[None, :])
        _store_bf16(v_ptrs, acc, row_ok[:, None] & ((cols >= QkNopeHeadDim) & col_ok)[None, :],
                    INTERPRETER)


@triton.jit
def _as_bf16(values, INTERPRETER: tl.constexpr):
    if INTERPRETER:  # the interpreter's fp32 -> bf16 cast truncates
        values = _round_fp32_to_bf16(values)
    return values.to(tl.bfloat16)


@triton.jit
def _tile_of_item(item, num_row_tiles, num_col_tiles, GROUP_ROWS: tl.constexpr):
    """Work item -> (row tile, column tile): ``GROUP_ROWS`` row tiles at a time,
    rows fastest, so that concurrently running programs share weight tiles and
    a group's latent tiles stay in L2 while every column tile visits them."""
    items_per_group = GROUP_ROWS * num_col_tiles
    group = item // items_per_group
    first_row_tile = group * GROUP_ROWS
    rows_in_group = tl.minimum(num_row_tiles - first_row_tile, GROUP_ROWS)
    local = item % items_per_group
    return first_row_tile + local % rows_in_group, local // rows_in_group


@triton.jit
def _check_offsets(kv_prefix_sum_context_lens, batch_size, total_kv, index_flag, TRAP: tl.constexpr,
                   SCAN: tl.constexpr):
    """Program 0's check of ``cu``: non-negative, non-decreasing, and
    ``cu[-1] <= total_kv`` (upstream writes rows ``cu[b] .. cu[b+1]`` with no
    bound, so anything else reads or writes outside its tensors there). A bad
    ``cu`` clears the index flag (and traps); every program's rows stay masked
    to ``[0, total_kv)`` either way."""
    bad = tl.load(kv_prefix_sum_context_lens) < 0
    bad = bad | (tl.load(kv_prefix_sum_context_lens + batch_size) > total_kv)
    for first in range(0, batch_size, SCAN):
        b = first + tl.arange(0, SCAN)
        valid = b < batch_size
        begin = tl.load(kv_prefix_sum_context_lens + b, mask=valid, other=0)
        end = tl.load(kv_prefix_sum_context_lens + b + 1, mask=valid, other=0)
        bad = bad | (tl.max((valid & (end < begin)).to(tl.int32), 0) > 0)
    record_violation(index_flag, bad[None], TRAP)


@triton.jit
def _search_step(lo, hi, rows, kv_prefix_sum_context_lens):
    """One bisection step towards the last b with cu[b] <= row (a no-op once lo == hi)."""
    mid = (lo + hi + 1) // 2
    starts_before = tl.load(kv_prefix_sum_context_lens + mid) <= rows
    return tl.where(starts_before, mid, lo), tl.where(starts_before, hi, mid - 1)


@triton.jit
def _expand_tile(
    item, batch_size, total_kv, first_valid_row, end_valid_row, ks,
    k_buffer, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
    kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
    num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP: tl.constexpr,
    KBlockSize: tl.constexpr, QkNopeHeadDim: tl.constexpr, VHeadDim: tl.constexpr,
    KV_CDim: tl.constexpr, KV_PeDim: tl.constexpr,
    ChunkK: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_ROWS: tl.constexpr,
    PER_ROW_SCALE: tl.constexpr, NO_SCALE: tl.constexpr, FP8_DOT: tl.constexpr,
    INTERPRETER: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, WRITE_OUTPUTS: tl.constexpr,
    WEIGHT_TMA: tl.constexpr, STORE_TMA: tl.constexpr, FLATTEN: tl.constexpr,
):
    """One tile: ChunkK output rows x BLOCK_N weight rows of one head."""
    HEAD_ROWS: tl.constexpr = QkNopeHeadDim + VHeadDim
    TILES_PER_HEAD: tl.constexpr = (HEAD_ROWS + BLOCK_N - 1) // BLOCK_N
    num_row_tiles = tl.cdiv(total_kv, ChunkK)
    row_tile, col_tile = _tile_of_item(item, num_row_tiles, TpNumHeads * TILES_PER_HEAD, GROUP_ROWS)
    row_start = row_tile * ChunkK
    head = col_tile // TILES_PER_HEAD
    col_start = (col_tile % TILES_PER_HEAD) * BLOCK_N
    if FLATTEN:
        # No branch around the tile (rows past the offsets are masked): the
        # flattened loop nest then keeps the K loop one level under the tile loop.
        _expand_rows(row_start, head, col_start, batch_size, first_valid_row, end_valid_row, ks,
                     k_buffer, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                     kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
                     num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP,
                     KBlockSize, QkNopeHeadDim, VHeadDim, KV_CDim, KV_PeDim,
                     ChunkK, BLOCK_N, BLOCK_K, PER_ROW_SCALE, NO_SCALE, FP8_DOT, INTERPRETER,
                     WARP_SPECIALIZE, WRITE_OUTPUTS, WEIGHT_TMA, STORE_TMA)
    elif row_start < end_valid_row:
        _expand_rows(row_start, head, col_start, batch_size, first_valid_row, end_valid_row, ks,
                     k_buffer, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                     kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
                     num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP,
                     KBlockSize, QkNopeHeadDim, VHeadDim, KV_CDim, KV_PeDim,
                     ChunkK, BLOCK_N, BLOCK_K, PER_ROW_SCALE, NO_SCALE, FP8_DOT, INTERPRETER,
                     WARP_SPECIALIZE, WRITE_OUTPUTS, WEIGHT_TMA, STORE_TMA)


@triton.jit
def _expand_rows(
    row_start, head, col_start, batch_size, first_valid_row, end_valid_row, ks,
    k_buffer, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
    kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
    num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP: tl.constexpr,
    KBlockSize: tl.constexpr, QkNopeHeadDim: tl.constexpr, VHeadDim: tl.constexpr,
    KV_CDim: tl.constexpr, KV_PeDim: tl.constexpr,
    ChunkK: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    PER_ROW_SCALE: tl.constexpr, NO_SCALE: tl.constexpr, FP8_DOT: tl.constexpr,
    INTERPRETER: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, WRITE_OUTPUTS: tl.constexpr,
    WEIGHT_TMA: tl.constexpr, STORE_TMA: tl.constexpr,
):
    """The tile's arithmetic: gather, K loop, scales, stores (masked rows).
    ``WRITE_OUTPUTS`` False (benchmark only) masks every store off with a
    condition the compiler cannot fold, so the tile is computed but nothing is
    written: the epilogue's memory traffic, left out and timed. ``STORE_TMA``
    (1: the tile is a head's Dn K columns then its Dv V columns, Dn = Dv =
    BLOCK_N / 2; 2: the tile is all K or all V, Dn = Dv = BLOCK_N): a tile whose
    rows are all valid is stored by TMA boxes of ``k_prefix``/``v_prefix``
    descriptors (``[T, H*(Dn+E)]`` and ``[T, H*Dv]``); any other tile, and every
    tile when 0, through masked pointer stores."""
    HEAD_ROWS: tl.constexpr = QkNopeHeadDim + VHeadDim
    LATENT_DIM: tl.constexpr = KV_CDim + KV_PeDim
    K_OUT_DIM: tl.constexpr = QkNopeHeadDim + KV_PeDim
    # Rows -> (sequence, page, slot). The sequence of row t is the last b
    # with cu[b] <= t: a fixed-length binary search over cu, per row.
    rows = row_start + tl.arange(0, ChunkK)
    row_ok = (rows >= first_valid_row) & (rows < end_valid_row)
    lo = tl.zeros([ChunkK], dtype=tl.int32)
    hi = lo + (batch_size - 1)
    for _ in range(batch_search_steps):
        lo, hi = _search_step(lo, hi, rows, kv_prefix_sum_context_lens)
    within = rows - tl.load(kv_prefix_sum_context_lens + lo, mask=row_ok, other=0)
    page_pos = tl.load(kv_indptr + lo, mask=row_ok, other=0).to(tl.int64) + within // KBlockSize
    pos_ok = row_ok & (page_pos >= 0) & (page_pos < kv_indices_len)
    page = tl.load(kv_indices + page_pos, mask=pos_ok, other=0).to(tl.int64)
    load_ok = pos_ok & (page >= 0) & (page < num_pages)
    record_violation(index_flag, row_ok & ~load_ok, TRAP)
    latent_row = page * (KBlockSize * LATENT_DIM) + (within % KBlockSize).to(tl.int64) * LATENT_DIM
    latent_row = tl.where(load_ok, latent_row, 0)

    cols = col_start + tl.arange(0, BLOCK_N)
    col_ok = cols < HEAD_ROWS
    weight_rows = head.to(tl.int64) * HEAD_ROWS + cols
    first_weight_row = (head * HEAD_ROWS + col_start).to(tl.int32)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([ChunkK, BLOCK_N], dtype=tl.float32)
    if NO_SCALE or PER_ROW_SCALE:
        for k0 in tl.range(0, KV_CDim, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
            x = tl.load(k_buffer + latent_row[:, None] + (k0 + offs_k)[None, :],
                        mask=load_ok[:, None], other=0.0)
            w = _weight_tile(kv_proj_weight, weight_rows, col_ok, first_weight_row, k0, offs_k,
                             KV_CDim, WEIGHT_TMA)
            acc = _tile_dot(x, w, acc, INTERPRETER, FP8_DOT)
        if PER_ROW_SCALE:
            row_scale = tl.load(kv_proj_scale + weight_rows, mask=col_ok, other=1.0)
            acc = acc * row_scale.to(tl.float32)[None, :]
    else:
        SEGMENTS: tl.constexpr = KV_CDim // 128
        block_scale_rows = kv_proj_scale + (weight_rows // 128) * SEGMENTS
        for segment in range(0, SEGMENTS):
            part = tl.zeros([ChunkK, BLOCK_N], dtype=tl.float32)
            for step in tl.static_range(0, 128, BLOCK_K):
                k0 = segment * 128 + step
                x = tl.load(k_buffer + latent_row[:, None] + (k0 + offs_k)[None, :],
                            mask=load_ok[:, None], other=0.0)
                w = _weight_tile(kv_proj_weight, weight_rows, col_ok, first_weight_row, k0, offs_k,
                                 KV_CDim, WEIGHT_TMA)
                part = _tile_dot(x, w, part, INTERPRETER, FP8_DOT)
            block_scale = tl.load(block_scale_rows + segment, mask=col_ok, other=0.0)
            acc += part * block_scale.to(tl.float32)[None, :]
    acc = acc * ks

    out_rows = rows.to(tl.int64)
    if not WRITE_OUTPUTS:
        row_ok = row_ok & (first_valid_row < -1)
    if STORE_TMA == 0:
        _store_kv_masked(acc, k_prefix, v_prefix, out_rows, row_ok, head, col_start, cols, col_ok,
                         TpNumHeads, QkNopeHeadDim, VHeadDim, K_OUT_DIM, BLOCK_N, INTERPRETER)
    else:
        full_tile = (row_start >= first_valid_row) & (row_start + ChunkK <= end_valid_row)
        if full_tile:
            row0 = row_start.to(tl.int32)
            if STORE_TMA == 1:
                halves = tl.permute(tl.reshape(acc, [ChunkK, 2, BLOCK_N // 2]), [0, 2, 1])
                k_half, v_half = tl.split(halves)
                k_desc.store([row0, head * K_OUT_DIM], _as_bf16(k_half, INTERPRETER))
                v_desc.store([row0, head * VHeadDim], _as_bf16(v_half, INTERPRETER))
            elif col_start == 0:
                k_desc.store([row0, head * K_OUT_DIM], _as_bf16(acc, INTERPRETER))
            else:
                v_desc.store([row0, head * VHeadDim], _as_bf16(acc, INTERPRETER))
        else:
            _store_kv_masked(acc, k_prefix, v_prefix, out_rows, row_ok, head, col_start, cols, col_ok,
                             TpNumHeads, QkNopeHeadDim, VHeadDim, K_OUT_DIM, BLOCK_N, INTERPRETER)
    if col_start == 0:
        # The rope key, the same for every head: written by each head's first tile.
        offs_pe = tl.arange(0, KV_PeDim)
        pe = tl.load(k_buffer + latent_row[:, None] + KV_CDim + offs_pe[None, :],
                     mask=load_ok[:, None], other=0.0)
        pe_ptrs = (k_prefix + out_rows[:, None] * (TpNumHeads * K_OUT_DIM)
                   + head * K_OUT_DIM + QkNopeHeadDim + offs_pe[None, :])
        _store_bf16(pe_ptrs, pe.to(tl.float32) * ks, row_ok[:, None], INTERPRETER)


# portq: ports aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj @e50c39f1be
# portq: ports aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_impl @e50c39f1be
# portq: ports aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_flat @e50c39f1be
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj[IS_FP4] -- MXFP4 weights need gfx950 scaled MFMA upstream; not implemented on Hopper
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj[Fp4ScaleKGranularity] -- MXFP4 scale granularity, MXFP4 not carried
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj[ScaleCols] -- block-scale columns are derived from kv_proj_scale's shape by the wrapper, not passed
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj[WEIGHT_PRESHUFFLE] -- AMD MFMA (16,16) weight layout, AMD-only
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj[SHUFFLED_KV_CACHE] -- AMD MFMA KV-cache layout, AMD-only
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_fp4_impl -- MXFP4 weight path, not implemented on Hopper
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_impl[WEIGHT_PRESHUFFLE] -- AMD MFMA (16,16) weight layout, AMD-only
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_triton_gather_kv_b_proj_impl[SHUFFLED_KV_CACHE] -- AMD MFMA KV-cache layout, AMD-only
# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gather_kv_b_proj.py::_load_unshuffle_segment -- preshuffled-weight loader, AMD-only layout
@triton.jit(do_not_specialize=["batch_size", "total_kv", "num_pages", "kv_indices_len",
                               "batch_search_steps", "TpNumHeads"])
def _gather_kv_b_proj_kernel(
    batch_size, total_kv, k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
    kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
    num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP: tl.constexpr,
    KBlockSize: tl.constexpr, QkNopeHeadDim: tl.constexpr, VHeadDim: tl.constexpr,
    KV_CDim: tl.constexpr, KV_PeDim: tl.constexpr,
    ChunkK: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_ROWS: tl.constexpr,
    PER_ROW_SCALE: tl.constexpr, NO_SCALE: tl.constexpr, GRID_STRIDE: tl.constexpr,
    FP8_DOT: tl.constexpr, INTERPRETER: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
    WRITE_OUTPUTS: tl.constexpr, WEIGHT_TMA: tl.constexpr, STORE_TMA: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    """Expand (ChunkK rows x BLOCK_N weight rows) tiles: one per program, or
    a grid-stride walk over all of them when ``GRID_STRIDE`` (``FLATTEN``: the
    tile loop and the K loop flattened into one software-pipelined loop, so the
    next tile's first loads are issued under this tile's last MMAs and epilogue)."""
    if k_buffer.dtype.element_ty == tl.bfloat16:
        ks = 1.0
    else:
        ks = tl.load(k_scale).to(tl.float32)
    if tl.program_id(0) == 0:
        _check_offsets(kv_prefix_sum_context_lens, batch_size, total_kv, index_flag, TRAP, 128)
    first_valid_row = tl.load(kv_prefix_sum_context_lens)
    end_valid_row = tl.minimum(tl.load(kv_prefix_sum_context_lens + batch_size), total_kv)
    TILES_PER_HEAD: tl.constexpr = (QkNopeHeadDim + VHeadDim + BLOCK_N - 1) // BLOCK_N
    num_items = tl.cdiv(total_kv, ChunkK) * (TpNumHeads * TILES_PER_HEAD)
    if GRID_STRIDE:
        for item in tl.range(tl.program_id(0), num_items, tl.num_programs(0), flatten=FLATTEN):
            _expand_tile(item, batch_size, total_kv, first_valid_row, end_valid_row, ks,
                         k_buffer, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                         kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
                         num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP,
                         KBlockSize, QkNopeHeadDim, VHeadDim, KV_CDim, KV_PeDim,
                         ChunkK, BLOCK_N, BLOCK_K, GROUP_ROWS,
                         PER_ROW_SCALE, NO_SCALE, FP8_DOT, INTERPRETER, WARP_SPECIALIZE, WRITE_OUTPUTS,
                         WEIGHT_TMA, STORE_TMA, FLATTEN)
    else:
        _expand_tile(tl.program_id(0), batch_size, total_kv, first_valid_row, end_valid_row, ks,
                     k_buffer, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                     kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, k_desc, v_desc,
                     num_pages, kv_indices_len, batch_search_steps, TpNumHeads, index_flag, TRAP,
                     KBlockSize, QkNopeHeadDim, VHeadDim, KV_CDim, KV_PeDim,
                     ChunkK, BLOCK_N, BLOCK_K, GROUP_ROWS,
                     PER_ROW_SCALE, NO_SCALE, FP8_DOT, INTERPRETER, WARP_SPECIALIZE, WRITE_OUTPUTS,
                     WEIGHT_TMA, STORE_TMA, False)


@dataclass(frozen=True)
class TileConfig:
    """Tile shape and launch options of one compiled variant of the kernel."""

    chunk_k: int = 128
    """Output rows (cached tokens) per tile: the M of the tile GEMM."""
    block_n: int = 128
    """Weight rows of one head per tile: the N of the tile GEMM."""
    block_k: int = 64
    """Latent columns per ``tl.dot``; divides 128 (the block-scale segment)."""
    group_rows: int = 32
    """Row tiles visited together (rows fastest) for L2 reuse."""
    grid_stride: bool = False
    """Persistent grid striding over tiles instead of one program per tile."""
    programs_per_sm: int = 2
    """With ``grid_stride``: programs launched per SM (1 where only one is
    resident, so that no program waits for another to finish)."""
    flatten: bool = False
    """With ``grid_stride``: the tile loop and the K loop flattened into one
    software-pipelined loop (``tl.range(..., flatten=True)``), so a tile's
    first loads overlap the previous tile's last MMAs and its epilogue."""
    fp8_dot: bool = False
    """fp8 x fp8 tensor-core operands when both the cache and the weight are
    fp8 (twice the bf16 rate; see the module docstring for its accumulation);
    ignored for any other dtype pair."""
    fp8_promote_k: int = 32
    """With ``fp8_dot``: K values summed at the MMA's reduced precision before
    each promotion into the fp32 accumulator (32 = every instruction)."""
    warp_specialize: bool = False
    """``tl.range(..., warp_specialize=True)`` on the K loop (producer and
    consumer warps, where the Triton build supports it on the device)."""
    write_outputs: bool = True
    """False only in the benchmark's leave-one-stage-out rows: every store is
    masked off at run time, so the epilogue's memory traffic is timed by
    difference. Never used by the op."""
    weight_tma: bool = False
    """Weight tiles loaded as TMA boxes through a tensor descriptor (Hopper and
    later) instead of pointer loads: no per-element address arithmetic."""
    store_tma: bool = False
    """K and V tiles whose rows are all valid stored as TMA boxes, where the
    head's columns split into whole boxes (Dn = Dv = ``block_n`` or
    ``block_n / 2``); other tiles use masked stores."""
    num_warps: int = 8
    num_stages: int = 3

    @property
    def name(self) -> str:
        """Short label for tables and test ids."""
        return (f"T{self.chunk_k}xN{self.block_n}xK{self.block_k} g{self.group_rows} "
                f"w{self.num_warps}s{self.num_stages}"
                + (f" persistent{self.programs_per_sm}" if self.grid_stride else "")
                + (" flat" if self.grid_stride and self.flatten else "") + (" fp8dot" if self.fp8_dot else "")
                + (" ws" if self.warp_specialize else "") + ("" if self.write_outputs else " no-stores")
                + (f" promote{self.fp8_promote_k}" if self.fp8_dot and self.fp8_promote_k != 32 else "")
                + (" tmaW" if self.weight_tma else "") + (" tmaKV" if self.store_tma else ""))

    def __post_init__(self):
        for name in ("chunk_k", "block_n", "block_k"):
            check.power_of_two(f"TileConfig.{name}", getattr(self, name), minimum=16)
        if SCALE_BLOCK % self.block_k:
            check.fail("TileConfig.block_k", f"a divisor of {SCALE_BLOCK}", self.block_k)
        check.integer("TileConfig.group_rows", self.group_rows, minimum=1)
        check.integer("TileConfig.programs_per_sm", self.programs_per_sm, minimum=1)


INTERPRETER_CONFIG = TileConfig(chunk_k=32, block_n=128, block_k=128, group_rows=4,
                                num_warps=4, num_stages=1)
"""Small tiles for Triton's CPU interpreter, where every program is Python."""

GPU_POINTER_CONFIG = TileConfig(chunk_k=128, block_n=256, block_k=64, group_rows=32,
                                num_warps=8, num_stages=3)
"""The GPU tile for unscaled and per-row-scaled weights (bf16 tensor-core
operands), with pointer loads and stores: the fastest of the benchmark's sweep
on every shape within noise (H200: 12 to 128 heads, 4096 to 262144 tokens, page
sizes 1 and 64, fp8 and bf16 caches); 128x256 fp32 accumulators in 8 warps,
3-stage cp.async pipeline, about 110 KB of shared memory, one program per SM.
Two programs per SM with 64x256 tiles (one's epilogue under the other's K loop)
measured 4-20% slower: each 64-row tile streams the head's whole weight slice
again, doubling the L2-to-SM weight traffic."""

GPU_TMA_CONFIG = dataclasses.replace(GPU_POINTER_CONFIG, weight_tma=True, store_tma=True)
""":data:`GPU_POINTER_CONFIG` with the weight tiles loaded and the K/V tiles
stored as TMA boxes (weight boxes only where no operand is converted in
registers, see :func:`_tma_operands`). H200, 32000 tokens x 12 heads: bf16
cache 0.229 against 0.233 ms, fp8 cache 0.273 against 0.282 ms."""

GPU_CONFIG = dataclasses.replace(GPU_TMA_CONFIG, grid_stride=True, programs_per_sm=1, flatten=True)
"""The GPU tile for unscaled and per-row-scaled weights with bf16 operands:
:data:`GPU_TMA_CONFIG` on a persistent grid of one program per SM (one
128x256 tile is resident per SM), the tile loop and the K loop flattened into
one pipelined loop. Bit-identical to one program per tile (tested). Swept on
every benchmarked shape on the H200 (4096 to 262144 tokens, 12 to 128 heads,
page sizes 1 and 64, fp8 and bf16 caches): 1.2-5.5% faster than
:data:`GPU_TMA_CONFIG` on 23 of 24 rows and level (0.3% slower) on the
other; one program per SM without the flattening lost 3% on one row, two
programs per SM (the second waiting for a free SM) up to 3% on several."""

GPU_FP8_POINTER_CONFIG = TileConfig(chunk_k=64, block_n=128, block_k=128, group_rows=32, fp8_dot=True,
                            fp8_promote_k=128, num_warps=4, num_stages=3)
"""The GPU tile when both the cache and the (unscaled or per-row-scaled)
weight are fp8: fp8 tensor-core operands, 64x128 tiles in one warpgroup
(the fp32 promotion keeps a second accumulator; 128x256 would spill), two
to three programs per SM, one promotion per 128-wide K step. H200, 32000
tokens x 12 heads: 0.230 ms, against 0.276 ms promoting after every
32-deep instruction (64-wide K steps) and 0.450 ms for bf16 operands (the
fp8 weight tile upcast through registers back into shared memory), with
pointer loads and stores. Its
error bound is 4x the per-instruction one (``2^-7 * sum|x*w*s|``); on random
data 4.7% of the outputs differ from the exact-operand result (2.0% with
per-instruction promotion), by at most 0.25 (bf16 ulps of the largest
outputs)."""

GPU_FP8_TMA_CONFIG = dataclasses.replace(GPU_FP8_POINTER_CONFIG, weight_tma=True, store_tma=True)
"""fp8 x fp8 tiles (same arithmetic as :data:`GPU_FP8_POINTER_CONFIG`) whose
weight tiles and K/V tiles move as TMA boxes. H200, 32000 tokens x 12 heads:
0.209 against 0.229 ms."""

GPU_FP8_CONFIG = dataclasses.replace(GPU_FP8_TMA_CONFIG, grid_stride=True, programs_per_sm=2, flatten=True)
"""The GPU tile when both the cache and the weight are fp8:
:data:`GPU_FP8_TMA_CONFIG` on a persistent grid of two programs per SM with the
tile and K loops flattened (same arithmetic, one tile's epilogue under the
other program's MMAs). H200: 0.194 against 0.214 ms at 32000 tokens x 12
heads, 1.09 against 1.22 ms at 64 x 2048 tokens x 16 heads; three programs
per SM were 18-33% slower, one per SM 50% slower."""

GPU_FP8_PER_INSTRUCTION_CONFIG = TileConfig(chunk_k=64, block_n=128, block_k=64, group_rows=32,
                                            fp8_dot=True, num_warps=4, num_stages=3)
"""The previous fp8 x fp8 tile: the fp32 promotion after every MMA instruction."""

GPU_BLOCK_SCALE_CONFIG = TileConfig(chunk_k=128, block_n=128, block_k=64, group_rows=32,
                                    num_warps=8, num_stages=3)
"""The GPU tile for 128x128 block scales, which keep a second (per-segment)
accumulator: at 128x256 that needs about 290 KB of shared memory, over the
H200's 227 KB, so the block-scale path uses 128x128 tiles."""

GPU_CANDIDATE_CONFIGS = (
    GPU_CONFIG,
    GPU_TMA_CONFIG,
    GPU_POINTER_CONFIG,
    # Two programs per SM (one warpgroup, 64x256 fp32 accumulator each).
    TileConfig(chunk_k=64, block_n=256, block_k=64, group_rows=32, num_warps=4, num_stages=2),
    # bf16 operands, one warpgroup, 64x256: 6% faster than GPU_POINTER_CONFIG for an fp8
    # cache with a bf16 weight at 32000 x 12 (0.266 against 0.283 ms); swept on every shape.
    TileConfig(chunk_k=64, block_n=256, block_k=64, group_rows=32, num_warps=4, num_stages=3),
    # fp8 x fp8 operands (only when both cache and weight are fp8; bf16 otherwise).
    TileConfig(chunk_k=128, block_n=128, block_k=64, group_rows=32, fp8_dot=True,
               num_warps=8, num_stages=3),
    GPU_FP8_PER_INSTRUCTION_CONFIG,
    GPU_FP8_TMA_CONFIG,
    GPU_FP8_POINTER_CONFIG,
    # The persistent grid over the TMA tiles without the flattened loop: one
    # and two programs per SM for the 128x256 tile (one is resident), two for
    # the 64x256 tile, two and three for the fp8 64x128 tile.
    dataclasses.replace(GPU_TMA_CONFIG, grid_stride=True, programs_per_sm=1),
    dataclasses.replace(GPU_TMA_CONFIG, grid_stride=True, programs_per_sm=2),
    TileConfig(chunk_k=64, block_n=256, block_k=64, group_rows=32, num_warps=4, num_stages=3,
               store_tma=True, grid_stride=True, programs_per_sm=2),
    GPU_FP8_CONFIG,
    dataclasses.replace(GPU_FP8_TMA_CONFIG, grid_stride=True, programs_per_sm=2),
    dataclasses.replace(GPU_FP8_TMA_CONFIG, grid_stride=True, programs_per_sm=3),
)
"""The unscaled/per-row-scale variants the benchmark sweeps and the GPU tests
check (the defaults are among them)."""


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() not in ("", "0", "false")


def default_config(device: torch.device, scale_mode: str = "none",
                   cache_dtype: torch.dtype | None = None,
                   weight_dtype: torch.dtype | None = None) -> TileConfig:
    """The tile configuration the public op uses on ``device`` for a weight
    scale mode (``none``, ``row`` or ``block``) and the cache/weight dtypes."""
    if _interpreting() or device.type != "cuda":
        return INTERPRETER_CONFIG
    if scale_mode == "block":
        return GPU_BLOCK_SCALE_CONFIG
    if cache_dtype == torch.float8_e4m3fn and weight_dtype == torch.float8_e4m3fn:
        return GPU_FP8_CONFIG
    return GPU_CONFIG


def launch_grid(num_tiles: int, config: TileConfig, device: torch.device) -> tuple[int]:
    """One program per tile, or, for ``grid_stride``, ``programs_per_sm``
    programs per SM striding over the tiles (the tile list is sized from the token
    count, so either way the grid fills the device whether the tokens come
    from one long sequence or from hundreds of short ones)."""
    if not config.grid_stride:
        return (max(1, num_tiles),)
    if device.type == "cuda":
        sms = torch.cuda.get_device_properties(device).multi_processor_count
    else:
        sms = 4
    return (max(1, min(num_tiles, config.programs_per_sm * sms)),)


@dataclass(frozen=True)
class _Problem:
    """Sizes derived from the arguments (after validation)."""

    batch_size: int
    total_kv: int
    num_heads: int
    nope_dim: int
    v_dim: int
    rank: int
    rope_dim: int
    page_size: int
    scale_mode: str  # "none" | "row" | "block"


def _check_tensor(name, t, dims, dtypes):
    check.tensor(name, t, dtypes=dtypes, ndim=dims, contiguous=True)


def _check_index_values(kv_indptr, kv_indices, cu, num_pages, page_size, total_kv):
    """Debug mode: the index values, read back (see the module docstring)."""
    cu64, indptr = cu.to(torch.int64), kv_indptr.to(torch.int64)
    if bool((cu64[1:] < cu64[:-1]).any()) or int(cu64[0]) < 0:
        check.fail("kv_prefix_sum_context_lens", "non-negative and non-decreasing", cu.tolist())
    if int(cu64[-1]) > total_kv:
        check.fail("kv_prefix_sum_context_lens[-1]", f"<= k_prefix.shape[0] ({total_kv})",
              int(cu64[-1]))
    pages_needed = torch.div(cu64[1:] - cu64[:-1] + page_size - 1, page_size, rounding_mode="floor")
    if bool((indptr[1:] - indptr[:-1] < pages_needed).any()) or int(indptr[0]) < 0:
        check.fail("kv_indptr", "non-negative, with enough pages for every context length",
              kv_indptr.tolist())
    if int(indptr[-1]) > kv_indices.numel():
        check.fail("kv_indices", f"at least kv_indptr[-1] = {int(indptr[-1])} entries",
              kv_indices.numel())
    used = kv_indices[: int(indptr[-1])]
    if used.numel() and (int(used.min()) < 0 or int(used.max()) >= num_pages):
        check.fail("kv_indices", f"page ids in [0, {num_pages})",
              f"range [{int(used.min())}, {int(used.max())}]")


def _validate(k_buffer, k_scale, kv_indptr, kv_indices, cu, kv_proj_weight, kv_proj_scale,
              k_prefix, v_prefix, weight_preshuffle, shuffled_kv_cache) -> _Problem:
    _refuse_amd_layouts(weight_preshuffle, shuffled_kv_cache)
    return _validate_tensors(k_buffer, k_scale, kv_indptr, kv_indices, cu, kv_proj_weight, kv_proj_scale,
                             k_prefix, v_prefix)


def _refuse_amd_layouts(weight_preshuffle, shuffled_kv_cache) -> None:
    if weight_preshuffle:
        check.fail("weight_preshuffle", "False (the preshuffled weight is an AMD MFMA layout this "
                   "port does not carry; pass the row-major [H*(Dn+Dv), R] weight)", True)
    if shuffled_kv_cache:
        check.fail("shuffled_kv_cache", "False (the shuffled cache is an AMD MFMA layout this port "
                   "does not carry; pass the plain paged cache)", True)


def _validate_tensors(k_buffer, k_scale, kv_indptr, kv_indices, cu, kv_proj_weight, kv_proj_scale,
                      k_prefix, v_prefix) -> _Problem:
    fp4 = getattr(torch, "float4_e2m1fn_x2", None)
    if isinstance(kv_proj_weight, torch.Tensor) and fp4 is not None and kv_proj_weight.dtype == fp4:
        # ValueError as before: a dtype this port refuses, not a wrong type.
        check.fail("kv_proj_weight", "fp8 e4m3fn or bf16 (MXFP4 float4_e2m1fn_x2 weights are not "
                   "supported by this port)", "float4_e2m1fn_x2")
    _check_tensor("k_buffer", k_buffer, (3,), _CACHE_DTYPES)
    _check_tensor("kv_proj_weight", kv_proj_weight, (2,), _WEIGHT_DTYPES)
    _check_tensor("k_prefix", k_prefix, (3,), (_OUTPUT_DTYPE,))
    _check_tensor("v_prefix", v_prefix, (3,), (_OUTPUT_DTYPE,))
    for name, t in (("kv_indptr", kv_indptr), ("kv_indices", kv_indices),
                    ("kv_prefix_sum_context_lens", cu)):
        _check_tensor(name, t, (1,), (_INDEX_DTYPE,))
    device = k_buffer.device
    named = {"kv_proj_weight": kv_proj_weight, "k_prefix": k_prefix, "v_prefix": v_prefix,
             "kv_indptr": kv_indptr, "kv_indices": kv_indices, "kv_prefix_sum_context_lens": cu}
    if k_scale is not None:
        named["k_scale"] = k_scale
    if kv_proj_scale is not None:
        named["kv_proj_scale"] = kv_proj_scale
    for name, t in named.items():
        if isinstance(t, torch.Tensor):
            check.tensor(name, t, device=device, device_of="k_buffer")

    if kv_indptr.numel() < 1 or kv_indptr.numel() != cu.numel():
        check.fail("kv_indptr", "B+1 entries, as many as kv_prefix_sum_context_lens",
              f"{kv_indptr.numel()} vs {cu.numel()}")
    total_kv, num_heads, k_width = k_prefix.shape
    if v_prefix.shape[0] != total_kv or v_prefix.shape[1] != num_heads:
        check.fail("v_prefix", f"[{total_kv}, {num_heads}, Dv] like k_prefix",
              f"shape {tuple(v_prefix.shape)}")
    v_dim = v_prefix.shape[2]
    n_rows, rank = kv_proj_weight.shape
    if num_heads < 1 or n_rows % num_heads:
        check.fail("kv_proj_weight.shape[0]", f"a multiple of the head count {num_heads}", n_rows)
    nope_dim = n_rows // num_heads - v_dim
    rope_dim = k_width - nope_dim
    if nope_dim < 1 or v_dim < 1:
        check.fail("kv_proj_weight.shape[0]", f"H*(Dn+Dv) with Dn, Dv >= 1 (H={num_heads}, "
              f"Dv={v_dim})", n_rows)
    if rank < SCALE_BLOCK or rank % SCALE_BLOCK:
        check.fail("kv_proj_weight.shape[1] (kv_lora_rank)", f"a multiple of {SCALE_BLOCK}", rank)
    if rope_dim < 1 or rope_dim & (rope_dim - 1):
        check.fail("k_prefix.shape[2] - Dn (the rope dim)", "a power of two", rope_dim)
    if k_buffer.shape[2] != rank + rope_dim:
        check.fail("k_buffer.shape[2]", f"kv_lora_rank + rope dim = {rank + rope_dim}",
              k_buffer.shape[2])
    if k_buffer.dtype != torch.bfloat16:
        if not isinstance(k_scale, torch.Tensor) or k_scale.numel() != 1 or k_scale.dtype != torch.float32:
            check.fail("k_scale", "a one-element float32 tensor for an fp8 cache",
                       k_scale if not isinstance(k_scale, torch.Tensor) else f"{k_scale.dtype} {tuple(k_scale.shape)}",
                       TypeError)

    if kv_proj_scale is None:
        scale_mode = "none"
    else:
        _check_tensor("kv_proj_scale", kv_proj_scale, (1, 2), _SCALE_DTYPES)
        if kv_proj_scale.dim() == 1 or kv_proj_scale.shape[1] == 1:
            scale_mode = "row"
            if kv_proj_scale.numel() != n_rows:
                check.fail("kv_proj_scale (per-row)", f"[{n_rows}] or [{n_rows}, 1]",
                      tuple(kv_proj_scale.shape))
        else:
            scale_mode = "block"
            expected = (triton.cdiv(n_rows, SCALE_BLOCK), rank // SCALE_BLOCK)
            if tuple(kv_proj_scale.shape) != expected:
                check.fail("kv_proj_scale (128x128 blocks)", f"shape {expected}",
                      tuple(kv_proj_scale.shape))
    page_size = k_buffer.shape[1]
    if page_size < 1:
        check.fail("k_buffer.shape[1] (page size)", ">= 1", page_size)
    if check.debug_reads("gather_kv_b_proj", device):
        _check_index_values(kv_indptr, kv_indices, cu, k_buffer.shape[0], page_size, total_kv)
    return _Problem(batch_size=kv_indptr.numel() - 1, total_kv=total_kv, num_heads=num_heads,
                    nope_dim=nope_dim, v_dim=v_dim, rank=rank, rope_dim=rope_dim,
                    page_size=page_size, scale_mode=scale_mode)


def _tma_ready(t: torch.Tensor) -> bool:
    """Whether TMA can address ``t``'s rows: 16-byte aligned base and row stride, on a
    device with TMA (sm_90+) or under the interpreter."""
    if t.data_ptr() % 16 or (t.stride(0) * t.element_size()) % 16:
        return False
    if _interpreting():
        return True
    return t.device.type == "cuda" and torch.cuda.get_device_capability(t.device)[0] >= 9


def _tma_operands(k_buffer, kv_proj_weight, k_prefix, v_prefix, problem: _Problem, config: TileConfig):
    """(weight operand, STORE_TMA mode, K descriptor, V descriptor) for ``config``:
    descriptors where the config asks for them and the tensors allow them, the
    plain tensors otherwise (the kernel then takes the pointer path)."""
    weight = kv_proj_weight
    # Triton 3.6 on the H200 computed wrong K columns (different ones each run)
    # when a TMA-loaded weight met a latent tile upcast from fp8 in registers
    # (64x256 tiles, 4 warps); not root-caused. Weight boxes are therefore used
    # only where both operands reach the dot as loaded.
    fp8_dot = config.fp8_dot and k_buffer.dtype == kv_proj_weight.dtype == torch.float8_e4m3fn
    as_loaded = fp8_dot or k_buffer.dtype == kv_proj_weight.dtype == torch.bfloat16
    if config.weight_tma and as_loaded and _tma_ready(kv_proj_weight):
        weight = TensorDescriptor.from_tensor(kv_proj_weight, [config.block_n, config.block_k])
    store_tma, k_desc, v_desc = 0, k_prefix, v_prefix
    dn, dv = problem.nope_dim, problem.v_dim
    mode = 1 if config.block_n == 2 * dn else 2 if config.block_n == dn else 0
    k_rows = k_prefix.view(problem.total_kv, -1)
    v_rows = v_prefix.view(problem.total_kv, -1)
    # write_outputs=False (benchmark) masks stores by row, which only the pointer path does.
    if config.store_tma and config.write_outputs and dn == dv and mode and _tma_ready(k_rows) and _tma_ready(v_rows):
        store_tma = mode
        box = [config.chunk_k, dn]
        k_desc = TensorDescriptor.from_tensor(k_rows, box)
        v_desc = TensorDescriptor.from_tensor(v_rows, box)
    return weight, store_tma, k_desc, v_desc


def _launch(k_buffer, k_scale, kv_indptr, kv_indices, cu, kv_proj_weight, kv_proj_scale,
            k_prefix, v_prefix, problem: _Problem, config: TileConfig):
    """Launch the tile kernel with an explicit ``config`` (tests and the
    benchmark sweep call this directly; the public op picks the config).
    Returns Triton's launched kernel handle (None when nothing to do)."""
    if problem.batch_size == 0 or problem.total_kv == 0:
        return None
    tiles_per_head = triton.cdiv(problem.nope_dim + problem.v_dim, config.block_n)
    num_tiles = triton.cdiv(problem.total_kv, config.chunk_k) * problem.num_heads * tiles_per_head
    grid = launch_grid(num_tiles, config, k_buffer.device)
    scale = kv_proj_scale if kv_proj_scale is not None else kv_proj_weight
    fp8_operands = k_buffer.dtype == torch.float8_e4m3fn and kv_proj_weight.dtype == torch.float8_e4m3fn
    flag = check.index_flag(k_buffer.device)
    weight, store_tma, k_desc, v_desc = _tma_operands(k_buffer, kv_proj_weight, k_prefix, v_prefix, problem, config)
    handle = _gather_kv_b_proj_kernel[grid](
        problem.batch_size, problem.total_kv, k_buffer,
        k_scale if k_scale is not None else kv_proj_weight,
        kv_indptr, kv_indices, cu, weight, scale, k_prefix, v_prefix, k_desc, v_desc,
        k_buffer.shape[0], kv_indices.numel(), max(1, (problem.batch_size - 1).bit_length()),
        problem.num_heads, flag, check.trap_in_kernel(k_buffer.device),
        KBlockSize=problem.page_size, QkNopeHeadDim=problem.nope_dim, VHeadDim=problem.v_dim,
        KV_CDim=problem.rank, KV_PeDim=problem.rope_dim,
        ChunkK=config.chunk_k, BLOCK_N=config.block_n, BLOCK_K=config.block_k,
        GROUP_ROWS=config.group_rows,
        PER_ROW_SCALE=problem.scale_mode == "row", NO_SCALE=problem.scale_mode == "none",
        GRID_STRIDE=config.grid_stride,
        FP8_DOT=config.fp8_promote_k if config.fp8_dot and fp8_operands else 0, INTERPRETER=_interpreting(),
        WARP_SPECIALIZE=config.warp_specialize, WRITE_OUTPUTS=config.write_outputs,
        WEIGHT_TMA=weight is not kv_proj_weight, STORE_TMA=store_tma,
        FLATTEN=config.grid_stride and config.flatten,
        num_warps=config.num_warps, num_stages=config.num_stages,
    )
    check.after_launch("gather_kv_b_proj", flag, "kv_prefix_sum_context_lens, kv_indptr and kv_indices entries")
    return handle


def gather_kv_b_proj_with_config(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                                 kv_proj_weight, kv_proj_scale, k_prefix, v_prefix,
                                 config: TileConfig):
    """``gather_kv_b_proj`` with an explicit tile configuration (validated the
    same way); for tests of geometry equivalence and for the benchmark sweep.
    Returns the launched kernel handle (registers, spills) or None."""
    problem = _validate(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                        kv_proj_weight, kv_proj_scale, k_prefix, v_prefix, False, False)
    return _launch(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens, kv_proj_weight,
            kv_proj_scale, k_prefix, v_prefix, problem, config)


def _gather_kv_b_proj(k_buffer: torch.Tensor, k_scale: torch.Tensor | None, kv_indptr: torch.Tensor,
                      kv_indices: torch.Tensor, kv_prefix_sum_context_lens: torch.Tensor,
                      kv_proj_weight: torch.Tensor, kv_proj_scale: torch.Tensor | None,
                      k_prefix: torch.Tensor, v_prefix: torch.Tensor,
                      weight_preshuffle: bool = False, shuffled_kv_cache: bool = False) -> None:
    """The body of ``torch.ops.portq.gather_kv_b_proj``: host checks, then the launch."""
    problem = _validate(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                        kv_proj_weight, kv_proj_scale, k_prefix, v_prefix,
                        weight_preshuffle, shuffled_kv_cache)
    _launch(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens, kv_proj_weight,
            kv_proj_scale, k_prefix, v_prefix, problem,
            default_config(k_buffer.device, problem.scale_mode, k_buffer.dtype, kv_proj_weight.dtype))


_GATHER_KV_B_PROJ_OP = custom_ops.register("gather_kv_b_proj", _gather_kv_b_proj,
                                           mutates_args=("k_prefix", "v_prefix"), fake=custom_ops.no_output)


# portq: ports aiter:aiter/ops/triton/gather_kv_b_proj.py::gather_kv_b_proj @e50c39f1be
# portq: not-carried aiter:aiter/ops/triton/gather_kv_b_proj.py::gather_kv_b_proj[weight_preshuffle] -- AMD MFMA (16,16) weight layout, AMD-only
# portq: not-carried aiter:aiter/ops/triton/gather_kv_b_proj.py::gather_kv_b_proj[shuffled_kv_cache] -- AMD MFMA KV-cache layout, AMD-only
def gather_kv_b_proj(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                     kv_proj_weight, kv_proj_scale, k_prefix, v_prefix,
                     weight_preshuffle: bool = False, shuffled_kv_cache: bool = False) -> None:
    """Expand the cached MLA prefix into per-head K and V, in place.

    ``k_buffer`` ``[num_pages, S, R+E]`` bf16 or fp8 e4m3fn (any page size
    ``S``); ``k_scale`` one fp32 value, read only for an fp8 cache;
    ``kv_indptr`` ``[B+1]`` page offsets into ``kv_indices`` (int32, may be a
    larger buffer); ``kv_prefix_sum_context_lens`` ``[B+1]`` exclusive prefix
    sum of context lengths (int32); ``kv_proj_weight`` ``[H*(Dn+Dv), R]``
    row-major, fp8 e4m3fn or bf16, rows head-major (Dn K rows then Dv V rows);
    ``kv_proj_scale`` None, per-row ``[N]``/``[N, 1]`` or 128x128 blocks
    ``[ceil(N/128), R/128]`` (fp32 or bf16). Writes ``k_prefix``
    ``[T, H, Dn+E]`` and ``v_prefix`` ``[T, H, Dv]`` (bf16) for rows
    ``cu[0] <= t < cu[-1]``; other rows are left untouched.

    Deviation: an fp8 cache with a bf16 weight keeps the bf16 weight (upstream
    truncates it to fp8): more accurate, differs from upstream by the weight's
    fp8 rounding.
    Deviation: a negative or decreasing ``kv_prefix_sum_context_lens``, a last
    entry past ``k_prefix.shape[0]``, a page position outside ``kv_indices`` or
    a page id outside ``k_buffer`` is an index error (upstream reads or writes
    out of bounds); the offending rows read zeros.
    Deviation: ``weight_preshuffle``, ``shuffled_kv_cache`` and MXFP4 weights
    (AMD layouts) are refused with a ``ValueError``.

    On an index error found inside the kernel: rows written before the error
    was seen may differ from their old contents; nothing outside ``k_prefix``
    and ``v_prefix`` is written and the inputs are never modified.
    """
    _refuse_amd_layouts(weight_preshuffle, shuffled_kv_cache)
    custom_ops.call("gather_kv_b_proj", k_buffer, k_scale, kv_indptr, kv_indices,
                    kv_prefix_sum_context_lens, kv_proj_weight, kv_proj_scale, k_prefix, v_prefix,
                    weight_preshuffle, shuffled_kv_cache)
