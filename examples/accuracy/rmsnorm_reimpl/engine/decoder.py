"""Pre-attention normalisation of a decoder layer: the hidden states of every
token are RMS-normalised with the layer's learned scale."""

import torch

from normops import rmsnorm


def input_norm(hidden: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """hidden (tokens, hidden_size), scale (hidden_size,)."""
    return rmsnorm(hidden, scale, eps)
