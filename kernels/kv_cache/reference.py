"""Plain-PyTorch semantics of the KV-cache ops: the oracle of every kernel test.

Same names, parameter order and in-place contract as the Triton ops in this
package (they write into ``kv_cache`` / ``dst``), written from the spec
(vllm-mla-cache-kernels.md §1-§6, §12) rather than from the kernels, with a
different formulation wherever one exists (torch's own float8 casts with an
explicit clamp, e2m1 by nearest-value search, a per-request loop), so that a
kernel bug does not hide behind a shared helper. Works on any device, CPU
included; other rows use it as the oracle of their callers.

Bit-exactness contract (what the tests compare byte for byte):
* fp8 quantize: ``(x.float() / scale).clamp(-max, max).to(float8)`` (IEEE
  division, round to nearest even, saturation as in ``__NV_SATFINITE``).
* fp8 dequantize: ``(float(q) * scale).to(dst.dtype)`` (RNE).
* fp8_ds_mla and nvfp4_ds_mla: the layouts and formulas of spec §2.3, §2.4, §5, §6.
Index values are not validated here; pass valid ones.
"""
from __future__ import annotations

import torch

from . import _formats as fmt

_FP8_DTYPE = {
    fmt.Conversion.FP8_E4M3: torch.float8_e4m3fn,
    fmt.Conversion.FP8_E5M2: torch.float8_e5m2,
}
_E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def quantize_fp8(x: torch.Tensor, scale, conversion: fmt.Conversion) -> torch.Tensor:
    """fp32 division by ``scale``, saturate, round to nearest even -> uint8 codes."""
    limit = fmt.FP8_MAX[conversion]
    y = (x.float() / scale).clamp(-limit, limit)
    return y.to(_FP8_DTYPE[conversion]).view(torch.uint8)


def dequantize_fp8(codes: torch.Tensor, scale, conversion: fmt.Conversion) -> torch.Tensor:
    """uint8 codes -> fp32 ``float(q) * scale``."""
    return codes.view(_FP8_DTYPE[conversion]).float() * scale


def e2m1_encode(y: torch.Tensor) -> torch.Tensor:
    """fp32 -> e2m1 nibble codes (int32): nearest of {0,.5,1,1.5,2,3,4,6}, ties to
    the even code, saturating at 6; the sign bit (8) follows the sign of ``y``."""
    values = torch.tensor(_E2M1_VALUES, device=y.device)
    midpoints = (values[1:] + values[:-1]) / 2
    magnitude = y.abs().clamp(max=6.0)
    below = (magnitude[..., None] > midpoints).sum(-1)  # ties go down
    above = (magnitude[..., None] >= midpoints).sum(-1)  # ties go up
    code = torch.where((below != above) & (below % 2 == 1), above, below)
    negative = torch.signbit(y)
    return (code + 8 * negative).to(torch.int32)


def e2m1_decode(codes: torch.Tensor) -> torch.Tensor:
    """e2m1 nibble codes -> fp32."""
    values = torch.tensor(_E2M1_VALUES, device=codes.device)
    magnitude = values[(codes & 7).long()]
    return torch.where((codes & 8) != 0, -magnitude, magnitude)


def encode_fp8_ds_mla(kv_c: torch.Tensor, k_pe: torch.Tensor) -> torch.Tensor:
    """``[T, 512]`` + ``[T, 64]`` 16-bit -> ``[T, 656]`` uint8 entries (spec §2.3)."""
    x = kv_c.float().reshape(-1, 4, fmt.DS_MLA_TILE)
    amax = x.abs().amax(dim=-1)
    scales = torch.clamp(amax / fmt.DS_MLA_SCALE_DIVISOR, min=fmt.FLT_MIN)
    nope = quantize_fp8(x, scales[..., None], fmt.Conversion.FP8_E4M3)
    return torch.cat(
        [
            nope.reshape(-1, 512),
            scales.contiguous().view(torch.uint8).reshape(-1, 16),
            k_pe.contiguous().view(torch.uint8).reshape(-1, 128),
        ],
        dim=1,
    )


