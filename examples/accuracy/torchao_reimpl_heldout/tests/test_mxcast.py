"""mxcast against plain torch: nibble packing, the e2m1 decode, the e8m0
scale and the mxfp8 cast along dim 1, and the engine's layer on them."""

import torch
import triton
import triton.language as tl

from engine import MXLinear
from mxcast import fp4, mxfp8
from mxcast.fp4 import _e2m1_pairs_to_bf16, _fp4_unpack_kernel, fp4_to_bf16
from mxcast.mxfp8 import _e8m0_floor_scale, _mxfp8_cols_kernel, mxfp8_cols_to_float, to_mxfp8_cols
from mxcast.packing import pack_nibbles, packed_shape, unpack_nibbles, unpacked_shape

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# e2m1 codes 0..7 as values; codes 8..15 are their negatives
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _e2m1_reference(codes):
    table = torch.cat((E2M1, -E2M1))
    return table[codes.long().cpu()]


def test_shapes_halve_and_double_the_last_dimension():
    assert packed_shape((3, 8)) == (3, 4)
    assert unpacked_shape((3, 4)) == (3, 8)


def test_pack_then_unpack_is_identity_high_nibble_first():
    codes = torch.randint(0, 16, (4, 6), dtype=torch.uint8)
    packed = pack_nibbles(codes)
    assert packed.shape == (4, 3)
    assert int(packed[0, 0]) == (int(codes[0, 0]) << 4) | int(codes[0, 1])
    assert torch.equal(unpack_nibbles(packed), codes)


def test_fp4_to_bf16_decodes_every_code():
    codes = torch.arange(16, dtype=torch.uint8).repeat(70)
    packed = pack_nibbles(codes).to(DEVICE)
    out = fp4_to_bf16(packed)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float().cpu(), _e2m1_reference(codes))


def test_unpack_kernel_called_directly():
    codes = torch.randint(0, 16, (64,), dtype=torch.uint8)
    packed = pack_nibbles(codes).to(DEVICE)
    out = torch.empty(64, dtype=torch.bfloat16, device=DEVICE)
    _fp4_unpack_kernel[(1,)](packed, out, 32, SIGN=fp4.E2M1_SIGN, MANT=fp4.E2M1_MANTISSA,
                             E_MBITS=fp4.E2M1_MBITS, E_EBITS=fp4.E2M1_EBITS, E_BIAS=fp4.E2M1_EXP_BIAS,
                             F_MBITS=fp4.F32_MBITS, F_EBITS=fp4.F32_EBITS, F_BIAS=fp4.F32_EXP_BIAS,
                             ZERO=fp4.F32_ZERO_BITS, HALF=fp4.F32_HALF_BITS, TILE=32)
    torch.testing.assert_close(out.float().cpu(), _e2m1_reference(codes))


@triton.jit
def _decode_probe(src, dst, N: tl.constexpr):
    packed = tl.load(src + tl.arange(0, N))
    values = _e2m1_pairs_to_bf16(packed, 0x8, 0x1, 1, 2, 1, 23, 8, 127, 0x0, 0x3F000000)
    tl.store(dst + tl.arange(0, 2 * N), values)


def test_decode_helper_yields_pairs_in_element_order():
    # 0x2B: high nibble 2 (1.0) first, low nibble 0xB (-1.5) second
    packed = torch.tensor([0x2B, 0x70, 0x19, 0xF6], dtype=torch.uint8, device=DEVICE)
    out = torch.empty(8, dtype=torch.bfloat16, device=DEVICE)
    _decode_probe[(1,)](packed, out, N=4)
    assert out.float().cpu().tolist() == [1.0, -1.5, 6.0, 0.0, 0.5, -0.5, -6.0, 4.0]


@triton.jit
def _scale_probe(src, scale_out, bits_out, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, N)[None, :])
    scale, biased = _e8m0_floor_scale(tl.abs(x), 1)
    tl.store(scale_out + tl.arange(0, 1), scale)
    tl.store(bits_out + tl.arange(0, 1), biased)


def test_e8m0_scale_is_floor_pow2_of_the_peak_less_eight():
    x = torch.tensor([0.25, -300.0, 7.0, 1.0], device=DEVICE)
    scale = torch.empty(1, device=DEVICE)
    bits = torch.empty(1, dtype=torch.uint8, device=DEVICE)
    _scale_probe[(1,)](x, scale, bits, N=4)
    # |peak| 300 -> 2**8, less 8 -> 2**0
    assert float(scale) == 1.0 and int(bits) == 127


def test_to_mxfp8_cols_round_trips_within_e4m3():
    torch.manual_seed(0)
    x = torch.randn(128, 64, device=DEVICE) * 10
    cast, scales = to_mxfp8_cols(x)
    assert cast.shape == (128, 64) and cast.dtype == torch.float8_e4m3fn
    assert scales.shape == (64, 4, 1)
    back = mxfp8_cols_to_float(cast, scales)
    # e4m3 keeps 3 mantissa bits; a block's values over 448 * scale saturate (floor scale)
    torch.testing.assert_close(back, x, atol=float(x.abs().max()) / 64, rtol=0.15)
    peak = x.abs().reshape(4, 32, 64).amax(1)  # (row block, col)
    expected = torch.floor(torch.log2(peak)) - 8 + 127
    assert torch.equal(scales.squeeze(-1).t().float().cpu(), expected.cpu())


def test_cols_kernel_launched_directly():
    x = torch.randn(64, 64, device=DEVICE)
    out_t = torch.empty(64, 64, dtype=torch.float8_e4m3fn, device=DEVICE)
    scales = torch.empty(64, 2, 1, dtype=torch.uint8, device=DEVICE)
    _mxfp8_cols_kernel[(1, 1)](x, out_t, scales, 64, 64, ROWS=64, COLS=64, BLOCK=32)
    cast, ref_scales = to_mxfp8_cols(x)
    assert torch.equal(out_t.t().float(), cast.float()) and torch.equal(scales, ref_scales)
    assert mxfp8.ROW_TILE == 64


def test_engine_layer_dequantises_and_casts():
    torch.manual_seed(1)
    codes = torch.randint(0, 16, (8, 64), dtype=torch.uint8)
    layer = MXLinear(codes.to(DEVICE), torch.full((8,), 0.5, device=DEVICE))
    w = _e2m1_reference(codes) * 0.5
    torch.testing.assert_close(layer.weight().cpu(), w)
    assert torch.equal(layer.codes().cpu(), codes)
    x = torch.randn(4, 64, device=DEVICE)
    torch.testing.assert_close(layer(x).cpu(), x.cpu() @ w.t(), atol=1e-4, rtol=1e-4)
    cast, scales = layer.cast_for_wgrad(torch.randn(64, 64, device=DEVICE))
    assert cast.shape == (64, 64) and scales.shape == (64, 2, 1)
