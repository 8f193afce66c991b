"""A private static method of an autograd ``Function`` that gains a parameter
which only the class's own ``backward`` passes, from an attribute the class's
own ``setup_context`` stores on the context (``ctx.factor = factor``), called
as ``Cls.__method(...)`` (``context-derived-parameter``): the value is one the
callers of ``apply`` already supply, kept by the class between its passes, so
how the class wires its backward, for a reader (NEEDS_REVIEW), never a gap.
A context attribute the class never stores, a storing method whose own
parameters change, or a call from outside the class (the mangled name) stays
a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/scale.py"
MATRIX = """\
[[row]]
id       = "SCALE"
title    = "An autograd function with private passes"
upstream = "vllm"
paths    = ["pkg/scale.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(*args):
        return Scale.__forward(*args)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, factor = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, *grads):
        (grad,) = grads
        return Scale.__backward(grad, *ctx.saved_tensors)

    @staticmethod
    def __forward(x, factor):
        assert factor == 2.0
        return x * 2.0

    @staticmethod
    def __backward(grad, x):
        return grad * 2.0, None
'''

# The backward pass now reads the factor the forward was given, which
# setup_context keeps on the context; the private backward gains it.
AFTER = BEFORE.replace(
    "        ctx.save_for_backward(x)\n",
    "        ctx.save_for_backward(x)\n        ctx.factor = factor\n").replace(
    "        return Scale.__backward(grad, *ctx.saved_tensors)\n",
    "        (x,) = ctx.saved_tensors\n        return Scale.__backward(grad, x, ctx.factor)\n").replace(
    "    def __backward(grad, x):\n        return grad * 2.0, None\n",
    "    def __backward(grad, x, factor):\n        return grad * factor, None\n")

# Unsound neighbours: a context attribute the class never stores (nothing says
# where its value comes from); the value stored from a new input of forward
# (callers now supply it); code outside the class calling the private method
# by its mangled name.
UNSTORED_AFTER = AFTER.replace("        ctx.factor = factor\n", "")
NEW_INPUT_AFTER = AFTER.replace("    def forward(*args):\n", "    def forward(*args, factor=2.0):\n")
OUTSIDE_BEFORE = BEFORE + "\n\ndef raw(grad, x):\n    return Scale._Scale__backward(grad, x)\n"
OUTSIDE_AFTER = AFTER + "\n\ndef raw(grad, x):\n    return Scale._Scale__backward(grad, x, 2.0)\n"


def _pinned(source: str) -> str:
    for name in ("Scale.forward", "Scale.setup_context", "Scale.backward", "Scale.__forward", "Scale.__backward",
                 "raw"):
        method = name.split(".")[-1]
        indent = "    " if "." in name else ""
        decorator = "@staticmethod\n" + indent + "def" if "." in name else "def"
        old = f"\n{indent}{decorator} {method}("
        source = source.replace(old, f"\n{indent}# portq: ports vllm:{HOST}::{name}{old}", 1)
    return source


def _one_commit(tmp_path, before, after):
    tree = {"vendored/scale.py": _pinned(before),
            "engine/use.py": "from vendored.scale import Scale\n\n\ndef forward(x):\n    return Scale.apply(x, 2.0)\n"}
    return classify_commit(tmp_path, {HOST: before}, {HOST: after}, tree, matrix=MATRIX, message="factor")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol.split(".")[-1] == name)


def test_the_pins_name_every_method(tmp_path):
    pinned = _pinned(OUTSIDE_BEFORE)
    assert pinned.count("# portq: ports") == 6, pinned


def test_a_parameter_backward_reads_from_the_context_the_class_stores_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    backward = _symbol(verdict, "__backward")
    assert backward.verdict == NEEDS_REVIEW, backward.reason
    assert "context-derived-parameter" in backward.rules, backward.rules
    messages = [e.message for e in backward.evidence]
    assert any("ctx.factor = factor" in m for m in messages), messages


def test_a_context_attribute_the_class_never_stores_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, UNSTORED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "context-derived-parameter" not in _symbol(verdict, "__backward").rules


def test_a_value_stored_beside_a_new_input_of_forward_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, BEFORE, NEW_INPUT_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "context-derived-parameter" not in _symbol(verdict, "__backward").rules


def test_a_private_method_called_from_outside_the_class_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, OUTSIDE_BEFORE, OUTSIDE_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "context-derived-parameter" not in _symbol(verdict, "__backward").rules
