"""The inference engine's low-bit linear over the vendored GemLite
kernels."""

from .linear import QuantLinear, lowbit_matmul

__all__ = ["QuantLinear", "lowbit_matmul"]
