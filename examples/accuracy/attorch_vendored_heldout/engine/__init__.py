"""The engine's output-head pieces that call the vendored attorch layers;
owns no kernels."""

from .head import ClassifierHead

__all__ = ["ClassifierHead"]
