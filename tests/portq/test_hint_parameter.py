"""A Triton kernel that gains a compile-time parameter with a default that its body reads only as a memory
hint (the ``eviction_policy`` or ``cache_modifier`` of a load or store): whatever value it takes, the kernel
computes the same values, and no launch must pass it, so the port lacking it computes what upstream computes;
only how fast may differ, for a reader (``hint-parameter``, NEEDS_REVIEW). The same parameter read in the
kernel's arithmetic, or one without a default (every launch must now pass it), stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

KERNELS = "pkg/ops/scale.py"
MATRIX = """\
[[row]]
id       = "SC"
title    = "A row scaling kernel"
upstream = "vllm"
paths    = ["pkg/ops/scale.py"]
tree     = ["ported/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * s, mask=offs < n)
'''

AFTER = BEFORE.replace("s, BLOCK: tl.constexpr):", "s, BLOCK: tl.constexpr, EVICT: tl.constexpr = \"\"):").replace(
    "mask=offs < n)\n    tl.store", "mask=offs < n, eviction_policy=EVICT)\n    tl.store")
# Unsound neighbours: the parameter has no default, so every launch must now pass it; or it is read as a value.
REQUIRED_AFTER = AFTER.replace('EVICT: tl.constexpr = ""', "EVICT: tl.constexpr")
VALUE_AFTER = BEFORE.replace("s, BLOCK: tl.constexpr):", "s, BLOCK: tl.constexpr, BIAS: tl.constexpr = 0):").replace(
    "x * s, mask", "x * s + BIAS, mask")

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/scale.py::_scale_kernel
@triton.jit
def _scale_rows(x, o, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    tl.store(o + offs, v * s, mask=offs < n)


def scale(x, o, n, s):
    _scale_rows[(triton.cdiv(n, 128),)](x, o, n, s, BLOCK=128)
    return o
'''


def _kernel(tmp_path, after):
    tree = {"ported/scale.py": PORT,
            "engine/step.py": "from ported.scale import scale\n\n\ndef step(x, o):\n    return scale(x, o, 4, 2.0)\n"}
    verdict = classify_commit(tmp_path, {KERNELS: BEFORE}, {KERNELS: after}, tree, matrix=MATRIX, message="evict")
    return next(s for s in verdict.symbols if s.symbol == "_scale_kernel")


def test_a_defaulted_parameter_read_only_as_an_eviction_hint_is_for_a_reader(tmp_path):
    kernel = _kernel(tmp_path, AFTER)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "hint-parameter" in kernel.rules, kernel.rules


def test_a_compile_time_parameter_every_launch_must_pass_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, REQUIRED_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "hint-parameter" not in kernel.rules, kernel.rules


def test_a_defaulted_parameter_read_as_a_value_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, VALUE_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "hint-parameter" not in kernel.rules, kernel.rules
