"""The engine's step on the vendored kernels against plain torch, and the
vendored softmax's gradient.

Runs where the scorer has written the vendored modules and on a CUDA device.
The CPU interpreter of current Triton cannot run the vendored files: their
launch grids return lists (the interpreter extends the grid with a tuple) and
their kernels reach the language as ``triton.language`` (the interpreter
wants it bound as a module global), so the test is skipped elsewhere.
"""

import pytest
import torch

pytest.importorskip("trident.kernel.softmax", reason="the vendored modules are written by the scorer")
if not torch.cuda.is_available():
    pytest.skip("the vendored kernels run compiled only: the CPU interpreter refuses their list grids and triton.language",
                allow_module_level=True)

from engine import EncoderStep  # noqa: E402
from trident import kernel  # noqa: E402
from trident.operation.layer_norm import LayerNorm  # noqa: E402
from trident.operation.softmax import Softmax  # noqa: E402

DEVICE = "cuda"


def test_the_kernel_package_exposes_the_row_reductions():
    assert callable(kernel.maximum) and callable(kernel.mean) and callable(kernel.variance)


def test_softmax_and_layer_norm_match_torch():
    torch.manual_seed(0)
    x = torch.randn(3, 70, device=DEVICE)
    torch.testing.assert_close(Softmax.apply(x, 1), torch.softmax(x, 1))
    w, b = torch.randn(70, device=DEVICE), torch.randn(70, device=DEVICE)
    torch.testing.assert_close(LayerNorm.apply(x, (70,), w, b, 1e-5),
                               torch.nn.functional.layer_norm(x, (70,), w, b), atol=1e-4, rtol=1e-4)


def test_encoder_step_normalises_attends_and_draws_a_distribution():
    torch.manual_seed(3)
    tokens, width, vocab = 6, 16, 10
    step = EncoderStep(*(torch.randn(width, width, device=DEVICE) * 0.2 for _ in range(3)),
                       torch.randn(width, vocab, device=DEVICE), torch.ones(width, device=DEVICE),
                       torch.zeros(width, device=DEVICE))
    hidden = torch.randn(tokens, width, device=DEVICE)
    mixed, probs = step(hidden, temperature=2.0)
    x = torch.nn.functional.layer_norm(hidden, (width,))
    q, k, v = x @ step.wq, x @ step.wk, x @ step.wv
    expected = x + torch.softmax(q @ k.T / width ** 0.5, 1) @ v
    torch.testing.assert_close(mixed, expected, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(probs, torch.softmax(expected[-1:] @ step.head / 2.0, 1), atol=1e-4, rtol=1e-4)
