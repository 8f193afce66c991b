"""``concat_and_cache_mla``: write each token's latent + RoPE into the paged cache.

Token ``t < len(slot_mapping)`` with ``slot = slot_mapping[t] >= 0`` goes to
block ``slot // block_size``, offset ``slot % block_size`` (negative slots are
CUDA-graph padding and are skipped). Four cache formats (spec §2):

* ``auto``/``float16``/``bfloat16``: the entry is ``cat(kv_c, k_pe)`` bit for bit;
* ``fp8``/``fp8_e4m3``/``fp8_e5m2``: ``x / scale[0]`` (IEEE division), round to
  nearest even, saturate;
* ``fp8_ds_mla`` (656 B): per-128 tile fp32 scale ``max(amax / 448, FLT_MIN)``,
  e4m3 NoPE, raw 16-bit RoPE;
* ``nvfp4_ds_mla`` (352 B): per-16 tile e4m3 scale rounded up from
  ``max(amax / 6, 2^-9)``, e2m1 NoPE by reciprocal multiply, e4m3 RoPE, scale
  bytes permuted.

Each kernel handles a few tokens per program (upstream: one CTA per token) so a
long prefill is not a grid of hundreds of thousands of tiny programs.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .. import custom_ops
from .. import validation as check
from ..validation import record_violation
from . import _formats as fmt
from ._formats import Conversion
from ._numerics import (
    divide_rn,
    fp8_code_to_fp32,
    fp32_to_e2m1_code,
    fp32_to_fp8_code,
    load_as_fp32,
    native_casts,
)

#: (tokens per program, warps) of each writer kernel: per-element formats
#: ("element"), fp8_ds_mla, nvfp4_ds_mla. Module-level so the benchmark can sweep them.
#: fp8_ds_mla takes 4 tokens: 5-7% faster than 8 on the H200 (60K and 300K tokens,
#: ``bench_kv_cache.py --sweep``); 16 and 32 were slower for every format.
WRITER_TILING = {"element": (8, 4), "fp8_ds_mla": (8, 4), "nvfp4_ds_mla": (8, 4)}


@triton.jit
def _token_entries(slot_mapping, tokens, num_tokens, num_slots, block_stride, entry_stride,
                   BLOCK_SIZE: tl.constexpr, NARROW: tl.constexpr):
    """For each entry of ``tokens``: whether it is written, whether its slot lies
    past the cache (a violation: upstream would write out of bounds; here it is
    never written), and the offset of its cache entry. Computed once per token
    and broadcast to the token's tile rows (the ds_mla writers used to divide the
    slot again for every tile row). ``BLOCK_SIZE`` is a compile-time constant, so
    a power of two is a shift; ``NARROW`` (the host knows every slot of the cache
    fits in 32 bits) divides in unsigned 32-bit arithmetic. The bound is checked on
    the 64-bit slot, so no wrapped value can alias a slot inside the cache."""
    in_batch = tokens < num_tokens
    slot = tl.load(slot_mapping + tokens, mask=in_batch, other=-1)
    write = in_batch & (slot >= 0) & (slot < num_slots)
    past = in_batch & (slot >= num_slots)
    if NARROW:
        kept = tl.where(write, slot, 0).to(tl.uint32)
    else:
        kept = tl.where(write, slot, 0).to(tl.uint64)
    block = (kept // BLOCK_SIZE).to(tl.int64)
    offset = (kept % BLOCK_SIZE).to(tl.int64)
    return tokens.to(tl.int64), write, past, block * block_stride + offset * entry_stride


@triton.jit
def _divide_by_scale(x, scale_value, reciprocal, in_range, NATIVE: tl.constexpr):
    """``x / scale`` (IEEE): through the reciprocal when the scale is in range."""
    if in_range:
        quotient = divide_rn(x, scale_value, reciprocal, NATIVE)
    else:
        quotient = tl.math.div_rn(x, scale_value)
    return quotient


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_mla_kernel @00eb0c874e
@triton.jit
def concat_and_cache_mla_kernel(
    kv_c,
    k_pe,
    kv_cache,
    slot_mapping,
    block_stride,
    entry_stride,
    kv_c_stride,
    k_pe_stride,
    kv_lora_rank,
    pe_dim,
    scale,
    num_tokens,
    num_slots,
    index_flag,
    TRAP: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    NARROW: tl.constexpr,
    CONVERSION: tl.constexpr,
    SOURCE_IS_BF16: tl.constexpr,
    RANK_BLOCK: tl.constexpr,
    PE_BLOCK: tl.constexpr,
    TOKENS: tl.constexpr,
    NATIVE: tl.constexpr,
    EXACT_WIDTHS: tl.constexpr,
):
    """Plain formats. AUTO passes every tensor as same-width integers (a bit
    copy); fp8 divides by ``scale[0]`` (IEEE, :func:`divide_rn` through the
    reciprocal for a scale in [2^-100, 2^100], ``div_rn`` outside it) and
    rounds to the fp8 code."""
    tokens, write, past, entry_offset = _token_entries(
        slot_mapping, tl.program_id(0) * TOKENS + tl.arange(0, TOKENS), num_tokens, num_slots,
        block_stride, entry_stride, BLOCK_SIZE, NARROW,
    )
    entry = kv_cache + entry_offset
    scale_value = 1.0
    reciprocal = 1.0
    in_range = False
    if CONVERSION != 0:
        scale_value = tl.load(scale)
        reciprocal = tl.math.div_rn(1.0, scale_value)
        in_range = (tl.abs(scale_value) >= 7.888609052210118e-31) & (tl.abs(scale_value) <= 1.2676506002282294e30)
    for part in tl.static_range(2):
        if part == 0:
            cols = tl.arange(0, RANK_BLOCK)
            width = kv_lora_rank
            src = kv_c + tokens[:, None] * kv_c_stride + cols[None, :]
            dst = entry[:, None] + cols[None, :]
        else:
            cols = tl.arange(0, PE_BLOCK)
            width = pe_dim
            src = k_pe + tokens[:, None] * k_pe_stride + cols[None, :]
            dst = entry[:, None] + kv_lora_rank + cols[None, :]
        if EXACT_WIDTHS:  # no column is padding: a row mask only, so loads and stores stay 16 bytes wide
            mask = write[:, None] & (cols >= 0)[None, :]
        else:
            mask = write[:, None] & (cols < width)[None, :]
        if CONVERSION == 0:
            tl.store(dst, tl.load(src, mask=mask), mask=mask)
        else:
            x = load_as_fp32(src, mask, SOURCE_IS_BF16)
            codes = fp32_to_fp8_code(_divide_by_scale(x, scale_value, reciprocal, in_range, NATIVE),
                                     CONVERSION == 2, NATIVE)
            tl.store(dst, codes.to(tl.uint8), mask=mask)
    # Last: in the default mode the trap then orders no load or store behind the
    # slot reduction (bad slots are masked above, so nothing was written for them).
    record_violation(index_flag, past, TRAP)


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_ds_mla_kernel @00eb0c874e
# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_ds_mla_kernel[kFp8ScaleDivisor] -- the ROCm gfx942 divisor 224 (#32976); this port writes the CUDA layout (448)
@triton.jit
def concat_and_cache_ds_mla_kernel(
    kv_c,
    k_pe,
    kv_cache,
    kv_cache_as_fp32,
    kv_cache_as_16bit,
    slot_mapping,
    block_stride,
    entry_stride,
    kv_c_stride,
    k_pe_stride,
    num_tokens,
    num_slots,
    index_flag,
    TRAP: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    NARROW: tl.constexpr,
    SOURCE_IS_BF16: tl.constexpr,
    TOKENS: tl.constexpr,
    NATIVE: tl.constexpr,
):
    """fp8_ds_mla. The NoPE tile is [token, 128-wide tile, column], so each tile
    amax is one reduction over the last axis and each token's entry offset is
    broadcast to its four tiles. Strides are in bytes; the fp32 scales and the
    16-bit RoPE go through 4- and 2-byte views of the same cache."""
    tokens, write, past, entry = _token_entries(
        slot_mapping, tl.program_id(0) * TOKENS + tl.arange(0, TOKENS), num_tokens, num_slots,
        block_stride, entry_stride, BLOCK_SIZE, NARROW,
    )
    tiles = tl.arange(0, 4)
    cols = tl.arange(0, 128)
    tile_cols = tiles[None, :, None] * 128 + cols[None, None, :]
    mask = write[:, None, None]
    x = load_as_fp32(kv_c + tokens[:, None, None] * kv_c_stride + tile_cols, mask, SOURCE_IS_BF16)
    amax = tl.max(tl.abs(x), axis=2)
    tile_scale = tl.maximum(tl.math.div_rn(amax, 448.0), 1.1754943508222875e-38)
    # x / tile_scale through the reciprocal (divide_rn). A tile whose amax is
    # under 2^-100 may hold subnormals with quotients in fp8 range: both sides are
    # scaled by 2^64 first (exact), so the quotient is the same and in range. A
    # tile with an infinite (or NaN) amax divides by 1 with reciprocal 0, which
    # gives x * 0, what x / inf is.
    finite = tile_scale < float("inf")
    boost = tl.where(amax < 7.888609052210118e-31, 1.8446744073709552e19, 1.0)
    divisor = tl.where(finite, tile_scale * boost, 1.0)
    reciprocal = tl.where(finite, tl.math.div_rn(tl.full([TOKENS, 4], 1.0, tl.float32), divisor), 0.0)
    if NATIVE:
        quotient = divide_rn(x * boost[:, :, None], divisor[:, :, None], reciprocal[:, :, None], NATIVE, True)
    else:
        quotient = tl.math.div_rn(x, tile_scale[:, :, None])
    codes = fp32_to_fp8_code(quotient, False, NATIVE)
    tl.store(kv_cache + entry[:, None, None] + tile_cols, codes.to(tl.uint8), mask=mask)
    tl.store(kv_cache_as_fp32 + (entry >> 2)[:, None] + 128 + tiles[None, :], tile_scale, mask=write[:, None])

    rope_cols = tl.arange(0, 64)
    rope = tl.load(k_pe + tokens[:, None] * k_pe_stride + rope_cols[None, :], mask=write[:, None])
    tl.store(kv_cache_as_16bit + (entry >> 1)[:, None] + 264 + rope_cols[None, :], rope, mask=write[:, None])
    record_violation(index_flag, past, TRAP)


# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::concat_and_cache_nvfp4_ds_mla_kernel @03b6016490
# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::nvfp4_tile_scale @03b6016490
# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::nvfp4_pack16_e2m1_rn @03b6016490
@triton.jit
def concat_and_cache_nvfp4_ds_mla_kernel(
    kv_c,
    k_pe,
    kv_cache,
    slot_mapping,
    block_stride,
    entry_stride,
    kv_c_stride,
    k_pe_stride,
    num_tokens,
    num_slots,
    index_flag,
    TRAP: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    NARROW: tl.constexpr,
    TOKENS: tl.constexpr,
    PAIRS: tl.constexpr,
    FMA: tl.constexpr,
):
    """nvfp4_ds_mla. Rows are (token, 16-wide tile) pairs. ``PAIRS``: ``kv_c``
    arrives as int32 words, each the bf16 bit patterns of elements ``2i`` (low
    half) and ``2i+1``, so a tile row is one 32-byte load and byte ``i`` is
    ``even[i] | odd[i] << 4``; otherwise (rows not 4-byte aligned) ``kv_c`` is
    int16 bits and the even and odd elements are two strided ``[rows, 8]``
    loads, with the same results. ``k_pe`` arrives as bf16 bit patterns
    (int16). Integer fp8 conversions on every back end: with the hardware fp8
    conversions this kernel wrote wrong scale bytes on the H200 (Triton 3.6;
    not root-caused), the integer path is bit-exact there. The RoPE part is
    converted by the hardware where ``FMA`` (compiled GPU code): its bytes are
    compared bit for bit with the reference on the GPU."""
    NATIVE: tl.constexpr = False
    tokens, write, past, entry = _token_entries(
        slot_mapping, tl.program_id(0) * TOKENS + tl.arange(0, TOKENS), num_tokens, num_slots,
        block_stride, entry_stride, BLOCK_SIZE, NARROW,
    )
    tiles = tl.arange(0, 32)
    pairs = tl.arange(0, 8)
    mask = write[:, None, None]
    if PAIRS:
        words = tl.load(kv_c + tokens[:, None, None] * kv_c_stride + tiles[None, :, None] * 8 + pairs[None, None, :],
                        mask=mask, other=0)
        even = (words << 16).to(tl.float32, bitcast=True)
        odd = (words & -65536).to(tl.float32, bitcast=True)
    else:
        src = kv_c + tokens[:, None, None] * kv_c_stride + tiles[None, :, None] * 16 + 2 * pairs[None, None, :]
        even = load_as_fp32(src, mask, True)
        odd = load_as_fp32(src + 1, mask, True)
    amax = tl.max(tl.maximum(tl.abs(even), tl.abs(odd)), axis=2)
    if FMA:
        wanted = tl.maximum(divide_rn(amax, 6.0, 0.1666666716337204, FMA), 0.001953125)
    else:
        wanted = tl.maximum(tl.math.div_rn(amax, 6.0), 0.001953125)
    scale_code = fp32_to_fp8_code(wanted, False, NATIVE)
    bump = (fp8_code_to_fp32(scale_code, False, NATIVE) < wanted) & (scale_code < 0x7E)
    scale_code = scale_code + bump.to(tl.int32)
    inverse = tl.math.div_rn(tl.full([TOKENS, 32], 1.0, tl.float32), fp8_code_to_fp32(scale_code, False, NATIVE))
    packed = fp32_to_e2m1_code(even * inverse[:, :, None]) | (fp32_to_e2m1_code(odd * inverse[:, :, None]) << 4)
    tl.store(kv_cache + entry[:, None, None] + tiles[None, :, None] * 8 + pairs[None, None, :], packed.to(tl.uint8),
             mask=mask)
    scale_byte = 320 + 8 * (tiles & 3) + (tiles >> 2)
    tl.store(kv_cache + entry[:, None] + scale_byte[None, :], scale_code.to(tl.uint8), mask=write[:, None])

    rope_cols = tl.arange(0, 64)
    rope = load_as_fp32(k_pe + tokens[:, None] * k_pe_stride + rope_cols[None, :], write[:, None], True)
    tl.store(kv_cache + entry[:, None] + 256 + rope_cols[None, :], fp32_to_fp8_code(rope, False, FMA).to(tl.uint8),
             mask=write[:, None])
    record_violation(index_flag, past, TRAP)


def _writer_grid(num_tokens: int, tokens_per_program: int) -> tuple[int]:
    """A few tokens per program: enough work per program to hide the slot
    lookup, and small tiles that never spill."""
    return (triton.cdiv(num_tokens, tokens_per_program),)


def _as_bits(value: torch.Tensor) -> torch.Tensor:
    """bf16 travels as int16 bit patterns (the interpreter has no exact bf16)."""
    return value.view(torch.int16) if value.dtype == torch.bfloat16 else value


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_mla @00eb0c874e
# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::launch_concat_and_cache_nvfp4_ds_mla @03b6016490
def _concat_and_cache_mla(
    kv_c: torch.Tensor,
    k_pe: torch.Tensor,
    kv_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    scale: torch.Tensor,
) -> None:
    """The body of ``torch.ops.portq.concat_and_cache_mla``: host checks, then the launch."""
    check.instance("kv_cache_dtype", kv_cache_dtype, str)
    if kv_cache_dtype not in fmt.WRITE_FORMATS:
        check.fail("kv_cache_dtype", f"one of {fmt.supported(fmt.WRITE_FORMATS)}", repr(kv_cache_dtype))
    check.paged_cache("kv_cache", kv_cache)
    device = kv_cache.device
    check.tensor("kv_c", kv_c, dtypes=check.FLOAT_DTYPES, ndim=2, device=device)
    check.tensor("k_pe", k_pe, dtypes=(kv_c.dtype,), ndim=(2, 3), device=device)
    if k_pe.dim() == 3:
        if k_pe.shape[1] != 1:
            check.fail("k_pe", "[T, pe_dim] or [T, 1, pe_dim]", f"shape {tuple(k_pe.shape)}")
        k_pe = k_pe[:, 0]
    check.index_tensor("slot_mapping", slot_mapping, device, dtype=torch.int64)
    check.scale_tensor("scale", scale, device)
    for name, value in (("kv_c", kv_c), ("k_pe", k_pe), ("kv_cache", kv_cache)):
        check.unit_inner_stride(name, value)
    num_tokens = slot_mapping.shape[0]
    if num_tokens > kv_c.shape[0] or num_tokens > k_pe.shape[0]:
        check.fail("slot_mapping", f"at most as long as kv_c ({kv_c.shape[0]} rows) and k_pe ({k_pe.shape[0]} rows)",
                   f"{num_tokens} tokens")
    kv_lora_rank, pe_dim = kv_c.shape[1], k_pe.shape[1]
    block_size, num_blocks = kv_cache.shape[1], kv_cache.shape[0]

    if kv_cache_dtype in (fmt.FP8_DS_MLA, fmt.NVFP4_DS_MLA):
        entry_bytes = fmt.DS_MLA_ENTRY_BYTES if kv_cache_dtype == fmt.FP8_DS_MLA else fmt.NVFP4_ENTRY_BYTES
        if (kv_lora_rank, pe_dim) != (fmt.DS_MLA_KV_LORA_RANK, fmt.DS_MLA_PE_DIM):
            check.fail("kv_c, k_pe", f"kv_lora_rank {fmt.DS_MLA_KV_LORA_RANK} and pe_dim {fmt.DS_MLA_PE_DIM} wide "
                       f"for {kv_cache_dtype}", f"{kv_lora_rank} and {pe_dim}")
        allowed = (torch.bfloat16,) if kv_cache_dtype == fmt.NVFP4_DS_MLA else (torch.bfloat16, torch.float16)
        check.tensor("kv_c", kv_c, dtypes=allowed)
        if kv_cache.element_size() != 1 or kv_cache.dim() != 3 or kv_cache.shape[2] != entry_bytes:
            check.fail("kv_cache", f"a 1-byte [num_blocks, block_size, {entry_bytes}] tensor for {kv_cache_dtype}",
                       f"{check.dtype_name(kv_cache.dtype)} {tuple(kv_cache.shape)}")
        if kv_cache.stride(0) % 4 or kv_cache.stride(1) % 4 or kv_cache.storage_offset() % 4:
            check.fail("kv_cache", "blocks and entries starting at 4-byte boundaries",
                       f"strides {kv_cache.stride()} and storage offset {kv_cache.storage_offset()}")
    else:
        conversion = fmt.ELEMENT_FORMATS[kv_cache_dtype]
        if kv_cache.dim() != 3 or kv_cache.shape[2] != kv_lora_rank + pe_dim:
            check.fail("kv_cache", f"[num_blocks, block_size, kv_lora_rank + pe_dim = {kv_lora_rank + pe_dim}]",
                       f"shape {tuple(kv_cache.shape)}")
        if conversion == Conversion.AUTO and kv_cache.dtype != kv_c.dtype:
            check.fail("kv_cache", f"{check.dtype_name(kv_c.dtype)} (kv_cache_dtype {kv_cache_dtype!r} copies bits)",
                       check.dtype_name(kv_cache.dtype), TypeError)
        if conversion != Conversion.AUTO and kv_cache.element_size() != 1:
            check.fail("kv_cache", f"a 1-byte dtype (uint8 or float8) for kv_cache_dtype {kv_cache_dtype!r}",
                       check.dtype_name(kv_cache.dtype), TypeError)
    if num_tokens == 0:
        return
    if check.debug_reads("concat_and_cache_mla", device):
        check.first_outside("slot_mapping", slot_mapping, None, num_blocks * block_size,
                            " (the cache's slots)")
    flag = check.index_flag(device)

    tokens, warps = WRITER_TILING[kv_cache_dtype if kv_cache_dtype in (fmt.FP8_DS_MLA, fmt.NVFP4_DS_MLA) else "element"]
    grid = _writer_grid(num_tokens, tokens)
    native = native_casts(kv_cache)
    common = (slot_mapping, kv_cache.stride(0), kv_cache.stride(1), kv_c.stride(0), k_pe.stride(0))
    num_slots = num_blocks * block_size
    slots = dict(BLOCK_SIZE=block_size, NARROW=num_slots <= 2**32)
    if kv_cache_dtype == fmt.FP8_DS_MLA:
        raw = kv_cache.view(torch.uint8)
        concat_and_cache_ds_mla_kernel[grid](
            _as_bits(kv_c), k_pe.view(torch.int16), raw, raw.view(torch.float32), raw.view(torch.int16),
            *common, num_tokens, num_slots, flag, check.trap_in_kernel(device), **slots,
            SOURCE_IS_BF16=kv_c.dtype == torch.bfloat16, TOKENS=tokens, NATIVE=native, num_warps=warps,
        )
    elif kv_cache_dtype == fmt.NVFP4_DS_MLA:
        # Pair loads need every kv_c row at a 4-byte boundary.
        pairs = kv_c.stride(0) % 2 == 0 and kv_c.storage_offset() % 2 == 0
        words = kv_c.view(torch.int32) if pairs else _as_bits(kv_c)
        concat_and_cache_nvfp4_ds_mla_kernel[grid](
            words, _as_bits(k_pe), kv_cache.view(torch.uint8),
            slot_mapping, kv_cache.stride(0), kv_cache.stride(1), words.stride(0), k_pe.stride(0),
            num_tokens, num_slots, flag, check.trap_in_kernel(device), **slots,
            TOKENS=tokens, PAIRS=pairs, FMA=native, num_warps=warps,
        )
    else:
        conversion = fmt.ELEMENT_FORMATS[kv_cache_dtype]
        if conversion == Conversion.AUTO:
            bits = {4: torch.int32, 2: torch.int16}[kv_c.element_size()]
            kv_c_arg, k_pe_arg, cache_arg = kv_c.view(bits), k_pe.view(bits), kv_cache.view(bits)
        else:
            kv_c_arg, k_pe_arg, cache_arg = _as_bits(kv_c), _as_bits(k_pe), kv_cache.view(torch.uint8)
        concat_and_cache_mla_kernel[grid](
            kv_c_arg, k_pe_arg, cache_arg,
            *common, kv_lora_rank, pe_dim, scale, num_tokens, num_slots, flag, check.trap_in_kernel(device), **slots,
            CONVERSION=int(conversion),
            SOURCE_IS_BF16=kv_c.dtype == torch.bfloat16,
            RANK_BLOCK=triton.next_power_of_2(kv_lora_rank),
            PE_BLOCK=triton.next_power_of_2(pe_dim),
            EXACT_WIDTHS=kv_lora_rank == triton.next_power_of_2(kv_lora_rank) and pe_dim == triton.next_power_of_2(pe_dim),
            TOKENS=tokens,
            NATIVE=native,
            num_warps=warps,
        )
    check.after_launch("concat_and_cache_mla", flag, "slot_mapping entries")


_CONCAT_AND_CACHE_MLA_OP = custom_ops.register("concat_and_cache_mla", _concat_and_cache_mla, mutates_args=("kv_cache",),
    fake=custom_ops.no_output)


# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_mla_grouped -- multi-layer MTP-draft writer (spec §2.5); no caller in this tree, one launch per layer of concat_and_cache_mla covers it
# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_mla_grouped_kernel -- see concat_and_cache_mla_grouped
# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::reshape_and_cache_kernel -- non-MLA (separate K/V) paged cache; this tree carries MLA caches only
# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::indexer_k_quant_and_cache_kernel -- DeepSeek V3.2 indexer-key cache, not part of the MLA KV cache this row ports
def concat_and_cache_mla(
    kv_c: torch.Tensor,
    k_pe: torch.Tensor,
    kv_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    scale: torch.Tensor,
) -> None:
    """Write ``kv_c [T, kv_lora_rank]`` and ``k_pe [T, pe_dim]`` (or ``[T, 1, pe_dim]``)
    into ``kv_cache [num_blocks, block_size, entry]`` at ``slot_mapping`` (int64).

    ``scale`` (float32, element 0) is used by the fp8 formats only; the ds_mla
    formats carry their own scales. See the module docstring for the formats.
    """
    custom_ops.call("concat_and_cache_mla", kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale)
