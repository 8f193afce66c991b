"""Multi-head latent attention decoding for the engine: the per-SM split
schedule of the batch's KV blocks, the split-KV decode attention over a paged
latent cache (v the first 512 dims of k) and the combine of the splits, all
in Triton, with PyTorch host code. Must not import the engine."""

from .interface import flash_mla_with_kvcache, get_mla_metadata

__all__ = ["get_mla_metadata", "flash_mla_with_kvcache"]
