"""Realistic shapes on the GPU: long contexts (60K-300K tokens) and the upstream
test shapes of spec §10, bit-exact against the reference run on the CPU."""
from __future__ import annotations

import pytest
import torch
from kv_cache_helpers import DEVICE, assert_same_bits, generator, paged_batch, poisoned, random_fp8_bytes, to_device
from test_kv_cache_upconvert import FORMATS, random_entries

from portq_kernels import kv_cache as ops
from portq_kernels.kv_cache import reference as ref

pytestmark = pytest.mark.gpu


def _benchmark_starts(num_reqs, block_size=64):
    """The upstream benchmark's non-aligned starts: 13 + (17 r) % block_size."""
    return [13 + (17 * r) % block_size for r in range(num_reqs)]


@pytest.mark.parametrize("lens", [[60000], [300000], [60000, 100000, 180000, 30000]], ids=["60k", "300k", "skew-4"])
def test_long_context_gathers(lens):
    gen = generator(len(lens))
    starts = _benchmark_starts(len(lens))
    table, cu, seq_starts, num_blocks = paged_batch(64, lens, starts, gen=gen, pool_factor=1)
    total = int(cu[-1])
    scale = torch.tensor([0.1])

    fp8 = random_fp8_bytes((num_blocks, 64, 576), gen=gen)
    expected = poisoned((total, 576), torch.bfloat16)
    ref.gather_and_maybe_dequant_cache(fp8, expected, table, cu, total, "fp8", scale, seq_starts)
    d_fp8, d_table, d_cu, d_scale, d_starts = to_device(fp8, table, cu, scale, seq_starts)
    dst = poisoned((total, 576), torch.bfloat16).to(DEVICE)
    ops.gather_and_maybe_dequant_cache(d_fp8, dst, d_table, d_cu, total, "fp8", d_scale, d_starts)
    assert_same_bits(dst, expected)

    raw = poisoned((total, 576), torch.uint8)
    ref.cp_gather_cache(fp8, raw, table, cu, len(lens), seq_starts)
    d_raw = poisoned((total, 576), torch.uint8).to(DEVICE)
    ops.cp_gather_cache(d_fp8, d_raw, d_table, d_cu, len(lens), d_starts)
    assert_same_bits(d_raw, raw)
    del d_fp8, dst, d_raw

    for kv_cache_dtype, (_, op, oracle) in FORMATS.items():
        src = random_entries(kv_cache_dtype, (num_blocks, 64), gen)
        expected = poisoned((total, 576), torch.bfloat16)
        oracle(src, expected, table, cu[:-1], len(lens), seq_starts)
        got = poisoned((total, 576), torch.bfloat16).to(DEVICE)
        op(src.to(DEVICE), got, d_table, d_cu[:-1], len(lens), d_starts)
        assert_same_bits(got, expected)


@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8"])
def test_upstream_gather_and_maybe_dequant_shape(kv_cache_dtype):
    """E 576, block 16, 1024 blocks, batch 8, every seq_len 512, fp32 dst, rows =
    random permutations of all 1024 blocks, no seq_starts, exact compare."""
    gen = generator(8)
    table = torch.stack([torch.randperm(1024, generator=gen) for _ in range(8)]).to(torch.int32)
    cu = torch.arange(0, 8 * 512 + 1, 512, dtype=torch.int32)
    if kv_cache_dtype == "auto":
        src = torch.randn(1024, 16, 576, generator=gen)
    else:
        src = random_fp8_bytes((1024, 16, 576), gen=gen)
    expected = poisoned((4096, 576), torch.float32)
    ref.gather_and_maybe_dequant_cache(src, expected, table, cu, 4096, kv_cache_dtype, torch.tensor([0.1]))
    got = poisoned((4096, 576), torch.float32).to(DEVICE)
    d = to_device(src, table, cu, torch.tensor([0.1]))
    ops.gather_and_maybe_dequant_cache(d[0], got, d[1], d[2], 4096, kv_cache_dtype, d[3])
    assert_same_bits(got, expected)


def test_upstream_cp_gather_cache_shape():
    """Same geometry, seq_len random in [0, 512] (empty requests possible), fp32."""
    gen = generator(9)
    table = torch.stack([torch.randperm(1024, generator=gen) for _ in range(8)]).to(torch.int32)
    lens = torch.randint(0, 513, (8,), generator=gen)
    lens[3] = 0
    cu = torch.zeros(9, dtype=torch.int32)
    cu[1:] = lens.cumsum(0).to(torch.int32)
    src = torch.randn(1024, 16, 576, generator=gen)
    total = int(cu[-1])
    expected = poisoned((total, 576), torch.float32)
    ref.cp_gather_cache(src, expected, table, cu, 8)
    got = poisoned((total, 576), torch.float32).to(DEVICE)
    d = to_device(src, table, cu)
    ops.cp_gather_cache(d[0], got, d[1], d[2], 8)
    assert_same_bits(got, expected)


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
@pytest.mark.parametrize("lens", [[256, 128, 384], [128] * 4, [64] * 16, [8000], [32000], [128000]])
def test_upstream_upconvert_shapes(kv_cache_dtype, lens):
    gen = generator(sum(lens))
    table, cu, _, num_blocks = paged_batch(64, lens, gen=gen, pool_factor=1)
    src = random_entries(kv_cache_dtype, (num_blocks, 64), gen)
    _, op, oracle = FORMATS[kv_cache_dtype]
    total = int(cu[-1])
    expected = poisoned((total, 576), torch.bfloat16)
    oracle(src, expected, table, cu[:-1], len(lens))
    got = poisoned((total, 576), torch.bfloat16).to(DEVICE)
    d = to_device(src, table, cu)
    op(d[0], got, d[1], d[2][:-1], len(lens))
    assert_same_bits(got, expected)


@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8", "fp8_e5m2", "fp8_ds_mla", "nvfp4_ds_mla"])
def test_concat_and_cache_long_prefill(kv_cache_dtype):
    """60K tokens written into a 64-block cache in random slot order."""
    gen = generator(60)
    tokens, block_size = 60000, 64
    num_blocks = tokens // block_size + 8
    kv_c = torch.randn(tokens, 512, generator=gen).bfloat16()
    k_pe = torch.randn(tokens, 64, generator=gen).bfloat16()
    slots = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.int64)
    slots[::97] = -1
    entry = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}.get(kv_cache_dtype, 576)
    dtype = torch.bfloat16 if kv_cache_dtype == "auto" else torch.uint8
    cache = poisoned((num_blocks, block_size, entry), dtype)
    expected = cache.clone()
    ref.concat_and_cache_mla(kv_c, k_pe, expected, slots, kv_cache_dtype, torch.tensor([0.1]))
    d = to_device(kv_c, k_pe, cache, slots, torch.tensor([0.1]))
    ops.concat_and_cache_mla(d[0], d[1], d[2], d[3], kv_cache_dtype, d[4])
    assert_same_bits(d[2], expected)
