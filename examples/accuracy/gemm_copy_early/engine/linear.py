"""The engine's dense projection layer: every bf16 linear goes through the
ported GEMM (what makes a gap in it a real one)."""

import torch

from densegemm import gemm_a16w16


class Linear16:
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, activation: str | None = None):
        self.weight = weight
        self.bias = bias
        self.activation = activation

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        y = gemm_a16w16(rows, self.weight, self.bias, dtype=x.dtype, activation=self.activation)
        return y.reshape(*x.shape[:-1], self.weight.shape[0])
