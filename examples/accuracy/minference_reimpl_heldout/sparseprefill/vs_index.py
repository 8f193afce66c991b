"""The vertical-and-slash index builder (Triton, one program per row block).

Given, per (batch, head), the vertical key positions (ascending) and the
slash offsets i - j (descending), each query row block [m, m + BLOCK_M)
gets the key blocks that cover its slashes, as start offsets of BLOCK_N
keys (neighbouring slashes merged into one range), and the vertical keys
that lie left of those ranges, as single columns. Counts go beside them;
the tail of each row's lists is left zero."""

import torch
import triton
import triton.language as tl


# portq: ports minference:csrc/vertical_slash_index.cu::save_blocks @eb922ea2c1
@triton.jit
def _emit_range(offsets, lo, hi, taken, BLOCK_N: tl.constexpr):
    for start in range(lo, hi, BLOCK_N):
        tl.store(offsets + taken, start)
        taken += 1
    return taken


# portq: ports minference:csrc/vertical_slash_index.cu::convert_vertical_slash_indexes_kernel @eb922ea2c1
@triton.jit
def _vs_index_kernel(
    seqlens, verticals, slashes,
    block_count, block_offset, column_count, column_index,
    n_heads, n_rows, nnz_v, nnz_s,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    length = tl.load(seqlens + batch)
    lo_m = row * BLOCK_M
    if lo_m >= length:
        return
    hi_m = lo_m + BLOCK_M
    pair = batch * n_heads + head
    verticals += pair * nnz_v
    slashes += pair * nnz_s
    slot = pair * n_rows + row
    offsets = block_offset + slot * nnz_s
    columns = column_index + slot * nnz_v

    n_cols = lo_m * 0
    n_blocks = lo_m * 0
    vi = lo_m * 0 + 1
    si = lo_m * 0 + 1
    vert = tl.load(verticals)
    diag = tl.load(slashes)
    # slashes that start below this row block do not reach it
    while (diag >= hi_m) & (si < nnz_s):
        diag = tl.load(slashes + si)
        si += 1
    diag = tl.maximum(hi_m - diag, BLOCK_M)
    lo = diag - BLOCK_M
    hi = diag
    done = lo_m * 0
    while done == 0:
        if vert < hi:
            if vert < lo:
                tl.store(columns + n_cols, vert)
                n_cols += 1
            if vi < nnz_v:
                vert = tl.load(verticals + vi)
                vi += 1
            else:
                vert = hi_m + BLOCK_M
        else:
            if si < nnz_s:
                diag = tl.maximum(hi_m - tl.load(slashes + si), BLOCK_M)
                si += 1
                if diag > hi + BLOCK_M:
                    n_blocks = _emit_range(offsets, lo, hi, n_blocks, BLOCK_N)
                    lo = diag - BLOCK_M
                    hi = diag
                elif diag > hi:
                    hi += BLOCK_M
            else:
                n_blocks = _emit_range(offsets, lo, hi, n_blocks, BLOCK_N)
                done = lo_m * 0 + 1
    tl.store(block_count + slot, n_blocks)
    tl.store(column_count + slot, n_cols)


# portq: ports minference:csrc/vertical_slash_index.cu::convert_vertical_slash_indexes @eb922ea2c1
# portq: ports minference:csrc/vertical_slash_index.cu::convert_vertical_slash_indexes_64x64 @eb922ea2c1
def convert_vertical_slash_indexes(seqlens, vertical_indexes, slash_indexes, context_size, block_size_M, block_size_N):
    """(block_count, block_offset, column_count, column_index), int32, for
    (B, H, NNZ) vertical (ascending) and slash (descending) indexes."""
    assert block_size_M == 64 and block_size_N == 64, "64x64 blocks only"
    batch, heads, nnz_s = slash_indexes.shape
    nnz_v = vertical_indexes.shape[-1]
    rows = triton.cdiv(context_size, block_size_M)
    opts = dict(dtype=torch.int32, device=seqlens.device)
    block_count = torch.zeros((batch, heads, rows), **opts)
    block_offset = torch.zeros((batch, heads, rows, nnz_s), **opts)
    column_count = torch.zeros((batch, heads, rows), **opts)
    column_index = torch.zeros((batch, heads, rows, nnz_v), **opts)
    _vs_index_kernel[(rows, heads, batch)](
        seqlens, vertical_indexes.contiguous(), slash_indexes.contiguous(),
        block_count, block_offset, column_count, column_index,
        heads, rows, nnz_v, nnz_s,
        BLOCK_M=block_size_M, BLOCK_N=block_size_N,
    )
    return block_count, block_offset, column_count, column_index
