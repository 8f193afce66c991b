"""The engine's attention prelude for a decode step, on the vendored xformers ops."""

from .attention_prelude import AttentionPrelude

__all__ = ["AttentionPrelude"]
