"""FP8 linear layers on the vendored FBGEMM Triton kernels: weights quantised
once at load, activations per call. Owns no kernels; the vendored module is
upstream's, unmodified."""

import torch

import fbgemm_gpu.experimental.gemm.triton_gemm.fp8_gemm as fp8_gemm
from fbgemm_gpu.experimental.gemm.triton_gemm.fp8_gemm import matmul_fp8_block as blockwise_mm
from fbgemm_gpu.experimental.gemm.triton_gemm.fp8_gemm import quantize_fp8_block, quantize_fp8_row


class Fp8RowwiseLinear:
    """``y = x @ weight.T`` with both sides row-wise e4m3 (one scale per token and per output)."""

    def __init__(self, weight: torch.Tensor, fast_accum: bool = True):
        self.weight, self.weight_scale = quantize_fp8_row(weight)
        self.fast_accum = fast_accum

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        xq, x_scale = quantize_fp8_row(x)
        return fp8_gemm.matmul_fp8_row(xq, self.weight, x_scale, self.weight_scale,
                                       fp8_fast_accum=self.fast_accum)


class Fp8BlockwiseLinear:
    """``y = x @ weight.T`` with both sides block-wise e4m3 (square scale blocks of ``block``)."""

    def __init__(self, weight: torch.Tensor, block: int = 256):
        self.block = block
        self.weight, self.weight_scale = quantize_fp8_block(weight, block, block)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        xq, x_scale = quantize_fp8_block(x, self.block, self.block)
        return blockwise_mm(xq, self.weight, x_scale, self.weight_scale,
                            self.block, self.block, self.block)
