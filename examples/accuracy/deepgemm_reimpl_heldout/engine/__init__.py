"""The inference engine's FP8 linear layers, calling the GEMMs."""

from .fp8_linear import dense_fp8_linear, moe_fp8_experts

__all__ = ["dense_fp8_linear", "moe_fp8_experts"]
