import torch
import torch.nn.functional as F

from engine.lm_head import LMHeadLoss, logits_loss


def test_logits_loss_matches_torch():
    logits = torch.randn(5, 30)
    labels = torch.randint(0, 30, (5,))
    torch.testing.assert_close(logits_loss(logits.clone(), labels), F.cross_entropy(logits, labels))


def test_head_loss_is_norm_then_projection_then_loss():
    head = LMHeadLoss(16)
    hidden, weight = torch.randn(7, 16), torch.randn(24, 16)
    labels = torch.randint(0, 24, (7,))
    normed = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(head(hidden, weight, labels), F.cross_entropy(normed @ weight.t(), labels), atol=1e-4, rtol=1e-4)
