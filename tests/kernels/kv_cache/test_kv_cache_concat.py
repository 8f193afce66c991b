"""``concat_and_cache_mla`` against the reference, byte for byte, in every format."""
from __future__ import annotations

import pytest
import torch
from kv_cache_helpers import DEVICE, assert_same_bits, generator, poisoned, random_values, to_device

from portq_kernels import kv_cache as ops
from portq_kernels.kv_cache import reference as ref


def _run_both(kv_c, k_pe, cache, slots, kv_cache_dtype, scale):
    expected = cache.clone()
    ref.concat_and_cache_mla(kv_c, k_pe, expected, slots, kv_cache_dtype, scale)
    got = cache.clone()
    d_kv_c, d_k_pe, d_cache, d_slots, d_scale = to_device(kv_c, k_pe, got, slots, scale)
    ops.concat_and_cache_mla(d_kv_c, d_k_pe, d_cache, d_slots, kv_cache_dtype, d_scale)
    assert_same_bits(d_cache, expected)


def _slots(num_tokens, num_slots, gen, padded=(1,)):
    slots = torch.randperm(num_slots, generator=gen)[:num_tokens].to(torch.int64)
    for t in padded:
        if t < num_tokens:
            slots[t] = -1
    return slots


@pytest.mark.parametrize("block_size", [1, 16, 64])
@pytest.mark.parametrize(
    "kv_cache_dtype,dtype",
    [
        ("auto", torch.bfloat16),
        ("auto", torch.float32),
        ("float16", torch.float16),
        ("fp8", torch.bfloat16),
        ("fp8_e4m3", torch.float32),
        ("fp8_e5m2", torch.float16),
    ],
)
def test_plain_formats(block_size, kv_cache_dtype, dtype):
    gen = generator(block_size)
    num_tokens, num_blocks, rank = 21, max(40 // block_size, 2) + 1, 256
    kv_c = random_values((num_tokens, rank), dtype, gen=gen)
    k_pe = random_values((num_tokens, 64), dtype, gen=gen)
    cache_dtype = dtype if kv_cache_dtype in ("auto", "float16") else torch.uint8
    cache = poisoned((num_blocks, block_size, rank + 64), cache_dtype)
    slots = _slots(num_tokens, num_blocks * block_size, gen)
    _run_both(kv_c, k_pe, cache, slots, kv_cache_dtype, torch.tensor([0.1]))


@pytest.mark.parametrize("kv_cache_dtype", ["fp8", "fp8_e5m2"])
def test_fp8_saturates_instead_of_overflowing(kv_cache_dtype):
    gen = generator(11)
    kv_c = random_values((9, 512), torch.bfloat16, gen=gen, scale=3e4)
    k_pe = random_values((9, 64), torch.bfloat16, gen=gen, scale=3e4)
    cache = poisoned((4, 16, 576), torch.float8_e4m3fn)
    _run_both(kv_c, k_pe, cache, torch.arange(9), kv_cache_dtype, torch.tensor([0.5]))
    if DEVICE.type == "cpu":
        written = cache.clone()
        ops.concat_and_cache_mla(kv_c, k_pe, written, torch.arange(9), kv_cache_dtype, torch.tensor([0.5]))
        dtype = torch.float8_e5m2 if kv_cache_dtype == "fp8_e5m2" else torch.float8_e4m3fn
        assert torch.isfinite(written.view(torch.uint8).view(dtype).float()).all()


def test_upstream_shape_rank_512_block_16():
    """Upstream test_concat_and_cache_mla: 42 tokens, block 16, 8 blocks, scale 0.1."""
    gen = generator(42)
    kv_c = random_values((42, 512), torch.bfloat16, gen=gen)
    k_pe = random_values((42, 64), torch.bfloat16, gen=gen)
    slots = torch.randperm(128, generator=gen)[:42].to(torch.int64)
    for kv_cache_dtype, cache_dtype in (("auto", torch.bfloat16), ("fp8", torch.uint8)):
        cache = poisoned((8, 16, 576), cache_dtype)
        _run_both(kv_c, k_pe, cache, slots, kv_cache_dtype, torch.tensor([0.1]))


def test_only_slot_mapping_tokens_are_written_and_k_pe_may_be_3d():
    """CUDA-graph padding: kv_c has more rows than slot_mapping; k_pe is [T, 1, 64]."""
    gen = generator(3)
    kv_c = random_values((30, 512), torch.bfloat16, gen=gen)
    k_pe = random_values((30, 1, 64), torch.bfloat16, gen=gen)
    slots = _slots(17, 64, gen, padded=(0, 16))
    cache = poisoned((4, 16, 576), torch.bfloat16)
    _run_both(kv_c, k_pe, cache, slots, "auto", torch.tensor([1.0]))


def test_padded_cache_and_strided_inputs():
    """Blocks further apart than block_size * entry (interleaved layers); kv_c and
    k_pe are column slices of one wider tensor."""
    gen = generator(4)
    wide = random_values((13, 700), torch.bfloat16, gen=gen)
    kv_c, k_pe = wide[:, :512], wide[:, 600:664]
    storage = poisoned((6, 2, 16, 576), torch.uint8)
    cache = storage[:, 1]
    for kv_cache_dtype in ("fp8", "auto"):
        target = cache if kv_cache_dtype == "fp8" else poisoned((6, 2, 16, 576), torch.bfloat16)[:, 0]
        slots = _slots(13, 96, gen)
        _run_both(kv_c, k_pe, target, slots, kv_cache_dtype, torch.tensor([0.25]))


@pytest.mark.parametrize("block_size", [1, 16, 64])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_fp8_ds_mla_layout(block_size, dtype):
    gen = generator(block_size + 1)
    num_tokens, num_blocks = 19, max(48 // block_size, 2) + 1
    kv_c = random_values((num_tokens, 512), dtype, gen=gen)
    kv_c[3, 128:256] *= 1e-3  # a quiet tile
    kv_c[5, :128] = 0  # an all-zero tile: scale FLT_MIN
    k_pe = random_values((num_tokens, 64), dtype, gen=gen)
    cache = poisoned((num_blocks, block_size, 656), torch.uint8)
    slots = _slots(num_tokens, num_blocks * block_size, gen, padded=(2,))
    _run_both(kv_c, k_pe, cache, slots, "fp8_ds_mla", torch.tensor([1.0]))


@pytest.mark.parametrize("block_size", [1, 16, 64])
def test_nvfp4_ds_mla_layout(block_size):
    gen = generator(block_size + 2)
    num_tokens, num_blocks = 19, max(48 // block_size, 2) + 1
    kv_c = random_values((num_tokens, 512), torch.bfloat16, gen=gen)
    kv_c[4, 16:32] *= 1e-4  # a tile whose scale hits the 2^-9 floor
    kv_c[6, 32:48] *= 3e3  # a tile whose scale saturates at 448
    k_pe = random_values((num_tokens, 64), torch.bfloat16, gen=gen, scale=20.0)
    cache = poisoned((num_blocks, block_size, 352), torch.uint8)
    slots = _slots(num_tokens, num_blocks * block_size, gen, padded=(0,))
    _run_both(kv_c, k_pe, cache, slots, "nvfp4_ds_mla", torch.tensor([1.0]))


def test_nvfp4_ds_mla_rows_off_4_byte_boundaries():
    """kv_c rows at odd element offsets cannot be read as bf16 pairs: the strided
    even/odd loads write the same bytes."""
    gen = generator(23)
    wide = random_values((13, 513), torch.bfloat16, gen=gen)
    kv_c = wide[:, 1:]
    assert kv_c.storage_offset() % 2 == 1
    k_pe = random_values((13, 64), torch.bfloat16, gen=gen)
    cache = poisoned((3, 16, 352), torch.uint8)
    _run_both(kv_c, k_pe, cache, _slots(13, 48, gen), "nvfp4_ds_mla", torch.tensor([1.0]))


@pytest.mark.parametrize("block_size", [3, 48])
@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8", "fp8_ds_mla", "nvfp4_ds_mla"])
def test_odd_block_sizes_and_the_last_slots(block_size, kv_cache_dtype):
    """Block sizes that are not powers of two (the slot division is no shift),
    and slots at both ends of the cache, the very last one included."""
    gen = generator(block_size + 7)
    num_blocks, num_tokens = 3, 13
    num_slots = num_blocks * block_size
    ds = kv_cache_dtype in ("fp8_ds_mla", "nvfp4_ds_mla")
    rank = 512 if ds else 256
    dtype = torch.bfloat16
    kv_c = random_values((num_tokens, rank), dtype, gen=gen)
    k_pe = random_values((num_tokens, 64), dtype, gen=gen)
    entry = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}.get(kv_cache_dtype, rank + 64)
    cache_dtype = dtype if kv_cache_dtype == "auto" else torch.uint8
    cache = poisoned((num_blocks, block_size, entry), cache_dtype)
    slots = torch.randperm(num_slots - 2, generator=gen)[1 : num_tokens - 1].to(torch.int64) + 1
    slots = torch.cat([torch.tensor([num_slots - 1]), slots, torch.tensor([0])])
    slots[3] = -1
    _run_both(kv_c, k_pe, cache, slots, kv_cache_dtype, torch.tensor([0.1]))


@pytest.mark.parametrize("kv_cache_dtype", ["fp8", "fp8_ds_mla"])
def test_fp8_writers_keep_signed_zeros_and_infinities(kv_cache_dtype):
    """The reciprocal division's special cases: -0 keeps its sign, an infinite
    element saturates, and a tile with an infinite amax (inf / inf is NaN, every
    other element / inf = 0) or a tiny amax (subnormals) matches the reference.
    NaN codes compare by value: the hardware conversion drops a NaN's sign (see
    ``_numerics``). No NaN input: a ds_mla tile holding NaN is not pinned down
    (the reference's amax is NaN, the kernel's max skips it)."""
    gen = generator(29)
    kv_c = random_values((6, 512), torch.bfloat16, gen=gen)
    kv_c[0, :7] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), 2.5, 1e-40, -3e-39])
    kv_c[1, 128:256] *= 1e-36  # a tile of subnormal and tiny values
    kv_c[2, 256:260] = torch.tensor([-0.0, 0.0, -0.0, 1e-41])
    k_pe = random_values((6, 64), torch.bfloat16, gen=gen)
    k_pe[0, :3] = torch.tensor([-0.0, float("inf"), -1e-40])
    entry, codes = (576, 576) if kv_cache_dtype == "fp8" else (656, 512)
    cache = poisoned((2, 16, entry), torch.uint8)
    expected = cache.clone()
    ref.concat_and_cache_mla(kv_c, k_pe, expected, torch.arange(6), kv_cache_dtype, torch.tensor([0.37]))
    d_kv_c, d_k_pe, got, d_slots, d_scale = to_device(kv_c, k_pe, cache.clone(), torch.arange(6), torch.tensor([0.37]))
    ops.concat_and_cache_mla(d_kv_c, d_k_pe, got, d_slots, kv_cache_dtype, d_scale)
    got, expected = got.cpu(), expected.clone()
    for value in (got, expected):
        nan = (value[..., :codes] & 0x7F) == 0x7F
        value[..., :codes][nan] = 0x7F
    assert_same_bits(got, expected)


