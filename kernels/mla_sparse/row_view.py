"""Host-side layout helpers of the sparse-MLA backends (no kernels).

``flat_kv_row_view`` turns a paged cache into the flat ``[row, head_dim]``
matrix the sparse attention kernels index, and reports how many rows apart two
blocks are (``BLOCK_STRIDE_ROWS`` of the index remap): when other layers' pages
are interleaved between this cache's blocks that distance exceeds the block
size. ``request_row_bounds`` finds the runs of rows that belong to one request
(PCP gives a rank two adjacent chunk rows of one split prefill, and the sparse
backends give such a run a single KV region). Both raise ``ValueError`` where
upstream asserts.
"""
from __future__ import annotations

import numpy as np
import torch


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::flat_kv_row_view
def flat_kv_row_view(kv_cache: torch.Tensor, block_size: int) -> tuple[torch.Tensor, int]:
    """Return ``(rows, block_stride_rows)`` for ``kv_cache`` [num_blocks, block_size, head_dim].

    Row of (block ``b``, offset ``o``) is ``b * block_stride_rows + o``; rows
    between two blocks belong to other layers and are never produced by the
    index remap. ``rows`` is a view on the same storage (no copy).
    """
    if not isinstance(kv_cache, torch.Tensor):
        raise TypeError(f"kv_cache must be a torch.Tensor, got {type(kv_cache).__name__}")
    if kv_cache.dim() != 3:
        raise ValueError(
            f"kv_cache must be [num_blocks, block_size, head_dim], got shape "
            f"{tuple(kv_cache.shape)}"
        )
    num_blocks, cache_block_size, head_dim = kv_cache.shape
    if not isinstance(block_size, int) or block_size != cache_block_size:
        raise ValueError(f"block_size must be kv_cache.shape[1] ({cache_block_size}), "
                         f"got {block_size}")
    if num_blocks < 1 or head_dim < 1:
        raise ValueError(f"kv_cache must be at least one block and one column, got shape "
                         f"{tuple(kv_cache.shape)}")
    # Rows inside a block must be packed, or a flat row index misaddresses.
    if kv_cache.stride(2) != 1 or (block_size > 1 and kv_cache.stride(1) != head_dim):
        raise ValueError(
            f"kv_cache must be rows packed inside a block (strides (*, {head_dim}, 1)), "
            f"got strides {kv_cache.stride()}"
        )
    if kv_cache.stride(0) % head_dim:
        raise ValueError(
            f"kv_cache: block stride {kv_cache.stride(0)} is not a whole number of "
            f"{head_dim}-element rows; flat row indexing would misaddress"
        )
    block_stride_rows = kv_cache.stride(0) // head_dim
    if num_blocks > 1 and block_stride_rows < block_size:
        raise ValueError(
            f"kv_cache: blocks overlap (block stride {block_stride_rows} rows < block_size "
            f"{block_size})"
        )
    num_rows = (num_blocks - 1) * block_stride_rows + block_size
    rows = kv_cache.as_strided((num_rows, head_dim), (head_dim, 1))
    return rows, block_stride_rows


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::request_row_bounds
def request_row_bounds(req_idx: np.ndarray) -> np.ndarray:
    """Run boundaries of ``req_idx``: run ``r`` is rows ``[bounds[r], bounds[r+1])``.

    ``bounds[0] == 0`` and ``bounds[-1] == len(req_idx)``; every request must
    occupy one run of adjacent rows.
    """
    req_idx = np.asarray(req_idx)
    if req_idx.ndim != 1:
        raise ValueError(f"req_idx must be a 1-D array, got shape {req_idx.shape}")
    if req_idx.size == 0:
        raise ValueError("req_idx must be at least one row, got an empty array")
    bounds = np.flatnonzero(np.r_[True, req_idx[1:] != req_idx[:-1], True])
    num_requests = np.unique(req_idx).size
    if bounds.size - 1 != num_requests:
        raise ValueError(
            f"req_idx: rows of one request must be adjacent; found {bounds.size - 1} runs "
            f"for {num_requests} requests"
        )
    return bounds
