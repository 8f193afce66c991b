import math

import pytest
import torch

from engine import layer

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_layer") or not hasattr(torch.ops.engine_layer, "bias_gelu"),
    reason="needs a GPU and the engine_layer extension built from csrc/",
)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_launch_bias_gelu_matches_tanh_gelu(dtype):
    torch.manual_seed(0)
    x = torch.randn(6, 512, device="cuda", dtype=dtype)
    bias = torch.randn(512, device="cuda", dtype=dtype)
    got = x.clone()
    torch.ops.engine_layer.bias_gelu(got, bias)
    torch.testing.assert_close(got.float(), gelu_tanh(x.float() + bias.float()), atol=2e-3, rtol=2e-3)


def test_bias_gelu_out_keeps_the_pre_activation():
    x = torch.randn(3, 256, device="cuda", dtype=torch.float16)
    bias = torch.randn(256, device="cuda", dtype=torch.float16)
    before = x.clone()
    got = layer.mlp_up(x, bias, keep_pre_activation=True)
    torch.testing.assert_close(x, before)
    torch.testing.assert_close(got.float(), gelu_tanh(x.float() + bias.float()), atol=2e-3, rtol=2e-3)


def test_launch_bias_add_adds_the_bias_to_every_row():
    x = torch.randn(5, 256, device="cuda", dtype=torch.float16)
    bias = torch.randn(256, device="cuda", dtype=torch.float16)
    got = x.clone()
    torch.ops.engine_layer.bias_add(got, bias)
    torch.testing.assert_close(got, x + bias)


def test_launch_bias_residual_divides_the_shared_terms_by_the_parallel_degree():
    torch.manual_seed(0)
    mlp, res, attn = (torch.randn(4, 128, device="cuda") for _ in range(3))
    b, ab = torch.randn(128, device="cuda"), torch.randn(128, device="cuda")
    got = mlp.clone()
    torch.ops.engine_layer.residual_add(got, res, attn, b, ab, 2)
    torch.testing.assert_close(got, mlp + (res + attn + b + ab) / 2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_launch_attn_softmax_v2_is_a_scaled_causal_masked_softmax(dtype):
    torch.manual_seed(0)
    scores = torch.randn(2, 4, 16, 16, device="cuda", dtype=dtype)
    mask = torch.zeros(2, 1, 1, 16, device="cuda", dtype=dtype)
    mask[1, ..., 12:] = -10000.0
    causal = torch.ones(16, 16, device="cuda", dtype=torch.bool).tril()
    expected = (scores.float() * 0.5).masked_fill(~causal, float("-inf")).add(mask.float()).softmax(-1)
    got = scores.clone()
    torch.ops.engine_layer.masked_softmax(got, mask.view(2, 1, 16), 0.5, True)
    torch.testing.assert_close(got.float(), expected, atol=2e-3, rtol=2e-3)
