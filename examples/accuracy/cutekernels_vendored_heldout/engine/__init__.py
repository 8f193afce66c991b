"""A decoder layer's feed-forward block on the vendored cute-kernels operations."""

from .ffn_block import FeedForwardBlock

__all__ = ["FeedForwardBlock"]
