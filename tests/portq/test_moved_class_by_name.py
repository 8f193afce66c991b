"""An anchored class (an enum of modes, say, ported as a class of its own) that a commit removes from its file
while the one class of the same qualified name appears in another file of the same commit is followed there by
identity (rule ``moved-by-name``), as a function is: the move commit is decided as it would be without the
following, and a later change to the class at its new place is the port's, never a silent not-ported. A class
of that name added while the old one stays, or a class under another name, is not followed."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "MODES"
title    = "Compute modes"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

CORE = '''\
from enum import Enum


class Mode(Enum):
    FAST = "FAST"
    EXACT = "EXACT"


def pick(n):
    return Mode.FAST if n > 1024 else Mode.EXACT
'''

CORE_WITHOUT = '''\
from .kinds import Mode


def pick(n):
    return Mode.FAST if n > 1024 else Mode.EXACT
'''

KINDS = '''\
from enum import Enum


class Mode(Enum):
    FAST = 0
    EXACT = 1
    wide = 2
'''

TREE = {
    "kernels/modes.py": '''\
from enum import Enum


# portq: ports vllm:ops/core.py::Mode
class Mode(Enum):
    FAST = "FAST"
    EXACT = "EXACT"
''',
    "engine/run.py": "from kernels.modes import Mode\n\n\ndef run(n):\n    return Mode.FAST if n else Mode.EXACT\n",
}


def _symbol(verdict, name, path=None):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name and (path is None or s.path == path))


def test_a_ported_class_rewritten_into_another_module_is_followed_and_a_later_member_rename_is_flagged(tmp_path):
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/core.py": CORE}),
        CommitSpec("move the modes", files={"ops/core.py": CORE_WITHOUT, "ops/kinds.py": KINDS}),
        CommitSpec("rename a mode", files={"ops/kinds.py": KINDS.replace("FAST = 0", "QUICK = 0")}),
    ], TREE, matrix=MATRIX)
    old = _symbol(verdicts[1], "Mode", "ops/core.py")
    assert "moved-by-name" in old.rules, old.rules
    assert f"anchor lost at {shas[1][:10]}: Mode moved to ops/kinds.py::Mode?" in \
        [e.message for e in old.evidence if e.kind == "anchor-lost"]
    later = _symbol(verdicts[2], "Mode")
    assert later.verdict in FLAGGED, later.reason
    assert "moved-definition" in later.rules and "moved-by-name" in later.rules, later.rules
    assert later.ports


def test_a_member_the_port_lacks_renamed_in_the_followed_class_is_still_a_change_to_the_ported_class(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/core.py": CORE}),
        CommitSpec("move the modes", files={"ops/core.py": CORE_WITHOUT, "ops/kinds.py": KINDS}),
        CommitSpec("rename a mode", files={"ops/kinds.py": KINDS.replace("wide = 2", "WIDE = 2")}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "Mode")
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason


def test_a_same_named_class_in_a_new_module_while_the_old_one_stays_is_not_followed(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/core.py": CORE}),
        CommitSpec("another enum", files={"ops/core.py": CORE + "\n\nLIMIT = 4\n", "ops/kinds.py": KINDS}),
        CommitSpec("rename a mode", files={"ops/kinds.py": KINDS.replace("FAST = 0", "QUICK = 0")}),
    ], TREE, matrix=MATRIX)
    new = _symbol(verdicts[2], "Mode")
    assert new.verdict == NOT_APPLICABLE and new.justification == "not-ported", new.reason
    assert "moved-definition" not in new.rules


def test_a_class_under_another_name_in_a_new_module_is_not_followed(tmp_path):
    other = KINDS.replace("class Mode", "class Kind")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/core.py": CORE}),
        CommitSpec("replace the modes", files={"ops/core.py": CORE_WITHOUT.replace("Mode", "Kind"),
                                               "ops/kinds.py": other}),
        CommitSpec("rename a kind", files={"ops/kinds.py": other.replace("FAST = 0", "QUICK = 0")}),
    ], TREE, matrix=MATRIX)
    new = _symbol(verdicts[2], "Kind")
    assert "moved-by-name" not in new.rules and "moved-definition" not in new.rules, new.rules
