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


@triton.jit
def _e2m1_agreement_kernel(out_ptr, first_bits, n, BLOCK: tl.constexpr):
    """Count fp32 bit patterns where the comparison encoder and the generic
    minifloat rounding give different e2m1 codes."""
    bits = first_bits + tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = bits < first_bits + n
    x = bits.to(tl.uint32).to(tl.float32, bitcast=True)
    fast = nm.fp32_to_e2m1_code(x)
    generic = nm.fp32_to_minifloat_code(x, 2, 1, 1, 0x40C00000)
    tl.atomic_add(out_ptr, tl.sum((valid & (fast != generic)).to(tl.int32), 0))


def test_e2m1_comparisons_equal_the_generic_rounding():
    """Every fp32 bit pattern on the GPU (2^32); a slice around 0.25-6 and the top on the CPU."""
    on_gpu = DEVICE.type == "cuda"
    ranges = [(0, 1 << 32)] if on_gpu else [(0x3E7F0000, 1 << 16), (0x40BF8000, 1 << 16), (0xFF7FF000, 1 << 12)]
    out = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    block = 4096
    for first, n in ranges:
        _e2m1_agreement_kernel[(triton.cdiv(n, block),)](out, first, n, BLOCK=block)
    assert int(out.cpu()[0]) == 0


@triton.jit
def _quotient_agreement_kernel(out_ptr, x_ptr, s_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    s = tl.load(s_ptr + offs, mask=mask, other=1.0)
    exact = tl.math.div_rn(x, s)
    fast = nm.divide_rn(x, s, tl.math.div_rn(tl.full([BLOCK], 1.0, tl.float32), s), True)
    differ = exact.to(tl.int32, bitcast=True) != fast.to(tl.int32, bitcast=True)
    tl.atomic_add(out_ptr, tl.sum((mask & differ).to(tl.int32), 0))


@triton.jit
def _significand_pairs_kernel(out_ptr, S_BLOCK: tl.constexpr, X_BLOCK: tl.constexpr):
    """x = 1 + i/2^10 (every fp16 and bf16 significand) against s = 1 + j/2^23 (every
    fp32 significand): power-of-two scaling carries the result to every exponent
    pair whose quotient and reciprocal are normal."""
    j = tl.program_id(0).to(tl.int64) * S_BLOCK + tl.arange(0, S_BLOCK)
    s = (j + (127 << 23)).to(tl.int32).to(tl.float32, bitcast=True)
    reciprocal = tl.math.div_rn(tl.full([S_BLOCK], 1.0, tl.float32), s)
    differ = tl.zeros([S_BLOCK], tl.int32)
    for first in range(0, 1024, X_BLOCK):
        i = first + tl.arange(0, X_BLOCK)
        x = ((i << 13) + (127 << 23)).to(tl.int32).to(tl.float32, bitcast=True)
        exact = tl.math.div_rn(x[None, :], s[:, None])
        fast = nm.divide_rn(x[None, :], s[:, None], reciprocal[:, None], True)
        differ += tl.sum((exact.to(tl.int32, bitcast=True) != fast.to(tl.int32, bitcast=True)).to(tl.int32), axis=1)
    tl.atomic_add(out_ptr, tl.sum(differ, 0))


@pytest.mark.gpu
def test_reciprocal_quotient_equals_div_rn():
    """``divide_rn``'s compiled path (the fp8 writers' division) against ``div_rn``:
    every 11-bit x significand x every fp32 divisor significand, then 2^26 random
    fp32 pairs with normal quotients (exponents -60..60 each), with zeros,
    infinities and NaN."""
    out = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    _significand_pairs_kernel[((1 << 23) // 256,)](out, S_BLOCK=256, X_BLOCK=64)
    gen = torch.Generator(device=DEVICE).manual_seed(13)
    n = 1 << 26
    x = torch.randn(n, device=DEVICE, generator=gen) * torch.exp2(torch.randint(-60, 60, (n,), device=DEVICE, generator=gen).float())
    s = torch.rand(n, device=DEVICE, generator=gen).add(0.5) * torch.exp2(torch.randint(-60, 60, (n,), device=DEVICE, generator=gen).float())
    x[:6] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 448.0])
    s[:6] = torch.tensor([3.0, 3.0, 3.0, 0.5, 2.0, 7.0])  # divisors stay finite and normal (the contract)
    _quotient_agreement_kernel[(triton.cdiv(n, 1024),)](out, x, s, n, BLOCK=1024)
    assert int(out.cpu()[0]) == 0
