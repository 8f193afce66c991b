"""KERNEL-ATTN-MLA-PREFIX: MLA cached-prefix expansion (aiter's ``gather_kv_b_proj``).

``gather_kv_b_proj`` is the Triton op (``gather_kv_b_proj.py``); ``reference``
holds the plain-PyTorch semantics it is tested against, also usable as a CPU
oracle by callers.
"""
from .gather_kv_b_proj import gather_kv_b_proj

__all__ = ["gather_kv_b_proj"]
