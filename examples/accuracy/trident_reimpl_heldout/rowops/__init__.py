"""Row-wise softmax and layer norm in Triton for the engine: one program per
row, the row walked in tiles. Forward only; holds no model state."""

from .layernorm import LayerNormOp
from .softmax import SoftmaxOp

__all__ = ["LayerNormOp", "SoftmaxOp"]
