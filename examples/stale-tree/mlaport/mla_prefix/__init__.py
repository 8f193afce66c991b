"""MLA cached-prefix expansion (aiter's gather_kv_b_proj)."""

from mlaport.mla_prefix.gather_kv_b_proj import gather_kv_b_proj

__all__ = ["gather_kv_b_proj"]
