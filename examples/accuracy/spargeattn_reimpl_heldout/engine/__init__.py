"""The inference engine's attention layer, calling the sparse kernels."""

from .attention_layer import self_attention

__all__ = ["self_attention"]
