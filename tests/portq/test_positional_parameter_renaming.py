"""A Python parameter upstream renamed in place, that no call or launch in
the files the commit changes binds by keyword (``positional-parameter-renaming``):
every caller passes the same value to it by position, so the port keeping
the old name is no gap of its interface; what the body now does with the
value is for a reader, never REAL_GAP. A rename some call binds by keyword,
or a parameter that moved, stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_commit

HOST = cases.DERIVED_HOST
BEFORE = cases.DERIVED_BEFORE
# The kernel's pointers are renamed in place and its arithmetic changes; the
# launch passes them by position, as before.
RENAMED_AFTER = BEFORE.replace("def _scale_rows_kernel(x_ptr, out_ptr,", "def _scale_rows_kernel(in_ptr, y_ptr,").replace(
    "tl.load(x_ptr +", "tl.load(in_ptr +").replace("tl.store(out_ptr +", "tl.store(y_ptr +").replace(
    "v * 2)", "v * 3)")
# Unsound neighbours: a call binds the renamed parameter by keyword; the
# parameter is not renamed in place but a new one is inserted before it.
KEYWORD_AFTER = RENAMED_AFTER.replace("](x, out, *x.stride(),", "](in_ptr=x, y_ptr=out, *x.stride(),")
INSERTED_AFTER = BEFORE.replace("def _scale_rows_kernel(x_ptr, out_ptr,", "def _scale_rows_kernel(scale_ptr, x_ptr, out_ptr,")


def _vendored_tree() -> dict[str, str]:
    """A vendored copy of the old module, each definition pinned, and a caller."""
    port = BEFORE.replace("@triton.jit\n", f"# portq: ports vllm:{HOST}::_scale_rows_kernel\n@triton.jit\n").replace(
        "def scale_rows(", f"# portq: ports vllm:{HOST}::scale_rows\ndef scale_rows(")
    caller = ("from portq_kernels.mla_prefix.rows import scale_rows\n\n\n"
              "def prepare(x, out):\n    scale_rows(x, out)\n")
    return {"kernels/mla_prefix/rows.py": port, "kernels/mla_prefill/prepare.py": caller}


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, _vendored_tree(), message="rename pointers")


def test_a_positional_rename_with_a_body_change_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, RENAMED_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    kernel = next(s for s in verdict.symbols if s.symbol == "_scale_rows_kernel")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "positional-parameter-renaming" in kernel.rules, kernel.rules


def test_a_rename_a_call_binds_by_keyword_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, KEYWORD_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "positional-parameter-renaming" not in verdict.rules


def test_a_parameter_inserted_before_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, INSERTED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
