"""The engine's decoder pieces that call ffnops; owns no kernels."""

from .ffn_block import FeedForwardBlock

__all__ = ["FeedForwardBlock"]
