"""A ported definition that one commit changes and a later commit of the range
puts back (rule ``definition-revert``): both commits change other definitions
too, and other commits touch the file between them, so neither is a whole
revert (``net-zero``), a partial one or a file restored hunk for hunk, yet over
the pair that definition is as it was. The later commit may keep a binding the
earlier one added when nothing else in the definition read it there (a value
only the lines taken back used). The definition is NOT_APPLICABLE/``net-zero``
in both commits; a revert that leaves part of the change, a kept line that is
read, and a later re-land stay flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module()
SIBLING = "\n\ndef describe(x):\n    return str(x.shape)\n"
# The change: the kernel takes a program count, the host queries it and passes it.
PERSISTENT = BASE.replace(
    "n_cols, BLOCK: tl.constexpr):", "n_cols, BLOCK: tl.constexpr, NUM_PROGS: tl.constexpr):").replace(
    "    row = tl.program_id(0)\n", "    row = tl.program_id(0) % NUM_PROGS\n").replace(
    "    n_rows, n_cols = x.shape\n", "    n_rows, n_cols = x.shape\n    progs = torch.cuda.device_count() * 4\n").replace(
    "BLOCK=triton.next_power_of_2(n_cols))", "BLOCK=triton.next_power_of_2(n_cols), NUM_PROGS=progs)")
# The revert: the kernel and the launch go back, the host keeps the query (nothing reads it any more).
REVERTED = BASE.replace("    n_rows, n_cols = x.shape\n",
                        "    n_rows, n_cols = x.shape\n    progs = torch.cuda.device_count() * 4\n")
NOTES = "tests/test_norm.py"


def _history(tmp_path, changed, reverted, then=None):
    commits = [
        CommitSpec("base", files={"ops/norm.py": BASE, NOTES: "x = 1\n"}),
        CommitSpec("persistent, and a test", files={"ops/norm.py": changed, NOTES: "x = 2\n"}),
        CommitSpec("a comment", files={"ops/norm.py": "# row normalisation\n" + changed}),
        CommitSpec("back to one program a row, and a sibling", files={
            "ops/norm.py": "# row normalisation\n" + reverted + SIBLING}),
    ]
    if then is not None:
        commits.append(CommitSpec("persistent again", files={"ops/norm.py": "# row normalisation\n" + then + SIBLING}))
    verdicts, _ = classify_history(tmp_path, commits, TREE, matrix=MATRIX)
    return verdicts


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_definition_put_back_by_a_later_commit_is_net_zero_in_both(tmp_path):
    verdicts = _history(tmp_path, PERSISTENT, REVERTED)
    for position in (1, 3):
        for name in ("_norm_fwd", "norm"):
            symbol = _symbol(verdicts[position], name)
            assert (symbol.verdict, symbol.justification) == (NOT_APPLICABLE, "net-zero"), (position, symbol.reason)
            assert symbol.rules == ["definition-revert"], (position, name, symbol.rules)
        assert verdicts[position].verdict not in FLAGGED, (position, verdicts[position].reason)
    assert "entry 3" in _symbol(verdicts[1], "norm").reason and "entry 1" in _symbol(verdicts[3], "norm").reason


def test_a_revert_that_leaves_part_of_the_change_is_still_flagged(tmp_path):
    kept_launch = REVERTED.replace("BLOCK=triton.next_power_of_2(n_cols))",
                                   "BLOCK=triton.next_power_of_2(n_cols), NUM_PROGS=progs)")
    verdicts = _history(tmp_path, PERSISTENT, kept_launch)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert "definition-revert" not in _symbol(verdicts[1], "norm").rules


def test_a_kept_line_that_something_still_reads_leaves_the_change_flagged(tmp_path):
    used = PERSISTENT.replace("    return y\n", "    y.mul_(progs)\n    return y\n", 1)
    kept_use = REVERTED.replace("    return y\n", "    y.mul_(progs)\n    return y\n", 1)
    verdicts = _history(tmp_path, used, kept_use)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert "definition-revert" not in _symbol(verdicts[1], "norm").rules


def test_a_later_re_land_is_decided_on_its_own(tmp_path):
    verdicts = _history(tmp_path, PERSISTENT, REVERTED, then=PERSISTENT)
    assert _symbol(verdicts[1], "norm").rules == ["definition-revert"]
    assert verdicts[4].verdict in FLAGGED, verdicts[4].reason
    assert all("definition-revert" not in s.rules for s in verdicts[4].symbols)


def test_lines_another_commit_adds_between_the_pair_are_kept(tmp_path):
    check = "    y = torch.empty_like(x)\n    assert x.is_contiguous()\n"
    # Between the pair another commit adds a line to the host; the revert keeps it (the launch is split
    # over lines, so the revert removes only the argument's line).
    reverted = REVERTED.replace("    y = torch.empty_like(x)\n", check).replace(
        "(x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))",
        "(\n        x, w, y, n_cols,\n        BLOCK=triton.next_power_of_2(n_cols),\n    )")
    base = BASE.replace("(x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))",
                        "(\n        x, w, y, n_cols,\n        BLOCK=triton.next_power_of_2(n_cols),\n    )")
    changed = PERSISTENT.replace("(x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols), NUM_PROGS=progs)",
                                 "(\n        x, w, y, n_cols,\n        NUM_PROGS=progs,\n"
                                 "        BLOCK=triton.next_power_of_2(n_cols),\n    )")
    between = changed.replace("    y = torch.empty_like(x)\n", check)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": base, NOTES: "x = 1\n"}),
        CommitSpec("persistent, and a test", files={"ops/norm.py": changed, NOTES: "x = 2\n"}),
        CommitSpec("a check", files={"ops/norm.py": between}),
        CommitSpec("back to one program a row, and a sibling", files={"ops/norm.py": reverted + SIBLING}),
    ], TREE, matrix=MATRIX)
    for position in (1, 3):
        assert _symbol(verdicts[position], "norm").rules == ["definition-revert"], (
            position, _symbol(verdicts[position], "norm").reason)


def test_a_re_land_after_a_revert_that_pairs_with_nothing_is_not_hidden(tmp_path):
    used = PERSISTENT.replace("    return y\n", "    y.mul_(progs)\n    return y\n", 1)
    kept_use = REVERTED.replace("    return y\n", "    y.mul_(progs)\n    return y\n", 1)
    verdicts = _history(tmp_path, used, kept_use, then=used)
    assert verdicts[1].verdict in FLAGGED, verdicts[1].reason
    assert verdicts[4].verdict in FLAGGED, verdicts[4].reason
    # The kernel is put back whole (a pair); the host's revert keeps a line that is read, so it pairs with
    # nothing, and the re-land is not its revert's partner either.
    assert "definition-revert" not in _symbol(verdicts[3], "norm").rules
    assert all("definition-revert" not in s.rules for s in verdicts[4].symbols)


def test_a_change_moved_into_a_callee_by_the_later_commit_is_no_revert(tmp_path):
    # The first commit makes the host zero its output; the later one takes that back in the host and has the
    # kernel, which the first commit left alone, do it instead (stores for every column).
    zeroed = BASE.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
    moved = BASE.replace("    tl.store(y_ptr + row * n_cols + cols, x / rms * w, mask=mask)\n",
                         "    tl.store(y_ptr + row * n_cols + cols, tl.where(mask, x / rms * w, 0.0))\n")
    verdicts = _history(tmp_path, zeroed, moved)
    assert "definition-revert" not in _symbol(verdicts[1], "norm").rules
    assert "definition-revert" not in _symbol(verdicts[3], "norm").rules
