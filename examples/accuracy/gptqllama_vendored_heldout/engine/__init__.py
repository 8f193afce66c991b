"""The inference engine's 3-bit decoding block, on the vendored quant.py."""

from .decode import DecodeMLP, quantize_model

__all__ = ["DecodeMLP", "quantize_model"]
