"""Kernels written as methods of classes (``@staticmethod @triton.jit`` on a
namespace class, launched as ``kernels.Norm.forward[grid](...)``) and hosts
that are autograd ``Function`` classes: a method whose class is renamed keeps
its own name (rule ``renamed-owner``: no gap on the name, the changed body is
for a reader), and the ``ctx`` an autograd ``forward`` takes is supplied by
``apply``, never a parameter callers bind (rule ``autograd-context``)."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from portq.language.extraction import signature_of
from portq.language.symbols import symbol_table
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row normalisation"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

KERNEL = '''\
import triton
import triton.language as tl


class {cls}:
    @staticmethod
    @triton.jit
    def {method}(x_ptr, y_ptr, n{extra}, BLOCK: tl.constexpr):
        row = tl.program_id(0)
{offset}        cols = tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * n + cols, x / tl.sum(x, axis=0), mask=mask)
'''

HOST = '''\
import torch

from lib import kernels


class Norm(torch.autograd.Function):
    @staticmethod
    def forward(*args, **kwargs):
        x, = args
        return Norm.__forward(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def __forward(x):
        y = torch.empty_like(x)
        rows, n = x.shape
        kernels.{cls}.{method}[(rows,)](x, y, n{passed}, BLOCK=1024)
        return y
'''

TREE = {
    "kernels/norm.py": '''\
import triton
import triton.language as tl


class RowKernels:
    # portq: ports vllm:lib/kernels.py::Norm.forward
    @staticmethod
    @triton.jit
    def forward(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * n + cols, x / tl.sum(x, axis=0), mask=mask)


# portq: ports vllm:lib/host.py::Norm.__forward
def row_norm(x):
    y = x.new_empty(x.shape)
    rows, n = x.shape
    RowKernels.forward[(rows,)](x, y, n, BLOCK=1024)
    return y
''',
    "engine/model.py": "from kernels.norm import row_norm\n\n\ndef run(x):\n    return row_norm(x)\n",
}


def _kernels(cls="Norm", method="forward", extra="", offset=""):
    return KERNEL.format(cls=cls, method=method, extra=extra, offset=offset)


def _host(cls="Norm", method="forward", passed=""):
    return HOST.format(cls=cls, method=method, passed=passed)


def _symbol(verdict, name):
    found = [s for s in verdict.symbols if s.symbol == name]
    assert found, [(s.symbol, s.change) for s in verdict.symbols]
    return next((s for s in found if s.change == "removed"), found[0])


GROUPED = dict(extra=", groups", offset="        x_ptr += (row % groups) * 0\n        y_ptr += (row % groups) * 0\n"
                                        "        row = row + 0 * groups\n")


def test_a_kernel_method_whose_class_is_renamed_and_body_changed_is_for_a_reader_not_a_renamed_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/kernels.py": _kernels(), "lib/host.py": _host()}),
        CommitSpec("group norm", files={"lib/kernels.py": _kernels(cls="GroupNorm", **GROUPED),
                                        "lib/host.py": _host(cls="GroupNorm", passed=", 1")}),
    ], TREE, matrix=MATRIX)
    entry = verdicts[1]
    kernel = _symbol(entry, "Norm.forward")
    assert kernel.verdict == NEEDS_REVIEW and "renamed-owner" in kernel.rules, kernel.reason
    assert "GroupNorm.forward" in kernel.reason
    assert entry.verdict != REAL_GAP, entry.reason


def test_a_kernel_method_renamed_within_its_class_stays_a_renamed_definition(tmp_path):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/kernels.py": _kernels(), "lib/host.py": _host()}),
        CommitSpec("rename", files={"lib/kernels.py": _kernels(method="forward_v2", **GROUPED),
                                    "lib/host.py": _host(method="forward_v2", passed=", 1")}),
    ], TREE, matrix=MATRIX)
    kernel = _symbol(verdicts[1], "Norm.forward")
    assert "renamed-owner" not in kernel.rules, kernel.reason
    assert kernel.verdict == REAL_GAP and "renamed-definition" in kernel.rules, kernel.reason


def _forward(source: str, qualified: str):
    table = symbol_table(source.encode(), "lib/host.py")
    definition = next(d for d in table.definitions if d.qualified_name == qualified)
    return signature_of(definition, table.source, "lib/host.py")


CTX_FORM = '''\
from typing import Any

import torch


class Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any):
        x, = args
        y = Norm.__forward(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, *grad_outputs):
        return grad_outputs
'''


def test_the_context_of_an_autograd_forward_is_no_parameter_callers_bind():
    old = _forward(_host(), "Norm.forward")
    new = _forward(CTX_FORM, "Norm.forward")
    assert [p.name for p in old.params] == ["*args", "**kwargs"]
    assert [p.name for p in new.params] == ["*args", "**kwargs"]  # ``*args: Any`` is still the splat
    assert [p.name for p in _forward(CTX_FORM, "Norm.backward").params] == ["ctx", "*grad_outputs"]


def test_the_first_parameter_of_a_forward_beside_setup_context_is_an_input():
    with_setup = CTX_FORM.replace("    @staticmethod\n    def backward",
                                  "    @staticmethod\n    def setup_context(ctx, inputs, output):\n"
                                  "        pass\n\n    @staticmethod\n    def backward")
    assert [p.name for p in _forward(with_setup, "Norm.forward").params] == ["ctx", "*args", "**kwargs"]
    plain = CTX_FORM.replace("class Norm(torch.autograd.Function):", "class Norm:")
    assert [p.name for p in _forward(plain, "Norm.forward").params] == ["ctx", "*args", "**kwargs"]


def test_an_autograd_forward_taking_ctx_in_place_of_setup_context_is_no_interface_gap(tmp_path):
    ctx_host = _host().replace(
        "    def forward(*args, **kwargs):\n        x, = args\n        return Norm.__forward(x)\n\n"
        "    @staticmethod\n    def setup_context(ctx, inputs, output):\n        ctx.save_for_backward(output)\n",
        "    def forward(ctx, *args, **kwargs):\n        x, = args\n        y = Norm.__forward(x)\n"
        "        ctx.save_for_backward(y)\n        return y\n")
    assert ctx_host != _host()
    tree = dict(TREE)
    tree["kernels/autograd.py"] = '''\
import torch

from kernels.norm import row_norm


class RowNorm(torch.autograd.Function):
    # portq: ports vllm:lib/host.py::Norm.forward
    @staticmethod
    def forward(*args, **kwargs):
        x, = args
        return row_norm(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
'''
    tree["engine/model.py"] = "from kernels.autograd import RowNorm\n\n\ndef run(x):\n    return RowNorm.apply(x)\n"
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/kernels.py": _kernels(), "lib/host.py": _host()}),
        CommitSpec("torch 1.13 form", files={"lib/host.py": ctx_host}),
    ], tree, matrix=MATRIX)
    forward = _symbol(verdicts[1], "Norm.forward")
    assert forward.verdict != REAL_GAP and "parameter-change" not in forward.rules, forward.reason
    assert forward.verdict == NEEDS_REVIEW, forward.reason  # the body changed: for a reader
    assert "autograd-context" in forward.rules
