"""The engine's FP8 linear layers, on the fp8ops kernels."""

from .linear import Fp8BlockwiseLinear, Fp8RowwiseLinear

__all__ = ["Fp8BlockwiseLinear", "Fp8RowwiseLinear"]
