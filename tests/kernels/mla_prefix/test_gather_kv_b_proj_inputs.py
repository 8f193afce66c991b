"""gather_kv_b_proj rejects bad arguments before launching, naming the
argument (one test per check), and rejects the layouts this port does not carry."""
from __future__ import annotations

import pytest
import torch

from portq_kernels import validation
from portq_kernels.mla_prefix import gather_kv_b_proj, reference
from mla_prefix_cases import make_case

FP8 = torch.float8_e4m3fn


def _with(**changes):
    case = make_case([5, 0, 7], page_size=16, cache_dtype=FP8, scale_mode="row")
    for name, fn in changes.items():
        setattr(case, name, fn(case))
    return case


BAD = {
    "k_buffer_dtype": (dict(k_buffer=lambda c: c.k_buffer.to(torch.float16)), TypeError, "k_buffer"),
    "k_buffer_dims": (dict(k_buffer=lambda c: c.k_buffer[0]), ValueError, "k_buffer"),
    "k_buffer_noncontig": (dict(k_buffer=lambda c: c.k_buffer.transpose(0, 1)), ValueError, "k_buffer"),
    "k_buffer_width": (dict(k_buffer=lambda c: c.k_buffer[..., :-8].contiguous()), ValueError, r"k_buffer\.shape\[2\]"),
    "k_scale_missing": (dict(k_scale=lambda c: None), TypeError, "k_scale"),
    "k_scale_dtype": (dict(k_scale=lambda c: c.k_scale.double()), TypeError, "k_scale"),
    "k_scale_numel": (dict(k_scale=lambda c: c.k_scale.repeat(2)), TypeError, "k_scale"),
    "indptr_dtype": (dict(kv_indptr=lambda c: c.kv_indptr.long()), TypeError, "kv_indptr"),
    "indices_dtype": (dict(kv_indices=lambda c: c.kv_indices.long()), TypeError, "kv_indices"),
    "cu_dtype": (dict(cu=lambda c: c.cu.long()), TypeError, "kv_prefix_sum_context_lens"),
    "indptr_len": (dict(kv_indptr=lambda c: c.kv_indptr[:-1].contiguous()), ValueError, "kv_indptr"),
    "weight_dtype": (dict(weight=lambda c: c.weight.float()), TypeError, "kv_proj_weight"),
    "weight_rows": (dict(weight=lambda c: c.weight[:-1].contiguous()), ValueError, r"kv_proj_weight\.shape\[0\]"),
    "weight_rank": (dict(weight=lambda c: c.weight[:, :448].contiguous()), ValueError, r"kv_proj_weight\.shape\[1\]"),
    "weight_noncontig": (dict(weight=lambda c: c.weight.t().contiguous().t()), ValueError, "kv_proj_weight"),
    "scale_len": (dict(scale=lambda c: c.scale[:-1].contiguous()), ValueError, "kv_proj_scale"),
    "scale_dtype": (dict(scale=lambda c: c.scale.double()), TypeError, "kv_proj_scale"),
    "block_scale_shape": (dict(scale=lambda c: torch.ones(4, 3, device=c.scale.device)), ValueError, "kv_proj_scale"),
    "k_prefix_dtype": (dict(k_prefix=lambda c: c.k_prefix.float()), TypeError, "k_prefix"),
    "v_prefix_rows": (dict(v_prefix=lambda c: c.v_prefix[:-1].contiguous()), ValueError, "v_prefix"),
    "rope_not_pow2": (dict(k_prefix=lambda c: c.k_prefix[..., :-4].contiguous()), ValueError, "rope"),
    "cu_past_outputs": (dict(k_prefix=lambda c: c.k_prefix[:11].contiguous(),
                             v_prefix=lambda c: c.v_prefix[:11].contiguous()), ValueError, "kv_prefix_sum_context_lens"),
    "cu_decreasing": (dict(cu=lambda c: c.cu.flip(0).contiguous()), ValueError, "kv_prefix_sum_context_lens"),
    "indptr_too_few_pages": (dict(kv_indptr=lambda c: torch.zeros_like(c.kv_indptr)), ValueError, "kv_indptr"),
    "indices_short": (dict(kv_indices=lambda c: c.kv_indices[:1].contiguous()), ValueError, "kv_indices"),
    "page_id_out_of_range": (dict(kv_indices=lambda c: c.kv_indices + 1000), ValueError, "kv_indices"),
}


INDEX_VALUES = ("cu_decreasing", "indptr_too_few_pages", "indices_short", "page_id_out_of_range",
                "cu_past_outputs")


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_argument_is_rejected(name):
    """Index values are read back in debug mode only (on any device)."""
    changes, exc, match = BAD[name]
    case = _with(**changes)
    mode = "debug" if name in INDEX_VALUES else "assert"
    with validation.index_checks(mode), pytest.raises(exc, match=match):
        gather_kv_b_proj(*case.args())