def decode_fp8_ds_mla(entries: torch.Tensor) -> torch.Tensor:
    """``[N, 656]`` uint8 -> ``[N, 576]`` bf16 (spec §5.1)."""
    entries = entries.contiguous()
    codes = entries[:, :512]
    scales = entries[:, 512:528].contiguous().view(torch.float32)
    nope = codes.view(torch.float8_e4m3fn).float() * scales.repeat_interleave(fmt.DS_MLA_TILE, dim=1)
    rope = entries[:, 528:656].contiguous().view(torch.bfloat16)
    return torch.cat([nope.to(torch.bfloat16), rope], dim=1)


def encode_nvfp4_ds_mla(kv_c: torch.Tensor, k_pe: torch.Tensor) -> torch.Tensor:
    """``[T, 512]`` + ``[T, 64]`` bf16 -> ``[T, 352]`` uint8 entries (spec §2.4)."""
    x = kv_c.float().reshape(-1, 32, fmt.NVFP4_TILE)
    amax = x.abs().amax(dim=-1)
    wanted = torch.clamp(amax / fmt.NVFP4_E2M1_MAX, min=fmt.NVFP4_SCALE_FLOOR)
    sf = wanted.clamp(max=448.0).to(torch.float8_e4m3fn).view(torch.uint8)
    bump = (sf.view(torch.float8_e4m3fn).float() < wanted) & (sf < 0x7E)
    sf = sf + bump.to(torch.uint8)
    sf_value = sf.view(torch.float8_e4m3fn).float()
    codes = e2m1_encode(x * (1.0 / sf_value)[..., None])
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).to(torch.uint8).reshape(-1, 256)
    rope = k_pe.float().clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(torch.uint8)
    permuted = torch.empty_like(sf)
    for tile in range(32):
        permuted[:, fmt.nvfp4_scale_byte(tile)] = sf[:, tile]
    return torch.cat([packed, rope.reshape(-1, 64), permuted], dim=1)


def decode_nvfp4_ds_mla(entries: torch.Tensor) -> torch.Tensor:
    """``[N, 352]`` uint8 -> ``[N, 576]`` bf16 (spec §6; every product is exact)."""
    entries = entries.contiguous()
    packed = entries[:, :256].to(torch.int32)
    codes = torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(-1, 512)
    tiles = torch.arange(32, device=entries.device)
    sf_bytes = entries[:, 320 + 8 * (tiles & 3) + (tiles >> 2)]
    sf = sf_bytes.view(torch.float8_e4m3fn).float().repeat_interleave(fmt.NVFP4_TILE, dim=1)
    nope = e2m1_decode(codes) * sf
    rope = entries[:, 256:320].view(torch.float8_e4m3fn).float()
    return torch.cat([nope, rope], dim=1).to(torch.bfloat16)


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype: str, scale) -> None:
    """Write ``cat(kv_c[t], k_pe[t])`` (converted per ``kv_cache_dtype``) into slot
    ``slot_mapping[t]`` for ``t < len(slot_mapping)``; negative slots are skipped."""
    k_pe = k_pe.reshape(k_pe.shape[0], -1)
    count = slot_mapping.shape[0]
    slots = slot_mapping.long()
    keep = (slots >= 0).nonzero().flatten()
    slots = slots[keep]
    kv_c, k_pe = kv_c[:count][keep], k_pe[:count][keep]
    block_size = kv_cache.shape[1]
    blocks, offsets = slots // block_size, slots % block_size
    if kv_cache_dtype == fmt.FP8_DS_MLA:
        kv_cache.view(torch.uint8)[blocks, offsets] = encode_fp8_ds_mla(kv_c, k_pe)
    elif kv_cache_dtype == fmt.NVFP4_DS_MLA:
        kv_cache.view(torch.uint8)[blocks, offsets] = encode_nvfp4_ds_mla(kv_c, k_pe)
    elif fmt.ELEMENT_FORMATS[kv_cache_dtype] == fmt.Conversion.AUTO:
        kv_cache[blocks, offsets] = torch.cat([kv_c, k_pe], dim=1).to(kv_cache.dtype)
    else:
        conversion = fmt.ELEMENT_FORMATS[kv_cache_dtype]
        entry = quantize_fp8(torch.cat([kv_c.float(), k_pe.float()], dim=1), scale.reshape(-1)[0], conversion)
        kv_cache.view(torch.uint8)[blocks, offsets] = entry


