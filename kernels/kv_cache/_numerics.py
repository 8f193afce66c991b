"""Bit-exact number conversions for the KV-cache kernels, in integer arithmetic.

Why not ``x.to(tl.bfloat16)`` / ``x.to(tl.float8e4nv)``: Triton's CPU interpreter
truncates fp32 -> bf16 and does not round fp32 -> fp8 to nearest even, while the
compiled GPU path does. The cache formats are defined bit for bit (spec §1.3:
``__nv_cvt_float_to_fp8(.., __NV_SATFINITE, ..)`` and ``__float2bfloat16``), so
every narrowing conversion here is done on the fp32 bit pattern with integer
operations, which both back ends execute identically. Widening conversions are
exact by construction (integer field extraction). Divisions that the semantics
define as IEEE divisions use ``tl.math.div_rn`` at the call sites (Triton's
plain fp32 ``/`` is approximate on the GPU).

The GPU may take the hardware conversions instead (``NATIVE``): they round the
same way (checked bit for bit by the numerics tests on the GPU). The wrappers
pass ``NATIVE = not interpreting`` (:func:`native_casts`).

Decided where the spec is silent: NaN in -> NaN code out, sign kept (0x7F|sign
for both float8 formats, as torch does); fp32 NaN -> bf16 0x7FC0; a value that
rounds to zero keeps its sign (also for e2m1).
"""
from __future__ import annotations

import os

import triton
import triton.language as tl

def native_casts(tensor) -> bool:
    """Whether kernels launched on ``tensor`` may use the hardware conversions:
    compiled for a GPU, not run by the interpreter."""
    return tensor.is_cuda and os.environ.get("TRITON_INTERPRET", "0") not in ("1", "true", "True")


# portq: ports vllm:csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh::scaled_convert @0492a4393c
@triton.jit
def fp32_to_minifloat_code(
    x,
    EXP_BITS: tl.constexpr,
    MANT_BITS: tl.constexpr,
    EXP_BIAS: tl.constexpr,
    MAX_FINITE_BITS: tl.constexpr,
):
    """fp32 -> small float code (int32, sign at bit EXP_BITS+MANT_BITS).

    Round to nearest even, saturate to the largest finite value (``satfinite``);
    NaN gives the all-ones code. Normal results round the fp32 bit pattern in
    place (the carry walks into the exponent as it should); subnormal results
    shift the full significand right with an explicit round-half-even.
    """
    bits = x.to(tl.uint32, bitcast=True)
    sign = (bits >> 31).to(tl.int32)
    magnitude = bits & 0x7FFFFFFF
    is_nan = magnitude > 0x7F800000
    magnitude = tl.minimum(magnitude, MAX_FINITE_BITS)
    exponent = (magnitude >> 23).to(tl.int32) - 127

    DROPPED: tl.constexpr = 23 - MANT_BITS
    rounded = magnitude + ((1 << (DROPPED - 1)) - 1) + ((magnitude >> DROPPED) & 1)
    normal_code = (rounded >> DROPPED).to(tl.int32) - ((127 - EXP_BIAS) << MANT_BITS)

    significand = ((magnitude & 0x7FFFFF) | 0x800000).to(tl.int32)
    shift = tl.minimum(tl.maximum(24 - EXP_BIAS - MANT_BITS - exponent, 1), 25)
    kept = significand >> shift
    remainder = significand - (kept << shift)
    half = (significand * 0 + 1) << (shift - 1)
    round_up = (remainder > half) | ((remainder == half) & ((kept & 1) == 1))
    subnormal_code = kept + round_up.to(tl.int32)

    code = tl.where(exponent >= 1 - EXP_BIAS, normal_code, subnormal_code)
    code = tl.where(is_nan, (1 << (EXP_BITS + MANT_BITS)) - 1, code)
    return code | (sign << (EXP_BITS + MANT_BITS))


