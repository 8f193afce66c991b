"""FP8 linear layers: weights quantised once at load, activations per call.

Owns no kernels: quantisation and the scaled matmuls are fp8ops'.
"""

import torch

import fp8ops.gemm as gemm
from fp8ops import dequantize_rowwise, quantize_blockwise, quantize_rowwise
from fp8ops.gemm import fp8_blockwise_matmul as blockwise_mm


class Fp8RowwiseLinear:
    """``y = x @ weight.T`` with both sides row-wise e4m3 (one scale per token and per output)."""

    def __init__(self, weight: torch.Tensor, fast_accum: bool = True):
        self.weight, self.weight_scale = quantize_rowwise(weight)
        self.fast_accum = fast_accum

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        xq, x_scale = quantize_rowwise(x)
        return gemm.fp8_rowwise_matmul(xq, self.weight, x_scale, self.weight_scale,
                                       fp8_fast_accum=self.fast_accum)

    def dense_weight(self, dtype=torch.bfloat16) -> torch.Tensor:
        """The weight as the layer sees it, for export."""
        return dequantize_rowwise(self.weight, self.weight_scale, dtype)


class Fp8BlockwiseLinear:
    """``y = x @ weight.T`` with both sides block-wise e4m3 (square scale blocks of ``block``)."""

    def __init__(self, weight: torch.Tensor, block: int = 128):
        self.block = block
        self.weight, self.weight_scale = quantize_blockwise(weight, block, block)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        xq, x_scale = quantize_blockwise(x, self.block, self.block)
        return blockwise_mm(xq, self.weight, x_scale, self.weight_scale,
                            self.block, self.block, self.block)