def paged_rows(block_table, output_starts, num_rows, seq_starts, block_size, terminal: bool, num_blocks: int):
    """Yield ``(request, dst_rows, physical_blocks, offsets)`` per request (spec §12
    ``ref_paged_gather``). Positions whose logical block is past the table width,
    or whose table entry is not a block of the cache, are left out: the rows they
    would fill stay untouched (the kernels' guards; upstream reads out of bounds).
    So do the rows of a request whose output start is negative or whose output
    range ends before it starts (inconsistent offsets, an index violation)."""
    starts = [int(v) for v in output_starts]
    num_reqs = len(starts) - 1 if terminal else len(starts)
    for req in range(num_reqs):
        if starts[req] < 0:
            continue
        first = min(max(starts[req], 0), num_rows)
        if terminal or req + 1 < num_reqs:
            last = min(max(starts[req + 1], 0), num_rows)
        else:
            last = num_rows
        if last <= first:
            continue
        begin = int(seq_starts[req]) if seq_starts is not None else 0
        positions = torch.arange(begin, begin + last - first, device=block_table.device)
        logical = positions // block_size
        physical = torch.full_like(positions, -1)
        in_table = logical < block_table.shape[1]
        physical[in_table] = block_table[req, logical[in_table]].long()
        keep = (physical >= 0) & (physical < num_blocks)
        yield req, first + keep.nonzero().flatten(), physical[keep], positions[keep] % block_size


def gather_and_maybe_dequant_cache(
    src_cache, dst, block_table, cu_seq_lens, num_tokens: int, kv_cache_dtype: str, scale, seq_starts=None
) -> None:
    conversion = fmt.ELEMENT_FORMATS[kv_cache_dtype]
    for _, rows, blocks, offsets in paged_rows(
        block_table, cu_seq_lens, num_tokens, seq_starts, src_cache.shape[1], terminal=True, num_blocks=src_cache.shape[0]
    ):
        entries = src_cache[blocks, offsets]
        if conversion == fmt.Conversion.AUTO:
            dst[rows] = entries
        else:
            dst[rows] = dequantize_fp8(entries.view(torch.uint8), scale.reshape(-1)[0], conversion).to(dst.dtype)


def cp_gather_cache(src_cache, dst, block_table, cu_seq_lens, batch_size: int, seq_starts=None) -> None:
    for _, rows, blocks, offsets in paged_rows(
        block_table, cu_seq_lens[: batch_size + 1], dst.shape[0], seq_starts, src_cache.shape[1], terminal=True, num_blocks=src_cache.shape[0]
    ):
        dst[rows] = src_cache[blocks, offsets]


def _gather_upconverted(decode, src_cache, dst, block_table, workspace_starts, batch_size, seq_starts):
    for _, rows, blocks, offsets in paged_rows(
        block_table, workspace_starts[:batch_size], dst.shape[0], seq_starts, src_cache.shape[1],
        terminal=False, num_blocks=src_cache.shape[0],
    ):
        dst[rows] = decode(src_cache.view(torch.uint8)[blocks, offsets])


def cp_gather_and_upconvert_fp8_kv_cache(
    src_cache, dst, block_table, workspace_starts, batch_size: int, seq_starts=None
) -> None:
    _gather_upconverted(decode_fp8_ds_mla, src_cache, dst, block_table, workspace_starts, batch_size, seq_starts)


def cp_gather_and_upconvert_nvfp4_kv_cache(
    src_cache, dst, block_table, workspace_starts, batch_size: int, seq_starts=None
) -> None:
    _gather_upconverted(decode_nvfp4_ds_mla, src_cache, dst, block_table, workspace_starts, batch_size, seq_starts)
