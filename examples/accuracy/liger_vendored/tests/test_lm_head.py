"""The engine's language-model head loss on the vendored Liger-Kernel ops
against plain torch.

Runs where the scorer has written the vendored modules (liger_kernel/ops and
liger_kernel/transformers hold only their package files in the tree), on a
CUDA device or on the CPU under TRITON_INTERPRET=1; skipped elsewhere.
"""

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("liger_kernel.ops.cross_entropy", reason="the vendored modules are written by the scorer")

from engine.lm_head import LMHeadLoss, logits_loss  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_logits_loss_matches_torch():
    logits = torch.randn(5, 30).to(DEVICE)
    labels = torch.randint(0, 30, (5,)).to(DEVICE)
    torch.testing.assert_close(logits_loss(logits.clone(), labels), F.cross_entropy(logits, labels))


def test_head_loss_is_norm_then_projection_then_loss():
    head = LMHeadLoss(16)
    head.norm.to(DEVICE)
    hidden, weight = torch.randn(7, 16).to(DEVICE), torch.randn(24, 16).to(DEVICE)
    labels = torch.randint(0, 24, (7,)).to(DEVICE)
    normed = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(head(hidden, weight, labels), F.cross_entropy(normed @ weight.t(), labels), atol=1e-4, rtol=1e-4)
