import pytest
import torch

from engine import linear4bit

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_bnb") or not hasattr(torch.ops.engine_bnb, "gemv_4bit"),
    reason="needs a GPU and the engine_bnb extension built from csrc/bnb_ops.cu with the vendored bitsandbytes kernels",
)

NF4_CODE = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
            -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
            0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
            0.7229568362236023, 1.0]


def nf4_reference(weight, blocksize):
    """Round-to-nearest NF4 of each block scaled by its absmax, in float32."""
    code = torch.tensor(NF4_CODE, device=weight.device)
    blocks = weight.float().reshape(-1, blocksize)
    absmax = blocks.abs().amax(-1, keepdim=True)
    idx = (blocks / absmax).unsqueeze(-1).sub(code).abs().argmin(-1)
    return (code[idx] * absmax).reshape(weight.shape)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_quantize_blockwise_and_dequantize_blockwise_launchers_round_trip_nf4(dtype):
    torch.manual_seed(0)
    weight = torch.randn(256, 512, device="cuda", dtype=dtype)
    packed, absmax = linear4bit.quantize_weight(weight, 64)
    assert packed.numel() == weight.numel() // 2 and absmax.numel() == weight.numel() // 64
    restored = linear4bit.dequantize_weight(packed, absmax, weight.shape, dtype, 64)
    torch.testing.assert_close(restored.float(), nf4_reference(weight, 64), atol=1e-2, rtol=1e-2)


def test_fp4_round_trip_keeps_each_block_maximum():
    torch.manual_seed(0)
    weight = torch.randn(64, 256, device="cuda", dtype=torch.float16)
    packed, absmax = linear4bit.quantize_weight(weight, 128, linear4bit.FP4)
    restored = linear4bit.dequantize_weight(packed, absmax, weight.shape, torch.float16, 128, linear4bit.FP4)
    blocks_in, blocks_out = weight.float().reshape(-1, 128), restored.float().reshape(-1, 128)
    torch.testing.assert_close(blocks_out.abs().amax(-1), blocks_in.abs().amax(-1), atol=1e-2, rtol=1e-2)


def test_dequantize_blockwise_launcher_restores_double_quantised_absmax():
    torch.manual_seed(0)
    code = torch.linspace(-1, 1, 256, device="cuda")
    codes = torch.randint(0, 256, (512,), device="cuda", dtype=torch.uint8)
    nested = torch.rand(2, device="cuda") + 0.5
    got = linear4bit.unpack_absmax(codes, code, nested, 0.25)
    expected = code[codes.long()] * nested.repeat_interleave(256) + 0.25
    torch.testing.assert_close(got, expected)


def test_gemm_4bit_inference_naive_launcher_matches_dequantised_matmul():
    torch.manual_seed(0)
    weight = torch.randn(384, 1024, device="cuda", dtype=torch.float16)
    packed, absmax = linear4bit.quantize_weight(weight, 64)
    code = torch.tensor(NF4_CODE, device="cuda")
    x = torch.randn(1, 1024, device="cuda", dtype=torch.float16)
    got = linear4bit.linear(x, packed, absmax, code, tuple(weight.shape))
    expected = x.float() @ linear4bit.dequantize_weight(packed, absmax, weight.shape).float().t()
    torch.testing.assert_close(got.float(), expected, atol=5e-2, rtol=5e-2)
