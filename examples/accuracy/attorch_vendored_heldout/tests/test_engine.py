"""The engine's head on the vendored layers against plain torch, and each
vendored entry point it uses by name.

Runs where the scorer has written the vendored modules, on a CUDA device or
on the CPU under TRITON_INTERPRET=1. The vendored kernels are autotuned and
the interpreter has no device to time candidates on, so on the CPU each
autotuned kernel is left one candidate (the autotuner then times nothing).
"""

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("attorch.act_kernels", reason="the vendored modules are written by the scorer")

from attorch import act_kernels, softmax_kernels  # noqa: E402
from attorch.act_layers import GELU, ActFuncAutoGrad, ReLU, Sigmoid, SiLU, Tanh  # noqa: E402
from attorch.softmax_layers import LogSoftmax, Softmax, SoftmaxAutoGrad  # noqa: E402
from attorch.utils import element_wise_kernel_configs  # noqa: E402
from engine import ClassifierHead  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(autouse=True)
def one_candidate_per_kernel_on_the_cpu(monkeypatch):
    if DEVICE == "cpu":
        for kernel in (act_kernels.act_func_forward_kernel, act_kernels.act_func_backward_kernel,
                       softmax_kernels.softmax_forward_kernel, softmax_kernels.softmax_backward_kernel):
            monkeypatch.setattr(kernel, "configs", kernel.configs[-1:])


def test_element_wise_configs_list_the_tiles():
    assert [c.kwargs["BLOCK_SIZE"] for c in element_wise_kernel_configs()] == [64, 128, 256, 512, 1024]


@pytest.mark.parametrize("module, reference", [(GELU, F.gelu), (ReLU, torch.relu), (SiLU, F.silu),
                                               (Sigmoid, torch.sigmoid), (Tanh, torch.tanh)])
def test_activation_layers_match_torch(module, reference):
    torch.manual_seed(0)
    x = torch.randn(3, 70, device=DEVICE)
    torch.testing.assert_close(module()(x), reference(x), rtol=1e-5, atol=1e-5)


def test_activation_function_forward_and_backward():
    torch.manual_seed(1)
    x = torch.randn(200, device=DEVICE, requires_grad=True)
    grad = torch.randn(200, device=DEVICE)
    ActFuncAutoGrad.apply(x, "silu").backward(grad)
    ref = x.detach().clone().requires_grad_(True)
    F.silu(ref).backward(grad)
    torch.testing.assert_close(x.grad, ref.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_layers_match_torch(log):
    torch.manual_seed(2)
    x = torch.randn(2, 5, 33, device=DEVICE)
    layer = LogSoftmax(dim=-1) if log else Softmax(dim=-1)
    want = torch.log_softmax(x, -1) if log else torch.softmax(x, -1)
    torch.testing.assert_close(layer(x), want)
    torch.testing.assert_close(SoftmaxAutoGrad.apply(x, log), want)
    assert softmax_kernels.BLOCK_SIZE_BATCH_heuristic({"batch_dim": 4096, "feat_dim": 10}) == 4


def test_head_matches_torch_and_a_tuning_step_lowers_the_loss():
    torch.manual_seed(3)
    features = torch.randn(8, 16, device=DEVICE)
    w_hidden = torch.randn(16, 32, device=DEVICE) / 4
    w_out = torch.randn(32, 5, device=DEVICE) / 6
    labels = torch.randint(0, 5, (8,), device=DEVICE)
    head = ClassifierHead(w_hidden.clone(), w_out.clone(), "gelu")
    logits = F.gelu(features @ w_hidden) @ w_out
    torch.testing.assert_close(head(features), torch.softmax(logits, -1), rtol=1e-4, atol=1e-5)
    first = head.tune_step(features, labels, lr=0.5)
    second = head.tune_step(features, labels, lr=0.5)
    assert second < first
    with pytest.raises(ValueError, match="activation: expected one of"):
        ClassifierHead(w_hidden, w_out, "elu")
