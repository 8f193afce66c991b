"""A minimal encoder block's inference step on the vendored Trident kernels."""

from .encoder_step import EncoderStep

__all__ = ["EncoderStep"]