@triton.jit
def minifloat_code_to_fp32(
    code,
    EXP_BITS: tl.constexpr,
    MANT_BITS: tl.constexpr,
    EXP_BIAS: tl.constexpr,
    IEEE_SPECIALS: tl.constexpr,
    ALL_ONES_IS_NAN: tl.constexpr,
):
    """Small float code (any integer type, low bits used) -> fp32, exactly.

    The sign is set as a bit: ``-x`` compiles to ``0 - x`` on the GPU, which
    turns -0.0 into +0.0."""
    code = code.to(tl.int32) & ((1 << (1 + EXP_BITS + MANT_BITS)) - 1)
    sign = (code >> (EXP_BITS + MANT_BITS)).to(tl.uint32) << 31
    exponent = (code >> MANT_BITS) & ((1 << EXP_BITS) - 1)
    mantissa = code & ((1 << MANT_BITS) - 1)
    normal_bits = ((exponent + (127 - EXP_BIAS)) << 23) | (mantissa << (23 - MANT_BITS))
    SUBNORMAL_UNIT: tl.constexpr = 2.0 ** (1 - EXP_BIAS - MANT_BITS)
    subnormal_bits = (mantissa.to(tl.float32) * SUBNORMAL_UNIT).to(tl.int32, bitcast=True)
    magnitude = tl.where(exponent == 0, subnormal_bits, normal_bits)
    EXP_ALL_ONES: tl.constexpr = (1 << EXP_BITS) - 1
    if IEEE_SPECIALS:
        special = tl.where(mantissa == 0, 0x7F800000, 0x7FC00000)
        magnitude = tl.where(exponent == EXP_ALL_ONES, special, magnitude)
    if ALL_ONES_IS_NAN:
        all_ones = (exponent == EXP_ALL_ONES) & (mantissa == (1 << MANT_BITS) - 1)
        magnitude = tl.where(all_ones, 0x7FC00000, magnitude)
    return (magnitude.to(tl.uint32, bitcast=True) | sign).to(tl.float32, bitcast=True)


@triton.jit
def fp32_to_fp8_code(x, IS_E5M2: tl.constexpr, NATIVE: tl.constexpr):
    """fp32 -> float8 byte (int32 0..255): RNE, saturating (``__NV_SATFINITE``).

    ``NATIVE`` (compiled GPU code only): ``cvt.rn.satfinite`` (same rounding and
    saturation; a NaN comes out as 0x7F whatever its sign)."""
    if NATIVE:
        if IS_E5M2:
            return x.to(tl.float8e5, fp_downcast_rounding="rtne").to(tl.uint8, bitcast=True).to(tl.int32)
        else:
            return x.to(tl.float8e4nv, fp_downcast_rounding="rtne").to(tl.uint8, bitcast=True).to(tl.int32)
    elif IS_E5M2:
        return fp32_to_minifloat_code(x, 5, 2, 15, 0x47600000)
    else:
        return fp32_to_minifloat_code(x, 4, 3, 7, 0x43E00000)


@triton.jit
def fp8_code_to_fp32(code, IS_E5M2: tl.constexpr, NATIVE: tl.constexpr):
    """float8 byte -> fp32, exactly (e4m3fn: 0x7F/0xFF NaN; e5m2: IEEE specials).

    ``NATIVE`` (compiled GPU code only): the hardware conversion, exact for every
    code, and a few instructions instead of ~20 integer operations per element."""
    if NATIVE:
        if IS_E5M2:
            return code.to(tl.uint8).to(tl.float8e5, bitcast=True).to(tl.float32)
        else:
            return code.to(tl.uint8).to(tl.float8e4nv, bitcast=True).to(tl.float32)
    elif IS_E5M2:
        return minifloat_code_to_fp32(code, 5, 2, 15, True, False)
    else:
        return minifloat_code_to_fp32(code, 4, 3, 7, False, True)


@triton.jit
def fp32_to_e2m1_code(x):
    """fp32 -> e2m1 nibble (int32 0..15): RNE, saturate to +-6 (``cvt.rn.satfinite.e2m1``).

    Seven comparisons against the midpoints between the eight magnitudes
    (``>`` where the lower neighbour has the even code, ``>=`` where the upper
    one has), NaN -> 7, the sign bit kept: the same codes as
    ``fp32_to_minifloat_code(x, 2, 1, 1, ...)`` for every fp32 value (checked
    exhaustively on the GPU) in about a third of its instructions; the nvfp4
    writer runs it on every NoPE element and was bound by it."""
    magnitude = tl.abs(x)
    code = ((magnitude > 0.25).to(tl.int32) + (magnitude >= 0.75).to(tl.int32)
            + (magnitude > 1.25).to(tl.int32) + (magnitude >= 1.75).to(tl.int32)
            + (magnitude > 2.5).to(tl.int32) + (magnitude >= 3.5).to(tl.int32)
            + (magnitude > 5.0).to(tl.int32))
    code = tl.where(magnitude != magnitude, 7, code)
    return code | ((x.to(tl.uint32, bitcast=True) >> 31).to(tl.int32) << 3)


