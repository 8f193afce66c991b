"""gather_kv_b_proj against its fp32 reference: every cache x weight x scale
combination, page sizes 1/16/64, ragged batches with empty sequences, context
lengths around the tile size, Dn/Dv 128/128 and 192/256, and bit-identical
outputs across launch geometries. Small shapes run on the CPU interpreter;
realistic ones are marked ``gpu``."""
from __future__ import annotations

import dataclasses
import os
import zlib

import pytest
import torch

from portq_kernels.mla_prefix import gather_kv_b_proj, reference
from portq_kernels.mla_prefix.gather_kv_b_proj import (
    GPU_BLOCK_SCALE_CONFIG, GPU_CANDIDATE_CONFIGS, GPU_CONFIG, GPU_FP8_CONFIG, INTERPRETER_CONFIG,
    default_config,
    gather_kv_b_proj_with_config)

from mla_prefix_cases import (EXACT_PRODUCTS, fp8_mma_accuracy, assert_bit_identical, assert_matches_reference,
                              device, make_case)

FP8 = torch.float8_e4m3fn
BF16 = torch.bfloat16
CHUNK = default_config(device()).chunk_k
# Empty sequences first, last and in the middle; lengths 1, ChunkK-1, ChunkK+1.
RAGGED = [0, 1, CHUNK - 1, 0, CHUNK + 1, 0]


def run(case, **kwargs):
    gather_kv_b_proj(*case.args(), **kwargs)
    return case.k_prefix, case.v_prefix


@pytest.mark.parametrize("cache_dtype", [BF16, FP8], ids=["bf16cache", "fp8cache"])
@pytest.mark.parametrize("weight_dtype", [BF16, FP8], ids=["bf16w", "fp8w"])
@pytest.mark.parametrize("scale_mode", ["none", "row", "block"])
def test_every_cache_weight_scale_combination(cache_dtype, weight_dtype, scale_mode):
    case = make_case(RAGGED, page_size=16, cache_dtype=cache_dtype, weight_dtype=weight_dtype,
                     scale_mode=scale_mode, seed=zlib.crc32(f"{cache_dtype}{weight_dtype}{scale_mode}".encode()) % 997)
    assert_matches_reference(case, *run(case))


@pytest.mark.parametrize("scale_mode", ["row2d", "row_bf16"])
def test_per_row_scale_layouts(scale_mode):
    case = make_case([CHUNK + 1, 5], page_size=16, cache_dtype=FP8, weight_dtype=FP8,
                     scale_mode=scale_mode)
    assert_matches_reference(case, *run(case))


@pytest.mark.parametrize("page_size", [1, 64])
@pytest.mark.parametrize("cache_dtype", [BF16, FP8], ids=["bf16cache", "fp8cache"])
def test_page_sizes(page_size, cache_dtype):
    case = make_case(RAGGED, page_size=page_size, cache_dtype=cache_dtype, scale_mode="none", seed=3)
    assert_matches_reference(case, *run(case))


@pytest.mark.parametrize("scale_mode", ["block", "row", "none"])
def test_asymmetric_head_dims_192_256(scale_mode):
    # N = 2*(192+256) = 896 = 7 blocks of 128: 192-row K parts straddle blocks.
    case = make_case([CHUNK + 1, 0, 3], page_size=16, heads=2, nope=192, v=256,
                     cache_dtype=FP8, weight_dtype=FP8, scale_mode=scale_mode, seed=11)
    assert_matches_reference(case, *run(case))


def test_block_scale_with_partial_last_row_block():
    # heads=1, 192+256 = 448 rows: the scale has ceil(448/128) = 4 row blocks.
    case = make_case([7, 2], page_size=16, heads=1, nope=192, v=256, cache_dtype=BF16,
                     weight_dtype=FP8, scale_mode="block", seed=12)
    assert_matches_reference(case, *run(case))


@pytest.mark.parametrize("heads", [1, 8])
def test_head_counts(heads):
    case = make_case([CHUNK + 1, 2], page_size=16, heads=heads, cache_dtype=FP8, seed=heads)
    assert_matches_reference(case, *run(case))


def test_all_sequences_empty_writes_nothing():
    case = make_case([0, 0, 0], page_size=16, extra_rows=4)
    k_out, v_out = run(case)
    assert_matches_reference(case, k_out, v_out)


def test_rows_before_first_offset_untouched():
    """cu need not start at 0: rows below cu[0] belong to no sequence."""
    case = make_case([CHUNK + 1, 4], page_size=16, extra_rows=0, seed=5)
    case.cu += 3
    case.k_prefix, case.v_prefix = (torch.cat([torch.full_like(t[:3], 3.25), t])
                                    for t in (case.k_prefix, case.v_prefix))
    assert_matches_reference(case, *run(case))


