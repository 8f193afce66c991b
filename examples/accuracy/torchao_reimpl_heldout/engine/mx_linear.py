"""A linear layer whose weight is stored as packed fp4 codes, and whose
gradient path casts activations to mxfp8 along dim 1. Calls mxcast; owns no
kernels."""

import torch

import mxcast.mxfp8 as mx8
from mxcast import packing
from mxcast.fp4 import fp4_to_bf16 as unpack_weight


class MXLinear:
    """y = x @ W^T with W held as e2m1 codes (two a byte) and one scale per row."""

    def __init__(self, codes: torch.Tensor, row_scale: torch.Tensor):
        self.packed = packing.pack_nibbles(codes)
        self.row_scale = row_scale
        self.out_features = codes.shape[0]
        self.in_features = packing.unpacked_shape(self.packed.shape)[-1]

    def weight(self) -> torch.Tensor:
        return unpack_weight(self.packed).float() * self.row_scale[:, None]

    def codes(self) -> torch.Tensor:
        return packing.unpack_nibbles(self.packed)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x.float() @ self.weight().t()

    def cast_for_wgrad(self, grad_out: torch.Tensor):
        """grad_out cast along dim 1 to mxfp8, as the weight-gradient matmul reads it."""
        return mx8.to_mxfp8_cols(grad_out.contiguous())
