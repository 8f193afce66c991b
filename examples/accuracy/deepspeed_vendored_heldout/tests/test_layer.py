import math

import pytest
import torch

from engine import layer

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_ds") or not hasattr(torch.ops.engine_ds, "bias_gelu_"),
    reason="needs a GPU and the engine_ds extension built from csrc/ds_inference_ops.cu with the vendored DeepSpeed kernels",
)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_launch_bias_gelu_matches_tanh_gelu(dtype):
    torch.manual_seed(0)
    x = torch.randn(6, 512, device="cuda", dtype=dtype)
    bias = torch.randn(512, device="cuda", dtype=dtype)
    expected = gelu_tanh(x.float() + bias.float())
    got = layer.mlp_up(x.clone(), bias)
    torch.testing.assert_close(got.float(), expected, atol=2e-3, rtol=2e-3)


def test_launch_bias_add_adds_the_bias_to_every_row():
    x = torch.randn(5, 256, device="cuda", dtype=torch.float16)
    bias = torch.randn(256, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(layer.attention_output(x.clone(), bias), x + bias)


def test_launch_bias_residual_sums_the_layer_pre_ln_into_the_mlp_output():
    torch.manual_seed(0)
    mlp, res, attn = (torch.randn(4, 128, device="cuda") for _ in range(3))
    b, ab = torch.randn(128, device="cuda"), torch.randn(128, device="cuda")
    got = layer.close_layer(mlp.clone(), res, attn, b, ab)
    torch.testing.assert_close(got, mlp + res + attn + b + ab)


def test_launch_gptj_residual_add_scales_the_mlp_share_by_the_parallel_degree():
    torch.manual_seed(0)
    mlp, res, attn = (torch.randn(4, 128, device="cuda") for _ in range(3))
    b, ab = torch.randn(128, device="cuda"), torch.randn(128, device="cuda")
    got = layer.close_parallel_layer(mlp.clone(), res, attn, b, ab, mp_size=2)
    torch.testing.assert_close(got, mlp + attn + b + (res + ab) / 2)


def test_launch_attn_softmax_v2_is_a_causal_softmax():
    torch.manual_seed(0)
    scores = torch.randn(2, 4, 16, 16, device="cuda", dtype=torch.float16)
    causal = torch.ones(16, 16, device="cuda", dtype=torch.bool).tril()
    expected = scores.float().masked_fill(~causal, float("-inf")).softmax(-1)
    got = layer.attention_probs(scores.clone(), causal=True)
    torch.testing.assert_close(got.float(), expected, atol=2e-3, rtol=2e-3)
