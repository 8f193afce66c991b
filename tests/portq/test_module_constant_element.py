"""A Triton kernel whose whole change writes a constant through an element of a module-level table
the upstream tree defines (``triton.language.constexpr(1)`` becoming ``lang.axis[1]``, where
``axis = [triton.language.constexpr(i) for i in range(3)]`` is bound once in a module the kernel's
import reaches through a re-export): the element is that same expression, so the change is cosmetic
(``module-constant-element``). Another index, a table the module binds or changes again, an element
whose names the table's module binds differently, or any other change stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

KERNEL = "pkg/kern.py"
MATRIX = """\
[[row]]
id       = "KERN"
title    = "A reduction kernel"
upstream = "vllm"
paths    = ["pkg/kern.py"]
tree     = ["vendored/", "engine/"]
tests    = ["tests/"]
"""

KERN = '''\
import triton

from pkg import lang


@triton.jit
def row_max(x_ptr, n, BLOCK: triton.language.constexpr):
    offs = triton.language.arange(0, BLOCK)
    x = triton.language.load(x_ptr + offs, offs < n)
    return triton.language.max(x, triton.language.constexpr(1))
'''
KERN_AFTER = KERN.replace("triton.language.constexpr(1))", "lang.axis[1])")
LANG_INIT = "from .constant import *\nfrom .function import *\n"
FUNCTION = "import triton\n\n\ndef twice(x):\n    return x * 2\n"
CONSTANT = "import triton\n\naxis = [triton.language.constexpr(i) for i in range(3)]\n"


def _entry(tmp_path, kern_after=KERN_AFTER, constant=CONSTANT, function=FUNCTION):
    tree = {"vendored/kern.py": KERN.replace("\n@triton.jit\ndef row_max(",
                                             f"\n# portq: ports vllm:{KERNEL}::row_max\n@triton.jit\ndef row_max("),
            "engine/use.py": "from vendored.kern import row_max\n\n\ndef run(x):\n    return row_max[(1,)](x, 8, 8)\n"}
    base = {KERNEL: KERN, "pkg/lang/__init__.py": LANG_INIT, "pkg/lang/constant.py": CONSTANT, "pkg/__init__.py": "",
            "pkg/lang/function.py": FUNCTION}
    return classify_commit(tmp_path, base, {**base, KERNEL: kern_after, "pkg/lang/constant.py": constant,
                                                "pkg/lang/function.py": function}, tree,
                           matrix=MATRIX, message="spell the axis")


def test_an_element_of_a_module_table_equal_to_the_old_expression_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic", verdict.justification
    kernel = next(s for s in verdict.symbols if s.symbol == "row_max")
    assert "module-constant-element" in kernel.rules, kernel.rules
    assert "lang.axis[1]" in kernel.reason, kernel.reason


def test_another_index_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, KERN.replace("triton.language.constexpr(1))", "lang.axis[2])"))
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_table_the_module_changes_again_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, constant=CONSTANT + "axis[1] = triton.language.constexpr(0)\n")
    assert verdict.verdict in FLAGGED, verdict.reason


def test_an_element_whose_names_the_table_module_binds_differently_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, constant=CONSTANT.replace("import triton\n", "import mylib as triton\n"))
    assert verdict.verdict in FLAGGED, verdict.reason


def test_another_change_beside_the_element_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, KERN_AFTER.replace("offs < n)", "offs < n, other=0)"))
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_table_two_star_imports_could_supply_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, function=FUNCTION + "\naxis = [0, 1, 2]\n")
    assert verdict.verdict in FLAGGED, verdict.reason
