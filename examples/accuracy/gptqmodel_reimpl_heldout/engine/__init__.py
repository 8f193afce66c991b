"""The engine's quantised linear layer on the GPTQ Triton kernels."""

from .qlinear import GPTQLinear

__all__ = ["GPTQLinear"]
