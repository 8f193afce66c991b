"""A commit and its exact revert that touch no file a row owns or an anchor
names: both are NOT_APPLICABLE/``no-row``. Pairing them as ``net-zero`` says
nothing a port's maintainer can use (neither commit was ever the port's);
``net-zero`` is kept for pairs that touch the port. Each runs the real
``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module()


def _history(tmp_path, path, first, restored):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE, "README.md": "notes\n"}),
        CommitSpec("a change", files={path: first}),
        CommitSpec("Revert \"a change\"", files={path: restored}),
    ], TREE, matrix=MATRIX)
    return verdicts


def test_a_change_and_its_revert_outside_every_row_are_no_row(tmp_path):
    verdicts = _history(tmp_path, "README.md", "notes, longer\n", "notes\n")
    for position in (1, 2):
        verdict = verdicts[position]
        assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "no-row"), (position, verdict.reason)
        assert verdict.rules == ["path-ownership"], (position, verdict.rules)


def test_a_change_and_its_revert_on_a_row_path_stay_net_zero(tmp_path):
    verdicts = _history(tmp_path, "ops/norm.py", BASE.replace("x / rms * w", "x * w / rms"), BASE)
    for position in (1, 2):
        verdict = verdicts[position]
        assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "net-zero"), (position, verdict.reason)
        assert verdict.rules == ["net-zero"], (position, verdict.rules)
