"""rowops against plain torch, and the engine's step end to end.

Runs on a CUDA device, or on the CPU under TRITON_INTERPRET=1.
"""

import pytest
import torch

from engine import EncoderStep
from rowops import LayerNormOp as ExportedNorm, SoftmaxOp as ExportedSoftmax
from rowops.layernorm import LayerNormOp, layer_norm, layer_norm_row_kernel
from rowops.reduce import row_max, row_mean, row_variance, tile_and_warps
from rowops.softmax import SoftmaxOp, softmax, softmax_row_kernel, softmax_with_temperature

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_tile_and_warps_caps_the_tile_at_the_shared_budget():
    assert tile_and_warps(100, 4) == (128, 32)
    assert tile_and_warps(30000, 4) == (16384, 4)
    assert tile_and_warps(30000, 2, 4) == (32768, 4)


@pytest.mark.parametrize("rows, width", [(5, 32), (3, 70), (2, 1000)])
def test_softmax_matches_torch(rows, width):
    torch.manual_seed(0)
    x = torch.randn(rows, width, device=DEVICE) * 4 - 20
    torch.testing.assert_close(softmax(x, 1), torch.softmax(x, 1))
    torch.testing.assert_close(SoftmaxOp.forward(x, 1), torch.softmax(x, 1))
    torch.testing.assert_close(SoftmaxOp.launch(x, 1), torch.softmax(x, 1))
    assert softmax_row_kernel is not None and row_max is not None


def test_the_package_exports_the_two_ops():
    assert ExportedNorm is LayerNormOp and ExportedSoftmax is SoftmaxOp


def test_softmax_refuses_another_axis():
    with pytest.raises(ValueError, match="axis 0"):
        SoftmaxOp.forward(torch.zeros(2, 3, device=DEVICE), 0)


def test_softmax_with_temperature_flattens_the_distribution():
    logits = torch.tensor([[1.0, 2.0, 3.0]], device=DEVICE)
    hot = softmax_with_temperature(logits, 4.0)
    torch.testing.assert_close(hot, torch.softmax(logits / 4.0, 1))
    assert hot.max() < softmax(logits, 1).max()


def _layer_norm_reference(x, shape, w, b, eps=1e-5):
    return torch.nn.functional.layer_norm(x, shape, w, b, eps)


@pytest.mark.parametrize("with_affine", [True, False])
def test_layer_norm_matches_torch(with_affine):
    torch.manual_seed(1)
    x = torch.randn(4, 3, 50, device=DEVICE)
    w = torch.randn(50, device=DEVICE) if with_affine else None
    b = torch.randn(50, device=DEVICE) if with_affine else None
    torch.testing.assert_close(layer_norm(x, (50,), w, b), _layer_norm_reference(x, (50,), w, b),
                               atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(LayerNormOp.launch(x, (50,), w, b, 1e-5),
                               _layer_norm_reference(x, (50,), w, b), atol=1e-4, rtol=1e-4)
    assert layer_norm_row_kernel is not None and row_mean is not None and row_variance is not None


def test_layer_norm_over_two_trailing_dimensions():
    torch.manual_seed(2)
    x = torch.randn(3, 4, 8, device=DEVICE)
    out = LayerNormOp.forward(x, (4, 8), None, None, 1e-5)
    torch.testing.assert_close(out, _layer_norm_reference(x, (4, 8), None, None), atol=1e-4, rtol=1e-4)
    assert LayerNormOp.row_width((4, 8)) == 32


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
