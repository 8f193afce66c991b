"""A module-private binding removed together with every use of it (docs/tricky-cases.md,
"constants removed with their readers"): ``_ENABLED = tl.constexpr(1)`` goes, and so does each
``FLAG == _ENABLED`` that read it. The new module never names ``_ENABLED``, so every definition that
read it is changed by the same commit and compared in its own right, with the old side's
value; the removal itself changes nothing else (``removed-binding-use``). A binding whose
value changes, a public name another module may import, or a name the new module still
uses stays flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, then the edit
(entry 1)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ROWS"
title    = "Row scaling"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

BASE = '''\
import torch
import triton
import triton.language as tl

_ENABLED: tl.constexpr = tl.constexpr(1)
_DISABLED: tl.constexpr = tl.constexpr(0)


@triton.jit
def _scale_kernel(x_ptr, n, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if SQUARE == _ENABLED:
        x = x * x
    tl.store(x_ptr + offs, x * 2, mask=offs < n)


def scale(x, square=False):
    _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), SQUARE=square, BLOCK=256)
    return x
'''

EDIT = BASE.replace("_ENABLED: tl.constexpr = tl.constexpr(1)\n_DISABLED: tl.constexpr = tl.constexpr(0)\n", "") \
    .replace("if SQUARE == _ENABLED:", "if SQUARE:")

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/rows.py::_scale_kernel
@triton.jit
def double_kernel(x_ptr, n, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if SQUARE == 1:
        x = x * x
    tl.store(x_ptr + offs, x * 2, mask=offs < n)


# portq: ports vllm:ops/rows.py::scale
def double(x, square=False):
    double_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), SQUARE=square, BLOCK=256)
    return x
'''

ENGINE = "from kernels.rows import double\n\n\ndef step(x):\n    return double(x)\n"


def _edit(tmp_path, before, after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": before}),
        CommitSpec("edit", files={"ops/rows.py": after}),
    ], {"kernels/rows.py": PORT, "engine/step.py": ENGINE}, matrix=MATRIX)
    return verdicts[1]


def _module(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>")


def test_private_constants_removed_with_every_reader_are_decided_with_the_readers(tmp_path):
    verdict = _edit(tmp_path, BASE, EDIT)
    module = _module(verdict)
    assert (module.verdict, module.justification, module.rules) == \
        (NOT_APPLICABLE, "not-ported", ["removed-binding-use"]), module.reason
    assert "_ENABLED" in module.reason and "_scale_kernel" in module.reason


def test_a_constant_whose_value_changes_is_flagged(tmp_path):
    module = _module(_edit(tmp_path, BASE, BASE.replace("tl.constexpr(1)", "tl.constexpr(2)")))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-binding-use" not in module.rules


def test_a_public_name_another_module_may_import_is_flagged(tmp_path):
    before = BASE.replace("_ENABLED", "ENABLED")
    module = _module(_edit(tmp_path, before, EDIT))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-binding-use" not in module.rules


def test_a_name_the_new_module_still_reads_is_flagged(tmp_path):
    after = EDIT.replace("    return x\n", "    return x if _ENABLED else None\n")
    module = _module(_edit(tmp_path, BASE, after))
    assert module.verdict in FLAGGED, module.reason
    assert "removed-binding-use" not in module.rules
