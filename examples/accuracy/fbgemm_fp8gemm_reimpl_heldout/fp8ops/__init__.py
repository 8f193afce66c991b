"""FP8 (e4m3) quantisation and scaled matmul kernels the engine's linear layers run on."""

from .quant import dequantize_rowwise, quantize_blockwise, quantize_rowwise

__all__ = ["dequantize_rowwise", "quantize_blockwise", "quantize_rowwise"]