@triton.jit
def divide_rn(x, divisor, reciprocal, NATIVE: tl.constexpr, FINITE_QUOTIENTS: tl.constexpr = False):
    """``x / divisor`` rounded to nearest even, given ``reciprocal = div_rn(1, divisor)``.

    ``div_rn`` on every element made the fp8 writers compute-bound (H200:
    bf16->fp8 at 71% of copy bandwidth). Compiled GPU code takes one multiply
    and the remainder correction ``q0 + (x - q0*d) * r`` (two fused
    multiply-adds, Markstein's sequence), with the sign of ``q0`` (a zero
    ``x`` would otherwise come out +0): equal to ``div_rn`` on every fp16/bf16
    significand against every fp32 divisor significand, and on random fp32
    pairs with normal quotients (GPU tests). An infinite or NaN
    ``x * reciprocal`` is returned as it is (it is the quotient), a test
    skipped with ``FINITE_QUOTIENTS`` where the caller knows every quotient
    is finite or NaN (a divisor that covers the tile's amax); callers keep
    the divisor finite and normal, and pass a subnormal ``x`` only where its
    quotient rounds to a zero fp8 code, or rescaled by a power of two.
    The interpreter has no exact fused multiply-add, so there it is ``div_rn``."""
    if NATIVE:
        first = x * reciprocal
        corrected = tl.fma(tl.fma(-first, divisor, x), reciprocal, first)
        signed = ((corrected.to(tl.uint32, bitcast=True) & 0x7FFFFFFF)
                  | (first.to(tl.uint32, bitcast=True) & 0x80000000)).to(tl.float32, bitcast=True)
        if FINITE_QUOTIENTS:
            return signed
        else:
            return tl.where(tl.abs(first) < float("inf"), signed, first)
    else:
        return tl.math.div_rn(x, divisor)


@triton.jit
def e2m1_code_to_fp32(code):
    """e2m1 nibble -> fp32 {0, .5, 1, 1.5, 2, 3, 4, 6} with sign, exactly.

    Magnitude codes 2..7 are the fp32 patterns ``(m + 252) << 22`` (exponent
    ``m >> 1``, mantissa bit ``m & 1``); 0 and 1 are 0.0 and 0.5. Fewer operations
    than the generic minifloat decode: this runs on every NoPE element of the
    nvfp4 gather."""
    code = code.to(tl.int32)
    magnitude_code = code & 7
    bits = tl.where(magnitude_code >= 2, (magnitude_code + 252) << 22, magnitude_code * 0x3F000000)
    return (bits | ((code & 8) << 28)).to(tl.float32, bitcast=True)


@triton.jit
def fp32_to_bf16_bits(x, NATIVE: tl.constexpr):
    """fp32 -> bf16 bit pattern as int16, round to nearest even (``__float2bfloat16``).

    ``NATIVE`` (compiled GPU code only): ``cvt.rn.bf16.f32``, the same rounding;
    only a NaN's payload differs (0x7FFF instead of 0x7FC0)."""
    if NATIVE:
        return x.to(tl.bfloat16, fp_downcast_rounding="rtne").to(tl.int16, bitcast=True)
    else:
        bits = x.to(tl.uint32, bitcast=True)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        rounded = tl.where((bits & 0x7FFFFFFF) > 0x7F800000, 0x7FC0, rounded)
        return rounded.to(tl.uint16).to(tl.int16, bitcast=True)


@triton.jit
def bf16_bits_to_fp32(bits):
    """bf16 bit pattern (int16) -> fp32, exactly."""
    return (bits.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)


@triton.jit
def load_as_fp32(pointer, mask, SOURCE_IS_BF16: tl.constexpr):
    """Load model-side values (fp32/fp16, or bf16 passed as int16 bits) as fp32."""
    if SOURCE_IS_BF16:
        return bf16_bits_to_fp32(tl.load(pointer, mask=mask, other=0))
    else:
        return tl.load(pointer, mask=mask, other=0.0).to(tl.float32)


@triton.jit
def store_from_fp32(pointer, value, mask, DST_IS_BF16: tl.constexpr, NATIVE: tl.constexpr):
    """Store fp32 values into fp32/fp16 (RNE cast) or bf16 (passed as int16 bits)."""
    if DST_IS_BF16:
        tl.store(pointer, fp32_to_bf16_bits(value, NATIVE), mask=mask)
    else:
        tl.store(pointer, value.to(pointer.dtype.element_ty), mask=mask)
