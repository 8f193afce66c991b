"""The inference engine's 3-bit decoding block, calling the packed3 layer."""

from .decode import DecodeMLP, quantize_model

__all__ = ["DecodeMLP", "quantize_model"]
