"""A ported definition upstream removes inside the range and later adds back
(rule ``readded-definition``): the port holds the definition as it was where
the port was taken (its anchor's pin, else the range's base). Added back with
the same tokens, the port already has it (IN_SYNC, ``added-definition``);
added back with another body, what the port runs is not what upstream now
has, so it is never IN_SYNC, however well the parameters match.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, WRAPPER, norm_module

BASE = norm_module()
ORIGINAL = WRAPPER.format(name="_norm_fwd")
WITHOUT = BASE.replace("\n\n" + ORIGINAL, "\n")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def _history(tmp_path, readded):
    assert ORIGINAL in BASE and ORIGINAL not in WITHOUT
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("drop the wrapper", files={"ops/norm.py": WITHOUT}),
        CommitSpec("the wrapper comes back", files={"ops/norm.py": WITHOUT + "\n\n" + readded}),
    ], TREE, matrix=MATRIX)
    return verdicts


def test_a_definition_added_back_with_another_body_is_not_in_sync(tmp_path):
    other_body = ORIGINAL.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
    verdicts = _history(tmp_path, other_body)
    back = _symbol(verdicts[2], "norm")
    assert back.verdict in FLAGGED, back.reason
    assert "readded-definition" in back.rules, back.rules
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason


def test_a_definition_added_back_with_the_same_tokens_is_in_sync(tmp_path):
    same_tokens = ORIGINAL.replace("    y = torch.empty_like(x)\n", "    # the output\n    y = torch.empty_like(x)\n")
    verdicts = _history(tmp_path, same_tokens)
    back = _symbol(verdicts[2], "norm")
    assert back.verdict == IN_SYNC, back.reason
    assert back.rules == ["added-definition"], back.rules


def test_a_renamed_definition_stops_carrying_the_anchor_once_the_old_name_comes_back(tmp_path):
    # The wrapper is renamed (the anchor follows it, ``moved-definition``), then the old name is added back:
    # the anchor names an upstream definition again, so later changes to the renamed copy are a sibling's.
    renamed = BASE.replace("def norm(x, w):", "def norm_rows(x, w):")
    back = renamed + "\n\ndef norm(x, w):\n    return norm_rows(x, w)\n"
    changed = back.replace("    n_rows, n_cols = x.shape\n", "    n_rows, n_cols = x.shape[0], x.shape[-1]\n", 1)
    assert changed.count("x.shape[-1]") == 1
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("rename the wrapper", files={"ops/norm.py": renamed}),
        CommitSpec("the old name comes back", files={"ops/norm.py": back}),
        CommitSpec("change the renamed copy", files={"ops/norm.py": changed}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "norm_rows")
    assert "moved-definition" not in later.rules, later.reason
    assert later.verdict not in FLAGGED, later.reason


def test_a_renamed_definition_keeps_carrying_the_anchor_while_the_old_name_stays_gone(tmp_path):
    renamed = BASE.replace("def norm(x, w):", "def norm_rows(x, w):")
    changed = renamed.replace("    n_rows, n_cols = x.shape\n", "    n_rows, n_cols = x.shape[0], x.shape[-1]\n", 1)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("rename the wrapper", files={"ops/norm.py": renamed}),
        CommitSpec("a note", files={"NOTES.md": "a note\n"}),
        CommitSpec("change the renamed copy", files={"ops/norm.py": changed}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "norm_rows")
    assert "moved-definition" in later.rules and later.verdict in FLAGGED, later.reason
