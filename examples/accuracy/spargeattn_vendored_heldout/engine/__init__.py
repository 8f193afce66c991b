"""The engine's attention layer on the vendored SpargeAttn modules."""

from .attention_layer import self_attention

__all__ = ["self_attention"]
