"""The engine's attention layers on the vendored piecewise attention."""

from .long_context import prefill, train_step

__all__ = ["prefill", "train_step"]
