import pytest
import torch

from engine import linear4bit

# The torch ops of csrc/bindings.cu, each named after the launcher it runs.
OPS = ("quantize_blockwise_4bit", "dequantize_blockwise_4bit", "gemv_4bit_inference")


def _built():
    return torch.cuda.is_available() and hasattr(torch.ops, "engine_q4") and all(
        hasattr(torch.ops.engine_q4, op) for op in OPS)


pytestmark = pytest.mark.skipif(not _built(), reason="needs a GPU and the engine_q4 extension built from csrc/ with nvcc")


def reference_4bit(weight, blocksize, quant_kind):
    """Round-to-nearest onto the format's levels of each block scaled by its absmax, in fp32."""
    table = linear4bit.levels(quant_kind, weight.device)
    blocks = weight.float().reshape(-1, blocksize)
    absmax = blocks.abs().amax(-1, keepdim=True)
    idx = (blocks / absmax).unsqueeze(-1).sub(table).abs().argmin(-1)
    return (table[idx] * absmax).reshape(weight.shape)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("blocksize", [64, 256, 4096])
def test_quantize_blockwise_4bit_and_dequantize_blockwise_4bit_round_trip_nf4(dtype, blocksize):
    torch.manual_seed(0)
    weight = torch.randn(128, 512, device="cuda", dtype=dtype)
    packed, absmax = linear4bit.quantize_weight(weight, blocksize)
    torch.testing.assert_close(absmax, weight.float().reshape(-1, blocksize).abs().amax(-1))
    restored = linear4bit.dequantize_weight(packed, absmax, weight.shape, dtype, blocksize)
    torch.testing.assert_close(restored.float(), reference_4bit(weight, blocksize, linear4bit.NF4), atol=1e-2, rtol=1e-2)


def test_fp4_round_trip_matches_the_fp4_levels():
    torch.manual_seed(0)
    weight = torch.randn(64, 256, device="cuda", dtype=torch.float16)
    packed, absmax = linear4bit.quantize_weight(weight, 128, linear4bit.FP4)
    restored = linear4bit.dequantize_weight(packed, absmax, weight.shape, torch.float16, 128, linear4bit.FP4)
    torch.testing.assert_close(restored.float(), reference_4bit(weight, 128, linear4bit.FP4), atol=1e-2, rtol=1e-2)


def test_odd_length_keeps_the_last_value_in_the_high_nibble():
    weight = torch.tensor([0.5, -1.0, 1.0], device="cuda", dtype=torch.float16)
    packed, absmax = linear4bit.quantize_weight(weight, 64)
    assert packed.numel() == 2 and absmax.tolist() == [1.0]
    assert packed[1].item() >> 4 == 15
    restored = linear4bit.dequantize_weight(packed, absmax, weight.shape, torch.float16, 64)
    assert restored.tolist()[1:] == [-1.0, 1.0]


@pytest.mark.parametrize("with_bias", [False, True])
def test_gemv_4bit_inference_matches_dequantised_matmul(with_bias):
    torch.manual_seed(0)
    weight = torch.randn(384, 1024, device="cuda", dtype=torch.float16)
    packed, absmax = linear4bit.quantize_weight(weight, 64)
    bias = torch.randn(384, device="cuda", dtype=torch.float16) if with_bias else None
    x = torch.randn(1, 1024, device="cuda", dtype=torch.float16)
    got = linear4bit.linear(x, packed, absmax, tuple(weight.shape), bias)
    expected = x.float() @ linear4bit.dequantize_weight(packed, absmax, weight.shape).float().t()
    if with_bias:
        expected = expected + bias.float()
    torch.testing.assert_close(got.float(), expected, atol=5e-2, rtol=5e-2)
