"""A file's change that a later commit of the range restores hunk for hunk
(rule ``file-revert``): when both commits also change other files, neither
is a whole-commit revert (``net-zero``) nor a partial one, yet over the
range that file is as it was. The definitions the pair touches in that file
are NOT_APPLICABLE/``net-zero`` in both commits; what else each commit
changes is decided on its own. A later change that restores something else,
or only part of the file's change, leaves the earlier change flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module()
CHANGED = BASE.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
# A later commit of the range touches the file elsewhere (a comment), so no blob repeats.
COMMENTED = "# row normalisation\n" + CHANGED
RESTORED = "# row normalisation\n" + BASE
TWO_CHANGES = CHANGED.replace("    return y\n", "    return y.contiguous()\n")
NOTES = "tests/test_norm.py"


def _history(tmp_path, first, later_from, later):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE, NOTES: "x = 1\n"}),
        CommitSpec("zeros, and a test", files={"ops/norm.py": first, NOTES: "x = 2\n"}),
        CommitSpec("a comment", files={"ops/norm.py": "# row normalisation\n" + first}),
        CommitSpec("restore, and another test", files={"ops/norm.py": later_from, NOTES: "x = 3\n"}),
    ], TREE, matrix=MATRIX)
    return verdicts


def test_a_file_change_restored_hunk_for_hunk_later_is_net_zero_in_both_commits(tmp_path):
    verdicts = _history(tmp_path, CHANGED, RESTORED, None)
    for position in (1, 3):
        verdict = verdicts[position]
        assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "net-zero"), (position, verdict.reason)
        assert "file-revert" in verdict.rules, (position, verdict.rules)
    assert "entry 3" in verdicts[1].reason and "entry 1" in verdicts[3].reason


def test_a_later_change_to_something_else_is_still_flagged(tmp_path):
    verdicts = _history(tmp_path, CHANGED, RESTORED.replace("torch.empty_like(x)", "torch.ones_like(x)"), None)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert verdicts[3].verdict in FLAGGED, verdicts[3].reason
    assert "file-revert" not in verdicts[1].rules + verdicts[3].rules


def test_restoring_only_part_of_the_change_leaves_the_earlier_commit_flagged(tmp_path):
    verdicts = _history(tmp_path, TWO_CHANGES, "# row normalisation\n" + TWO_CHANGES.replace(
        "torch.zeros_like(x)", "torch.empty_like(x)"), None)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert "file-revert" not in verdicts[1].rules
