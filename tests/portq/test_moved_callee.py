"""A helper moved from one module of upstream to another in the same commit,
its definition identical, and a ported definition that now calls it through
the new module (``utils.pred(x)`` -> ``copy_utils.pred(x)``): the same code,
followed by identity, so cosmetic (``moved-callee``). A moved helper whose
body changed, or one still defined where it was, stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "NORM"
title    = "A kernel calling helpers of two utility modules"
upstream = "vllm"
paths    = ["pkg/norm.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

UTILS = '''\
def pred(t, limit):
    # only the k dimension
    return t < limit


def other(t):
    return t + 1
'''
COPY = '''\
def copy(src, dst):
    dst[:] = src
'''
NORM = '''\
import pkg.utils as utils
import pkg.copy as copy_utils


def norm(x, out):
    mask = utils.pred(x, 3) if x is not None else None
    copy_utils.copy(x, out)
    return mask
'''
PRED = UTILS.split("\n\n\n")[0] + "\n"
MOVED_UTILS = UTILS.replace(PRED + "\n\n", "")
MOVED_COPY = COPY + "\n\n" + PRED
MOVED_NORM = NORM.replace("utils.pred(x, 3) if x", "copy_utils.pred(\n        x, 3\n    ) if x")
CHANGED_COPY = MOVED_COPY.replace("t < limit", "t <= limit")


def _one_commit(tmp_path, utils, copy):
    base = {"pkg/utils.py": UTILS, "pkg/copy.py": COPY, "pkg/norm.py": NORM}
    after = {"pkg/utils.py": utils, "pkg/copy.py": copy, "pkg/norm.py": MOVED_NORM}
    tree = {"vendored/norm.py": NORM.replace("\ndef norm(", "\n# portq: ports vllm:pkg/norm.py::norm\ndef norm("),
            "engine/use.py": "from vendored.norm import norm\n\n\ndef forward(x, out):\n    norm(x, out)\n"}
    return classify_commit(tmp_path, base, after, tree, matrix=MATRIX, message="move pred")


def test_a_helper_moved_unchanged_is_the_same_code(tmp_path):
    verdict = _one_commit(tmp_path, MOVED_UTILS, MOVED_COPY)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "moved-callee" in verdict.rules, verdict.rules


def test_a_moved_helper_whose_body_changed_stays_flagged(tmp_path):
    verdict = _one_commit(tmp_path, MOVED_UTILS, CHANGED_COPY)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason


def test_a_helper_still_defined_where_it_was_stays_flagged(tmp_path):
    verdict = _one_commit(tmp_path, UTILS, MOVED_COPY)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
