"""Cache formats and the ``kv_cache_dtype`` vocabulary of the KV-cache ops.

What a ``kv_cache_dtype`` string means, and the byte layout of the two
self-describing DeepSeek formats, in one place: the kernels, the wrappers, the
PyTorch reference and the tests all read these names, so a layout change is a
one-line change here. Plain Python, no torch or triton import, so the reference
and the auditor's tests can use it anywhere.
"""
from __future__ import annotations

import enum


class Conversion(enum.IntEnum):
    """How cache elements relate to the model-side elements (upstream's
    ``Fp8KVCacheDataType``). The integer value is passed to the kernels as a
    constexpr."""

    AUTO = 0  # same dtype on both sides: a bit copy
    FP8_E4M3 = 1  # 1-byte cache, float8 e4m3 (fn: no infinities, 0x7F is NaN)
    FP8_E5M2 = 2  # 1-byte cache, float8 e5m2 (IEEE-like)


#: Strings of the per-element formats (spec §1.2, ``get_fp8_kv_cache_data_type``).
ELEMENT_FORMATS: dict[str, Conversion] = {
    "auto": Conversion.AUTO,
    "float16": Conversion.AUTO,
    "bfloat16": Conversion.AUTO,
    "fp8": Conversion.FP8_E4M3,
    "fp8_e4m3": Conversion.FP8_E4M3,
    "fp8_e5m2": Conversion.FP8_E5M2,
}

#: Self-describing per-token formats written by ``concat_and_cache_mla`` and read
#: back by the two upconvert gathers.
FP8_DS_MLA = "fp8_ds_mla"
NVFP4_DS_MLA = "nvfp4_ds_mla"

#: Every string ``concat_and_cache_mla`` accepts.
WRITE_FORMATS = (*ELEMENT_FORMATS, FP8_DS_MLA, NVFP4_DS_MLA)

#: Largest finite magnitude of each float8 format; quantisation saturates here.
FP8_MAX = {Conversion.FP8_E4M3: 448.0, Conversion.FP8_E5M2: 57344.0}

# fp8_ds_mla: 656 bytes per token (spec §2.3).
DS_MLA_KV_LORA_RANK = 512
DS_MLA_PE_DIM = 64
DS_MLA_ENTRY_BYTES = 656
DS_MLA_TILE = 128  # NoPE elements per fp32 tile scale
DS_MLA_SCALE_OFFSET = 512  # bytes: 4 x float32 tile scales
DS_MLA_ROPE_OFFSET = 528  # bytes: 64 x 16-bit RoPE, bit copies of k_pe
DS_MLA_SCALE_DIVISOR = 448.0  # CUDA value; ROCm gfx942 uses 224 (not carried)
FLT_MIN = 2.0**-126  # floor of the ds_mla tile scale

# nvfp4_ds_mla: 352 bytes per token (spec §2.4, §6).
NVFP4_ENTRY_BYTES = 352
NVFP4_TILE = 16  # NoPE elements per e4m3 scale factor
NVFP4_ROPE_OFFSET = 256  # bytes: 64 x unscaled e4m3 RoPE
NVFP4_SCALE_OFFSET = 320  # bytes: 32 x e4m3 scale factors, permuted
NVFP4_SCALE_FLOOR = 2.0**-9
NVFP4_E2M1_MAX = 6.0

#: Both upconvert gathers produce this bf16 row: 512 NoPE + 64 RoPE.
UPCONVERT_ROW = DS_MLA_KV_LORA_RANK + DS_MLA_PE_DIM


def nvfp4_scale_byte(tile: int) -> int:
    """Byte offset, inside the 32 scale bytes, of NoPE tile ``tile``'s scale.

    An 8x4 -> 4x8 transpose kept in lockstep with FlashMLA: ``8*(s&3) + (s>>2)``.
    """
    return 8 * (tile & 3) + (tile >> 2)


def supported(names) -> str:
    """The accepted strings, quoted, for error messages."""
    return ", ".join(repr(n) for n in names)


def element_conversion(kv_cache_dtype) -> Conversion:
    """Map a per-element ``kv_cache_dtype`` string (the gather's vocabulary)."""
    if not isinstance(kv_cache_dtype, str):
        raise TypeError(f"kv_cache_dtype must be a str, got {type(kv_cache_dtype).__name__}")
    if kv_cache_dtype not in ELEMENT_FORMATS:
        hint = ""
        if kv_cache_dtype in WRITE_FORMATS:
            hint = (
                f" ({kv_cache_dtype!r} entries are not per-element: read them with "
                f"cp_gather_and_upconvert_{'fp8' if kv_cache_dtype.startswith('fp8') else 'nvfp4'}_kv_cache)"
            )
        raise ValueError(
            f"kv_cache_dtype must be one of {supported(ELEMENT_FORMATS)}{hint}, got {kv_cache_dtype!r}"
        )
    return ELEMENT_FORMATS[kv_cache_dtype]
