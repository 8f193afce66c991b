"""The engine's Mamba-style mixer pieces over causal-conv1d's vendored interface; owns no kernels."""

from .mixer import ConvMixer

__all__ = ["ConvMixer"]
