"""Safe kernel lengths for empty sparse-MLA queries.

Taken from upstream right after it learnt to read strided counts, which is
why its anchors pin that commit.
"""

import torch
import triton
import triton.language as tl


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::sparse_mla_prepare_safe_lengths_kernel @32b0f88609
@triton.jit
def sparse_mla_prepare_safe_lengths_kernel(
    physical_indices_ptr,
    valid_counts_ptr,
    safe_lengths_ptr,
    num_tokens,
    physical_indices_stride,
    valid_counts_stride,
    BLOCK: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = rows < num_tokens
    counts = tl.load(valid_counts_ptr + rows * valid_counts_stride, mask=in_range, other=1)
    tl.store(physical_indices_ptr + rows * physical_indices_stride,
             tl.zeros([BLOCK], tl.int32), mask=in_range & (counts == 0))
    tl.store(safe_lengths_ptr + rows, tl.maximum(counts, 1), mask=in_range)


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::prepare_sparse_mla_safe_lengths @32b0f88609
def prepare_sparse_mla_safe_lengths(physical_indices: torch.Tensor,
                                    valid_counts: torch.Tensor) -> torch.Tensor:
    """Slot 0 in column 0 of every empty row; lengths clamped to at least 1."""
    num_tokens = valid_counts.numel()
    safe_lengths = torch.empty((num_tokens,), dtype=valid_counts.dtype, device=valid_counts.device)
    if num_tokens:
        sparse_mla_prepare_safe_lengths_kernel[(triton.cdiv(num_tokens, 256),)](
            physical_indices, valid_counts, safe_lengths, num_tokens,
            physical_indices.stride(0), valid_counts.stride(0), BLOCK=256,
        )
    return safe_lengths
