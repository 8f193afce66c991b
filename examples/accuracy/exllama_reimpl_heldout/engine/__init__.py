"""The inference engine's Llama decoder layer over 4-bit GPTQ weights,
calling the q4kern host layer."""

from .llama import DecoderLayer, QuantLinear

__all__ = ["DecoderLayer", "QuantLinear"]
