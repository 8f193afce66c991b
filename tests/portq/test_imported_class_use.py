"""A class no anchor names (an enum of modes a vendored file defines beside its pinned functions) that upstream
moves into a module of its own, which the ported file then imports it from, is still what the ported
definitions read: a later change to it there is NEEDS_REVIEW (``imported-class-use``), as ``toplevel-use`` read a
change to it while it sat in the ported file, never a silent not-ported. A class of that module the ported
definitions do not read, or one in a module the ported file does not import from, stays not-ported."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
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
    FAST = 0
    EXACT = 1


def pick(n):
    return Mode.FAST if n > 1024 else Mode.EXACT
'''

CORE_IMPORTING = '''\
from .kinds import {what}


def pick(n):
    return Mode.FAST if n > 1024 else Mode.EXACT
'''

KINDS = '''\
from enum import Enum


class Mode(Enum):
    FAST = 0
    EXACT = 1
    wide = 2


class Layout(Enum):
    ROWS = 0
    COLS = 1
'''

TREE = {
    "kernels/core.py": '''\
from enum import Enum


class Mode(Enum):
    FAST = 0
    EXACT = 1


# portq: ports vllm:ops/core.py::pick @{pin}
def pick(n):
    return Mode.FAST if n > 1024 else Mode.EXACT
''',
    "engine/run.py": "from kernels.core import pick\n\n\ndef run(n):\n    return pick(n)\n",
}


def _history(tmp_path, core, kinds_after):
    commits = [CommitSpec("base", files={"ops/core.py": CORE}),
               CommitSpec("move the modes", files={"ops/core.py": core, "ops/kinds.py": KINDS}),
               CommitSpec("change the kinds", files={"ops/kinds.py": kinds_after})]
    _, shas = classify_history(tmp_path / "first", commits, {"engine/run.py": TREE["engine/run.py"]}, matrix=MATRIX)
    tree = {**TREE, "kernels/core.py": TREE["kernels/core.py"].replace("{pin}", shas[0][:10])}
    verdicts, _ = classify_history(tmp_path / "pinned", commits, tree, matrix=MATRIX)
    return verdicts[2]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.split("::")[-1] == name)


def test_a_moved_class_the_ported_file_imports_and_reads_is_reviewed(tmp_path):
    for what in ("*", "Mode"):
        entry = _history(tmp_path / what.strip("*").lower(), CORE_IMPORTING.format(what=what),
                         KINDS.replace("wide = 2", "WIDE = 2"))
        mode = _symbol(entry, "Mode")
        assert mode.verdict == NEEDS_REVIEW, (what, mode.reason)
        assert "imported-class-use" in mode.rules, mode.rules
        assert "pick" in mode.reason, mode.reason


def test_a_class_of_that_module_the_ported_definitions_do_not_read_stays_not_ported(tmp_path):
    entry = _history(tmp_path, CORE_IMPORTING.format(what="*"), KINDS.replace("COLS = 1", "COLS = 2"))
    layout = _symbol(entry, "Layout")
    assert (layout.verdict, layout.justification) == (NOT_APPLICABLE, "not-ported"), layout.reason
    assert "imported-class-use" not in layout.rules


def test_a_class_in_a_module_the_ported_file_does_not_import_from_stays_not_ported(tmp_path):
    own = CORE.replace("    EXACT = 1\n", "    EXACT = 1\n    wide = 2\n")
    entry = _history(tmp_path, own, KINDS.replace("wide = 2", "WIDE = 2"))
    mode = _symbol(entry, "Mode")
    assert (mode.verdict, mode.justification) == (NOT_APPLICABLE, "not-ported"), mode.reason
