"""The inference engine's Llama decoder layer over 4-bit GPTQ weights,
calling the vendored cuda_ext wrapper."""

from .llama import DecoderLayer, QuantLinear

__all__ = ["DecoderLayer", "QuantLinear"]
