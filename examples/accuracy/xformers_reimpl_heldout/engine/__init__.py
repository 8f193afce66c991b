"""The engine's attention prelude for a decode step, the caller of kvprep."""

from .attention_prelude import AttentionPrelude

__all__ = ["AttentionPrelude"]
