"""An ``assert`` whose message is reworded (rule ``assert-message``): the
message is text for a reader of the ``AssertionError``; it is evaluated only
when the test fails, which raises whatever the text says. A ported definition
that is the same program once the messages of its asserts (literals, or
f-strings of names, that call nothing) are erased changed nothing the port
computes: cosmetic. A changed test, a message that calls something, an assert
added or removed, or any other change beside it stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from portq.classifier.rules.form import same_without_assert_messages
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module().replace(
    "def norm(x, w):\n",
    "def norm(x, w):\n\n    assert x.is_cuda, \"Input must be on the device.\"\n"
    "    assert x.dtype in [torch.float16, torch.float32], \"Input must be of dtype float16 or float32.\"\n")
REWORDED = BASE.replace("def norm(x, w):\n\n", "def norm(x, w):\n").replace(
    "\"Input must be of dtype float16 or float32.\"", "\"Input must be in dtype of float16, or float32.\"")
FORMATTED = BASE.replace("\"Input must be of dtype float16 or float32.\"", "f\"Input dtype {x.dtype} not supported.\"")
# Unsound neighbours.
CALLING = BASE.replace("\"Input must be of dtype float16 or float32.\"", "f\"bad dtype {describe(x)}\"")
TEST_CHANGED = REWORDED.replace("[torch.float16, torch.float32]", "[torch.float16, torch.bfloat16, torch.float32]")
DROPPED = BASE.replace("    assert x.is_cuda, \"Input must be on the device.\"\n", "")
AND_A_CHANGE = REWORDED.replace("torch.empty_like(x)", "torch.zeros_like(x)")


def _later(tmp_path, after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("reword", files={"ops/norm.py": after}),
    ], TREE, matrix=MATRIX)
    return verdicts[1]


def test_a_reworded_assert_message_is_cosmetic(tmp_path):
    verdict = _later(tmp_path, REWORDED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "assert-message" in verdict.rules, verdict.rules


def test_a_message_formatted_from_names_is_cosmetic(tmp_path):
    verdict = _later(tmp_path, FORMATTED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "assert-message" in verdict.rules, verdict.rules


def test_a_changed_assertion_test_is_still_flagged(tmp_path):
    verdict = _later(tmp_path, TEST_CHANGED)
    assert verdict.verdict in FLAGGED and "assert-message" not in verdict.rules, verdict.reason


def test_a_reworded_message_beside_a_real_change_is_still_flagged(tmp_path):
    verdict = _later(tmp_path, AND_A_CHANGE)
    assert verdict.verdict in FLAGGED and "assert-message" not in verdict.rules, verdict.reason


def test_only_messages_that_call_nothing_are_erased():
    start = BASE.index("def norm")
    assert same_without_assert_messages(BASE[start:], REWORDED[REWORDED.index("def norm"):])
    assert not same_without_assert_messages(BASE[start:], CALLING[CALLING.index("def norm"):])
    assert not same_without_assert_messages(BASE[start:], DROPPED[DROPPED.index("def norm"):])
    assert not same_without_assert_messages(BASE[start:], BASE[start:])  # nothing changed: not this rule's
