"""A method of a class whose only callers are the class's own methods
(``self.kernel(...)``), given or relieved of a parameter whose every argument
the calling method computes itself (``instance-derived-parameter``): how the
class implements its launch, not an input the port's callers supply, so for a
reader (NEEDS_REVIEW), never a gap. A value the calling method passes straight
from its own parameters, or a method some code outside the class calls, stays
a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/norm.py"
MATRIX = """\
[[row]]
id       = "NORM"
title    = "A class that launches its own kernel method"
upstream = "vllm"
paths    = ["pkg/norm.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import math


class Norm:
    def __init__(self, n):
        self.n = n

    def _layout(self, width):
        return (self.n // width, width)

    def __call__(self, x, out):
        width = math.gcd(self.n, 8)
        layout = self._layout(width)
        self.kernel(x, out, layout).launch(grid=[x.shape[0], 1, 1])

    def kernel(self, x, out, layout):
        cols = layout[1]
        for i in range(cols):
            out[i] = x[i]


def norm(x, out):
    Norm(x.shape[1])(x, out)
'''

# The layout becomes a tiled copy and a per-row thread count, both computed by
# the launching method from the instance's size; the helper is renamed.
AFTER = BEFORE.replace(
    "    def _layout(self, width):\n        return (self.n // width, width)\n",
    "    def _tiled(self, width):\n        return (self.n // width, width), self.n // width\n").replace(
    "        layout = self._layout(width)\n        self.kernel(x, out, layout)",
    "        copy, per_row = self._tiled(width)\n        self.kernel(x, out, copy, per_row)").replace(
    "    def kernel(self, x, out, layout):\n        cols = layout[1]\n",
    "    def kernel(self, x, out, copy, per_row):\n        cols = copy[1] + per_row - per_row\n")

# Unsound neighbours: the calling method hands the kernel one of its own
# parameters (a new input its callers supply); or code outside the class
# launches the method itself.
SUPPLIED_AFTER = AFTER.replace("    def __call__(self, x, out):\n", "    def __call__(self, x, out, per_row=4):\n").replace(
    "        copy, per_row = self._tiled(width)\n", "        copy, _ = self._tiled(width)\n")
OUTSIDE_BEFORE = BEFORE + "\n\ndef raw(x, out, layout):\n    Norm(x.shape[1]).kernel(x, out, layout)\n"
OUTSIDE_AFTER = AFTER + "\n\ndef raw(x, out, copy, per_row):\n    Norm(x.shape[1]).kernel(x, out, copy, per_row)\n"


def _pinned(source: str) -> str:
    for name in ("Norm.__init__", "Norm._layout", "Norm.__call__", "Norm.kernel", "norm", "raw"):
        method = name.split(".")[-1]
        indent = "    " if "." in name else ""
        source = source.replace(f"\n{indent}def {method}(", f"\n{indent}# portq: ports vllm:{HOST}::{name}\n"
                                f"{indent}def {method}(", 1)
    return source


def _one_commit(tmp_path, before, after):
    tree = {"vendored/norm.py": _pinned(before),
            "engine/use.py": "from vendored.norm import norm\n\n\ndef forward(x, out):\n    norm(x, out)\n"}
    return classify_commit(tmp_path, {HOST: before}, {HOST: after}, tree, matrix=MATRIX, message="tiled copy")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.split(".")[-1] == name)


def test_a_parameter_the_launching_method_computes_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    kernel = _symbol(verdict, "kernel")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "instance-derived-parameter" in kernel.rules, kernel.rules
    messages = [e.message for e in kernel.evidence]
    assert any("copy, per_row = self._tiled(width)" in m for m in messages), messages


def test_a_parameter_the_calling_method_receives_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, SUPPLIED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "instance-derived-parameter" not in _symbol(verdict, "kernel").rules


def test_a_method_code_outside_the_class_calls_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, OUTSIDE_BEFORE, OUTSIDE_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "instance-derived-parameter" not in _symbol(verdict, "kernel").rules
