"""A new kernel stride parameter the launcher reads from a local tensor it
lays out from its inputs (``layout-derived-parameter``): a
reshaped or viewed input, or a buffer allocated like one, has strides that
follow from the inputs' shapes and strides alone, so passing them asks
nothing of a caller: for a reader, never a gap. A local laid out by a value
a caller supplies, or produced by a call the derivation cannot follow, stays
a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_commit

HOST = cases.DERIVED_HOST
BEFORE = cases.DERIVED_BEFORE
# The kernel gains the strides its rows are addressed by in a flattened view
# of the input and in a scratch buffer allocated like it.
LAYOUT_AFTER = BEFORE.replace(
    "SEQ_LEN, BLOCK_D: tl.constexpr):", "SEQ_LEN, BLOCK_D: tl.constexpr, stride_f_t, stride_s_t):").replace(
    "tl.store(out_ptr + row * stride_x_t", "tl.store(out_ptr + row * stride_f_t + stride_s_t * 0").replace(
    "    t = x.shape[0]\n",
    "    t = x.shape[0]\n    flat = x.reshape(-1, x.shape[-1])\n    scratch = torch.empty_like(flat)\n").replace(
    "BLOCK_D=x.shape[1])", "BLOCK_D=x.shape[1], stride_f_t=flat.stride(0), stride_s_t=scratch.stride(0))").replace(
    "import triton\n", "import torch\nimport triton\n", 1)

# Unsound neighbours: the view is shaped by a value a caller supplies, or the
# local comes from a call the derivation cannot follow.
CALLER_SHAPED_AFTER = LAYOUT_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, width):").replace(
    "x.reshape(-1, x.shape[-1])", "x.reshape(-1, width)")
OPAQUE_AFTER = LAYOUT_AFTER.replace("x.reshape(-1, x.shape[-1])", "prepare(x)")


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, cases.derived_tree(), message="row strides")


def test_strides_of_a_local_laid_out_from_the_inputs_are_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, LAYOUT_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "layout-derived-parameter" in verdict.rules, verdict.rules


def test_a_view_shaped_by_a_caller_value_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, CALLER_SHAPED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "layout-derived-parameter" not in verdict.rules


def test_a_local_from_an_unknown_call_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, OPAQUE_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "layout-derived-parameter" not in verdict.rules
