"""A port with names of its own lacks the parameters upstream added since the range's base
(issue 24; ``lacked-branch``).

A re-implementation anchors an upstream host function under parameter names of
its own (``quantize(a, b, rows)`` for ``quant(x, y, BLOCK)``). Its inputs are the
upstream parameters in those positions at the range's base, where the port is
taken as in sync; a parameter upstream adds later (``shift=None``) is one the port
lacks, at its default. A later change only inside the branch that parameter
decides (``if shift is not None:``) lies in a path the port does not have:
NOT_APPLICABLE/not-carried. A change outside the branch, or a port whose
positions bind the parameter (it was there at the base), stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BASE = '''import torch
import triton
import triton.language as tl


@triton.jit
def quant_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N).to(tl.int8), mask=offs < N)


def quant(x, y, BLOCK=128):
    out = torch.empty_like(x, dtype=torch.int8)
    n = x.numel()
    quant_kernel[(n // BLOCK + 1,)](x, out, n, BLOCK=BLOCK)
    return out, y
'''

WITH_SHIFT = BASE.replace("def quant(x, y, BLOCK=128):\n", "def quant(x, y, shift=None, BLOCK=128):\n    if shift is not None:\n"
                                                           "        x -= shift\n")
IN_BRANCH = WITH_SHIFT.replace("        x -= shift\n", "        x = x - shift\n")

PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::quant_kernel
@triton.jit
def _codes(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N).to(tl.int8), mask=offs < N)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::quant
def quantize(a, b, rows=128):
    out = torch.empty_like(a, dtype=torch.int8)
    n = a.numel()
    _codes[(n // rows + 1,)](a, out, n, BLOCK=rows)
    return out, b
'''


def _host(tmp_path, base, middle, after, port=PORT):
    tree = {"kernels/mla_prefix/quant.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.quant import quantize\n\n\n"
                                            "def apply(x, y):\n    return quantize(x, y, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: base}),
                                              CommitSpec("add shift", files={OPS: middle}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[2].symbols if s.symbol == "quant")


def test_a_change_in_the_branch_of_a_parameter_added_since_the_base_is_not_carried(tmp_path):
    host = _host(tmp_path, BASE, WITH_SHIFT, IN_BRANCH)
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "lacked-branch" in host.rules
    assert "shift" in host.reason


def test_a_change_outside_the_branch_is_compared(tmp_path):
    after = IN_BRANCH.replace("    out = torch.empty_like(x, dtype=torch.int8)\n",
                              "    out = torch.zeros_like(x, dtype=torch.int8)\n")
    host = _host(tmp_path, BASE, WITH_SHIFT, after)
    assert host.verdict != NOT_APPLICABLE, host.reason


def test_a_parameter_the_port_binds_by_position_at_the_base_is_compared(tmp_path):
    base = WITH_SHIFT
    middle = WITH_SHIFT.replace("    n = x.numel()\n", "    n = x.numel()  # elements\n")
    port = PORT.replace("def quantize(a, b, rows=128):", "def quantize(a, b, mean=None, rows=128):")
    host = _host(tmp_path, base, middle, IN_BRANCH, port)
    assert host.verdict != NOT_APPLICABLE, host.reason
