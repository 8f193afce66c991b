"""A helper that upstream splits out of a ported definition, as a new definition the ported one now
calls (directly or through another new helper), is code the port runs: when a later commit moves that
helper's body elsewhere, the body is followed like the anchored definition's own (rule
``moved-callee-body``), so a change to it after the move is decided against the port, never a silent
not-ported. Only helpers added together with the call are followed: a definition added in the same
commit that the ported one does not call stays unfollowed."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row normalisation"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

KERNEL = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _norm_fwd(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(y_ptr + row * n_cols + cols, x / rms * w, mask=mask)
'''

BASE = '''\
import torch
import triton

from .kernel import _norm_fwd


def norm(x, w, eps):
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
'''

# the ported definition now calls a new helper in another file, which calls a second new one that launches
SPLIT = '''\
import torch

from .host import _norm_host


def norm(x, w, eps, memory_efficient=False):
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    return _norm_host(x, w, eps, memory_efficient)
'''

HOST = '''\
import torch
import triton

from .kernel import _norm_fwd


def _norm_host(x, w, eps, memory_efficient):
    y = torch.empty_like(x)
    saved = None if memory_efficient else torch.empty(x.size(0), device=x.device)
    _launch(x, w, y, saved)
    return y, saved


def _launch(x, w, y, saved):
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    if block < n_cols:
        raise ValueError("n_cols too large")
    _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=block)


def _unused_backward(dy, x, w):
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    if block < n_cols:
        raise ValueError("n_cols too large")
    return dy * w
'''

# the launch moves, unchanged, into a new module under another name
HOST_MOVED = '''\
import torch

from .launch import launch_norm


def _norm_host(x, w, eps, memory_efficient):
    y = torch.empty_like(x)
    saved = None if memory_efficient else torch.empty(x.size(0), device=x.device)
    launch_norm(x, w, y, saved)
    return y, saved
'''

LAUNCH = '''\
import triton

from .kernel import _norm_fwd


def launch_norm(x, w, y, saved):
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    if block < n_cols:
        raise ValueError("n_cols too large")
    _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=block)


def backward_norm(dy, x, w):
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    if block < n_cols:
        raise ValueError("n_cols too large")
    return dy * w
'''

ROWS_FROM_NUMEL = LAUNCH.replace(
    "    n_rows, n_cols = x.shape\n    block = triton.next_power_of_2(n_cols)\n    if block < n_cols:\n"
    "        raise ValueError(\"n_cols too large\")\n    _norm_fwd",
    "    n_cols = x.size(-1)\n    n_rows = x.numel() // n_cols\n    block = triton.next_power_of_2(n_cols)\n"
    "    if block < n_cols:\n        raise ValueError(\"n_cols too large\")\n    _norm_fwd")

BACKWARD_CHANGED = LAUNCH.replace("    return dy * w\n", "    return dy * w * 2\n")

TREE = {
    "kernels/rownorm.py": '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/kernel.py::_norm_fwd
@triton.jit
def row_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(y_ptr + row * n_cols + cols, x / rms * w, mask=mask)


# portq: ports vllm:ops/norm.py::norm
def row_norm(x, w, eps):
    y = torch.empty_like(x)
    rows = x.reshape(-1, x.size(-1))
    n_rows, n_cols = rows.shape
    row_norm_kernel[(n_rows,)](rows, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
''',
    "engine/model.py": "from kernels.rownorm import row_norm\n\n\ndef run(x, w):\n    return row_norm(x, w, 1e-6)\n",
}


def _history(last: dict[str, str], host: str = HOST) -> list[CommitSpec]:
    return [
        CommitSpec("base", files={"ops/kernel.py": KERNEL, "ops/norm.py": BASE}),
        CommitSpec("split the host code", files={"ops/norm.py": SPLIT, "ops/host.py": host}),
        CommitSpec("move the launch", files={"ops/host.py": HOST_MOVED, "ops/launch.py": LAUNCH}),
        CommitSpec("later change", files=last),
    ]


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_moved_launch_of_a_helper_split_out_of_a_ported_definition_stays_the_ports(tmp_path):
    verdicts, shas = classify_history(tmp_path, _history({"ops/launch.py": ROWS_FROM_NUMEL}), TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "launch_norm")
    assert later.verdict in FLAGGED, later.reason
    assert "moved-definition" in later.rules and "moved-callee-body" in later.rules, later.rules
    assert "norm" in later.reason and later.ports
    move = _symbol(verdicts[2], "_launch")
    lost = [e for e in move.evidence if e.kind == "anchor-lost"]
    assert lost and lost[0].message == f"anchor lost at {shas[2][:10]}: _launch moved to ops/launch.py::launch_norm?"


def test_a_helper_added_beside_the_split_that_the_ported_definition_never_calls_is_not_followed(tmp_path):
    verdicts, _ = classify_history(tmp_path, _history({"ops/launch.py": BACKWARD_CHANGED}), TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "backward_norm")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason
    assert "moved-callee-body" not in later.rules
