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


# A sibling upstream adds in the range repeats a line the ported wrapper already had.
SIBLING = DEBUG + '''

def norm_into(x, w, y):
    y = torch.empty_like(x)
    return norm(x, w)
'''


def test_removing_a_copy_of_an_added_line_from_another_definition_is_still_flagged(tmp_path):
    # The later commit removes the ported wrapper's own line, not the copy the earlier commit added in its
    # new sibling: the same text, another place, so nothing the range made is taken back.
    base = SIBLING.replace("    y = torch.zeros_like(x)\n", "    y = torch.empty_like(x)\n", 1)
    added = base + "\n\ndef norm_like(x):\n    y = torch.empty_like(x)\n    return y\n"
    removed_in_wrapper = added.replace("    y = torch.empty_like(x)\n    print(y.shape)\n", "    print(y.shape)\n", 1)
    assert removed_in_wrapper.count("    y = torch.empty_like(x)\n") == added.count("    y = torch.empty_like(x)\n") - 1
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": base}),
        CommitSpec("a new sibling", files={"ops/norm.py": added}),
        CommitSpec("later", files={"ops/norm.py": removed_in_wrapper}),
    ], TREE, matrix=MATRIX)
    assert "partial-revert" not in verdicts[2].rules, verdicts[2].reason
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason


def test_adding_back_a_removed_line_in_another_definition_is_still_flagged(tmp_path):
    # The earlier commit drops a line from the new sibling; the later commit adds that text to the ported
    # wrapper instead: the same text, another place, so nothing the range removed comes back where it was.
    base = SIBLING
    dropped = base.replace("    y = torch.empty_like(x)\n    return norm(x, w)\n", "    return norm(x, w)\n")
    later = dropped.replace("    n_rows, n_cols = x.shape\n", "    y = torch.empty_like(x)\n    n_rows, n_cols = x.shape\n", 1)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": base}),
        CommitSpec("drop a line from the sibling, and a note", files={"ops/norm.py": dropped, "NOTES.md": "a note\n"}),
        CommitSpec("later", files={"ops/norm.py": later}),
    ], TREE, matrix=MATRIX)
    assert "partial-revert" not in verdicts[2].rules, verdicts[2].reason
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason


def test_taking_back_the_added_line_where_it_was_added_after_other_edits_is_net_zero(tmp_path):
    # An unrelated edit above the added line moves it down; taking it back still pairs.
    moved_down = DEBUG.replace("import torch\n", "import torch\nimport math\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("zeros, and a debug print", files={"ops/norm.py": DEBUG}),
        CommitSpec("an import", files={"ops/norm.py": moved_down}),
        CommitSpec("later", files={"ops/norm.py": moved_down.replace("    print(y.shape)\n", "")}),
    ], TREE, matrix=MATRIX)
    assert verdicts[3].rules == ["partial-revert"], verdicts[3].reason
    assert "entry 1" in verdicts[3].reason


def test_putting_back_one_of_two_replaced_lines_is_still_flagged(tmp_path):
    # The earlier commit replaces two lines of the wrapper (each its own run); the later commit puts back only the
    # first, exactly where it was, keeping the second replacement: the result is a form neither the base nor the earlier commit had (lines that
    # compute one value together, now half old and half new), so it is no inverse of anything the range did.
    both = BASE.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n").replace(
        "    return y\n", "    return y * 1.0\n")
    assert both.count("zeros_like") == 1 and both.count("return y * 1.0") == 1
    half = both.replace("    y = torch.zeros_like(x)\n", "    y = torch.empty_like(x)\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("zeros, and the shape", files={"ops/norm.py": both}),
        CommitSpec("later", files={"ops/norm.py": half}),
    ], TREE, matrix=MATRIX)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert "partial-revert" not in verdicts[2].rules, verdicts[2].reason
    # Decided on its merits: here the port already has the line put back.
    assert verdicts[2].justification != "net-zero", verdicts[2].reason


def test_undoing_the_whole_earlier_commit_is_still_net_zero(tmp_path):
    # The exact inverse of the whole earlier commit cancels it (rule net-zero), however many lines it restores.
    both = BASE.replace("    y = torch.empty_like(x)\n    n_rows, n_cols = x.shape\n",
                        "    y = torch.zeros_like(x)\n    n_rows, n_cols = x.shape[0], x.shape[-1]\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("zeros, and the shape", files={"ops/norm.py": both}),
        CommitSpec("later", files={"ops/norm.py": BASE}),
    ], TREE, matrix=MATRIX)
    assert (verdicts[2].verdict, verdicts[2].justification) == (NOT_APPLICABLE, "net-zero"), verdicts[2].reason
    assert (verdicts[1].verdict, verdicts[1].justification) == (NOT_APPLICABLE, "net-zero"), verdicts[1].reason
