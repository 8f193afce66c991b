"""The inference engine's encoder layer, calling the fused kernels."""

from .encoder import encoder_layer

__all__ = ["encoder_layer"]
