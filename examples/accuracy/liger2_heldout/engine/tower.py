"""Token mixing blocks of the vision tower: a pre-norm (LayerNorm, or DyT in
the normalisation-free variant) in front of each block's projection."""

import torch

from normops import LayerNormOp
from normops import dyt as dt

from . import stem


class PreNorm:
    """LayerNorm with its own weight and bias, the default pre-norm."""

    def __init__(self, width: int, eps: float = 1e-6, device=None):
        self.weight = torch.ones(width, device=device, requires_grad=True)
        self.bias = torch.zeros(width, device=device, requires_grad=True)
        self.eps = eps

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        return LayerNormOp.apply(tokens, self.weight, self.bias, self.eps)


def make_pre_norm(width: int, normalisation_free: bool, device=None):
    """The pre-norm of one block: DyT when the tower is normalisation-free."""
    if normalisation_free:
        return dt.DynamicTanh(width).to(device)
    return PreNorm(width, device=device)


def encode(images: torch.Tensor, image_stem: "stem.Stem", pre_norm) -> torch.Tensor:
    """(batch, tokens, channels) pre-normed tokens of (batch, channels, h, w) images."""
    features = image_stem(images)
    tokens = features.flatten(2).transpose(1, 2).contiguous()
    return pre_norm(tokens)
