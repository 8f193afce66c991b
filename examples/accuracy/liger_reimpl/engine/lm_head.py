"""Training loss of the language-model head: the final norm, then either the
fused projection-and-loss (long vocabularies) or cross-entropy over logits
the caller already has."""

import torch

import lossops
from lossops import cross_entropy_op as xent_op

from . import norms

IGNORED_LABEL = -100


def head_loss(hidden: torch.Tensor, head_weight: torch.Tensor, labels: torch.Tensor, norm: "norms.FinalNorm") -> torch.Tensor:
    """Mean next-token loss of (tokens, width) hidden states against (tokens,) labels."""
    normed = norm(hidden)
    return lossops.FusedLinearXentOp.apply(normed, head_weight, labels, IGNORED_LABEL)


def logits_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean loss of (tokens, vocab) logits; the logits' storage receives the gradient."""
    return xent_op.apply(logits, labels, IGNORED_LABEL)
