"""``gather_and_maybe_dequant_cache`` and ``cp_gather_cache`` against the reference.

Every case poisons ``dst`` first, so rows that must stay untouched (past
``num_tokens`` / ``dst.shape[0]``, pages past the table width, gaps between
requests) are checked too. Block tables are random permutations with gaps and
padded columns."""
from __future__ import annotations

import pytest
import torch
from kv_cache_helpers import (
    DEVICE,
    POISON_FLOAT,
    assert_same_bits,
    generator,
    paged_batch,
    poisoned,
    random_fp8_bytes,
    random_values,
    to_device,
)

from portq_kernels import kv_cache as ops
from portq_kernels import validation
from portq_kernels.kv_cache import reference as ref


def _cache(num_blocks, block_size, entry, kv_cache_dtype, dst_dtype, gen, block_pad=0):
    """A cache whose blocks are ``block_pad`` entries further apart than dense."""
    if kv_cache_dtype in ("auto", "float16", "bfloat16"):
        storage = random_values((num_blocks, block_size + block_pad, entry), dst_dtype, gen=gen)
    else:
        storage = random_fp8_bytes((num_blocks, block_size + block_pad, entry), gen=gen,
                                   e5m2=kv_cache_dtype == "fp8_e5m2")
    return storage[:, :block_size]


def _gather_both(src, dst, table, cu, num_tokens, kv_cache_dtype, scale, seq_starts):
    expected = dst.clone()
    ref.gather_and_maybe_dequant_cache(src, expected, table, cu, num_tokens, kv_cache_dtype, scale, seq_starts)
    d_src, d_dst, d_table, d_cu, d_scale, d_starts = to_device(src, dst.clone(), table, cu, scale, seq_starts)
    ops.gather_and_maybe_dequant_cache(d_src, d_dst, d_table, d_cu, num_tokens, kv_cache_dtype, d_scale, d_starts)
    assert_same_bits(d_dst, expected)
    return d_dst.cpu()


def _starts(kind, block_size, lens):
    """seq_starts of one kind: zero, B-1, a multiple of B, mixed with the full length."""
    if kind == "none":
        return None
    if kind == "b_minus_1":
        return [block_size - 1] * len(lens)
    if kind == "multiple":
        return [2 * block_size * (r % 2) for r in range(len(lens))]
    return [(13 + 17 * r) % (2 * block_size) for r in range(len(lens))]


# (block_size, entry, dst dtype, kv_cache_dtype, seq_starts kind)
GATHER_CASES = [
    (16, 576, torch.bfloat16, "fp8", "mixed"),
    (16, 576, torch.float32, "auto", "b_minus_1"),
    (16, 512, torch.float16, "fp8_e5m2", "multiple"),
    (16, 320, torch.float32, "fp8_e4m3", "none"),
    (64, 576, torch.bfloat16, "auto", "mixed"),
    (64, 512, torch.float32, "fp8", "b_minus_1"),
    (64, 320, torch.bfloat16, "fp8_e5m2", "multiple"),
    (64, 576, torch.float16, "float16", "none"),
    (1, 576, torch.bfloat16, "fp8", "mixed"),
    (1, 320, torch.float32, "auto", "none"),
]


@pytest.mark.parametrize("block_size,entry,dst_dtype,kv_cache_dtype,starts_kind", GATHER_CASES)
def test_gather_and_maybe_dequant(block_size, entry, dst_dtype, kv_cache_dtype, starts_kind):
    gen = generator(block_size * entry)
    lens = [37, 0, 5, 23] if block_size > 1 else [9, 0, 4, 6]
    table, cu, seq_starts, num_blocks = paged_batch(
        block_size, lens, _starts(starts_kind, block_size, lens), gen=gen
    )
    src = _cache(num_blocks, block_size, entry, kv_cache_dtype, dst_dtype, gen)
    total = int(cu[-1])
    dst = poisoned((total + 5, entry), dst_dtype)
    _gather_both(src, dst, table, cu, total, kv_cache_dtype, torch.tensor([0.37]), seq_starts)


