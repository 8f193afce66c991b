import torch
import torch.nn.functional as F

from lossops import FusedLinearXentOp, cross_entropy_op
from lossops.rmsnorm import rms_norm

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_cross_entropy_matches_torch_and_skips_ignored_rows():
    logits = torch.randn(6, 50).to(DEVICE)
    labels = torch.randint(0, 50, (6,))
    labels[2] = -100
    labels = labels.to(DEVICE)
    expected_logits = logits.clone().requires_grad_()
    expected = F.cross_entropy(expected_logits, labels, ignore_index=-100)
    expected.backward()
    mine = logits.clone().requires_grad_()
    loss = cross_entropy_op.apply(mine, labels, -100)
    loss.backward()
    torch.testing.assert_close(loss, expected)
    torch.testing.assert_close(mine.grad, expected_logits.grad)


def test_fused_linear_cross_entropy_matches_projection_then_loss():
    hidden = torch.randn(9, 16).to(DEVICE).requires_grad_()
    weight = torch.randn(40, 16).to(DEVICE).requires_grad_()
    labels = torch.randint(0, 40, (9,)).to(DEVICE)
    expected = F.cross_entropy(hidden @ weight.t(), labels)
    expected.backward()
    grads = hidden.grad.clone(), weight.grad.clone()
    hidden.grad, weight.grad = None, None
    loss = FusedLinearXentOp.apply(hidden, weight, labels, -100)
    (loss * 2).backward()
    torch.testing.assert_close(loss, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(hidden.grad, 2 * grads[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weight.grad, 2 * grads[1], atol=1e-5, rtol=1e-5)


def test_rms_norm_matches_torch():
    x = torch.randn(2, 3, 24).to(DEVICE)
    w = torch.randn(24).to(DEVICE)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(rms_norm(x, w), expected, atol=1e-5, rtol=1e-5)
