"""The engine's quantised linear layer on the vendored GPTQModel Triton kernels."""

from .qlinear import GPTQLinear

__all__ = ["GPTQLinear"]
