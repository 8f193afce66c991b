"""KERNEL-ATTN-MLA-SPARSE: sparse-MLA index utilities.

Triton ports of vLLM's ``vllm/v1/attention/backends/mla/sparse_utils.py``:
the top-k index remap (paged slots, prefill workspace rows, DCP filtering,
fused valid counts and compaction), the empty-row length guard, and the
host-side layout helpers. ``reference`` holds the PyTorch semantics.
"""
from .convert_index import (
    triton_convert_req_index_to_global_index,
    triton_filter_and_convert_dcp_index,
)
from .row_view import flat_kv_row_view, request_row_bounds
from .safe_lengths import prepare_sparse_mla_safe_lengths

__all__ = [
    "triton_convert_req_index_to_global_index",
    "triton_filter_and_convert_dcp_index",
    "prepare_sparse_mla_safe_lengths",
    "flat_kv_row_view",
    "request_row_bounds",
]
