"""Training loss of the language-model head on the vendored Liger-Kernel ops:
the final RMSNorm module, then the fused projection-and-loss, or plain
cross-entropy over logits the caller already has."""

import torch

from liger_kernel.ops import cross_entropy as ce
from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss
from liger_kernel.transformers.rms_norm import LigerRMSNorm as FinalNorm

IGNORED_LABEL = -100


class LMHeadLoss:
    """Final norm plus fused linear cross-entropy over the head weight."""

    def __init__(self, width: int, eps: float = 1e-6):
        self.norm = FinalNorm(width, eps=eps)
        self.loss = LigerFusedLinearCrossEntropyLoss(ignore_index=IGNORED_LABEL)

    def __call__(self, hidden: torch.Tensor, head_weight: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.loss(head_weight, self.norm(hidden), labels)


def logits_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean loss of (tokens, vocab) logits; the logits' storage receives the gradient."""
    return ce.LigerCrossEntropyFunction.apply(logits, labels, IGNORED_LABEL)
