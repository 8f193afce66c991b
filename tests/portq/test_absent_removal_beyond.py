"""A ported definition upstream removes a parameter from, which the port
never took, is IN_SYNC by that absence only when the removal is the whole
change (``absent-removal-beyond``): a commit that also rewrites the body (a
new operation, a new constant) changes more than the port's lacking the
removed name shows it has, so it needs review. The removal alone stays
IN_SYNC."""
from __future__ import annotations

from portq.core.model import IN_SYNC, NEEDS_REVIEW
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_commit

HOST = cases.DERIVED_HOST
# Lines between the removed store and the scaled one, so the diff shows them as separate hunks.
AFTER = cases.DERIVED_BEFORE.replace("    offs = tl.arange(0, BLOCK_D)\n",
                                     "    offs = tl.arange(0, BLOCK_D)\n" + "    # the row's lanes\n" * 8)
# Before the commit the kernel also took a scratch pointer it wrote a flag to.
BEFORE = AFTER.replace(
    "x_ptr, out_ptr, stride_x_t", "x_ptr, out_ptr, scratch_ptr, stride_x_t").replace(
    "    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    tl.store(scratch_ptr + row, 0)\n").replace(
    "    t = x.shape[0]\n", "    t = x.shape[0]\n    scratch = torch.empty((t,), device=x.device)\n").replace(
    "](x, out, *x.stride(),", "](x, out, scratch, *x.stride(),").replace(
    "import triton\n", "import torch\nimport triton\n", 1)
# The same removal, and the stored value is now scaled by another constant (a hunk of its own).
BEYOND_AFTER = AFTER.replace("v * 2)", "v * 3)")


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, cases.derived_tree(), message="scratch")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_removal_with_more_body_change_needs_review(tmp_path):
    verdict = _one_commit(tmp_path, BEYOND_AFTER)
    kernel = _symbol(verdict, "_scale_rows_kernel")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "absent-removal-beyond" in kernel.rules, kernel.rules
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_the_removal_alone_stays_in_sync(tmp_path):
    verdict = _one_commit(tmp_path, AFTER)
    kernel = _symbol(verdict, "_scale_rows_kernel")
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "absent-removal-beyond" not in verdict.rules


# A hunk that rewrites the removed name's uses is the removal's, whatever it brings.
REWRITTEN_BEFORE = BEFORE.replace("tl.store(scratch_ptr + row, 0)", "tl.store(scratch_ptr + row, 0)\n    w = 2")
REWRITTEN_AFTER = AFTER.replace("    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    w = 2 + 0 * SEQ_LEN\n")


def test_a_hunk_that_rewrites_the_removed_uses_stays_in_sync(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: REWRITTEN_BEFORE}, {HOST: REWRITTEN_AFTER}, cases.derived_tree(),
                              message="scratch")
    kernel = _symbol(verdict, "_scale_rows_kernel")
    assert "absent-removal-beyond" not in kernel.rules, kernel.reason


# The same removal, and the stored value now divided rather than multiplied: an operator changed, no new word.
OPERATOR_AFTER = AFTER.replace("v * 2)", "v / 2)")


def test_a_removal_with_an_operator_changed_beside_it_needs_review(tmp_path):
    verdict = _one_commit(tmp_path, OPERATOR_AFTER)
    kernel = _symbol(verdict, "_scale_rows_kernel")
    assert kernel.verdict == NEEDS_REVIEW, (kernel.rules, kernel.reason)
    assert "synced-beside" in kernel.rules, kernel.rules
