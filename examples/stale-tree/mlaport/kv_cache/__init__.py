"""Paged KV-cache write, gather and upconvert ops (vLLM's cache_kernels.cu)."""

from mlaport.kv_cache.concat import concat_and_cache_mla
from mlaport.kv_cache.gather import gather_and_maybe_dequant_cache
from mlaport.kv_cache.upconvert import (
    cp_gather_and_upconvert_fp8_kv_cache,
    cp_gather_and_upconvert_nvfp4_kv_cache,
)

__all__ = [
    "concat_and_cache_mla",
    "gather_and_maybe_dequant_cache",
    "cp_gather_and_upconvert_fp8_kv_cache",
    "cp_gather_and_upconvert_nvfp4_kv_cache",
]
