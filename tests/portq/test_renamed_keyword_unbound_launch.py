"""A launch of a kernel the launcher picks at run time (``impl = _a_kernel if flag else _b_kernel``), so no
one definition binds its arguments: upstream renames a keyword with the kernel's parameter, passing the same
value (``Dst=out`` becoming ``dst_ptr=out``). A name alone asks nothing of the port's launch, as for a launch
whose kernel binds (``launch-arguments`` reads the pair as renamed, in sync); a new keyword passing another
value (a caller's) stays a gap."""
from __future__ import annotations

from portq.core.model import REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops/norm.py"
MATRIX = """\
[[row]]
id       = "NORM"
title    = "A row normalisation"
upstream = "vllm"
paths    = ["pkg/ops/norm.py"]
tree     = ["ported/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _plain_kernel(Dst, X, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + tl.program_id(0) * N + offs, mask=offs < N)
    tl.store(Dst + tl.program_id(0) * N + offs, x, mask=offs < N)


@triton.jit
def _scaled_kernel(Dst, X, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + tl.program_id(0) * N + offs, mask=offs < N)
    tl.store(Dst + tl.program_id(0) * N + offs, x * 2, mask=offs < N)


def normalise(x, scaled, dest):
    rows, n = x.shape
    out = torch.empty_like(x)
    impl = _scaled_kernel if scaled else _plain_kernel
    impl[(rows,)](Dst=out, X=x, N=n, BLOCK=1024)
    return out
'''

# The kernels' parameters renamed, the launch's keywords with them, every value the same.
AFTER = BEFORE.replace("(Dst, X, N, BLOCK", "(dst_ptr, x_ptr, WIDTH, BLOCK").replace(
    "tl.load(X + tl.program_id(0) * N + offs, mask=offs < N)",
    "tl.load(x_ptr + tl.program_id(0) * WIDTH + offs, mask=offs < WIDTH)").replace(
    "tl.store(Dst + tl.program_id(0) * N + offs", "tl.store(dst_ptr + tl.program_id(0) * WIDTH + offs").replace(
    "mask=offs < N)", "mask=offs < WIDTH)").replace(
    "impl[(rows,)](Dst=out, X=x, N=n, BLOCK=1024)", "impl[(rows,)](dst_ptr=out, x_ptr=x, WIDTH=n, BLOCK=1024)")
# Unsound neighbour: the renamed output keyword now passes the launcher's own parameter, a caller's value.
HANDED_AFTER = AFTER.replace("dst_ptr=out, x_ptr", "dst_ptr=dest, x_ptr")

PORT = '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/norm.py::_plain_kernel
@triton.jit
def _row_copy(o, x, n, TILE: tl.constexpr):
    offs = tl.arange(0, TILE)
    v = tl.load(x + tl.program_id(0) * n + offs, mask=offs < n)
    tl.store(o + tl.program_id(0) * n + offs, v, mask=offs < n)


# portq: ports vllm:pkg/ops/norm.py::normalise
# portq: not-carried vllm:pkg/ops/norm.py::_scaled_kernel -- one kernel only
def normalise_rows(x):
    rows, n = x.shape
    out = torch.empty_like(x)
    _row_copy[(rows,)](out, x, n, TILE=1024)
    return out
'''


def _tree() -> dict[str, str]:
    caller = "from ported.norm import normalise_rows\n\n\ndef step(x):\n    return normalise_rows(x)\n"
    return {"ported/norm.py": PORT, "engine/step.py": caller}


def _launcher(verdict):
    return next(s for s in verdict.symbols if s.symbol == "normalise")


def test_a_keyword_renamed_with_the_same_value_at_an_unbound_launch_is_no_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(), matrix=MATRIX, message="norm")
    launcher = _launcher(verdict)
    assert launcher.verdict != REAL_GAP, launcher.reason
    assert "now passes output" not in launcher.reason, launcher.reason


def test_a_renamed_keyword_passing_a_callers_value_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: HANDED_AFTER}, _tree(), matrix=MATRIX,
                              message="norm")
    launcher = _launcher(verdict)
    assert launcher.verdict == REAL_GAP, launcher.reason
