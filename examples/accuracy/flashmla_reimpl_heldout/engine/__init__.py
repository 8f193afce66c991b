"""The inference engine's MLA decode layer, calling the decode kernels."""

from .mla_decode import decode_step

__all__ = ["decode_step"]
