"""Host-side layout helpers of the sparse-MLA backends (no kernels).

``flat_kv_row_view`` turns a paged cache into the flat ``[row, head_dim]``
matrix the sparse attention kernels index, and reports how many rows apart two
blocks are (``BLOCK_STRIDE_ROWS`` of the index remap): when other layers' pages
are interleaved between this cache's blocks that distance exceeds the block
size. ``request_row_bounds`` finds the runs of rows that belong to one request
(PCP gives a rank two adjacent chunk rows of one split prefill, and the sparse
backends give such a run a single KV region). Both raise ``ValueError`` where
upstream asserts (``TypeError`` for a wrong type), through ``portq_kernels.validation``.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import validation as check


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::flat_kv_row_view
def flat_kv_row_view(kv_cache: torch.Tensor, block_size: int) -> tuple[torch.Tensor, int]:
    """Return ``(rows, block_stride_rows)`` for ``kv_cache`` [num_blocks, block_size, head_dim].

    Row of (block ``b``, offset ``o``) is ``b * block_stride_rows + o``; rows
    between two blocks belong to other layers and are never produced by the
    index remap. ``rows`` is a view on the same storage (no copy).
    """
    check.tensor("kv_cache", kv_cache, ndim=3)
    num_blocks, cache_block_size, head_dim = kv_cache.shape
    block_size = check.integer("block_size", block_size)
    if block_size != cache_block_size:
        check.fail("block_size", f"kv_cache.shape[1] ({cache_block_size})", block_size)
    if num_blocks < 1 or head_dim < 1:
        check.fail("kv_cache", "at least one block and one column", f"shape {tuple(kv_cache.shape)}")
    # Rows inside a block must be packed, or a flat row index misaddresses.
    if kv_cache.stride(2) != 1 or (block_size > 1 and kv_cache.stride(1) != head_dim):
        check.fail("kv_cache", f"rows packed inside a block (strides (*, {head_dim}, 1))",
                   f"strides {kv_cache.stride()}")
    if kv_cache.stride(0) % head_dim:
        check.fail("kv_cache", f"a block stride of whole {head_dim}-element rows (flat row "
                   "indexing would misaddress)", f"strides {kv_cache.stride()}")
    block_stride_rows = kv_cache.stride(0) // head_dim
    if num_blocks > 1 and block_stride_rows < block_size:
        check.fail("kv_cache", f"blocks that do not overlap (a block stride >= block_size "
                   f"{block_size} rows)", f"{block_stride_rows} rows")
    num_rows = (num_blocks - 1) * block_stride_rows + block_size
    rows = kv_cache.as_strided((num_rows, head_dim), (head_dim, 1))
    return rows, block_stride_rows


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::request_row_bounds
def request_row_bounds(req_idx: np.ndarray) -> np.ndarray:
    """Run boundaries of ``req_idx``: run ``r`` is rows ``[bounds[r], bounds[r+1])``.

    ``bounds[0] == 0`` and ``bounds[-1] == len(req_idx)``; every request must
    occupy one run of adjacent rows.
    """
    req_idx = check.host_array("req_idx", req_idx)
    if req_idx.size == 0:
        check.fail("req_idx", "at least one row", "an empty array")
    bounds = np.flatnonzero(np.r_[True, req_idx[1:] != req_idx[:-1], True])
    num_requests = np.unique(req_idx).size
    if bounds.size - 1 != num_requests:
        check.fail("req_idx", "one run of adjacent rows per request",
                   f"{bounds.size - 1} runs for {num_requests} requests")
    return bounds
