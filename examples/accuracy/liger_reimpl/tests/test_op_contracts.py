"""The autograd ops' forward contracts, called directly with a recording context."""

import types

import torch
import torch.nn.functional as F

from lossops.launch import contiguous_args, row_launch
from lossops.linear_xent import FusedLinearXentOp
from lossops.rmsnorm import RMSNormOp
from lossops.xent import CrossEntropyOp

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _context():
    ctx = types.SimpleNamespace(saved=None)
    ctx.save_for_backward = lambda *tensors: setattr(ctx, "saved", tensors)
    return ctx


def test_row_launch_picks_tile_and_warps_and_refuses_too_wide_rows():
    assert row_launch(100) == (128, 4)
    assert row_launch(4096) == (4096, 8)
    assert row_launch(40000) == (65536, 32)
    try:
        row_launch(70000)
    except RuntimeError as error:
        assert "70000" in str(error)
    else:
        raise AssertionError("a row wider than one tile was accepted")


def test_contiguous_args_hands_contiguous_tensors_to_the_op():
    seen = []
    wrapped = contiguous_args(lambda ctx, x, *, y: seen.extend([x.is_contiguous(), y.is_contiguous()]))
    wrapped(None, torch.randn(4, 6).t(), y=torch.randn(6, 4).t())
    assert seen == [True, True]


def test_cross_entropy_forward_saves_the_gradient_in_the_logits():
    logits = torch.randn(4, 20).to(DEVICE)
    labels = torch.randint(0, 20, (4,)).to(DEVICE)
    reference = logits.clone().requires_grad_()
    F.cross_entropy(reference, labels).backward()
    ctx = _context()
    loss = CrossEntropyOp.forward(ctx, logits, labels, -100)
    torch.testing.assert_close(loss, F.cross_entropy(reference.detach(), labels))
    torch.testing.assert_close(ctx.saved[0], reference.grad)


def test_fused_linear_forward_saves_both_gradients():
    hidden, weight = torch.randn(5, 8).to(DEVICE), torch.randn(12, 8).to(DEVICE)
    labels = torch.randint(0, 12, (5,)).to(DEVICE)
    ctx = _context()
    FusedLinearXentOp.forward(ctx, hidden, weight, labels, -100)
    h, w = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    F.cross_entropy(h @ w.t(), labels).backward()
    torch.testing.assert_close(ctx.saved[0], h.grad, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ctx.saved[1], w.grad, atol=1e-5, rtol=1e-5)


def test_rms_norm_forward_normalises_each_row():
    x, w = torch.randn(3, 16).to(DEVICE), torch.randn(16).to(DEVICE)
    out = RMSNormOp.forward(_context(), x, w, 1e-6)
    torch.testing.assert_close(out, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, atol=1e-5, rtol=1e-5)
