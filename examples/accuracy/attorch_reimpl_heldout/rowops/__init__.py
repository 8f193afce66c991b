"""Forward-only Triton kernels of the engine's classifier head: element-wise
activations and the row softmax. Re-exports the host entry points; holds no
kernels of its own and imports nothing from engine/."""

from .tiles import elementwise_config, elementwise_configs, rows_per_program
from .activations import ActivationOp, activate_tensor
from .softmax import RowSoftmaxOp, softmax_rows

__all__ = [
    "elementwise_config",
    "elementwise_configs",
    "rows_per_program",
    "ActivationOp",
    "activate_tensor",
    "RowSoftmaxOp",
    "softmax_rows",
]
