"""The activation/output precisions a layer is built for."""

from enum import Enum


# portq: ports gemlite:gemlite/core.py::DType @1fc7d50
class DType(Enum):
    FP16 = "FP16"
    BF16 = "BF16"
    FP32 = "FP32"
    INT8 = "INT8"
    INT32 = "INT32"
    FP16D8 = "FP16D8i"  # fp16 activations quantised to int8 on the fly
