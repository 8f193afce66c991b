"""A write to a parameter the port lacks is left out by ``lacked-branch`` only where nothing the port keeps reads
it afterwards (docs/tricky-cases.md, "a value the host stops forcing"): a host that forces a lacked input to a
value on the port's path, and passes it on to its launch, sets what the port's path computes, so a commit that
stops forcing it (or forces another value) is the port's change: flagged. A write whose every later read sits in
a branch the port's values leave out is still set aside.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

HOST = "pkg/ops/scaled_mm.py"

HOST_BEFORE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, sa_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.load(a_ptr + offs, mask=offs < n, other=0.0) * tl.load(b_ptr + offs, mask=offs < n, other=0.0)
    if MODE == 1:
        acc = acc * tl.load(sa_ptr)
    tl.store(c_ptr + offs, acc, mask=offs < n)


def mm_forward(a, b, scale_a, mode, trace):
    c = torch.empty_like(a)
    if scale_a is not None:
        stride_sa = scale_a.stride(0)
    else:
        stride_sa = None
        mode = 0
    if trace:
        mode = 2
    _mm_kernel[(1,)](a, b, c, scale_a, a.numel(), MODE=mode, BLOCK=1024)
    return c
'''

# The port runs the unscaled path only: it has neither scale_a nor mode nor trace.
HOST_TREE = {"kernels/mm/mm.py": '''import torch
import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/scaled_mm.py::_mm_kernel
@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, sa_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.load(a_ptr + offs, mask=offs < n, other=0.0) * tl.load(b_ptr + offs, mask=offs < n, other=0.0)
    if MODE == 1:
        acc = acc * tl.load(sa_ptr)
    tl.store(c_ptr + offs, acc, mask=offs < n)


# portq: ports vllm:pkg/ops/scaled_mm.py::mm_forward
def mm_forward(a, b):
    c = torch.empty_like(a)
    _mm_kernel[(1,)](a, b, c, None, a.numel(), MODE=0, BLOCK=1024)
    return c
''', "kernels/mm/engine.py": "from portq_kernels.mm.mm import mm_forward\n\n\n"
     "def run(a, b):\n    return mm_forward(a, b)\n"}


def _host(tmp_path, after, before=HOST_BEFORE):
    return classify_commit(tmp_path, {HOST: before}, {HOST: after}, HOST_TREE, message="edit")


def _where(verdict):
    return [(s.symbol, s.verdict, s.justification, s.reason) for s in verdict.symbols]


def test_a_host_that_stops_forcing_a_value_its_launch_reads_is_flagged(tmp_path):
    verdict = _host(tmp_path, HOST_BEFORE.replace("        mode = 0\n", ""))
    assert verdict.verdict == NEEDS_REVIEW, _where(verdict)
    assert "lacked-branch" not in verdict.rules, verdict.rules


def test_a_host_that_forces_another_value_its_launch_reads_is_flagged(tmp_path):
    verdict = _host(tmp_path, HOST_BEFORE.replace("        mode = 0\n", "        mode = 1\n"))
    assert verdict.verdict == NEEDS_REVIEW, _where(verdict)
    assert "lacked-branch" not in verdict.rules, verdict.rules


def test_a_forced_value_only_a_branch_the_port_lacks_reads_is_still_set_aside(tmp_path):
    before = HOST_BEFORE.replace("def mm_forward(a, b, scale_a, mode, trace):",
                                 "def mm_forward(a, b, scale_a, mode, trace, fused=False):") \
        .replace("    _mm_kernel[(1,)](a, b, c, scale_a, a.numel(), MODE=mode, BLOCK=1024)\n",
                 "    if fused:\n        _mm_kernel[(1,)](a, b, c, scale_a, a.numel(), MODE=mode, BLOCK=1024)\n"
                 "    else:\n        _mm_kernel[(1,)](a, b, c, None, a.numel(), MODE=0, BLOCK=1024)\n") \
        .replace("    if trace:\n        mode = 2\n", "")
    after = before.replace("        mode = 0\n", "        mode = 1\n")
    verdict = _host(tmp_path, after, before)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), _where(verdict)
    assert "lacked-branch" in verdict.rules, verdict.rules
