"""A helper whose local, computed only from some of its parameters, becomes a parameter in their place
(``p = base + row * n + col`` gone, ``p`` taken instead of ``base, row, col``), the rest of its body the same
line for line: the helper computes what it did from what it is given, and what its callers now pass is decided
on the callers. The port still taking the old parameters is no gap of the helper by itself: NEEDS_REVIEW at
most (rule ``hoisted-local``), never REAL_GAP. A helper that also changes the rest of its body, or whose removed
parameter is read beside the hoisted local, keeps the gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "DOT"
title    = "Quantised dot product"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

OLD = """\
import triton
import triton.language as tl


@triton.jit
def _dot8(acc, x_base, x_row, x_col, w_ptr, n):
    h_ptr = x_base + x_row * n + x_col
    h = tl.load(h_ptr + tl.arange(0, 8))
    w = tl.load(w_ptr + tl.arange(0, 8))
    acc += tl.sum(h * w, axis=0)
    return acc
"""

NEW = """\
import triton
import triton.language as tl


@triton.jit
def _dot8(acc, h_ptr, w_ptr, n):
    h = tl.load(h_ptr + tl.arange(0, 8))
    w = tl.load(w_ptr + tl.arange(0, 8))
    acc += tl.sum(h * w, axis=0)
    return acc
"""

TREE = {
    "kernels/dot.py": """\
# portq: ports vllm:ops/dot.py::_dot8
def dot8(acc, x_base, x_row, x_col, w, n):
    start = x_row * n + x_col
    return acc + (x_base[start:start + 8] * w[:8]).sum()
""",
    "engine/run.py": "from kernels.dot import dot8\n\n\ndef step(a, x, w):\n    return dot8(a, x, 0, 0, w, 8)\n",
}


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_local_hoisted_into_a_parameter_is_no_gap_of_the_helper(tmp_path):
    verdict = classify_commit(tmp_path, {"ops/dot.py": OLD}, {"ops/dot.py": NEW}, TREE, MATRIX)
    dot = _symbol(verdict, "_dot8")
    assert dot.verdict == NEEDS_REVIEW and "hoisted-local" in dot.rules, (dot.verdict, dot.rules, dot.reason)
    assert "h_ptr" in dot.reason


def test_a_hoisted_local_beside_another_body_change_keeps_the_gap(tmp_path):
    changed = NEW.replace("acc += tl.sum(h * w, axis=0)", "acc += tl.sum(h * w, axis=0) * 2")
    verdict = classify_commit(tmp_path, {"ops/dot.py": OLD}, {"ops/dot.py": changed}, TREE, MATRIX)
    dot = _symbol(verdict, "_dot8")
    assert dot.verdict == REAL_GAP and "hoisted-local" not in dot.rules, (dot.verdict, dot.rules)


def test_a_removed_parameter_read_beside_the_hoisted_local_keeps_the_gap(tmp_path):
    old = OLD.replace("    acc += tl.sum(h * w, axis=0)\n", "    acc += tl.sum(h * w, axis=0) + x_row\n")
    verdict = classify_commit(tmp_path, {"ops/dot.py": old}, {"ops/dot.py": NEW}, TREE, MATRIX)
    dot = _symbol(verdict, "_dot8")
    assert dot.verdict == REAL_GAP and "hoisted-local" not in dot.rules, (dot.verdict, dot.rules)