def test_flattened_persistent_loop_leaves_rows_outside_the_offsets_untouched():
    """The flattened tile loop computes tiles past ``cu[-1]`` under masks
    instead of skipping them: rows below ``cu[0]`` and at or past ``cu[-1]``
    keep their contents."""
    config = dataclasses.replace(default_config(device()), grid_stride=True, programs_per_sm=1,
                                 flatten=True)
    case = make_case([2 * config.chunk_k + 1, 4], page_size=16, extra_rows=3 * config.chunk_k, seed=6)
    case.cu += 3
    case.k_prefix, case.v_prefix = (torch.cat([torch.full_like(t[:3], 3.25), t])
                                    for t in (case.k_prefix, case.v_prefix))
    gather_kv_b_proj_with_config(*case.args(), config=config)
    assert_matches_reference(case, case.k_prefix, case.v_prefix)


def test_extra_pages_and_duplicate_page_ids():
    """Sequences may own more pages than they use and may share pages."""
    case = make_case([20, 9], page_size=16, seed=9, spare_pages=1)
    used, spare = case.kv_indices[:3], case.kv_indices.new_tensor([case.k_buffer.shape[0] - 1])
    spare = torch.where(torch.isin(spare, used), used[2:3], spare)
    # Sequence 0 owns three pages (uses two); sequence 1 reads sequence 0's first page.
    case.kv_indices = torch.cat([used[:2], spare, used[:1], case.kv_indices[3:]])
    case.kv_indptr = torch.tensor([0, 3, 4], dtype=torch.int32, device=case.cu.device)
    assert_matches_reference(case, *run(case))


def test_geometries_are_bit_identical():
    """One program per tile, the persistent grid-stride walk and different
    tile orders compute each tile with the same arithmetic."""
    base = default_config(device(), "block")
    variants = [dataclasses.replace(base, grid_stride=True),
                dataclasses.replace(base, group_rows=1),
                dataclasses.replace(base, group_rows=3, grid_stride=True),
                dataclasses.replace(base, grid_stride=True, programs_per_sm=1, flatten=True)]
    case = make_case([3 * CHUNK + 5, 0, CHUNK - 1, 2], page_size=16, heads=2, cache_dtype=FP8,
                     scale_mode="block", seed=21)
    gather_kv_b_proj_with_config(*case.args(), config=base)
    assert_matches_reference(case, case.k_prefix, case.v_prefix)
    for variant in variants:
        k_out, v_out = case.fresh_outputs()
        args = case.args()[:7] + (k_out, v_out)
        gather_kv_b_proj_with_config(*args, config=variant)
        assert_bit_identical(k_out, case.k_prefix, f"k_prefix with {variant}")
        assert_bit_identical(v_out, case.v_prefix, f"v_prefix with {variant}")


@pytest.mark.parametrize("config", GPU_CANDIDATE_CONFIGS, ids=lambda c: c.name.replace(" ", "-"))
def test_candidate_variants_match_reference(config):
    """Every variant the benchmark sweeps (tile shapes, two programs per SM,
    fp8 operands) computes the op; in the interpreter every dot is exact fp32."""
    case = make_case([2 * config.chunk_k + 3, 0, 5], page_size=16, heads=2, cache_dtype=FP8,
                     weight_dtype=FP8, scale_mode="row", seed=31)
    gather_kv_b_proj_with_config(*case.args(), config=config)
    accuracy = fp8_mma_accuracy(config.fp8_promote_k) if config.fp8_dot and case.k_buffer.is_cuda else EXACT_PRODUCTS
    assert_matches_reference(case, case.k_prefix, case.v_prefix, accuracy)


