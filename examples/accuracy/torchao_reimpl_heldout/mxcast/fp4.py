"""Packed fp4 (e2m1) codes to bfloat16, on the GPU.

The bit layout is read from the module's constants: the kernel rebuilds the
float32 bit pattern of each code (exponent rebias, mantissa shift, the two
special codes zero and 0.5), then narrows to bfloat16. Scaling by MX block
scales is the caller's.
"""

import torch
import triton
import triton.language as tl

F32_EBITS, F32_MBITS = 8, 23
F32_EXP_BIAS = 127
E2M1_EBITS, E2M1_MBITS = 2, 1
E2M1_EXP_BIAS = 1
E2M1_SIGN = 0x8
E2M1_MANTISSA = 0x1
F32_ZERO_BITS = 0x0
F32_HALF_BITS = 0x3F000000

# Packed bytes one program reads.
UNPACK_TILE = 512


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::_fp4_packed_to_bf16
@triton.jit
def _e2m1_pairs_to_bf16(packed, sign_bit, mantissa_bits, e_mbits, e_ebits, e_bias,
                        f_mbits, f_ebits, f_bias, zero_bits, half_bits):
    # high nibble first, then low, interleaved back into element order; the
    # bytes are widened to int32 first so the nibble arithmetic and the
    # interleave never run on packed 8-bit lanes
    wide = packed.to(tl.int32)
    codes = tl.interleave(wide >> 4, wide & 0xF)
    sign = codes & sign_bit
    magnitude = codes ^ sign
    exponent = ((magnitude >> e_mbits) - e_bias + f_bias).to(tl.int32) << f_mbits
    mantissa = (magnitude & mantissa_bits).to(tl.int32) << (f_mbits - e_mbits)
    bits = exponent | mantissa
    bits = tl.where(magnitude == 0, zero_bits, bits)
    bits = tl.where(magnitude == 1, half_bits, bits)
    bits = bits | (sign.to(tl.int32) << (f_mbits - e_mbits + f_ebits - e_ebits))
    return bits.to(tl.float32, bitcast=True).to(tl.bfloat16)


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::triton_f4_to_bf16_kernel
@triton.jit
def _fp4_unpack_kernel(src, dst, n_packed,
                       SIGN: tl.constexpr, MANT: tl.constexpr, E_MBITS: tl.constexpr,
                       E_EBITS: tl.constexpr, E_BIAS: tl.constexpr, F_MBITS: tl.constexpr,
                       F_EBITS: tl.constexpr, F_BIAS: tl.constexpr, ZERO: tl.constexpr,
                       HALF: tl.constexpr, TILE: tl.constexpr):
    tile = tl.program_id(0)
    offs = tile * TILE + tl.arange(0, TILE)
    packed = tl.load(src + offs, mask=offs < n_packed)
    values = _e2m1_pairs_to_bf16(packed, SIGN, MANT, E_MBITS, E_EBITS, E_BIAS,
                                 F_MBITS, F_EBITS, F_BIAS, ZERO, HALF)
    out = tile * 2 * TILE + tl.arange(0, 2 * TILE)
    tl.store(dst + out, values, mask=out < 2 * n_packed)


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::triton_f4_to_bf16
# portq: not-carried torchao:torchao/prototype/mx_formats/kernels.py::triton_f4_to_scaled_bf16 -- block scales are applied by the caller's matmul epilogue, never in the unpack
def fp4_to_bf16(packed: torch.Tensor) -> torch.Tensor:
    """uint8 bytes of two e2m1 codes each (high nibble first) as bfloat16 values."""
    if packed.dtype != torch.uint8 or not packed.is_contiguous():
        raise ValueError(f"fp4_to_bf16: packed must be contiguous uint8, got {packed.dtype}")
    out = torch.empty((*packed.shape[:-1], packed.shape[-1] * 2), dtype=torch.bfloat16,
                      device=packed.device)
    n = packed.numel()
    _fp4_unpack_kernel[(triton.cdiv(n, UNPACK_TILE),)](
        packed, out, n, SIGN=E2M1_SIGN, MANT=E2M1_MANTISSA, E_MBITS=E2M1_MBITS,
        E_EBITS=E2M1_EBITS, E_BIAS=E2M1_EXP_BIAS, F_MBITS=F32_MBITS, F_EBITS=F32_EBITS,
        F_BIAS=F32_EXP_BIAS, ZERO=F32_ZERO_BITS, HALF=F32_HALF_BITS, TILE=UNPACK_TILE)
    return out
