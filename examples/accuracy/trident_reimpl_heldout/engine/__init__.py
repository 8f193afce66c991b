"""A minimal encoder block's inference step, the caller of rowops."""

from .encoder_step import EncoderStep

__all__ = ["EncoderStep"]
