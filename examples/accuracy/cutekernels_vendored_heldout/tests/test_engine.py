"""The engine's block on the vendored kernels against the vendored torch
references, and each vendored entry point by name.

Runs where the scorer has written the vendored modules, on a CUDA device or
on the CPU under TRITON_INTERPRET=1.
"""

import pytest
import torch

pytest.importorskip("khd.kernels.rmsnorm.triton_implementation", reason="the vendored modules are written by the scorer")

from engine import FeedForwardBlock  # noqa: E402
from khd.constants import BLOCK_SIZES_POWERS_OF_2  # noqa: E402
from khd.enums import KernelBackend  # noqa: E402
from khd.kernels.rmsnorm import rmsnorm_khd, rmsnorm_torch  # noqa: E402
from khd.kernels.swiglu import swiglu_khd, swiglu_torch  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.parametrize("width, block_h", [(40, 64), (300, 128)])
def test_rmsnorm_matches_the_reference_in_one_and_several_column_steps(width, block_h):
    torch.manual_seed(0)
    x = torch.randn(5, width, device=DEVICE)
    w = torch.rand(width, device=DEVICE) + 0.5
    got = rmsnorm_khd(x, w, 1e-6, KernelBackend.triton, 2, block_h)
    torch.testing.assert_close(got, rmsnorm_torch(x, w, 1e-6))


def test_swiglu_forward_and_gradient_match_the_reference():
    torch.manual_seed(1)
    gate = torch.randn(1000, device=DEVICE, requires_grad=True)
    up = torch.randn(1000, device=DEVICE, requires_grad=True)
    out = swiglu_khd(gate, up, KernelBackend.triton, KernelBackend.triton, 256, 256)
    ref_gate, ref_up = gate.detach().clone().requires_grad_(), up.detach().clone().requires_grad_()
    ref = swiglu_torch(ref_gate, ref_up)
    torch.testing.assert_close(out, ref)
    weights = torch.randn(1000, device=DEVICE)  # a dense output gradient: the vendored backward reads it flat
    (out * weights).sum().backward()
    (ref * weights).sum().backward()
    torch.testing.assert_close(gate.grad, ref_gate.grad)
    torch.testing.assert_close(up.grad, ref_up.grad)


def test_feed_forward_block_matches_the_references():
    torch.manual_seed(3)
    width, inner = 48, 96
    hidden = torch.randn(5, width, device=DEVICE)
    gamma = torch.rand(width, device=DEVICE) + 0.5
    wg, wu = torch.randn(width, inner, device=DEVICE) / 7, torch.randn(width, inner, device=DEVICE) / 7
    wd = torch.randn(inner, width, device=DEVICE) / 10
    x = rmsnorm_torch(hidden, gamma, 1e-6)
    expected = hidden + swiglu_torch(x @ wg, x @ wu) @ wd
    assert BLOCK_SIZES_POWERS_OF_2[-1] == 1024
    torch.testing.assert_close(FeedForwardBlock(gamma, wg, wu, wd)(hidden), expected, rtol=1e-4, atol=1e-4)
