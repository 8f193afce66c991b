"""The engine's FP8 linear layers on the vendored DeepGEMM hosts."""

from .fp8_linear import dense_fp8_linear, moe_fp8_experts, quantize_tokens, quantize_weight

__all__ = ["dense_fp8_linear", "moe_fp8_experts", "quantize_tokens", "quantize_weight"]
