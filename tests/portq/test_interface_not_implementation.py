"""Interface, not implementation (docs/tricky-cases.md): a defaulted
``tl.constexpr`` upstream adds that no launch passes and the body never reads
changes nothing the kernel computes, so the port lacking it is no gap
(``unused-constexpr``); one the body reads, or a launch passes, still is.
Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import IN_SYNC, REAL_GAP
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_form_without_meaning import NORM, NORM_BEFORE, NORM_TREE

UNUSED = NORM_BEFORE.replace("MODE: tl.constexpr, BLOCK: tl.constexpr):",
                             "MODE: tl.constexpr, BLOCK: tl.constexpr, USE_BIAS: tl.constexpr = False):")


def _scan(tmp_path, after):
    return classify_commit(tmp_path, {NORM: NORM_BEFORE}, {NORM: after}, NORM_TREE, message="edit")


def test_an_unused_defaulted_constexpr_no_launch_passes_is_no_gap(tmp_path):
    verdict = _scan(tmp_path, UNUSED)
    assert verdict.verdict == IN_SYNC, verdict.reason
    assert "unused-constexpr" in verdict.rules and "USE_BIAS" in verdict.reason


def test_a_new_constexpr_the_body_reads_on_its_default_path_is_still_a_gap(tmp_path):
    # Read on the path its default selects: a port lacking it computes what upstream computed before.
    # (Read only on the path its default leaves off, it is a branch the port does not have:
    # tests/portq/test_branches_the_port_lacks.py.)
    after = UNUSED.replace("    tl.store(out_ptr + offs, x + _ZERO, mask=offs < n)",
                           "    if not USE_BIAS:\n        x = x + 1\n    tl.store(out_ptr + offs, x + _ZERO, mask=offs < n)")
    verdict = _scan(tmp_path, after)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "unused-constexpr" not in verdict.rules


def test_a_new_constexpr_a_launch_passes_is_not_called_unused(tmp_path):
    after = UNUSED.replace("MODE=mode, BLOCK=128)", "MODE=mode, BLOCK=128, USE_BIAS=True)")
    verdict = _scan(tmp_path, after)
    assert verdict.verdict != IN_SYNC, verdict.reason
    assert "unused-constexpr" not in verdict.rules
