"""Low-bit weight-only matmuls for the engine, in Triton with PyTorch host
code: n-bit weights (1, 2, 4 or 8 bits) packed along the reduction axis
into int32 words, per-group scales and zeros applied as (W - zeros) *
scales, a tiled GEMM for batches and an atomic-add GEMV for single rows,
and the linear layer that packs the weights and picks a kernel. Must not
import the engine."""

from .dtypes import DType
from .gemm import GEMM
from .gemv import GEMV
from .linear import LowBitLinear, unpack_columns

__all__ = ["DType", "GEMM", "GEMV", "LowBitLinear", "unpack_columns"]
