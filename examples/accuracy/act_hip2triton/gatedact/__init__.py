"""Gated activations for the MoE and dense MLPs: a Triton port of aiter's
HIP ``silu_and_mul`` (csrc/kernels/activation_kernels.cu)."""

from gatedact.silu_and_mul import silu_and_mul

__all__ = ["silu_and_mul"]
