"""A kernel's metadata stride renamed in place and a second stride of the same tensor added, both passed by
position, against a port whose kernel names every parameter its own way and whose autotuner fills the tile
sizes (compile-time parameters the launch never passes). The port's launch still binds exactly its own
kernel's run-time parameters (a compile-time one a tuner fills needs no argument), and the parameter upstream
renamed in place is no parameter it stopped passing (another takes its position), so the port's launch and
its kernel are one pair at upstream's old shape: the new stride, computed from a tensor the kernel already
receives, is for a reader (``positional-derived-argument``, NEEDS_REVIEW). The same new argument filled from
the launcher's own parameter (a value its callers supply) stays a gap; so does a port whose kernel has a
run-time parameter its launch does not pass (no tuner can fill it: the launch does not bind its kernel)."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops/dequant.py"
MATRIX = """\
[[row]]
id       = "DQ"
title    = "A dequantising row scaler"
upstream = "vllm"
paths    = ["pkg/ops/dequant.py"]
tree     = ["ported/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _dq_kernel(q_ptr, s_ptr, out_ptr, rows, stride_q, stride_meta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs * stride_q, mask=offs < rows)
    s = tl.load(s_ptr + offs * stride_meta, mask=offs < rows)
    tl.store(out_ptr + offs, q * s, mask=offs < rows)


def dequant(q, s, limit):
    rows = q.shape[0]
    out = torch.empty_like(s)
    _dq_kernel[(triton.cdiv(rows, 128),)](q, s, out, rows, q.stride(0), s.stride(0), 128)
    return out
'''

AFTER = BEFORE.replace("stride_q, stride_meta, BLOCK", "stride_q, stride_meta_g, stride_meta_n, BLOCK").replace(
    "offs * stride_meta, mask", "offs * stride_meta_g + stride_meta_n, mask").replace(
    "q.stride(0), s.stride(0), 128)", "q.stride(0), s.stride(0), s.stride(1), 128)")
# Unsound neighbour: the new positional argument is the launcher's own parameter, a value its callers pass.
HANDED_AFTER = AFTER.replace("s.stride(0), s.stride(1), 128)", "s.stride(0), limit, 128)")

PORT = '''\
import torch
import triton
import triton.language as tl


def _tiles():
    return [triton.Config({"TILE": 64}), triton.Config({"TILE": 128})]


# portq: ports vllm:pkg/ops/dequant.py::_dq_kernel
@triton.autotune(configs=_tiles(), key=["n"])
@triton.jit
def _dq_tile(qw, sc, o, n, sq, sm, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    q = tl.load(qw + offs * sq, mask=offs < n)
    s = tl.load(sc + offs * sm, mask=offs < n)
    tl.store(o + offs, q * s, mask=offs < n)


# portq: ports vllm:pkg/ops/dequant.py::dequant
def dequant_rows(q, s):
    n = q.shape[0]
    out = torch.empty_like(s)
    _dq_tile[lambda meta: (triton.cdiv(n, meta["TILE"]),)](q, s, out, n, q.stride(0), s.stride(0))
    return out
'''


def _tree(port: str = PORT) -> dict[str, str]:
    caller = "from ported.dequant import dequant_rows\n\n\ndef step(q, s):\n    return dequant_rows(q, s)\n"
    return {"ported/dequant.py": port, "engine/step.py": caller}


def _launcher(verdict):
    return next(s for s in verdict.symbols if s.symbol == "dequant")


def test_a_derived_stride_added_by_position_beside_an_in_place_rename_is_for_a_reader(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(), matrix=MATRIX, message="dq")
    launcher = _launcher(verdict)
    assert launcher.verdict == NEEDS_REVIEW, launcher.reason
    assert "positional-derived-argument" in launcher.rules, launcher.rules


def test_a_callers_value_added_by_position_stays_a_gap(tmp_path):
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: HANDED_AFTER}, _tree(), matrix=MATRIX, message="dq")
    launcher = _launcher(verdict)
    assert launcher.verdict == REAL_GAP, launcher.reason
    assert "positional-derived-argument" not in launcher.rules, launcher.rules


def test_a_port_whose_launch_leaves_a_run_time_parameter_unbound_stays_a_gap(tmp_path):
    unbound = PORT.replace("o, n, sq, sm, TILE", "o, n, sq, sm, eps, TILE")
    verdict = classify_commit(tmp_path, {HOST: BEFORE}, {HOST: AFTER}, _tree(unbound), matrix=MATRIX, message="dq")
    launcher = _launcher(verdict)
    assert launcher.verdict == REAL_GAP, launcher.reason
    assert "positional-derived-argument" not in launcher.rules, launcher.rules
