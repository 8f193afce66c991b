"""A linear layer whose weight is stored as packed fp4 codes with e8m0 block
scales, and whose gradient path casts activations to mxfp8 along dim 1, on
the vendored torchao kernels. Owns no kernels; the vendored module is
upstream's, unmodified."""

import torch

import torchao.prototype.mx_formats.kernels as mx
from torchao.prototype.mx_formats import kernels as packing
from torchao.prototype.mx_formats.kernels import triton_to_mxfp8_dim1 as cast_dim1

MX_BLOCK = 32


class MXLinear:
    """y = x @ W^T with W held as e2m1 codes (two a byte) and one e8m0 scale per 32 codes."""

    def __init__(self, codes: torch.Tensor, scales_e8m0: torch.Tensor):
        self.packed = packing.pack_uint4(codes)
        self.scales = scales_e8m0
        self.out_features = codes.shape[0]

    def weight(self) -> torch.Tensor:
        return mx.triton_f4_to_scaled_bf16(self.packed, self.scales, MX_BLOCK)

    def codes(self) -> torch.Tensor:
        return packing.unpack_uint4(self.packed)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.bfloat16) @ self.weight().t()

    def cast_for_wgrad(self, grad_out: torch.Tensor):
        """grad_out cast along dim 1 to mxfp8, as the weight-gradient matmul reads it."""
        return cast_dim1(grad_out.contiguous(), MX_BLOCK)
