"""Triton normalisation ops of the vision tower: LayerNorm (forward and
backward), GroupNorm (forward only) and Dynamic Tanh, re-implemented from
Liger-Kernel's ops.

The ops target NVIDIA GPUs; XPU and NPU launch settings are not carried.
Nothing here knows about models: the engine owns weights and shapes.
"""

# The engine calls the LayerNorm and GroupNorm ops directly and keeps its own parameters.
# portq: not-carried liger:src/liger_kernel/transformers/layer_norm.py::LigerLayerNorm -- the engine holds weight and bias and calls the op
# portq: not-carried liger:src/liger_kernel/transformers/group_norm.py::LigerGroupNorm -- the engine holds weight and bias and calls the op

from . import groupnorm, tiles
from .dyt import DynamicTanh, DyTOp
from .layernorm import LayerNormOp

__all__ = ["DyTOp", "DynamicTanh", "LayerNormOp", "groupnorm", "tiles"]
