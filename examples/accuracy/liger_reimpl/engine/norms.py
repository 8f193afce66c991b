"""Final normalisation of the decoder's hidden states before the head."""

import torch

from lossops import rmsnorm as rn


class FinalNorm:
    """The last RMSNorm of the decoder stack, with its learned scale."""

    def __init__(self, width: int, eps: float = 1e-6, device=None):
        self.scale = torch.ones(width, device=device)
        self.eps = eps

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return rn.rms_norm(hidden, self.scale, self.eps)
