"""A Triton kernel that gains a compile-time parameter with a default (an eviction policy its loads take),
which no launch needs to pass: every launch the port makes still compiles, with the default, so the port's
launches and callers need not change; what the default selects is a change of the kernel's body for a reader
(``defaulted-kernel-constexpr``, NEEDS_REVIEW). Whether a launch now passes it is the launch's comparison.
The same parameter without a default, which every launch must now pass, stays a gap."""
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
# Unsound neighbour: the parameter has no default, so every launch must now pass it.
REQUIRED_AFTER = AFTER.replace('EVICT: tl.constexpr = ""', "EVICT: tl.constexpr")

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


def test_a_compile_time_parameter_with_a_default_is_for_a_reader(tmp_path):
    kernel = _kernel(tmp_path, AFTER)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "defaulted-kernel-constexpr" in kernel.rules, kernel.rules


def test_a_compile_time_parameter_every_launch_must_pass_stays_a_gap(tmp_path):
    kernel = _kernel(tmp_path, REQUIRED_AFTER)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "defaulted-kernel-constexpr" not in kernel.rules, kernel.rules