def test_reference_matches_a_per_token_loop():
    """The oracle itself, against the spec's per-token definition."""
    case = make_case([5, 0, 18], page_size=16, heads=2, cache_dtype=FP8, weight_dtype=FP8,
                     scale_mode="block", seed=2, dev=torch.device("cpu"))
    reference.gather_kv_b_proj(*case.args())
    ks = float(case.k_scale[0])
    w = case.weight.float()
    s = case.scale.float().repeat_interleave(128, 0)[: w.shape[0]]
    for b in range(case.cu.numel() - 1):
        for i in range(int(case.cu[b + 1] - case.cu[b])):
            t = int(case.cu[b]) + i
            page = int(case.kv_indices[int(case.kv_indptr[b]) + i // 16])
            lat = case.k_buffer[page, i % 16].float()
            y = sum((lat[j * 128:(j + 1) * 128] @ w[:, j * 128:(j + 1) * 128].T) * s[:, j]
                    for j in range(4)) * ks
            y = y.view(2, 256)
            torch.testing.assert_close(case.k_prefix[t, :, :128].float(), y[:, :128].to(BF16).float(),
                                       atol=0, rtol=2**-7)
            torch.testing.assert_close(case.v_prefix[t].float(), y[:, 128:].to(BF16).float(),
                                       atol=0, rtol=2**-7)
            assert torch.equal(case.k_prefix[t, :, 128:], (lat[512:] * ks).to(BF16).expand(2, -1))


def test_default_configs_are_distinct_per_device():
    cuda = torch.device("cuda")
    assert default_config(torch.device("cpu"), "none", FP8, FP8) == INTERPRETER_CONFIG
    assert GPU_CONFIG.chunk_k == GPU_BLOCK_SCALE_CONFIG.chunk_k  # one ChunkK for bf16 operands
    if default_config(cuda) != INTERPRETER_CONFIG:  # not under TRITON_INTERPRET
        assert default_config(cuda, "row", FP8, FP8) == GPU_FP8_CONFIG
        assert default_config(cuda, "block", FP8, FP8) == GPU_BLOCK_SCALE_CONFIG
        assert default_config(cuda, "none", FP8, BF16) == GPU_CONFIG
    for config in (GPU_CONFIG, GPU_FP8_CONFIG):
        assert config in GPU_CANDIDATE_CONFIGS


# ---------------------------------------------------------------- GPU, realistic shapes


@pytest.mark.gpu
@pytest.mark.parametrize("heads,ctx_lens,page_size,cache_dtype,weight_dtype,scale_mode", [
    (16, [4096], 1, FP8, BF16, "none"),
    (32, [4096, 0, 1, 127, 129, 1000], 16, FP8, FP8, "block"),
    (128, [300, 0, 129], 64, BF16, FP8, "row"),
    (16, [2048] * 8, 64, BF16, BF16, "none"),
    (8, [4096, 77], 1, FP8, FP8, "row"),
    (12, [32000], 64, FP8, BF16, "none"),
])
def test_gpu_realistic_shapes(heads, ctx_lens, page_size, cache_dtype, weight_dtype, scale_mode):
    case = make_case(ctx_lens, page_size=page_size, heads=heads, cache_dtype=cache_dtype,
                     weight_dtype=weight_dtype, scale_mode=scale_mode, seed=heads)
    assert_matches_reference(case, *run(case))


@pytest.mark.gpu
@pytest.mark.parametrize("scale_mode", ["block", "row"])
def test_gpu_asymmetric_head_dims(scale_mode):
    case = make_case([1500, 0, 600], page_size=16, heads=16, nope=192, v=256, cache_dtype=FP8,
                     weight_dtype=FP8, scale_mode=scale_mode, seed=7)
    assert_matches_reference(case, *run(case))


@pytest.mark.gpu
def test_gpu_geometries_bit_identical_at_scale():
    case = make_case([5000, 0, 700, 129], page_size=64, heads=16, cache_dtype=FP8, scale_mode="none")
    run(case)
    for variant in (dataclasses.replace(GPU_CONFIG, grid_stride=not GPU_CONFIG.grid_stride),
                    dataclasses.replace(GPU_CONFIG, group_rows=1)):
        k_out, v_out = case.fresh_outputs()
        gather_kv_b_proj_with_config(*case.args()[:7], k_out, v_out, config=variant)
        assert_bit_identical(k_out, case.k_prefix, f"k_prefix with {variant}")
        assert_bit_identical(v_out, case.v_prefix, f"v_prefix with {variant}")


@pytest.mark.gpu
def test_gpu_block_scale_geometries_bit_identical():
    case = make_case([3000, 0, 129], page_size=16, heads=8, cache_dtype=FP8, weight_dtype=FP8,
                     scale_mode="block", seed=4)
    run(case)
    assert_matches_reference(case, case.k_prefix, case.v_prefix)
    k_out, v_out = case.fresh_outputs()
    gather_kv_b_proj_with_config(*case.args()[:7], k_out, v_out,
                                 config=dataclasses.replace(GPU_BLOCK_SCALE_CONFIG, grid_stride=True))
    assert_bit_identical(k_out, case.k_prefix, "k_prefix, persistent block-scale grid")
    assert_bit_identical(v_out, case.v_prefix, "v_prefix, persistent block-scale grid")


@pytest.mark.gpu
def test_gpu_int64_offsets():
    """Page ids whose element offset exceeds 2**31 and output offsets past
    2**31 elements: the high rows must be right."""
    dev = device()
    page_size, heads, tail = 1, 128, 64
    pages = (2**31) // (512 + 64) + 4096          # last pages start past 2**31 elements
    total = (2**31) // (heads * 192) + 2048        # last rows start past 2**31 elements
    k_buffer = torch.randn(pages, page_size, 576, device=dev).to(FP8)
    k_scale = torch.tensor([0.5], device=dev)
    weight = (torch.randn(heads * 256, 512, device=dev) * 0.05).to(BF16)
    kv_indices = torch.randint(pages - 4096, pages, (total,), device=dev, dtype=torch.int32)
    cu = torch.tensor([0, total], device=dev, dtype=torch.int32)
    kv_indptr = cu.clone()
    k_prefix = torch.full((total, heads, 192), 3.25, device=dev, dtype=BF16)
    v_prefix = torch.full((total, heads, 128), 3.25, device=dev, dtype=BF16)
    gather_kv_b_proj(k_buffer, k_scale, kv_indptr, kv_indices, cu, weight, None, k_prefix, v_prefix)
    # Reference for the last rows only: with page size 1, a sequence that
    # starts at page position total-tail, written to the outputs' last rows.
    sub = make_case([1], dev=dev)
    sub.k_buffer, sub.k_scale, sub.kv_indices, sub.weight, sub.scale = k_buffer, k_scale, kv_indices, weight, None
    sub.cu = torch.tensor([0, tail], device=dev, dtype=torch.int32)
    sub.kv_indptr = torch.tensor([total - tail, total], device=dev, dtype=torch.int32)
    assert_matches_reference(sub, k_prefix[total - tail:], v_prefix[total - tail:])


GPU_VARIANT_CASES = [
    dict(ctx_lens=[4096, 0, 1, 127, 129, 1000], page_size=1, heads=12, cache_dtype=FP8,
         weight_dtype=BF16, scale_mode="none"),
    dict(ctx_lens=[2048, 2048, 0, 77, 2048], page_size=64, heads=16, cache_dtype=BF16,
         weight_dtype=BF16, scale_mode="none"),
    dict(ctx_lens=[1500, 0, 300], page_size=16, heads=8, cache_dtype=FP8, weight_dtype=FP8,
         scale_mode="row"),
    dict(ctx_lens=[700, 5, 0], page_size=16, heads=4, nope=192, v=256, cache_dtype=FP8,
         weight_dtype=FP8, scale_mode="none"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("case_index", range(len(GPU_VARIANT_CASES)))
@pytest.mark.parametrize("config", GPU_CANDIDATE_CONFIGS, ids=lambda c: c.name.replace(" ", "-"))
def test_gpu_candidate_variants(config, case_index):
    """Each benchmarked variant against the fp32 reference, and bit for bit
    against the first candidate where the arithmetic is the same (bf16 or
    exact operands, same K order): every variant except fp8 x fp8 operands."""
    case = make_case(**GPU_VARIANT_CASES[case_index], seed=40 + case_index)
    gather_kv_b_proj_with_config(*case.args(), config=GPU_CANDIDATE_CONFIGS[0])
    k_out, v_out = case.fresh_outputs()
    gather_kv_b_proj_with_config(*case.args()[:7], k_out, v_out, config=config)
    fp8_operands = config.fp8_dot and case.k_buffer.dtype == FP8 and case.weight.dtype == FP8
    assert_matches_reference(case, k_out, v_out,
                             fp8_mma_accuracy(config.fp8_promote_k) if fp8_operands else EXACT_PRODUCTS)
    if not fp8_operands:
        assert_bit_identical(k_out, case.k_prefix, f"k_prefix with {config.name}")
        assert_bit_identical(v_out, case.v_prefix, f"v_prefix with {config.name}")


@pytest.mark.parametrize("cache_dtype,weight_dtype,config,weight_box", [
    (BF16, BF16, GPU_CONFIG, True),
    (FP8, FP8, GPU_FP8_CONFIG, True),
    # An fp8 latent tile is upcast in registers: the weight stays a pointer load.
    (FP8, BF16, GPU_CONFIG, False),
    (FP8, FP8, GPU_CONFIG, False),
])
def test_tma_weight_boxes_only_where_operands_arrive_as_loaded(cache_dtype, weight_dtype, config, weight_box):
    from triton.tools.tensor_descriptor import TensorDescriptor

    from portq_kernels.mla_prefix.gather_kv_b_proj import _tma_operands, _validate

    case = make_case([300, 5], page_size=16, heads=2, cache_dtype=cache_dtype, weight_dtype=weight_dtype,
                     scale_mode="none", seed=7)
    problem = _validate(*case.args(), False, False)
    weight, store_mode, k_desc, v_desc = _tma_operands(case.k_buffer, case.weight, case.k_prefix, case.v_prefix,
                                                       problem, config)
    if not case.k_buffer.is_cuda and os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        pytest.skip("neither a GPU nor Triton's interpreter: no descriptors are made")
    assert isinstance(weight, TensorDescriptor) is weight_box
    # Dn = Dv = 128 and 256-wide tiles: each tile is one K box and one V box.
    assert store_mode == (1 if config.block_n == 256 else 2)
    assert isinstance(k_desc, TensorDescriptor) and isinstance(v_desc, TensorDescriptor)
