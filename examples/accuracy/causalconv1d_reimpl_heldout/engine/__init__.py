"""The engine's Mamba-style mixer pieces that call convstate; owns no kernels."""

from .mixer import ConvMixer

__all__ = ["ConvMixer"]
