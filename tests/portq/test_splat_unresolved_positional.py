"""A launch upstream rewrites from keywords to positions, with splats of unknown length (``*k.stride()``, the
tensor's rank fixed nowhere in the launcher) between positional arguments: which parameter each argument after
the first such splat fills is unknown, so no parameter it may reach is one upstream "stopped passing". A new
positional argument before the splats, derived from an input's shape, against a port whose launch binds exactly
its own in-tree kernel's parameters and passes none upstream added, is then for a reader
(``positional-derived-argument``); the same argument filled from the launcher's own parameter (a caller's value)
stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops/mix.py"
MATRIX = """\
[[row]]
id       = "MIX"
title    = "A strided mixing kernel"
upstream = "vllm"
paths    = ["pkg/ops/mix.py"]
tree     = ["ported/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _mix_kernel(a_ptr, b_ptr, out_ptr, rows, a_s0, a_s1, flag, b_s0, b_s1, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs * a_s0, mask=offs < rows)
    b = tl.load(b_ptr + offs * b_s0, mask=offs < rows)
    tl.store(out_ptr + offs, a + b * flag, mask=offs < rows)


def mix(a, b, limit):
    rows = a.shape[0]
    out = torch.empty_like(a)
    _mix_kernel[(triton.cdiv(rows, 128),)](
        a_ptr=a, b_ptr=b, out_ptr=out, rows=rows,
        a_s0=a.stride(0), a_s1=a.stride(1), b_s0=b.stride(0), b_s1=b.stride(1),
        flag=1, BLOCK=128)
    return out
'''

# The kernel gains a cache key derived from the rows; the launch passes everything by position, the strides
# through splats whose length the launcher fixes nowhere.
AFTER = BEFORE.replace("out_ptr, rows, a_s0", "out_ptr, rows, rows_key, a_s0").replace(
    """        a_ptr=a, b_ptr=b, out_ptr=out, rows=rows,
        a_s0=a.stride(0), a_s1=a.stride(1), b_s0=b.stride(0), b_s1=b.stride(1),
        flag=1, BLOCK=128)""",
    """        a, b, out, rows, rows // 32,
        *a.stride(), 1, *b.stride(), 128)""")
# Unsound neighbour: the new positional argument is the launcher's own parameter, a value its callers pass.
HANDED_AFTER = AFTER.replace("rows, rows // 32,", "rows, limit,")

PORT = '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/mix.py::_mix_kernel
@triton.jit
def _mix_tile(x, y, o, n, sx, sy, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    a = tl.load(x + offs * sx, mask=offs < n)
    b = tl.load(y + offs * sy, mask=offs < n)
    tl.store(o + offs, a + b, mask=offs < n)


# portq: ports vllm:pkg/ops/mix.py::mix
def mix_rows(a, b):
    n = a.shape[0]
    out = torch.empty_like(a)
    _mix_tile[(triton.cdiv(n, 128),)](a, b, out, n, a.stride(0), b.stride(0), TILE=128)
    return out
'''


def _tree() -> dict[str, str]:
    caller = "from ported.mix import mix_rows\n\n\ndef step(a, b):\n    return mix_rows(a, b)\n"
    return {"ported/mix.py": PORT, "engine/step.py": caller}


def _launcher(verdict):
    return next(s for s in verdict.symbols if s.symbol == "mix")


def test_a_derived_positional_argument_beside_unresolved_splats_is_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(), matrix=MATRIX, message="mix")
    launcher = _launcher(verdict)
    assert launcher.verdict == NEEDS_REVIEW, launcher.reason
    assert "positional-derived-argument" in launcher.rules, launcher.rules


def test_a_callers_positional_argument_beside_unresolved_splats_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: HANDED_AFTER}, _tree(), matrix=MATRIX, message="mix")
    launcher = _launcher(verdict)
    assert launcher.verdict == REAL_GAP, launcher.reason
    assert "positional-derived-argument" not in launcher.rules, launcher.rules


# The same rewrite to positions, the launcher's own ``flag`` now passed between the splats: the port still
# passing it is not proven behind (``splat-unresolved-binding``).
FLAG_BEFORE = BEFORE.replace("flag=1, BLOCK=128)", "flag=limit, BLOCK=128)")
FLAG_AFTER = AFTER.replace("*a.stride(), 1, *b.stride(), 128)", "*a.stride(), limit, *b.stride(), 128)")
# Unsound neighbour: a keyword fixes where the splats end, so the binding resolves and the dropped flag is
# a dropped caller's value.
RESOLVED_AFTER = AFTER.replace("*a.stride(), 1, *b.stride(), 128)", "*a.stride(), *b.stride(), BLOCK=128)") \
    .replace("a_s1, flag, b_s0", "a_s1, b_s0")


def _tree_passing_flag() -> dict[str, str]:
    tree = _tree()
    tree["ported/mix.py"] = tree["ported/mix.py"].replace("sx, sy, TILE", "sx, sy, flag, TILE").replace(
        "a + b, mask", "a + b * flag, mask").replace("def mix_rows(a, b):", "def mix_rows(a, b, limit):").replace(
        "b.stride(0), TILE=128)", "b.stride(0), flag=limit, TILE=128)")
    tree["engine/step.py"] = tree["engine/step.py"].replace("mix_rows(a, b)", "mix_rows(a, b, 2)")
    return tree


def test_a_parameter_upstream_may_pass_through_an_unresolved_splat_is_not_proven_dropped(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: FLAG_BEFORE}, {HOST: FLAG_AFTER}, _tree_passing_flag(),
                              matrix=MATRIX, message="mix")
    launcher = _launcher(verdict)
    assert launcher.verdict == NEEDS_REVIEW, launcher.reason
    assert "splat-unresolved-binding" in launcher.rules, launcher.rules


def test_a_parameter_dropped_from_a_resolved_binding_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: FLAG_BEFORE}, {HOST: RESOLVED_AFTER}, _tree_passing_flag(),
                              matrix=MATRIX, message="mix")
    launcher = _launcher(verdict)
    assert launcher.verdict == REAL_GAP, launcher.reason
    assert "splat-unresolved-binding" not in launcher.rules, launcher.rules
