"""The engine's attention layers on the vendored SageAttention subset."""

from .attention_layer import cross_attention, prefill

__all__ = ["cross_attention", "prefill"]
