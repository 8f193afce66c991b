"""The head: the final norm of the stack and the training loss over the logits."""

import torch

import fastops

from . import block


def final_norm(hidden: torch.Tensor, norm: "block.BlockNorm") -> torch.Tensor:
    """The last norm of the stack, through the functional entry point."""
    return fastops.rms_norm(norm, hidden)


def lm_loss(logits: torch.Tensor, labels: torch.Tensor, softcap: float = 0.0) -> torch.Tensor:
    """Mean next-token loss of (batch, seqlen, vocab) logits; the logits' storage receives the gradient."""
    return fastops.cross_entropy_loss(logits, labels, softcap)


def token_losses(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Per-token losses of (tokens, vocab) logits, for evaluation."""
    return fastops.CrossEntropyFn.apply(logits, labels, 0.0)
