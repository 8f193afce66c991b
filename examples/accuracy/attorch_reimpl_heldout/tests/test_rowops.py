"""rowops against plain torch, and the engine's classifier head end to end.

Runs on a CUDA device, or on the CPU under TRITON_INTERPRET=1.
"""

import pytest
import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from engine import ClassifierHead
from rowops import elementwise_config, elementwise_configs, rows_per_program
from rowops.activations import (
    ActivationOp, activate, activate_tensor, activation_kernel,
    gelu_f, relu_f, sigmoid_f, silu_f, tanh_f,
)
from rowops.softmax import RowSoftmaxOp, row_softmax_kernel, softmax_rows

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

TORCH_ACTIVATIONS = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "gelu": F.gelu,
    "silu": F.silu,
    "relu2": lambda x: torch.relu(x) ** 2,
}


@triton.jit
def scalar_functions_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(src + offs, mask=ok)
    tl.store(dst + 0 * n + offs, sigmoid_f(x), mask=ok)
    tl.store(dst + 1 * n + offs, tanh_f(x), mask=ok)
    tl.store(dst + 2 * n + offs, relu_f(x), mask=ok)
    tl.store(dst + 3 * n + offs, gelu_f(x), mask=ok)
    tl.store(dst + 4 * n + offs, silu_f(x), mask=ok)
    tl.store(dst + 5 * n + offs, activate(x, "silu"), mask=ok)


def test_elementwise_configs_cover_the_tiles():
    configs = elementwise_configs()
    assert [c.kwargs["BLOCK"] for c in configs] == [64, 128, 256, 512, 1024]
    assert [c.num_warps for c in configs] == [2, 2, 4, 4, 4]
    assert elementwise_config(100).kwargs["BLOCK"] == 128
    assert elementwise_config(64).kwargs["BLOCK"] == 64
    assert elementwise_config(5000).kwargs["BLOCK"] == 1024


def test_rows_per_program_packs_short_rows_only():
    assert rows_per_program(100_000, 64) == 1
    assert rows_per_program(100, 10) == 1
    assert rows_per_program(4096, 10) == 4
    assert rows_per_program(5000, 10) == 4
    assert rows_per_program(10_000_000, 10) == 128


def test_scalar_functions_match_torch():
    torch.manual_seed(0)
    x = torch.randn(50, device=DEVICE)
    out = torch.empty(6, 50, device=DEVICE)
    scalar_functions_kernel[(1,)](x, out, 50, BLOCK=64)
    expected = [torch.sigmoid(x), torch.tanh(x), torch.relu(x), F.gelu(x), F.silu(x), F.silu(x)]
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(TORCH_ACTIVATIONS))
def test_activations_match_torch(name):
    torch.manual_seed(1)
    x = torch.randn(3, 7, 11, device=DEVICE)
    want = TORCH_ACTIVATIONS[name](x)
    torch.testing.assert_close(activate_tensor(x, name), want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ActivationOp.forward(x, name), want, rtol=1e-5, atol=1e-5)


def test_activation_kernel_launched_directly():
    x = torch.linspace(-3, 3, 300, device=DEVICE)
    out = torch.empty_like(x)
    activation_kernel[(triton.cdiv(300, 128),)](x, out, 300, "relu", BLOCK=128)
    torch.testing.assert_close(out, torch.relu(x))


def test_unknown_activation_is_rejected():
    with pytest.raises(ValueError, match="name: expected one of"):
        activate_tensor(torch.zeros(4, device=DEVICE), "elu")


@pytest.mark.parametrize("shape", [(5,), (3, 40), (2, 4, 100), (2100, 10)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_torch(shape, log):
    torch.manual_seed(2)
    x = torch.randn(*shape, device=DEVICE)
    want = torch.log_softmax(x, -1) if log else torch.softmax(x, -1)
    torch.testing.assert_close(softmax_rows(x, log=log), want)
    torch.testing.assert_close(RowSoftmaxOp.forward(x, log), want)


def test_softmax_kernel_reads_strides():
    torch.manual_seed(3)
    x = torch.randn(20, 6, device=DEVICE).t()
    out = torch.empty(6, 20, device=DEVICE)
    row_softmax_kernel[(3,)](x, out, 6, 20, *x.stride(), LOG=False, ROWS=2, COLS=32)
    torch.testing.assert_close(out, torch.softmax(x, -1))


@pytest.mark.parametrize("activation", ["gelu", "relu2"])
def test_classifier_head_matches_torch(activation):
    torch.manual_seed(4)
    features = torch.randn(6, 16, device=DEVICE)
    w_hidden = torch.randn(16, 32, device=DEVICE) / 4
    w_out = torch.randn(32, 5, device=DEVICE) / 6
    head = ClassifierHead(w_hidden, w_out, activation)
    logits = TORCH_ACTIVATIONS[activation](features @ w_hidden) @ w_out
    torch.testing.assert_close(head(features), torch.softmax(logits, -1), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(head(features, log=True), torch.log_softmax(logits, -1), rtol=1e-4, atol=1e-5)
