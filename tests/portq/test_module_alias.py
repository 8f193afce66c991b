"""A module named through an alias that binds exactly that module
(``import triton.language as tl``, then ``tl.load`` for
``triton.language.load``) is the same program (rule ``module-alias``); an
alias that may bind something else stays flagged."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from portq.classifier.rules.form import same_modulo_module_aliases
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "SCALE"
title    = "Row scaling"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

LONG = '''\
import triton
{extra}

@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: triton.language.constexpr):
    row = triton.language.program_id(0)
    cols = triton.language.arange(0, BLOCK)
    x = triton.language.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    triton.language.store(y_ptr + row * n + cols, x * 2.0, mask=cols < n)
'''

SHORT = '''\
import triton
{alias}
{extra}

@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(
        x_ptr + row * n + cols, mask=cols < n, other=0.0
    )
    tl.store(y_ptr + row * n + cols, x * 2.0, mask=cols < n)
'''

TREE = {
    "kernels/scale.py": '''\
import triton
import triton.language as tl


# portq: ports vllm:lib/scale.py::scale
@triton.jit
def scale_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * n + cols, x * 2.0, mask=cols < n)


def run_scale(x):
    y = x.new_empty(x.shape)
    scale_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return y
''',
    "engine/model.py": "from kernels.scale import run_scale\n\n\ndef run(x):\n    return run_scale(x)\n",
}


def _scale(tmp_path, after: str):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/scale.py": LONG.format(extra="")}),
        CommitSpec("alias", files={"lib/scale.py": after}),
    ], TREE, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale")


def test_a_module_written_through_an_alias_binding_exactly_it_is_cosmetic(tmp_path):
    kernel = _scale(tmp_path, SHORT.format(alias="import triton.language as tl", extra=""))
    assert kernel.verdict == NOT_APPLICABLE and kernel.justification == "cosmetic", kernel.reason
    assert "module-alias" in kernel.rules


def test_an_alias_rebound_elsewhere_in_the_module_stays_flagged(tmp_path):
    kernel = _scale(tmp_path, SHORT.format(alias="import triton.language as tl",
                                           extra="if triton.__version__ < '3':\n    tl = triton.language.extra\n"))
    assert kernel.verdict in FLAGGED and "module-alias" not in kernel.rules, kernel.reason


def test_an_alias_from_a_from_import_may_bind_an_attribute_and_stays_flagged(tmp_path):
    kernel = _scale(tmp_path, SHORT.format(alias="from triton import language as tl", extra=""))
    assert kernel.verdict in FLAGGED and "module-alias" not in kernel.rules, kernel.reason


def test_an_alias_of_another_module_or_a_shadowed_root_is_not_the_module():
    old = LONG.format(extra="")
    body_old = old[old.index("@triton.jit"):]
    other = SHORT.format(alias="import triton.language.extra as tl", extra="")
    assert same_modulo_module_aliases(body_old, other[other.index("@triton.jit"):], old, other) == []
    shadowed = SHORT.format(alias="import triton.language as tl", extra="triton = None\n")
    assert same_modulo_module_aliases(body_old, shadowed[shadowed.index("@triton.jit"):], old, shadowed) == []
    same = SHORT.format(alias="import triton.language as tl", extra="")
    assert same_modulo_module_aliases(body_old, same[same.index("@triton.jit"):], old, same) == ["tl"]
    body_same = same[same.index("@triton.jit"):]
    assert same_modulo_module_aliases(body_same, body_same, same, same) == []  # no alias needed: cosmetic-ast
