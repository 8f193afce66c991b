"""The engine's prefill attention on the vendored MInference ops."""

from .prefill import prefill_attention

__all__ = ["prefill_attention"]
