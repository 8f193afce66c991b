"""The engine's output-head pieces that call rowops; owns no kernels."""

from .head import ClassifierHead

__all__ = ["ClassifierHead"]
