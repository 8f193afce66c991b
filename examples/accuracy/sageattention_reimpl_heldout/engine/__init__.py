"""The inference engine's layers that call the int8 attention."""

from .self_attention import cross_frames, prefill

__all__ = ["cross_frames", "prefill"]
