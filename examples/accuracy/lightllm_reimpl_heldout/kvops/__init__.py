"""Triton ops a decoder engine runs over packed tokens: RMSNorm, the in-place
rotary embedding, the scatter of new keys and values into the paged cache,
and causal prefill attention over a batch of variable-length prompts.

Re-exports what the engine calls; the kernels live in the submodules. The
ops run forward only, in fp16 or fp32, on one NVIDIA GPU. Nothing here knows
about models, schedulers or the cache's allocator.
"""

from . import rotary
from .kv_cache import scatter_kv, scatter_kv_pair
from .norm import rms_norm
from .prefill import prefill_attention

__all__ = ["prefill_attention", "rms_norm", "rotary", "scatter_kv", "scatter_kv_pair"]
