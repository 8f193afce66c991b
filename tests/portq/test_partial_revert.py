"""A later commit that only undoes part of an earlier commit of the same
range (rule ``partial-revert``): a debug line one commit adds among other
changes and a later commit removes again leaves, over the range, nothing of
that line; the later commit is NOT_APPLICABLE/``net-zero`` with the earlier
one, which is still decided on its own. A later commit that also removes
a line the range did not add, or changes anything else, is decided on its
merits.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module()
# The earlier commit changes the ported wrapper's body and leaves a debug print in it.
DEBUG = BASE.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n    print(y.shape)\n")


def _history(tmp_path, later):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("zeros, and a debug print", files={"ops/norm.py": DEBUG}),
        CommitSpec("later", files={"ops/norm.py": later}),
    ], TREE, matrix=MATRIX)
    return verdicts


def test_removing_a_line_an_earlier_commit_of_the_range_added_is_net_zero_with_it(tmp_path):
    verdicts = _history(tmp_path, DEBUG.replace("    print(y.shape)\n", ""))
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason  # the earlier commit stands on its own
    assert (verdicts[2].verdict, verdicts[2].justification) == (NOT_APPLICABLE, "net-zero"), verdicts[2].reason
    assert verdicts[2].rules == ["partial-revert"], verdicts[2].rules
    assert "entry 1" in verdicts[2].reason


def test_removing_a_line_the_range_did_not_add_is_still_flagged(tmp_path):
    later = DEBUG.replace("    print(y.shape)\n", "").replace("    n_rows, n_cols = x.shape\n",
                                                            "    n_rows, n_cols = x.shape[0], x.shape[-1]\n")
    verdicts = _history(tmp_path, later)
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason
    assert "partial-revert" not in verdicts[2].rules


def test_removing_a_line_an_earlier_commit_only_moved_is_still_flagged(tmp_path):
    moved = BASE.replace("    y = torch.empty_like(x)\n    n_rows, n_cols = x.shape\n",
                         "    n_rows, n_cols = x.shape\n    y = torch.empty_like(x)\n    print(y.shape)\n")
    assert moved != BASE
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("reorder, and a debug print", files={"ops/norm.py": moved}),
        CommitSpec("later", files={"ops/norm.py": moved.replace("    y = torch.empty_like(x)\n", "")}),
    ], TREE, matrix=MATRIX)
    assert "partial-revert" not in verdicts[2].rules, verdicts[2].reason
