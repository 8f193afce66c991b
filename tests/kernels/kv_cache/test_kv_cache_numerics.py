"""The integer conversions of ``_numerics`` against torch's own casts, bit for bit.

These are the two numeric traps of the port (the interpreter's fp32 -> bf16 and
fp32 -> fp8 casts do not round to nearest even): every narrowing conversion the
kernels use is checked here on ties, subnormals, saturation and signed zero,
on the interpreter and on the GPU alike."""
from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from kv_cache_helpers import DEVICE, assert_same_bits, generator

from portq_kernels.kv_cache import _numerics as nm
from portq_kernels.kv_cache import reference as ref


#: The hardware-conversion variants exist only in compiled GPU code.
NATIVE = [False, pytest.param(True, marks=pytest.mark.gpu)]


@triton.jit
def _convert_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, NATIVE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if MODE == 0:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, nm.fp32_to_fp8_code(x, False, NATIVE).to(tl.uint8), mask=mask)
    elif MODE == 1:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, nm.fp32_to_fp8_code(x, True, NATIVE).to(tl.uint8), mask=mask)
    elif MODE == 2:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, nm.fp32_to_bf16_bits(x, NATIVE), mask=mask)
    elif MODE == 3:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, nm.fp32_to_e2m1_code(x).to(tl.uint8), mask=mask)
    elif MODE == 4:
        code = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.store(out_ptr + offs, nm.fp8_code_to_fp32(code, False, NATIVE), mask=mask)
    elif MODE == 5:
        code = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.store(out_ptr + offs, nm.fp8_code_to_fp32(code, True, NATIVE), mask=mask)
    else:
        code = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.store(out_ptr + offs, nm.e2m1_code_to_fp32(code), mask=mask)


def _run(mode: int, x: torch.Tensor, out_dtype, native=False) -> torch.Tensor:
    x = x.to(DEVICE)
    out = torch.empty(x.shape, dtype=out_dtype, device=DEVICE)
    block = 1024
    _convert_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), MODE=mode, NATIVE=native, BLOCK=block)
    return out.cpu()



def _edge_values(limit: float) -> torch.Tensor:
    """Ties, subnormals, saturation boundaries, signed zeros, infinities."""
    gen = generator(7)
    grid = torch.cat(
        [
            torch.randn(4000, generator=gen) * limit / 8,
            torch.randn(2000, generator=gen) * 2.0**-8,
            torch.randn(2000, generator=gen) * 2.0**-16,
            torch.rand(1000, generator=gen) * limit * 1.2,
        ]
    )
    codes = torch.arange(256, dtype=torch.uint8)
    dtype = torch.float8_e5m2 if limit > 448 else torch.float8_e4m3fn
    exact = codes.view(dtype).float()
    exact = exact[torch.isfinite(exact)]
    midpoints = (exact.sort().values[1:] + exact.sort().values[:-1]) / 2  # every tie
    specials = torch.tensor([0.0, -0.0, limit, -limit, limit * 1.03, 1e30, -1e30, float("inf"), float("-inf")])
    return torch.cat([grid, exact, midpoints, -midpoints, specials]).float()


@pytest.mark.parametrize("native", NATIVE)
@pytest.mark.parametrize(
    "mode,dtype,limit",
    [(0, torch.float8_e4m3fn, 448.0), (1, torch.float8_e5m2, 57344.0)],
    ids=["e4m3", "e5m2"],
)
def test_fp32_to_fp8_matches_torch_with_saturation(mode, dtype, limit, native):
    x = _edge_values(limit)
    expected = x.clamp(-limit, limit).to(dtype).view(torch.uint8)
    assert_same_bits(_run(mode, x, torch.uint8, native), expected)


def test_fp32_to_fp8_nan_gives_nan_code():
    x = torch.tensor([float("nan"), -float("nan")])
    got = _run(0, x, torch.uint8)
    assert torch.isnan(got.view(torch.float8_e4m3fn).float()).all()


@pytest.mark.parametrize("native", NATIVE)
@pytest.mark.parametrize("mode,dtype", [(4, torch.float8_e4m3fn), (5, torch.float8_e5m2)], ids=["e4m3", "e5m2"])
def test_fp8_decode_every_code(mode, dtype, native):
    codes = torch.arange(256, dtype=torch.int32)
    expected = codes.to(torch.uint8).view(dtype).float()
    got = _run(mode, codes, torch.float32, native)
    finite = torch.isfinite(expected) | torch.isinf(expected)
    assert_same_bits(got[finite], expected[finite])
    assert torch.isnan(got[~finite]).all()


@pytest.mark.parametrize("native", NATIVE)
def test_fp32_to_bf16_round_to_nearest_even(native):
    gen = generator(3)
    bits = torch.randint(0, 2**31 - 1, (20000,), generator=gen, dtype=torch.int64)
    halfway = (bits & ~0xFFFF) | 0x8000  # exact ties
    values = torch.cat([bits, halfway, -bits]).to(torch.int32).view(torch.float32)
    values = values[torch.isfinite(values)]
    values = torch.cat([values, torch.tensor([float("inf"), float("-inf"), 3.3895e38, -0.0])])
    expected = values.to(torch.bfloat16).view(torch.int16)
    assert_same_bits(_run(2, values, torch.int16, native), expected)


def test_fp32_to_e2m1_matches_reference_nearest_value_search():
    values = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, 7.0, 1e9, 0.1, 0.26, 4.9, 5.1])
    gen = generator(5)
    x = torch.cat([values, -values, torch.randn(5000, generator=gen) * 3])
    expected = ref.e2m1_encode(x).to(torch.uint8)
    assert_same_bits(_run(3, x, torch.uint8), expected)


def test_e2m1_decode_every_code():
    codes = torch.arange(16, dtype=torch.int32)
    assert_same_bits(_run(6, codes, torch.float32), ref.e2m1_decode(codes))
