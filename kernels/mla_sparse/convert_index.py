"""Sparse-MLA top-k index remap: request-local token ids -> physical KV rows.

The sparse-MLA indexer picks, for every query token, the top-k tokens of its
own request (request-local positions, ``-1`` = empty). The attention kernels
need physical rows instead: a slot of the paged cache (decode rows), a row of
the dense prefill workspace that the upconvert gathers filled (prefill rows),
or, under decode context parallelism (DCP), this rank's local slot with the
tokens other ranks own masked out.

One Triton kernel does all of it in a single pass over the index matrix, and
can count the surviving entries per row and compact them to the front of the
row in the same pass (the trtllm-gen / FlashMLA sparse kernels read the first
``valid_count`` entries). Two host wrappers keep upstream's names and
parameters: ``triton_convert_req_index_to_global_index`` and
``triton_filter_and_convert_dcp_index``. ``reference.py`` holds the semantics
in plain PyTorch.

Decisions where upstream is silent or unsafe (tested, see
tests/kernels/mla_sparse/):

* every upstream ``assert`` is a ``ValueError`` naming the argument;
* a ``req_id`` outside ``[0, num_requests)`` (CUDA-graph padding), a
  ``prefill_workspace_request_ids`` entry ``>= num_prefills``, a negative
  block-table entry, and a result that does not fit int32 all give ``-1``
  instead of an out-of-bounds read or a wrapped row number;
* prefill rows are exempt from the paged bounds check (the newest upstream
  behaviour: the workspace row is ``start + t`` even when ``t`` lies past the
  block table) and, under DCP, address the all-gathered workspace as
  ``owner * prefill_workspace_rank_stride + start + local(t)``;
* DCP with a prefill workspace needs ``prefill_workspace_rank_stride``: with
  it missing the owner shards would alias, so the wrapper refuses.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from .. import validation as check

INT32_MAX = 2**31 - 1

# The widest row one program may own when counting (seed 004's _remap_tiling).
SINGLE_TILE_MAX_WIDTH = 4096
# Entries per program when not counting.
UNCOUNTED_TILE_WIDTH = 2048


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::_convert_req_index_to_global_index_kernel
@triton.jit
def _convert_req_index_to_global_index_kernel(
    req_id_ptr,  # int32 [num_tokens]
    block_table_ptr,  # int32 [num_requests, max_num_blocks_per_req]
    token_indices_ptr,  # int32 [num_tokens, NUM_TOPK_TOKENS]
    out_ptr,  # int32 [num_tokens, NUM_TOPK_TOKENS]
    valid_count_ptr,  # int32 [num_tokens] (COUNT_VALID only)
    prefill_request_id_ptr,  # int32 [num_tokens], -1 = paged row (HAS_PREFILL only)
    workspace_starts_ptr,  # int32 [num_prefills] (HAS_PREFILL only)
    workspace_rank_stride,  # rows between two DCP ranks' shards of the workspace
    num_requests,  # block_table rows: bound for req_id
    num_prefill_requests,  # bound for prefill_request_id
    max_num_blocks_per_req,  # block_table columns: bound for the logical block
    bt_stride0,
    bt_stride1,
    ti_stride0,
    ti_stride1,
    out_stride0,
    out_stride1,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_STRIDE_ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    NUM_TOPK_TOKENS: tl.constexpr,
    HAS_PREFILL: tl.constexpr,
    COUNT_VALID: tl.constexpr,
    SINGLE_TILE: tl.constexpr,
    COMPACT_TO_FRONT: tl.constexpr,
    DCP_SIZE: tl.constexpr,
    DCP_RANK: tl.constexpr,
    DCP_INTERLEAVE: tl.constexpr,
):
    """Program (token, tile) maps BLOCK_N consecutive top-k entries of one row.

    With SINGLE_TILE the tile is the whole (padded) row, so the valid count is
    a register reduction and the compacted row's ``-1`` tail is written here;
    otherwise tiles reserve their slice of the prefix with one atomic add on a
    zeroed counter and the host pre-fills the row with ``-1``.
    """
    row = tl.program_id(0).to(tl.int64)
    tile = tl.program_id(1)
    cols = tile * BLOCK_N + tl.arange(0, BLOCK_N)
    in_row = cols < NUM_TOPK_TOKENS

    tok = tl.load(
        token_indices_ptr + row * ti_stride0 + cols.to(tl.int64) * ti_stride1,
        mask=in_row,
        other=-1,
    )
    # Scalars are broadcast to the tile: a vector mask combined with a scalar
    # condition loses its boolean dtype in the interpreter.
    lane_zero = tl.zeros([BLOCK_N], tl.int32)
    req = tl.load(req_id_ptr + row) + lane_zero
    is_empty = tok < 0

    # DCP de-interleave: tokens are dealt to ranks in groups of DCP_INTERLEAVE.
    # With DCP_SIZE == 1 the owner is always rank 0 and local == tok.
    owner = (tok // DCP_INTERLEAVE) % DCP_SIZE
    local = (tok // (DCP_SIZE * DCP_INTERLEAVE)) * DCP_INTERLEAVE + tok % DCP_INTERLEAVE
    block_id = local // BLOCK_SIZE
    in_block = local % BLOCK_SIZE

    paged_lane = (
        ~is_empty
        & (owner == DCP_RANK)
        & (block_id < max_num_blocks_per_req)
        & (req >= 0)
        & (req < num_requests)
    )
    if HAS_PREFILL:
        prefill_req = tl.load(prefill_request_id_ptr + row) + lane_zero
        is_prefill = prefill_req >= 0
        paged_lane = paged_lane & (prefill_req < 0)

    physical_block = tl.load(
        block_table_ptr + req.to(tl.int64) * bt_stride0 + block_id.to(tl.int64) * bt_stride1,
        mask=paged_lane,
        other=0,
    )
    value = physical_block.to(tl.int64) * BLOCK_STRIDE_ROWS + in_block
    valid = paged_lane & (physical_block >= 0) & (value <= 2147483647)

    if HAS_PREFILL:
        prefill_ok = is_prefill & (prefill_req < num_prefill_requests)
        workspace_start = tl.load(
            workspace_starts_ptr + prefill_req, mask=prefill_ok, other=0
        )
        prefill_value = (
            workspace_start.to(tl.int64)
            + owner.to(tl.int64) * workspace_rank_stride
            + local
        )
        prefill_valid = (
            prefill_ok & ~is_empty & (prefill_value >= 0) & (prefill_value <= 2147483647)
        )
        value = tl.where(is_prefill, prefill_value, value)
        valid = tl.where(is_prefill, prefill_valid, valid)

    result = tl.where(valid, value, -1).to(tl.int32)
    out_row = out_ptr + row * out_stride0

    if COMPACT_TO_FRONT:
        is_valid = valid.to(tl.int32)
        prefix = tl.cumsum(is_valid, 0) - is_valid
        tile_count = tl.sum(is_valid, 0)
        if SINGLE_TILE:
            base = 0
            tl.store(valid_count_ptr + row, tile_count)
            # The row is ours alone: write its -1 tail (disjoint from the prefix).
            tl.store(
                out_row + cols.to(tl.int64) * out_stride1,
                tl.full([BLOCK_N], -1, tl.int32),
                mask=in_row & (cols >= tile_count),
            )
        else:
            base = tl.atomic_add(valid_count_ptr + row, tile_count)
        dest = (base + prefix).to(tl.int64)
        tl.store(out_row + dest * out_stride1, result, mask=valid)
    else:
        tl.store(out_row + cols.to(tl.int64) * out_stride1, result, mask=in_row)
        if COUNT_VALID:
            tile_count = tl.sum(valid.to(tl.int32), 0)
            if SINGLE_TILE:
                tl.store(valid_count_ptr + row, tile_count)
            else:
                tl.atomic_add(valid_count_ptr + row, tile_count)


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::_remap_tiling
def _remap_tiling(
    NUM_TOPK_TOKENS: int, BLOCK_N: int, count_valid: bool
) -> tuple[bool, int, int, int]:
    """Pick the column tiling: ``(single_tile, block_n, tiles_per_row, num_warps)``.

    Counting is the only thing that makes column tiles of one row talk to each
    other, so when counting, one program takes the whole row padded to a power
    of two (GLM's 2176 pads to 4096) as long as that stays at most 4096 wide:
    the count is then a register reduction with a plain store, and neither
    atomics nor a zeroed counter nor a ``-1`` pre-fill are needed. Wider rows
    use ``BLOCK_N``-wide tiles. Without counting the tile width is ours to
    pick (the result does not depend on it; the last tile of a row is masked):
    rows up to 2048 wide per program, 8 warps. ``BLOCK_N``-wide (128) tiles ran
    the 4096 x 2048 remap 2.1x slower on the H200 (41.5 against 19.3 us: 65536
    programs of 128 entries each; ``benchmarks/bench_mla_sparse.py``).
    """
    padded_width = triton.next_power_of_2(NUM_TOPK_TOKENS)
    single_tile = count_valid and (
        padded_width == NUM_TOPK_TOKENS or padded_width <= SINGLE_TILE_MAX_WIDTH
    )
    if single_tile:
        return True, padded_width, 1, 8
    if count_valid:
        return False, BLOCK_N, NUM_TOPK_TOKENS // BLOCK_N, 4
    width = min(padded_width, UNCOUNTED_TILE_WIDTH)
    return False, width, triton.cdiv(NUM_TOPK_TOKENS, width), 8


def _remap_grid(num_tokens: int, tiles_per_row: int) -> tuple[int, int]:
    """One program per (token row, column tile): rows are independent, and a
    2-D grid keeps the row id a plain program id (no division to unpack it)."""
    return (num_tokens, tiles_per_row)


def _check_int32_tensor(name: str, tensor, ndim: int, device) -> None:
    check.tensor(name, tensor, dtypes=(torch.int32,), ndim=ndim, device=device)


def _check_geometry(BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N) -> tuple:
    """The four sizes as Python ints (numpy ints too are accepted), checked."""
    BLOCK_SIZE = check.integer("BLOCK_SIZE", BLOCK_SIZE, minimum=1)
    if BLOCK_STRIDE_ROWS is not None:
        BLOCK_STRIDE_ROWS = check.integer("BLOCK_STRIDE_ROWS", BLOCK_STRIDE_ROWS, minimum=BLOCK_SIZE)
    BLOCK_N = check.power_of_two("BLOCK_N", BLOCK_N)
    NUM_TOPK_TOKENS = check.integer("NUM_TOPK_TOKENS", NUM_TOPK_TOKENS, minimum=1)
    if NUM_TOPK_TOKENS % BLOCK_N:
        check.fail("NUM_TOPK_TOKENS", f"a multiple of BLOCK_N ({BLOCK_N})", NUM_TOPK_TOKENS)
    return BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N


def _check_dcp(dcp_size, dcp_rank, cp_kv_cache_interleave_size, BLOCK_SIZE) -> tuple:
    """``(dcp_size, dcp_rank, cp_kv_cache_interleave_size)`` as Python ints, checked."""
    dcp_size = check.integer("dcp_size", dcp_size, minimum=1)
    dcp_rank = check.integer("dcp_rank", dcp_rank, minimum=0, maximum=dcp_size - 1)
    cp_kv_cache_interleave_size = check.integer(
        "cp_kv_cache_interleave_size", cp_kv_cache_interleave_size, minimum=1)
    # An interleave group must never straddle a KV block, or local // BLOCK_SIZE
    # would split one group over two blocks.
    if BLOCK_SIZE % cp_kv_cache_interleave_size:
        check.fail(
            "cp_kv_cache_interleave_size",
            f"a divisor of BLOCK_SIZE ({BLOCK_SIZE})",
            cp_kv_cache_interleave_size,
        )
    return dcp_size, dcp_rank, cp_kv_cache_interleave_size


def _check_index_inputs(req_id, block_table, token_indices, NUM_TOPK_TOKENS) -> int:
    _check_int32_tensor("token_indices", token_indices, 2, None)
    device = token_indices.device
    _check_int32_tensor("req_id", req_id, 1, device)
    _check_int32_tensor("block_table", block_table, 2, device)
    check.dim_size("req_id", req_id, token_indices.shape[0], "one per token_indices row: the "
                   "grid is sized by req_id and the output like token_indices")
    check.dim_size("token_indices", token_indices, NUM_TOPK_TOKENS, "NUM_TOPK_TOKENS", dim=1)
    return req_id.shape[0]


def _launch_remap(
    req_id,
    block_table,
    token_indices,
    out,
    valid_counts,
    prefill_request_ids,
    prefill_starts,
    *,
    rank_stride: int,
    BLOCK_SIZE: int,
    BLOCK_STRIDE_ROWS: int | None,
    NUM_TOPK_TOKENS: int,
    tiling: tuple[bool, int, int, int],
    count_valid: bool,
    compact: bool,
    dcp: tuple[int, int, int],
) -> None:
    single_tile, block_n, tiles_per_row, num_warps = tiling
    has_prefill = prefill_request_ids is not None
    req_id_c = req_id.contiguous()
    # Unused pointer slots still need a tensor: the index matrix is a safe stand-in.
    placeholder = req_id_c
    _convert_req_index_to_global_index_kernel[_remap_grid(req_id.shape[0], tiles_per_row)](
        req_id_c,
        block_table,
        token_indices,
        out,
        valid_counts if valid_counts is not None else placeholder,
        prefill_request_ids if has_prefill else placeholder,
        prefill_starts if has_prefill else placeholder,
        rank_stride,
        block_table.shape[0],
        prefill_starts.shape[0] if has_prefill else 0,
        block_table.shape[1],
        block_table.stride(0),
        block_table.stride(1),
        token_indices.stride(0),
        token_indices.stride(1),
        out.stride(0),
        out.stride(1),
        BLOCK_SIZE=BLOCK_SIZE,
        BLOCK_STRIDE_ROWS=BLOCK_STRIDE_ROWS if BLOCK_STRIDE_ROWS is not None else BLOCK_SIZE,
        BLOCK_N=block_n,
        NUM_TOPK_TOKENS=NUM_TOPK_TOKENS,
        HAS_PREFILL=has_prefill,
        COUNT_VALID=count_valid,
        SINGLE_TILE=single_tile,
        COMPACT_TO_FRONT=compact,
        DCP_SIZE=dcp[0],
        DCP_RANK=dcp[1],
        DCP_INTERLEAVE=dcp[2],
        num_warps=num_warps,
    )


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::triton_convert_req_index_to_global_index
def _convert_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    BLOCK_SIZE: int = 64,
    BLOCK_STRIDE_ROWS: int | None = None,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    HAS_PREFILL_WORKSPACE: bool = False,
    prefill_workspace_request_ids: torch.Tensor | None = None,
    prefill_workspace_starts: torch.Tensor | None = None,
    prefill_workspace_rank_stride: int | None = None,
    dcp_size: int = 1,
    dcp_rank: int = 0,
    cp_kv_cache_interleave_size: int = 1,
    return_valid_counts: bool = False,
    out: torch.Tensor | None = None,
    valid_counts_out: torch.Tensor | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Map request-local top-k token ids to physical rows.

    For row ``n`` (request ``r = req_id[n]``) and entry ``t = token_indices[n, k]``:
    ``out = block_table[r, local(t) // BLOCK_SIZE] * BLOCK_STRIDE_ROWS + local(t) % BLOCK_SIZE``
    for paged rows, and ``prefill_workspace_starts[p] + owner(t) * rank_stride +
    local(t)`` for prefill rows (``p = prefill_workspace_request_ids[n] >= 0``),
    where ``owner``/``local`` are the DCP de-interleave (identity at
    ``dcp_size == 1``). ``-1`` stays ``-1``; a logical block past the table, a
    token owned by another DCP rank, and the guarded cases of the module
    docstring give ``-1``.

    With ``return_valid_counts`` the valid entries are compacted to the front
    of each row (order unspecified, tail ``-1``) and ``(out, valid_counts)`` is
    returned. ``BLOCK_STRIDE_ROWS`` (default ``BLOCK_SIZE``) is the row
    distance of two cache blocks, from :func:`flat_kv_row_view`.
    """
    BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N = _check_geometry(
        BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N)
    num_tokens = _check_index_inputs(req_id, block_table, token_indices, NUM_TOPK_TOKENS)
    dcp_size, dcp_rank, cp_kv_cache_interleave_size = _check_dcp(
        dcp_size, dcp_rank, cp_kv_cache_interleave_size, BLOCK_SIZE)
    device = token_indices.device

    rank_stride = 0
    if HAS_PREFILL_WORKSPACE:
        if prefill_workspace_request_ids is None or prefill_workspace_starts is None:
            check.fail("prefill_workspace_request_ids and prefill_workspace_starts",
                       "given when HAS_PREFILL_WORKSPACE=True", "None")
        _check_int32_tensor("prefill_workspace_request_ids", prefill_workspace_request_ids, 1,
                            device)
        _check_int32_tensor("prefill_workspace_starts", prefill_workspace_starts, 1, device)
        check.dim_size("prefill_workspace_request_ids", prefill_workspace_request_ids, num_tokens,
                       "one per row")
        for name, t in (("prefill_workspace_request_ids", prefill_workspace_request_ids),
                        ("prefill_workspace_starts", prefill_workspace_starts)):
            check.tensor(name, t, contiguous=True)
        if prefill_workspace_rank_stride is not None:
            rank_stride = check.integer("prefill_workspace_rank_stride", prefill_workspace_rank_stride)
        elif dcp_size > 1:
            check.fail("prefill_workspace_rank_stride", "given when dcp_size > 1 with a prefill "
                       "workspace (rows between two ranks' shards of the gathered workspace)", "None")
    if valid_counts_out is not None and not return_valid_counts:
        check.fail("valid_counts_out", "None when return_valid_counts=False", "a tensor")

    tiling = _remap_tiling(NUM_TOPK_TOKENS, BLOCK_N, return_valid_counts)
    single_tile = tiling[0]
    # Only multi-tile compaction needs the -1 padding and a zeroed counter.
    needs_prefill = return_valid_counts and not single_tile

    if out is None:
        out = torch.empty((num_tokens, NUM_TOPK_TOKENS), dtype=torch.int32, device=device)
    else:
        check.tensor("out", out, dtypes=(torch.int32,), ndim=2, device=device,
                     device_of="token_indices")
        if tuple(out.shape) != (num_tokens, NUM_TOPK_TOKENS):
            check.fail("out", f"shape {(num_tokens, NUM_TOPK_TOKENS)}", f"shape {tuple(out.shape)}")
        check.tensor("out", out, contiguous=True)
        if return_valid_counts and _overlaps(out, token_indices):
            check.fail("out", "a tensor other than token_indices (compaction cannot run in place)",
                       "token_indices' storage")
    if needs_prefill:
        out.fill_(-1)

    valid_counts = None
    if return_valid_counts:
        if valid_counts_out is None:
            alloc = torch.zeros if needs_prefill else torch.empty
            valid_counts = alloc(num_tokens, dtype=torch.int32, device=device)
        else:
            _check_int32_tensor("valid_counts_out", valid_counts_out, 1, device)
            check.dim_size("valid_counts_out", valid_counts_out, num_tokens, "one per row")
            check.tensor("valid_counts_out", valid_counts_out, contiguous=True)
            valid_counts = valid_counts_out
            if needs_prefill:
                valid_counts.zero_()

    if num_tokens:
        _launch_remap(
            req_id, block_table, token_indices, out, valid_counts,
            prefill_workspace_request_ids if HAS_PREFILL_WORKSPACE else None,
            prefill_workspace_starts if HAS_PREFILL_WORKSPACE else None,
            rank_stride=rank_stride, BLOCK_SIZE=BLOCK_SIZE,
            BLOCK_STRIDE_ROWS=BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS=NUM_TOPK_TOKENS,
            tiling=tiling, count_valid=return_valid_counts, compact=return_valid_counts,
            dcp=(dcp_size, dcp_rank, cp_kv_cache_interleave_size),
        )
    if return_valid_counts:
        return out, valid_counts
    return out


def _overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::triton_filter_and_convert_dcp_index
def _filter_and_convert_dcp_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int = 1,
    BLOCK_SIZE: int = 64,
    BLOCK_STRIDE_ROWS: int | None = None,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    return_valid_counts: bool = False,
    compact_valid_to_front: bool = True,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Keep this DCP rank's share of global top-k token ids, as local slots.

    Token ``t`` belongs to rank ``(t // I) % D`` and sits at local position
    ``(t // (D*I)) * I + t % I`` (``D = dcp_size``, ``I =
    cp_kv_cache_interleave_size``), paged through this rank's ``block_table``.
    Entries of other ranks become ``-1``. With ``compact_valid_to_front`` the
    owned entries form the prefix ``[0, count)`` of each row (order unspecified,
    the set is exact) and the tail is ``-1``. ``dcp_size == 1`` delegates to
    :func:`triton_convert_req_index_to_global_index`.
    """
    BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N = _check_geometry(
        BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N)
    dcp_size, dcp_rank, cp_kv_cache_interleave_size = _check_dcp(
        dcp_size, dcp_rank, cp_kv_cache_interleave_size, BLOCK_SIZE)
    if dcp_size == 1:
        return _convert_index(
            req_id, block_table, token_indices,
            BLOCK_SIZE=BLOCK_SIZE, BLOCK_STRIDE_ROWS=BLOCK_STRIDE_ROWS,
            NUM_TOPK_TOKENS=NUM_TOPK_TOKENS, BLOCK_N=BLOCK_N,
            return_valid_counts=return_valid_counts,
        )
    num_tokens = _check_index_inputs(req_id, block_table, token_indices, NUM_TOPK_TOKENS)
    device = token_indices.device

    # Compaction uses the count buffer as its slot allocator, so it counts.
    count_valid = return_valid_counts or compact_valid_to_front
    tiling = _remap_tiling(NUM_TOPK_TOKENS, BLOCK_N, count_valid)
    single_tile = tiling[0]
    if compact_valid_to_front and not single_tile:
        out = torch.full((num_tokens, NUM_TOPK_TOKENS), -1, dtype=torch.int32, device=device)
    else:
        out = torch.empty((num_tokens, NUM_TOPK_TOKENS), dtype=torch.int32, device=device)
    valid_counts = None
    if count_valid:
        alloc = torch.empty if single_tile else torch.zeros
        valid_counts = alloc(num_tokens, dtype=torch.int32, device=device)

    if num_tokens:
        _launch_remap(
            req_id, block_table, token_indices, out, valid_counts, None, None,
            rank_stride=0, BLOCK_SIZE=BLOCK_SIZE, BLOCK_STRIDE_ROWS=BLOCK_STRIDE_ROWS,
            NUM_TOPK_TOKENS=NUM_TOPK_TOKENS, tiling=tiling, count_valid=count_valid,
            compact=compact_valid_to_front,
            dcp=(dcp_size, dcp_rank, cp_kv_cache_interleave_size),
        )
    if return_valid_counts:
        return out, valid_counts
    return out


def _no_counts(out: torch.Tensor) -> torch.Tensor:
    """The second output of the functional ops when no counts were asked for."""
    return out.new_empty((0,))


def _convert_index_op(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    BLOCK_SIZE: int,
    BLOCK_STRIDE_ROWS: int | None,
    NUM_TOPK_TOKENS: int,
    BLOCK_N: int,
    HAS_PREFILL_WORKSPACE: bool,
    prefill_workspace_request_ids: torch.Tensor | None,
    prefill_workspace_starts: torch.Tensor | None,
    prefill_workspace_rank_stride: int | None,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int,
    return_valid_counts: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The body of ``torch.ops.portq.triton_convert_req_index_to_global_index``:
    ``(out, valid_counts)``, the counts empty unless ``return_valid_counts``."""
    result = _convert_index(req_id, block_table, token_indices, BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N, HAS_PREFILL_WORKSPACE, prefill_workspace_request_ids, prefill_workspace_starts, prefill_workspace_rank_stride, dcp_size, dcp_rank, cp_kv_cache_interleave_size, return_valid_counts)
    return result if return_valid_counts else (result, _no_counts(result))


def _convert_index_fake(req_id, block_table, token_indices, BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS,
                        BLOCK_N, HAS_PREFILL_WORKSPACE, prefill_workspace_request_ids,
                        prefill_workspace_starts, prefill_workspace_rank_stride, dcp_size, dcp_rank,
                        cp_kv_cache_interleave_size, return_valid_counts):
    rows = token_indices.shape[0]
    out = token_indices.new_empty((rows, NUM_TOPK_TOKENS), dtype=torch.int32)
    return out, token_indices.new_empty((rows if return_valid_counts else 0,), dtype=torch.int32)


def _convert_index_out_op(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    BLOCK_SIZE: int,
    BLOCK_STRIDE_ROWS: int | None,
    NUM_TOPK_TOKENS: int,
    BLOCK_N: int,
    HAS_PREFILL_WORKSPACE: bool,
    prefill_workspace_request_ids: torch.Tensor | None,
    prefill_workspace_starts: torch.Tensor | None,
    prefill_workspace_rank_stride: int | None,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int,
    return_valid_counts: bool,
    out: torch.Tensor,
    valid_counts_out: torch.Tensor | None,
) -> None:
    """The body of ``torch.ops.portq.triton_convert_req_index_to_global_index_out``:
    the same map written into ``out`` (and ``valid_counts_out``)."""
    _convert_index(req_id, block_table, token_indices, BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N, HAS_PREFILL_WORKSPACE, prefill_workspace_request_ids, prefill_workspace_starts, prefill_workspace_rank_stride, dcp_size, dcp_rank, cp_kv_cache_interleave_size, return_valid_counts, out=out, valid_counts_out=valid_counts_out)


def _filter_and_convert_dcp_index_op(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int,
    BLOCK_SIZE: int,
    BLOCK_STRIDE_ROWS: int | None,
    NUM_TOPK_TOKENS: int,
    BLOCK_N: int,
    return_valid_counts: bool,
    compact_valid_to_front: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The body of ``torch.ops.portq.triton_filter_and_convert_dcp_index``:
    ``(out, valid_counts)``, the counts empty unless ``return_valid_counts``."""
    result = _filter_and_convert_dcp_index(req_id, block_table, token_indices, dcp_size, dcp_rank,
                                           cp_kv_cache_interleave_size, BLOCK_SIZE, BLOCK_STRIDE_ROWS,
                                           NUM_TOPK_TOKENS, BLOCK_N, return_valid_counts,
                                           compact_valid_to_front)
    return result if return_valid_counts else (result, _no_counts(result))


def _filter_fake(req_id, block_table, token_indices, dcp_size, dcp_rank, cp_kv_cache_interleave_size,
                 BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N, return_valid_counts,
                 compact_valid_to_front):
    rows = token_indices.shape[0]
    out = token_indices.new_empty((rows, NUM_TOPK_TOKENS), dtype=torch.int32)
    return out, token_indices.new_empty((rows if return_valid_counts else 0,), dtype=torch.int32)


custom_ops.register("triton_convert_req_index_to_global_index", _convert_index_op, mutates_args=(),
                    fake=_convert_index_fake)
custom_ops.register("triton_convert_req_index_to_global_index_out", _convert_index_out_op,
                    mutates_args=("out", "valid_counts_out"), fake=custom_ops.no_output)
custom_ops.register("triton_filter_and_convert_dcp_index", _filter_and_convert_dcp_index_op, mutates_args=(),
                    fake=_filter_fake)


def triton_convert_req_index_to_global_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    BLOCK_SIZE: int = 64,
    BLOCK_STRIDE_ROWS: int | None = None,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    HAS_PREFILL_WORKSPACE: bool = False,
    prefill_workspace_request_ids: torch.Tensor | None = None,
    prefill_workspace_starts: torch.Tensor | None = None,
    prefill_workspace_rank_stride: int | None = None,
    dcp_size: int = 1,
    dcp_rank: int = 0,
    cp_kv_cache_interleave_size: int = 1,
    return_valid_counts: bool = False,
    out: torch.Tensor | None = None,
    valid_counts_out: torch.Tensor | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    if out is None:
        if valid_counts_out is not None and not return_valid_counts:
            check.fail("valid_counts_out", "None when return_valid_counts=False", "a tensor")
        if valid_counts_out is None:
            result, counts = custom_ops.call("triton_convert_req_index_to_global_index", req_id, block_table, token_indices, BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N, HAS_PREFILL_WORKSPACE, prefill_workspace_request_ids, prefill_workspace_starts, prefill_workspace_rank_stride, dcp_size, dcp_rank, cp_kv_cache_interleave_size, return_valid_counts)
            return (result, counts) if return_valid_counts else result
        out = _new_out(token_indices, NUM_TOPK_TOKENS)
    if return_valid_counts and valid_counts_out is None and isinstance(token_indices, torch.Tensor):
        valid_counts_out = torch.empty(token_indices.shape[:1], dtype=torch.int32, device=token_indices.device)
    custom_ops.call("triton_convert_req_index_to_global_index_out", req_id, block_table, token_indices, BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N, HAS_PREFILL_WORKSPACE, prefill_workspace_request_ids, prefill_workspace_starts, prefill_workspace_rank_stride, dcp_size, dcp_rank, cp_kv_cache_interleave_size, return_valid_counts, out, valid_counts_out)
    return (out, valid_counts_out) if return_valid_counts else out


def _new_out(token_indices, num_topk_tokens):
    check.tensor("token_indices", token_indices, ndim=2)
    return torch.empty((token_indices.shape[0], check.integer("NUM_TOPK_TOKENS", num_topk_tokens)),
                       dtype=torch.int32, device=token_indices.device)


def triton_filter_and_convert_dcp_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int = 1,
    BLOCK_SIZE: int = 64,
    BLOCK_STRIDE_ROWS: int | None = None,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    return_valid_counts: bool = False,
    compact_valid_to_front: bool = True,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    result, counts = custom_ops.call(
        "triton_filter_and_convert_dcp_index", req_id, block_table, token_indices, dcp_size, dcp_rank,
        cp_kv_cache_interleave_size, BLOCK_SIZE, BLOCK_STRIDE_ROWS, NUM_TOPK_TOKENS, BLOCK_N,
        return_valid_counts, compact_valid_to_front)
    return (result, counts) if return_valid_counts else result


triton_convert_req_index_to_global_index.__doc__ = _convert_index.__doc__
triton_filter_and_convert_dcp_index.__doc__ = _filter_and_convert_dcp_index.__doc__
