"""Nonzero kernel lengths for sparse-MLA rows that may be empty.

Under DCP (a rank may own none of a row's top-k tokens) or HiSparse a query row
can end up with zero valid entries; the TRT-LLM sparse decode kernel cannot
take a zero length. ``prepare_sparse_mla_safe_lengths`` gives every empty row
one legal dummy entry (slot 0 in column 0) and returns lengths clamped to at
least 1, leaving the raw counts untouched so the caller can later zero the
output (or set the LSE to -inf) of exactly those rows. ``reference.py`` has the
same function in plain PyTorch.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from .. import validation as check

# Rows per program: a tile of counts is one coalesced load; rows past the end
# (259 rows: one full tile and a partial one) are masked.
SAFE_LENGTHS_ROWS_PER_PROGRAM = 256


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::sparse_mla_prepare_safe_lengths_kernel
@triton.jit
def sparse_mla_prepare_safe_lengths_kernel(
    physical_indices_ptr,  # int32 [num_tokens, topk], any strides
    valid_counts_ptr,  # int32 [num_tokens], any stride
    safe_lengths_ptr,  # int32 [num_tokens], contiguous
    num_tokens,
    physical_indices_stride,  # row stride of physical_indices, elements
    valid_counts_stride,
    BLOCK: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = rows < num_tokens
    rows64 = rows.to(tl.int64)
    counts = tl.load(valid_counts_ptr + rows64 * valid_counts_stride, mask=in_range, other=1)
    is_empty = in_range & (counts == 0)
    # Column 0 only: the dummy slot; every other element stays as it was.
    tl.store(
        physical_indices_ptr + rows64 * physical_indices_stride,
        tl.zeros([BLOCK], tl.int32),
        mask=is_empty,
    )
    tl.store(safe_lengths_ptr + rows64, tl.maximum(counts, 1), mask=in_range)


def _safe_lengths_grid(num_tokens: int) -> tuple[int]:
    """1-D over row tiles: the work is one int per row, so a program takes a
    whole tile of rows and the grid only has to cover ``num_tokens``."""
    return (triton.cdiv(num_tokens, SAFE_LENGTHS_ROWS_PER_PROGRAM),)


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::prepare_sparse_mla_safe_lengths
def _prepare_sparse_mla_safe_lengths(
    physical_indices: torch.Tensor, valid_counts: torch.Tensor
) -> torch.Tensor:
    """Install slot 0 in column 0 of every row whose count is 0; return
    ``valid_counts.clamp(min=1)`` as a new int32 tensor.

    ``physical_indices`` ([num_tokens, topk] int32, any strides, e.g. a column
    slice) is written in place at ``[n, 0]`` of empty rows only;
    ``valid_counts`` ([num_tokens] int32, any stride) is only read.
    """
    check.tensor("valid_counts", valid_counts, dtypes=(torch.int32,), ndim=1)
    check.tensor("physical_indices", physical_indices, dtypes=(torch.int32,), ndim=2,
                 device=valid_counts.device, device_of="valid_counts")
    num_tokens = valid_counts.shape[0]
    check.dim_size("physical_indices", physical_indices, num_tokens, "one per valid count")
    if num_tokens and physical_indices.shape[1] < 1:
        check.fail("physical_indices", "at least one column (for the dummy slot)",
                   f"shape {tuple(physical_indices.shape)}")
    safe_lengths = torch.empty((num_tokens,), dtype=torch.int32, device=valid_counts.device)
    if num_tokens:
        sparse_mla_prepare_safe_lengths_kernel[_safe_lengths_grid(num_tokens)](
            physical_indices,
            valid_counts,
            safe_lengths,
            num_tokens,
            physical_indices.stride(0),
            valid_counts.stride(0),
            BLOCK=SAFE_LENGTHS_ROWS_PER_PROGRAM,
        )
    return safe_lengths


def _safe_lengths_fake(physical_indices, valid_counts):
    return valid_counts.new_empty(valid_counts.shape[:1], dtype=torch.int32)


custom_ops.register("prepare_sparse_mla_safe_lengths", _prepare_sparse_mla_safe_lengths,
                    mutates_args=("physical_indices",), fake=_safe_lengths_fake)


def prepare_sparse_mla_safe_lengths(
    physical_indices: torch.Tensor, valid_counts: torch.Tensor
) -> torch.Tensor:
    return custom_ops.call("prepare_sparse_mla_safe_lengths", physical_indices, valid_counts)


prepare_sparse_mla_safe_lengths.__doc__ = _prepare_sparse_mla_safe_lengths.__doc__
