"""PyTorch references of the in-tree MLA prefill callers.

Each reference runs the caller's own iteration on the *reference* ops of the
kernel rows it drives (``portq_kernels.kv_cache.reference``,
``portq_kernels.mla_prefix.reference``, ``portq_kernels.mla_sparse.reference``),
so a caller test compares the Triton kernels, composed the way an engine
composes them, against the rows' oracles. The planning (chunk bounds,
workspace starts) is plain host arithmetic shared with the callers and has its
own tests with hand-computed plans.
"""
from __future__ import annotations

from portq_kernels.kv_cache import reference as kv_cache_ref
from portq_kernels.mla_prefix import reference as mla_prefix_ref
from portq_kernels.mla_sparse import reference as mla_sparse_ref

from . import chunked_context, sparse_prefill

CHUNKED_CONTEXT_REFERENCE_OPS = chunked_context.ChunkedContextOps(
    gather_and_maybe_dequant_cache=kv_cache_ref.gather_and_maybe_dequant_cache,
    cp_gather_cache=kv_cache_ref.cp_gather_cache,
    gather_kv_b_proj=mla_prefix_ref.gather_kv_b_proj,
)

SPARSE_PREFILL_REFERENCE_OPS = sparse_prefill.SparsePrefillOps(
    cp_gather_and_upconvert_fp8_kv_cache=kv_cache_ref.cp_gather_and_upconvert_fp8_kv_cache,
    cp_gather_and_upconvert_nvfp4_kv_cache=kv_cache_ref.cp_gather_and_upconvert_nvfp4_kv_cache,
    convert_req_index_to_global_index=(
        mla_sparse_ref.triton_convert_req_index_to_global_index),
)


def iter_prefill_context_chunks(*args, **kwargs):
    """Reference of :func:`chunked_context.iter_prefill_context_chunks` (same arguments)."""
    return chunked_context.iter_prefill_context_chunks(
        *args, ops=CHUNKED_CONTEXT_REFERENCE_OPS, **kwargs)


def remap_sparse_topk(*args, **kwargs):
    """Reference of :func:`sparse_prefill.remap_sparse_topk` (stable compaction order)."""
    return sparse_prefill.remap_sparse_topk(*args, ops=SPARSE_PREFILL_REFERENCE_OPS, **kwargs)


def iter_sparse_prefill_chunks(*args, **kwargs):
    """Reference of :func:`sparse_prefill.iter_sparse_prefill_chunks` (same arguments)."""
    return sparse_prefill.iter_sparse_prefill_chunks(
        *args, ops=SPARSE_PREFILL_REFERENCE_OPS, **kwargs)
