"""``if FLAG:`` directly followed by ``if not FLAG:`` becoming ``if FLAG: ... else: ...``
(``complementary-test``): when ``FLAG`` is a parameter of the enclosing function that the first
block never rebinds, the second test is exactly the negation of the first, evaluated on the same
value, so exactly one block runs either way: the same control flow, cosmetic. A flag the first
block rebinds, a test that is no parameter (a global some call may rebind), or a test that calls
something stays compared."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

HOST = "pkg/ops/rows.py"

BEFORE = '''import triton
import triton.language as tl


@triton.jit
def _rows_kernel(x_ptr, out_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    if not EVEN:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)
'''

AFTER = BEFORE.replace("    if not EVEN:\n", "    else:\n")

TREE = {"kernels/rows/rows.py": '''import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/rows.py::_rows_kernel
@triton.jit
def _double(x_ptr, out_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)
'''}

MATRIX = """\
[[row]]
id       = "ROWS"
title    = "rows"
upstream = "vllm"
paths    = ["pkg/ops/rows.py"]
tree     = ["kernels/rows/"]
"""


def _kernel(tmp_path, before, after):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={HOST: before}),
                                              CommitSpec("edit", files={HOST: after})], TREE, MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "_rows_kernel")


def test_a_negated_test_after_the_same_test_becoming_else_is_cosmetic(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, AFTER)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "complementary-test" in kernel.rules, kernel.rules


def test_the_other_order_is_cosmetic_too(tmp_path):
    before = BEFORE.replace("    if EVEN:\n", "    if not EVEN:\n").replace(
        "    if not EVEN:\n        mask", "    if EVEN:\n        mask")
    after = before.replace("    if EVEN:\n        mask", "    else:\n        mask")
    kernel = _kernel(tmp_path, before, after)
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason


def test_a_flag_the_first_block_rebinds_is_still_compared(tmp_path):
    before = BEFORE.replace("        x = tl.load(x_ptr + offs)\n", "        x = tl.load(x_ptr + offs)\n        EVEN = False\n")
    after = before.replace("    if not EVEN:\n", "    else:\n")
    kernel = _kernel(tmp_path, before, after)
    assert kernel.verdict == NEEDS_REVIEW and "complementary-test" not in kernel.rules, kernel.reason


def test_a_test_that_is_no_parameter_is_still_compared(tmp_path):
    before = BEFORE.replace("EVEN", "WIDE").replace("n, WIDE: tl.constexpr, ", "n, ")
    after = before.replace("    if not WIDE:\n", "    else:\n")
    kernel = _kernel(tmp_path, before, after)
    assert kernel.verdict == NEEDS_REVIEW and "complementary-test" not in kernel.rules, kernel.reason


def test_a_test_that_calls_something_is_still_compared(tmp_path):
    before = BEFORE.replace("if EVEN:", "if even(n):").replace("if not EVEN:", "if not even(n):")
    after = before.replace("    if not even(n):\n", "    else:\n")
    kernel = _kernel(tmp_path, before, after)
    assert kernel.verdict == NEEDS_REVIEW and "complementary-test" not in kernel.rules, kernel.reason
