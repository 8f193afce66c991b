"""The engine's encoder layer on the vendored LayerNorm and attention."""

from .encoder import encoder_layer

__all__ = ["encoder_layer"]
