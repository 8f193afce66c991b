"""The inference engine's layers that call two-score attention."""

from .long_context import decode_window, prefill

__all__ = ["decode_window", "prefill"]