@pytest.mark.parametrize("clamp", [0, 9, 30])
def test_gather_rows_past_num_tokens_are_never_written(clamp):
    gen = generator(clamp)
    lens = [20, 7, 14]
    table, cu, seq_starts, num_blocks = paged_batch(16, lens, [5, 0, 16], gen=gen)
    src = _cache(num_blocks, 16, 576, "fp8", torch.bfloat16, gen)
    dst = poisoned((45, 576), torch.bfloat16)
    _gather_both(src, dst, table, cu, int(cu[-1]) - clamp, "fp8", torch.tensor([2.5]), seq_starts)


def test_gather_skips_pages_past_the_table_width():
    """Request 1 reads past its 2-column row: those rows stay poisoned, with no
    error (upstream #49427 skips such tokens). Deviation: the bound is the
    table's width, not upstream's ``block_table.stride(0)``: this table is a
    2-column view of 3-column rows, and column 2 (block 9 / 0) is not read."""
    gen = generator(1)
    table = torch.tensor([[4, 1, 9], [7, 2, 0]], dtype=torch.int32)[:, :2]
    assert table.stride(0) == 3
    cu = torch.tensor([0, 10, 60], dtype=torch.int32)
    starts = torch.tensor([3, 20], dtype=torch.int32)
    src = _cache(12, 16, 576, "auto", torch.float32, gen)
    dst = poisoned((60, 576), torch.float32)
    validation.reset_index_flag(DEVICE)
    got = _gather_both(src, dst, table, cu, 60, "auto", torch.tensor([1.0]), starts)
    assert int(validation.index_flag(DEVICE)[0]) == 1
    assert (got[22:] == POISON_FLOAT).all() and not (got[:22] == POISON_FLOAT).any()


def test_gather_non_contiguous_dst_rows_and_padded_blocks():
    gen = generator(2)
    lens = [30, 3, 18]
    table, cu, seq_starts, num_blocks = paged_batch(16, lens, [7, 16, 0], gen=gen)
    src = _cache(num_blocks, 16, 576, "fp8", torch.bfloat16, gen, block_pad=3)
    wide = poisoned((int(cu[-1]), 640), torch.bfloat16)
    dst = wide[:, 32:608]
    assert not dst.is_contiguous()
    _gather_both(src, dst, table, cu, int(cu[-1]), "fp8", torch.tensor([0.125]), seq_starts)


def test_gather_start_equal_to_full_length_and_all_empty():
    gen = generator(3)
    table, cu, seq_starts, num_blocks = paged_batch(16, [0, 0, 12], [32, 19, 16], gen=gen)
    src = _cache(num_blocks, 16, 512, "auto", torch.bfloat16, gen)
    dst = poisoned((12, 512), torch.bfloat16)
    _gather_both(src, dst, table, cu, 12, "auto", torch.tensor([1.0]), seq_starts)
    empty = paged_batch(16, [0, 0], [0, 5], gen=gen)
    dst = poisoned((4, 512), torch.bfloat16)
    _gather_both(src, dst, empty[0], empty[1], 4, "auto", torch.tensor([1.0]), empty[2])


def test_gather_num_tokens_zero_is_a_no_op():
    gen = generator(4)
    table, cu, _, num_blocks = paged_batch(16, [5], gen=gen)
    src, dst = to_device(_cache(num_blocks, 16, 576, "auto", torch.bfloat16, gen), poisoned((5, 576), torch.bfloat16))
    before = dst.clone()
    ops.gather_and_maybe_dequant_cache(src, dst, *to_device(table, cu), 0, "auto", torch.ones(1, device=DEVICE))
    assert torch.equal(dst, before)


def _cp_both(src, dst, table, cu, batch_size, seq_starts):
    expected = dst.clone()
    ref.cp_gather_cache(src, expected, table, cu, batch_size, seq_starts)
    d_src, d_dst, d_table, d_cu, d_starts = to_device(src, dst.clone(), table, cu, seq_starts)
    ops.cp_gather_cache(d_src, d_dst, d_table, d_cu, batch_size, d_starts)
    assert_same_bits(d_dst, expected)


