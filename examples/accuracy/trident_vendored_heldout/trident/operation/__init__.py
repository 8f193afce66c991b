"""The vendored autograd operations (softmax, layer norm)."""

from .layer_norm import LayerNorm
from .softmax import Softmax

__all__ = ["LayerNorm", "Softmax"]
