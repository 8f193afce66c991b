"""The vendored kernels, gathered as upstream's kernel package exposes them
(the softmax and layer-norm classes, the row reductions)."""

from .layer_norm import LayerNorm
from .math import maximum, mean, variance
from .softmax import Softmax

__all__ = ["LayerNorm", "Softmax", "maximum", "mean", "variance"]