@pytest.mark.parametrize(
    "dtype,entry_shape,block_size",
    [
        (torch.uint8, (656,), 16),
        (torch.uint8, (3, 5), 1),
        (torch.bfloat16, (576,), 64),
        (torch.float16, (2, 7), 16),
        (torch.float32, (576,), 16),
        (torch.int32, (320,), 64),
        (torch.float8_e4m3fn, (576,), 16),
    ],
)
@pytest.mark.parametrize("with_starts", [False, True])
def test_cp_gather_cache_bit_copy(dtype, entry_shape, block_size, with_starts):
    gen = generator(block_size + len(entry_shape))
    lens = [25, 0, 9, 17] if block_size > 1 else [6, 0, 3, 5]
    starts = [block_size - 1, 4, 2 * block_size, 0] if with_starts else None
    table, cu, seq_starts, num_blocks = paged_batch(block_size, lens, starts, gen=gen)
    src = torch.randint(0, 120, (num_blocks, block_size, *entry_shape), generator=gen, dtype=torch.int32)
    src = src.to(torch.uint8).view(dtype) if dtype == torch.float8_e4m3fn else src.to(dtype)
    dst = poisoned((int(cu[-1]) + 3, *entry_shape), dtype)
    _cp_both(src, dst, table, cu, len(lens), seq_starts)


def test_cp_gather_cache_clamps_to_dst_rows_and_strided_dst():
    """``dst`` shorter than cu_seq_lens[-1] (T = dst.shape[0]); then a strided dst."""
    gen = generator(6)
    table, cu, seq_starts, num_blocks = paged_batch(16, [20, 20], [3, 9], gen=gen)
    src = random_values((num_blocks, 16, 576), torch.bfloat16, gen=gen)
    _cp_both(src, poisoned((27, 576), torch.bfloat16), table, cu, 2, seq_starts)
    wide = poisoned((40, 600), torch.bfloat16)
    _cp_both(src, wide[:, 10:586], table, cu, 2, seq_starts)


def test_cp_gather_cache_padded_blocks():
    gen = generator(7)
    table, cu, seq_starts, num_blocks = paged_batch(16, [33, 8], [15, 0], gen=gen)
    storage = random_values((num_blocks, 20, 576), torch.float32, gen=gen)
    _cp_both(storage[:, 2:18], poisoned((41, 576), torch.float32), table, cu, 2, seq_starts)


def test_round_trip_write_then_gather():
    """concat_and_cache_mla then gather: the rows come back (dequantized)."""
    gen = generator(8)
    block_size, lens = 16, [19, 30]
    table, cu, seq_starts, num_blocks = paged_batch(block_size, lens, [4, 0], gen=gen)
    kv_c = random_values((num_blocks * block_size, 512), torch.bfloat16, gen=gen)
    k_pe = random_values((num_blocks * block_size, 64), torch.bfloat16, gen=gen)
    cache = torch.zeros(num_blocks, block_size, 576, dtype=torch.uint8)
    d = to_device(kv_c, k_pe, cache, torch.arange(num_blocks * block_size), torch.tensor([0.05]), table, cu, seq_starts)
    ops.concat_and_cache_mla(d[0], d[1], d[2], d[3], "fp8", d[4])
    dst = poisoned((49, 576), torch.bfloat16).to(DEVICE)
    ops.gather_and_maybe_dequant_cache(d[2], dst, d[5], d[6], 49, "fp8", d[4], d[7])
    expected_cache = cache.clone()
    ref.concat_and_cache_mla(kv_c, k_pe, expected_cache, torch.arange(num_blocks * block_size), "fp8", torch.tensor([0.05]))
    expected = poisoned((49, 576), torch.bfloat16)
    ref.gather_and_maybe_dequant_cache(expected_cache, expected, table, cu, 49, "fp8", torch.tensor([0.05]), seq_starts)
    assert_same_bits(dst, expected)
    raw = poisoned((49, 576), torch.uint8).to(DEVICE)
    ops.cp_gather_cache(d[2], raw, d[5], d[6], 2, d[7])
    again = ref.dequantize_fp8(raw.cpu(), 0.05, ref.fmt.Conversion.FP8_E4M3).bfloat16()
    assert_same_bits(again, expected)
