"""A decoder block's norms, the caller of normops."""

from .block_norms import DecoderNorms

__all__ = ["DecoderNorms"]
