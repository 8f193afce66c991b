"""A new kernel pointer parameter whose every launch passes a buffer the
launching wrapper allocates itself, shaped from its inputs
(``allocated-buffer-parameter``): scratch or statistics the wrapper keeps,
not an input the port's callers supply and not a result they receive, so a
body-level change for a reader, never a gap. A buffer a caller supplies, or
one the wrapper returns (a new output), stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_commit

HOST = cases.DERIVED_HOST
BEFORE = cases.DERIVED_BEFORE
# The kernel gains a pointer where it stores one statistic per row; the
# wrapper allocates that buffer from its input's shape and keeps it.
ALLOCATED_AFTER = BEFORE.replace(
    "x_ptr, out_ptr, stride_x_t", "x_ptr, out_ptr, stats_ptr, stride_x_t").replace(
    "v * 2)\n", "v * 2)\n        tl.store(stats_ptr + row, tl.sum(v, axis=0))\n").replace(
    "    t = x.shape[0]\n",
    "    t = x.shape[0]\n    stats = torch.empty((t,), device=x.device, dtype=torch.float32)\n").replace(
    "](x, out, *x.stride(),", "](x, out, stats, *x.stride(),").replace(
    "import triton\n", "import torch\nimport triton\n", 1)

# Unsound neighbours: the wrapper returns the new buffer (a result callers now
# receive), or a caller supplies it.
RETURNED_AFTER = ALLOCATED_AFTER.replace("BLOCK_D=x.shape[1])\n", "BLOCK_D=x.shape[1])\n    return stats\n")
SUPPLIED_AFTER = ALLOCATED_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, stats):").replace(
    "    stats = torch.empty((t,), device=x.device, dtype=torch.float32)\n", "")
# An allocation filled from something outside the function is not shaped from the inputs.
OUTSIDE_AFTER = ALLOCATED_AFTER.replace("torch.empty((t,), device=x.device, dtype=torch.float32)",
                                        "torch.empty((t,), device=x.device, dtype=torch.float32) + OFFSET")


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, cases.derived_tree(), message="row statistics")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_buffer_the_wrapper_allocates_and_keeps_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, ALLOCATED_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    for name in ("scale_rows", "_scale_rows_kernel"):
        symbol = _symbol(verdict, name)
        assert symbol.verdict == NEEDS_REVIEW, (name, symbol.reason)
        assert "allocated-buffer-parameter" in symbol.rules, (name, symbol.rules)
        derived = [e for e in symbol.evidence if e.kind == "derivation" and e.subject == "stats"]
        assert derived and "torch.empty" in derived[0].quote, (name, [e.message for e in symbol.evidence])


def test_a_buffer_the_wrapper_returns_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, RETURNED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "allocated-buffer-parameter" not in verdict.rules


def test_a_buffer_a_caller_supplies_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, SUPPLIED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason


def test_a_buffer_computed_from_outside_the_function_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, OUTSIDE_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
