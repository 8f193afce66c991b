"""The engine's MLA decode layer over FlashMLA's vendored interface; owns no kernels."""

from .mla_decode import decode_step

__all__ = ["decode_step"]
