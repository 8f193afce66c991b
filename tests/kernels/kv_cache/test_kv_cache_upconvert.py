"""The two upconvert gathers (fp8_ds_mla / nvfp4_ds_mla -> bf16) against the reference.

Includes the upstream test shapes of spec §10 and seed 002's ``seq_starts``
contract for nvfp4: gathering with starts equals gathering everything and
slicing."""
from __future__ import annotations

import pytest
import torch
from kv_cache_helpers import (
    DEVICE,
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

FORMATS = {
    "fp8_ds_mla": (656, ops.cp_gather_and_upconvert_fp8_kv_cache, ref.cp_gather_and_upconvert_fp8_kv_cache),
    "nvfp4_ds_mla": (352, ops.cp_gather_and_upconvert_nvfp4_kv_cache, ref.cp_gather_and_upconvert_nvfp4_kv_cache),
}


def random_entries(kv_cache_dtype, shape, gen):
    """Random cache bytes that are valid entries: finite fp8 NoPE, arbitrary
    (non power-of-two) fp32 tile scales in [0.1, 2.1], finite RoPE; nvfp4 bytes
    are all valid except NaN e4m3 scale/RoPE codes."""
    entry = FORMATS[kv_cache_dtype][0]
    data = random_fp8_bytes((*shape, entry), gen=gen)
    if kv_cache_dtype == "fp8_ds_mla":
        scales = torch.rand((*shape, 4), generator=gen) * 2 + 0.1
        data[..., 512:528] = scales.view(torch.uint8).reshape(*shape, 16)
        rope = random_values((*shape, 64), torch.bfloat16, gen=gen)
        data[..., 528:656] = rope.view(torch.uint8).reshape(*shape, 128)
    return data


def written_cache(kv_cache_dtype, num_blocks, block_size, gen):
    """A cache filled by the reference writer (the realistic content)."""
    entry = FORMATS[kv_cache_dtype][0]
    count = num_blocks * block_size
    kv_c = random_values((count, 512), torch.bfloat16, gen=gen)
    k_pe = random_values((count, 64), torch.bfloat16, gen=gen)
    cache = torch.zeros(num_blocks, block_size, entry, dtype=torch.uint8)
    ref.concat_and_cache_mla(kv_c, k_pe, cache, torch.arange(count), kv_cache_dtype, torch.ones(1))
    return cache


def run_both(kv_cache_dtype, src, dst, table, starts, batch_size, seq_starts):
    _, op, oracle = FORMATS[kv_cache_dtype]
    expected = dst.clone()
    oracle(src, expected, table, starts, batch_size, seq_starts)
    d_src, d_dst, d_table, d_starts, d_seq = to_device(src, dst.clone(), table, starts, seq_starts)
    op(d_src, d_dst, d_table, d_starts, batch_size, d_seq)
    assert_same_bits(d_dst, expected)
    return d_dst.cpu()


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
@pytest.mark.parametrize(
    "lens",
    [[1], [64], [128], [130, 64, 40], [64] * 3],
    ids=["single-token", "one-block", "crosses-block", "ragged", "three-full"],
)
def test_upstream_shapes_block_64(kv_cache_dtype, lens):
    """Upstream test_cp_gather_and_upconvert_fp8_kv_cache (smaller batch counts)."""
    gen = generator(len(lens) + sum(lens))
    table, cu, _, num_blocks = paged_batch(64, lens, gen=gen)
    src = random_entries(kv_cache_dtype, (num_blocks, 64), gen)
    run_both(kv_cache_dtype, src, poisoned((int(cu[-1]), 576), torch.bfloat16), table, cu[:-1], len(lens), None)


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
def test_shuffled_blocks_with_gaps(kv_cache_dtype):
    """Upstream test_cp_gather_fp8_shuffled_blocks: block 4, table [[3, 1]]."""
    gen = generator(5)
    src = written_cache(kv_cache_dtype, 5, 4, gen)
    table = torch.tensor([[3, 1]], dtype=torch.int32)
    run_both(kv_cache_dtype, src, poisoned((8, 576), torch.bfloat16), table, torch.tensor([0], dtype=torch.int32), 1, None)


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
@pytest.mark.parametrize(
    "gather_lens,starts",
    [([6, 5, 3], [3, 4, 5]), ([0, 5, 3], [12, 4, 5])],
    ids=["unaligned", "empty-request-at-full-length"],
)
def test_seq_starts_upstream_shapes(kv_cache_dtype, gather_lens, starts):
    """Upstream test_cp_gather_fp8_with_sequence_starts: full lens [12, 11, 9], block 4.
    Also checks seed 002's contract: the gathered rows equal a full gather, sliced."""
    gen = generator(sum(starts))
    full_lens = [12, 11, 9]
    table, full_cu, _, num_blocks = paged_batch(4, full_lens, gen=gen)
    src = written_cache(kv_cache_dtype, num_blocks, 4, gen)
    full = run_both(kv_cache_dtype, src, poisoned((32, 576), torch.bfloat16), table, full_cu[:-1], 3, None)

    workspace = torch.zeros(3, dtype=torch.int32)
    workspace[1:] = torch.tensor(gather_lens[:-1]).cumsum(0).to(torch.int32)
    total = sum(gather_lens)
    got = run_both(
        kv_cache_dtype, src, poisoned((total, 576), torch.bfloat16), table, workspace, 3,
        torch.tensor(starts, dtype=torch.int32),
    )
    for req in range(3):
        rows = slice(int(workspace[req]), int(workspace[req]) + gather_lens[req])
        first = int(full_cu[req]) + starts[req]
        assert_same_bits(got[rows], full[first : first + gather_lens[req]])


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
@pytest.mark.parametrize("block_size", [1, 16])
def test_workspace_starts_semantics_and_clamps(kv_cache_dtype, block_size):
    """Chunk-local workspace starts with a gap row, the last request running to
    dst.shape[0] (clamped), unaligned and aligned seq_starts, padded blocks,
    a strided dst. With block size 1 the strided dst's last request runs into
    its table row's padding columns: masked like the reference, and recorded
    as an index violation (record mode; the default would raise)."""
    gen = generator(block_size + 7)
    small = block_size == 1  # the interpreter runs one program per token here
    lens, workspace = ([3, 4, 5], [0, 3, 7]) if small else ([9, 12, 14], [0, 10, 22])
    table, _, seq_starts, num_blocks = paged_batch(block_size, lens, [block_size - 1, 2 * block_size, 3], gen=gen)
    storage = random_entries(kv_cache_dtype, (num_blocks, block_size + 2), gen)
    src = storage[:, 1 : block_size + 1]
    workspace = torch.tensor(workspace, dtype=torch.int32)
    rows = 10 if small else 30
    run_both(kv_cache_dtype, src, poisoned((rows, 576), torch.bfloat16), table, workspace, 3, seq_starts)
    wide = poisoned((rows + 6, 600), torch.bfloat16)
    with validation.index_checks("record"):
        run_both(kv_cache_dtype, src, wide[:, 8:584], table, workspace, 3, seq_starts)
    assert int(validation.index_flag(DEVICE)[0]) == (0 if small else 1)
    validation.reset_index_flag(DEVICE)


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
def test_round_trip_through_kernels(kv_cache_dtype):
    """Write with concat_and_cache_mla (kernel), read back with the upconvert
    (kernel): the result equals the reference decode of the reference encode."""
    gen = generator(11)
    entry = FORMATS[kv_cache_dtype][0]
    table, cu, seq_starts, num_blocks = paged_batch(16, [21, 40], [5, 16], gen=gen, pool_factor=1)
    count = num_blocks * 16
    kv_c = random_values((count, 512), torch.bfloat16, gen=gen)
    k_pe = random_values((count, 64), torch.bfloat16, gen=gen)
    cache = torch.zeros(num_blocks, 16, entry, dtype=torch.uint8)
    d = to_device(kv_c, k_pe, cache, torch.arange(count), torch.ones(1), table, cu, seq_starts)
    ops.concat_and_cache_mla(d[0], d[1], d[2], d[3], kv_cache_dtype, d[4])
    dst = poisoned((61, 576), torch.bfloat16).to(DEVICE)
    FORMATS[kv_cache_dtype][1](d[2], dst, d[5], d[6][:-1], 2, d[7])
    expected_cache = cache.clone()
    ref.concat_and_cache_mla(kv_c, k_pe, expected_cache, torch.arange(count), kv_cache_dtype, torch.ones(1))
    expected = poisoned((61, 576), torch.bfloat16)
    FORMATS[kv_cache_dtype][2](expected_cache, expected, table, cu[:-1], 2, seq_starts)
    assert_same_bits(dst, expected)


@pytest.mark.parametrize("kv_cache_dtype", list(FORMATS))
def test_empty_dst_and_zero_batch_are_no_ops(kv_cache_dtype):
    gen = generator(12)
    table, cu, _, num_blocks = paged_batch(16, [5], gen=gen)
    src, table, cu = to_device(random_entries(kv_cache_dtype, (num_blocks, 16), gen), table, cu)
    op = FORMATS[kv_cache_dtype][1]
    op(src, torch.empty(0, 576, dtype=torch.bfloat16, device=DEVICE), table, cu[:-1], 1)
    dst = poisoned((5, 576), torch.bfloat16).to(DEVICE)
    op(src, dst, table, cu[:0], 0)
    assert (dst == dst[0, 0]).all()
