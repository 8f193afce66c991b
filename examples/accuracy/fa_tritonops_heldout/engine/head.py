"""Training loss of the language-model head: mean cross-entropy over the
tokens that carry a label, with optional label smoothing and z-loss."""

import torch

from faops.xent import IGNORE_LABEL, CrossEntropyFn

from . import block


def lm_loss(logits: torch.Tensor, labels: torch.Tensor, smoothing: float = 0.0, z_loss: float = 0.0) -> torch.Tensor:
    """Mean loss of (tokens, vocab) logits; the logits' storage receives the gradient."""
    losses = CrossEntropyFn.apply(logits, labels, smoothing, 1.0, z_loss, IGNORE_LABEL, True)
    return losses.sum() / (labels != IGNORE_LABEL).sum().clamp(min=1)


def step_inputs(hidden: torch.Tensor, residual, pre: "block.PreAttention"):
    """The normalised hidden states the head's projection reads after the last block."""
    normed, _ = pre.normalise(hidden, residual)
    return normed
