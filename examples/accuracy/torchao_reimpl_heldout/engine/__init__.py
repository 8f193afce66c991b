"""A low-precision linear layer of the engine, the caller of mxcast."""

from .mx_linear import MXLinear

__all__ = ["MXLinear"]