@pytest.mark.parametrize("name", ["indices_short", "page_id_out_of_range"])
def test_out_of_range_pages_are_masked_and_flagged(name):
    """Without debug mode the kernel masks the bad page reads (those rows read
    zeros; outputs outside the context rows and a guard after k_buffer stay
    untouched) and clears the index flag; on the CPU the default then raises."""
    case = _with(**BAD[name][0])
    guarded = torch.full((case.k_buffer.numel() + 4096,), 3.0, device=case.k_buffer.device)
    guarded = guarded.to(case.k_buffer.dtype)
    guarded[: case.k_buffer.numel()] = case.k_buffer.reshape(-1)
    case.k_buffer = guarded[: case.k_buffer.numel()].view(case.k_buffer.shape)
    validation.reset_index_flag(case.k_buffer.device)
    with validation.index_checks("record"):
        gather_kv_b_proj(*case.args())
    assert int(validation.index_flag(case.k_buffer.device)[0]) == 0
    validation.reset_index_flag(case.k_buffer.device)
    assert (guarded[case.k_buffer.numel():].float() == 3.0).all()
    assert torch.isfinite(case.k_prefix.float()).all() and torch.isfinite(case.v_prefix.float()).all()
    if not case.k_buffer.is_cuda:
        with pytest.raises(ValueError, match="kv_indptr and kv_indices entries must index inside"):
            gather_kv_b_proj(*case.args())


@pytest.mark.parametrize("name", ["cu_decreasing", "cu_past_outputs", "cu_negative"])
def test_inconsistent_offsets_are_caught_in_the_default_mode(name):
    """A decreasing ``kv_prefix_sum_context_lens``, a negative first entry or a
    last entry past the outputs' rows (where upstream would write outside
    ``k_prefix``/``v_prefix``) clears the index flag without debug mode: the
    default raises on the CPU (traps on CUDA); record mode writes nothing
    outside the outputs (guards after them stay intact)."""
    changes = dict(BAD["cu_decreasing"][0]) if name == "cu_decreasing" else {}
    if name == "cu_past_outputs":
        changes = dict(BAD["cu_past_outputs"][0])
    case = _with(**changes)
    if name == "cu_negative":
        case.cu = case.cu - 2
    outputs = []
    for attr in ("k_prefix", "v_prefix"):
        value = getattr(case, attr)
        guarded = torch.full((value.numel() + 4096,), 7.0, dtype=value.dtype, device=value.device)
        guarded[: value.numel()] = value.reshape(-1)
        setattr(case, attr, guarded[: value.numel()].view(value.shape))
        outputs.append((guarded, value.numel()))
    validation.reset_index_flag(case.k_buffer.device)
    with validation.index_checks("record"):
        gather_kv_b_proj(*case.args())
    assert int(validation.index_flag(case.k_buffer.device)[0]) == 0, "the bad offsets were not recorded"
    validation.reset_index_flag(case.k_buffer.device)
    for guarded, numel in outputs:
        assert (guarded[numel:].float() == 7.0).all(), "a row past the outputs was written"
    if not case.k_buffer.is_cuda:
        with pytest.raises(ValueError, match="kv_prefix_sum_context_lens, kv_indptr and kv_indices"):
            gather_kv_b_proj(*case.args())
        assert int(validation.index_flag(case.k_buffer.device)[0]) == 1


def test_consistent_offsets_raise_no_flag():
    case = _with()
    validation.reset_index_flag(case.k_buffer.device)
    gather_kv_b_proj(*case.args())
    assert int(validation.index_flag(case.k_buffer.device)[0]) == 1


def test_tensor_on_another_device_is_rejected():
    case = _with()
    if not case.k_buffer.is_cuda:
        pytest.skip("needs a second device")
    case.weight = case.weight.cpu()
    with pytest.raises(ValueError, match="kv_proj_weight"):
        gather_kv_b_proj(*case.args())


def test_non_tensor_is_rejected():
    case = _with(k_prefix=lambda c: c.k_prefix.tolist())
    with pytest.raises(TypeError, match="k_prefix"):
        gather_kv_b_proj(*case.args())


@pytest.mark.parametrize("flag", ["weight_preshuffle", "shuffled_kv_cache"])
def test_amd_layouts_are_not_carried(flag):
    case = _with()
    with pytest.raises(ValueError, match=flag):
        gather_kv_b_proj(*case.args(), **{flag: True})
    with pytest.raises(ValueError, match=flag):
        reference.gather_kv_b_proj(*case.args(), **{flag: True})


@pytest.mark.skipif(not hasattr(torch, "float4_e2m1fn_x2"), reason="torch without fp4 dtype")
def test_mxfp4_weight_is_not_carried():
    case = _with()
    case.weight = torch.zeros(case.weight.shape[0], 256, dtype=torch.uint8,
                              device=case.weight.device).view(torch.float4_e2m1fn_x2)
    with pytest.raises(ValueError, match="MXFP4"):
        gather_kv_b_proj(*case.args())
