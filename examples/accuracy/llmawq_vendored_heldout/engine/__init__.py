"""The engine's decoder layer on the vendored llm-awq modules."""

from .decoder import DecoderLayer, build_extension

__all__ = ["DecoderLayer", "build_extension"]
