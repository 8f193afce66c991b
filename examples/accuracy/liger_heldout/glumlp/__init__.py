"""Gated feed-forward activations (SwiGLU, tanh-GeGLU) as row-wise Triton
kernels, and the dense SwiGLU block built on them.

Re-exports what the engine uses; the kernels live in the submodules. It
computes activations and owns no model configuration or checkpoint loading.
"""

from .geglu import GeGLUOp, geglu_fwd
from .mlp import SwiGLUMLP
from .swiglu import SwiGLUOp, swiglu_packed

__all__ = ["GeGLUOp", "SwiGLUMLP", "SwiGLUOp", "geglu_fwd", "swiglu_packed"]
