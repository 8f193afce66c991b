"""A Triton kernel that gains a compile-time parameter with a literal default read only as the whole condition
of ``if`` statements (a selector of alternative code), where on the path the default selects every such ``if``
runs code the kernel already had (an ``else`` keeping an old line, or nothing for an ``if`` that only adds
code) and the paths it does not select hold only new code: at the default the kernel computes what it
computed before, and no launch must pass it, so the port lacking it is an interface addition for a reader
(``default-selector-parameter``, NEEDS_REVIEW). A default that selects new code, a non-selected path that
takes away an old line, or a parameter read as a value stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

KERNELS = "pkg/ops/shift.py"
MATRIX = """\
[[row]]
id       = "SH"
title    = "A row shifting kernel"
upstream = "vllm"
paths    = ["pkg/ops/shift.py"]
tree     = ["ported/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import triton
import triton.language as tl


@triton.jit
def _shift_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ptrs = x_ptr + offs
    x = tl.load(ptrs, mask=offs < n)
    tl.store(out_ptr + offs, x + s, mask=offs < n)
'''

AFTER = BEFORE.replace("s, BLOCK: tl.constexpr):", "s, BLOCK: tl.constexpr, WIDE: tl.constexpr = False):").replace(
    "    ptrs = x_ptr + offs\n",
    "    if(WIDE):\n        ptrs = x_ptr + offs * 2\n    else:\n        ptrs = x_ptr + offs\n").replace(
    "    tl.store(", "    if WIDE:\n        x = x.to(tl.float32)\n    tl.store(")
# Unsound neighbours: the default selects the new code; the non-selected path takes an old line away; the
# parameter is read as a value too.
NEW_DEFAULT_AFTER = AFTER.replace("WIDE: tl.constexpr = False", "WIDE: tl.constexpr = True")
DROPPED_AFTER = BEFORE.replace("s, BLOCK: tl.constexpr):", "s, BLOCK: tl.constexpr, WIDE: tl.constexpr = False):") \
    .replace("    ptrs = x_ptr + offs\n", "    if(WIDE):\n        ptrs = x_ptr + offs\n    else:\n        ptrs = x_ptr\n")
VALUE_AFTER = AFTER.replace("x + s, mask", "x + s + WIDE, mask")
# A tuning config of the file names it: the tuner may run the kernel at another value than the default.
TUNED_AFTER = AFTER.replace("@triton.jit", "@triton.autotune(configs=[triton.Config({'WIDE': True})], key=['n'])\n@triton.jit")

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/shift.py::_shift_kernel
@triton.jit
def _shift_rows(x, o, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ptrs = x + offs
    v = tl.load(ptrs, mask=offs < n)
    tl.store(o + offs, v + s, mask=offs < n)


def shift(x, o, n, s):
    _shift_rows[(triton.cdiv(n, 128),)](x, o, n, s, BLOCK=128)
    return o
'''


def _kernel(tmp_path, after):
    tree = {"ported/shift.py": PORT,
            "engine/step.py": "from ported.shift import shift\n\n\ndef step(x, o):\n    return shift(x, o, 4, 2.0)\n"}
    verdict = classify_commit(tmp_path, {KERNELS: BEFORE}, {KERNELS: after}, tree, matrix=MATRIX, message="wide")
    return next(s for s in verdict.symbols if s.symbol == "_shift_kernel")


def test_a_defaulted_selector_whose_default_path_is_the_old_code_is_for_a_reader(tmp_path):
    kernel = _kernel(tmp_path, AFTER)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "default-selector-parameter" in kernel.rules, kernel.rules


def test_a_defaulted_selector_whose_default_selects_new_code_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, NEW_DEFAULT_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "default-selector-parameter" not in kernel.rules, kernel.rules


def test_a_defaulted_selector_whose_other_path_takes_an_old_line_away_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, DROPPED_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "default-selector-parameter" not in kernel.rules, kernel.rules


def test_a_defaulted_selector_also_read_as_a_value_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, VALUE_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "default-selector-parameter" not in kernel.rules, kernel.rules


def test_a_defaulted_selector_a_tuning_config_names_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, TUNED_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "default-selector-parameter" not in kernel.rules, kernel.rules
