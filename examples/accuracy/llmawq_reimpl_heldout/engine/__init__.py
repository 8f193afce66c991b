"""The inference engine's decoder layer, calling the AWQ kernels."""

from .decoder import DecoderLayer

__all__ = ["DecoderLayer"]
