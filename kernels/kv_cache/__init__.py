"""KERNEL-KV-CACHE: paged MLA KV-cache write, gather, dequant and upconvert.

Triton ports of vLLM's MLA cache kernels (``csrc/libtorch_stable/
cache_kernels.cu`` and ``nvfp4_ds_mla_cache_kernels.cu``), with upstream's op
names and parameter order so an engine can swap them in:

* :func:`concat_and_cache_mla` - write latent + RoPE into the cache
  (auto / fp8 / fp8_e5m2 / fp8_ds_mla / nvfp4_ds_mla);
* :func:`gather_and_maybe_dequant_cache` - paged -> dense rows, fp8 dequant;
* :func:`cp_gather_cache` - paged -> dense rows, raw bit copy of any entry;
* :func:`cp_gather_and_upconvert_fp8_kv_cache` - fp8_ds_mla -> bf16 rows;
* :func:`cp_gather_and_upconvert_nvfp4_kv_cache` - nvfp4_ds_mla -> bf16 rows,
  with ``seq_starts``.

The gathers use upstream's page-task launch (#51739). ``reference`` holds the
plain-PyTorch semantics with the same signatures (CPU oracles for other rows).
Index values are checked inside the kernels (``portq_kernels.validation``);
:func:`trusted_index_values` is kept for compatibility and does nothing.
"""
from ..validation import trusted_index_values
from .concat_and_cache_mla import concat_and_cache_mla
from .cp_gather_and_upconvert_fp8_kv_cache import cp_gather_and_upconvert_fp8_kv_cache
from .cp_gather_and_upconvert_nvfp4_kv_cache import cp_gather_and_upconvert_nvfp4_kv_cache
from .cp_gather_cache import cp_gather_cache
from .gather_and_maybe_dequant_cache import gather_and_maybe_dequant_cache

__all__ = [
    "concat_and_cache_mla",
    "cp_gather_and_upconvert_fp8_kv_cache",
    "cp_gather_and_upconvert_nvfp4_kv_cache",
    "cp_gather_cache",
    "gather_and_maybe_dequant_cache",
    "trusted_index_values",
]
