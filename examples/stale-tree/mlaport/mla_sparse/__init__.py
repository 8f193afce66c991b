"""Sparse-MLA index utilities (vLLM's sparse_utils.py)."""

from mlaport.mla_sparse.indices import (
    triton_convert_req_index_to_global_index,
    triton_filter_and_convert_dcp_index,
)
from mlaport.mla_sparse.safe_lengths import prepare_sparse_mla_safe_lengths

__all__ = [
    "triton_convert_req_index_to_global_index",
    "triton_filter_and_convert_dcp_index",
    "prepare_sparse_mla_safe_lengths",
]
