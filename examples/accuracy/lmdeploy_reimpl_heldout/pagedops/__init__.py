"""Triton ops a paged-cache decoder engine runs each step: RMSNorm, the
rotary embedding of queries and keys by position id, the fill of new keys
and values into the block-paged cache, and multinomial sampling of the next
token from sorted probabilities.

Re-exports what the engine calls; the kernels live in the submodules. The
ops run forward only, in fp16 or fp32, on one NVIDIA GPU. Nothing here
schedules sequences or allocates cache blocks.
"""

from . import sampling
from .kv_cache import fill_paged_kv
from .norm import add_rms_norm, rms_norm
from .rotary import rotate_qk

__all__ = ["add_rms_norm", "fill_paged_kv", "rms_norm", "rotate_qk", "sampling"]
