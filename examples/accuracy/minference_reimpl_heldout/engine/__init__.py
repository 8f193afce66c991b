"""The inference engine's prefill attention, calling the sparse kernels."""

from .prefill import prefill_attention

__all__ = ["prefill_attention"]