def test_ds_mla_round_trip_is_close_to_the_input():
    """Sanity of the oracle itself: decoding what was written lands near the input."""
    gen = generator(9)
    kv_c = random_values((8, 512), torch.bfloat16, gen=gen)
    k_pe = random_values((8, 64), torch.bfloat16, gen=gen)
    fp8 = ref.decode_fp8_ds_mla(ref.encode_fp8_ds_mla(kv_c, k_pe)).float()
    nvfp4 = ref.decode_nvfp4_ds_mla(ref.encode_nvfp4_ds_mla(kv_c, k_pe)).float()
    x = torch.cat([kv_c, k_pe], 1).float()
    assert torch.equal(fp8[:, 512:], x[:, 512:])
    assert ((fp8[:, :512] - x[:, :512]).norm() / x[:, :512].norm()) < 0.05
    assert ((nvfp4[:, :512] - x[:, :512]).norm() / x[:, :512].norm()) < 0.2
    assert ((nvfp4[:, 512:] - x[:, 512:]).norm() / x[:, 512:].norm()) < 0.1


def test_empty_slot_mapping_is_a_no_op():
    cache = poisoned((2, 16, 576), torch.bfloat16).to(DEVICE)
    before = cache.clone()
    kv_c = torch.randn(4, 512, device=DEVICE).bfloat16()
    k_pe = torch.randn(4, 64, device=DEVICE).bfloat16()
    slots = torch.empty(0, dtype=torch.int64, device=DEVICE)
    ops.concat_and_cache_mla(kv_c, k_pe, cache, slots, "auto", torch.ones(1, device=DEVICE))
    assert torch.equal(cache, before)
