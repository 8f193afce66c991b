"""A launch argument upstream moves into a local (rule ``argument-through-local``):
``t = x.view(-1, k)`` and then ``t`` passed where ``x.view(-1, k)`` was, directly or
in the sequence a ``*args`` splat spreads. The local's one reaching value is the old
argument token for token, so the launch passes the same value and the port's launch
has nothing to follow; what else changed in the body decides (a reader). A local
holding another expression stays a launch the port is behind on."""
from __future__ import annotations

import pytest

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "PICK"
title    = "Timed dispatch"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

BASE = '''\
CACHE = {}


def run(x, w, k):
    key = (x.shape[0],)
    args = [x.view(-1, k), w]
    if key not in CACHE:
        CACHE[key] = {"fn": pick(args)}
    return CACHE[key]["fn"](*args)


def pick(args):
    return len
'''

MOVED = '''\
CACHE = {}


def run(x, w, k):
    x2 = x.view(-1, k)
    key = (x2.shape[0],)
    args = [x2, w]
    if key not in CACHE:
        CACHE[key] = {"fn": pick(args)}
    return CACHE[key]["fn"](*args)


def pick(args):
    return len
'''

# Unsound neighbour: the local holds another expression (the launch passes a new value).
OTHER = MOVED.replace("x2 = x.view(-1, k)", "x2 = x.view(-1, k).contiguous()")

DIRECT_BASE = BASE.replace('return CACHE[key]["fn"](*args)', 'return CACHE[key]["fn"](x.view(-1, k), w)')
DIRECT_MOVED = MOVED.replace('return CACHE[key]["fn"](*args)', 'return CACHE[key]["fn"](x2, w)')

TREE = {
    "kernels/pick.py": '''\
CACHE = {}


# portq: ports vllm:ops/pick.py::run
def run(x, w, k):
    key = (x.shape[0],)
    args = [x.view(-1, k), w]
    if key not in CACHE:
        CACHE[key] = {"fn": len}
    return CACHE[key]["fn"](*args)
''',
    "engine/step.py": "from kernels.pick import run\n\n\ndef step(x, w):\n    return run(x, w, 64)\n",
}


def _run(tmp_path, before, after, tree=TREE):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/pick.py": before}),
        CommitSpec("key the cache on the flattened batch", files={"ops/pick.py": after}),
    ], tree, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "run")


def test_an_argument_moved_into_a_local_spread_by_a_splat_is_no_launch_gap(tmp_path):
    symbol = _run(tmp_path, BASE, MOVED)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "launch-arguments" not in symbol.rules, symbol.rules


def test_an_argument_moved_into_a_local_passed_directly_is_no_launch_gap(tmp_path):
    tree = {**TREE, "kernels/pick.py": TREE["kernels/pick.py"].replace(
        'return CACHE[key]["fn"](*args)', 'return CACHE[key]["fn"](x.view(-1, k), w)')}
    symbol = _run(tmp_path, DIRECT_BASE, DIRECT_MOVED, tree)
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "launch-arguments" not in symbol.rules, symbol.rules


def test_a_local_holding_another_expression_stays_a_launch_gap(tmp_path):
    # A kernel launched on a grid (a field of a record stored in the cache dictionary is a stored callable,
    # no launch: tests/portq/test_cached_compile.py).
    launched = {name: text.replace('CACHE[key]["fn"](', "_kern[(1,)](") for name, text in TREE.items()}
    symbol = _run(tmp_path, BASE.replace('CACHE[key]["fn"](', "_kern[(1,)]("),
                  OTHER.replace('CACHE[key]["fn"](', "_kern[(1,)]("), launched)
    assert symbol.verdict == REAL_GAP, symbol.reason
    assert "launch-arguments" in symbol.rules, symbol.rules
