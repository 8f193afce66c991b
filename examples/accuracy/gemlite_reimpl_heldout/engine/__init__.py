"""The inference engine's MLP block over low-bit weights, calling the
lowbit linear layer."""

from .mlp import QuantMLP, quantize_linear

__all__ = ["QuantMLP", "quantize_linear"]
