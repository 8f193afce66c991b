"""A decorator upstream drops that the port never carried (issue 24; ``port-lacks-dropped-decorator``).

A host function loses a decorator (``@compiler.disable``) in the same commit
that changes only a branch the port does not have (a parameter the tree
declares not carried). The port carries no decorator of that name: the
dropped line leaves upstream in the form the port already has, so it is set
aside when ``lacked-branch`` compares the two sides, and the entry reads
NOT_APPLICABLE/not-carried. A decorator added, one the port carries, or a
change outside the declared branch stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

PLAIN = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


def triton_path(x, BLOCK=128, smooth=True):
    y = torch.empty_like(x)
    if smooth:
        x = x - x.mean()
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)
    return y
'''

DECORATED = PLAIN.replace("def triton_path(", "@torch.compiler.disable\ndef triton_path(")
CHANGED = PLAIN.replace("        x = x - x.mean()\n", "        x = x - x.mean(dim=-1, keepdim=True)\n")
CHANGED_DECORATED = DECORATED.replace("        x = x - x.mean()\n", "        x = x - x.mean(dim=-1, keepdim=True)\n")

PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_kernel
@triton.jit
def _double(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::triton_path
# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::triton_path[smooth] -- inputs are scaled as they come
def scale(x, block=128):
    y = torch.empty_like(x)
    n = x.numel()
    _double[(n // block + 1,)](x, y, n, BLOCK=block)
    return y
'''

DECORATED_PORT = PORT.replace("def scale(x, block=128):", "@torch.compiler.disable\ndef scale(x, block=128):")


def _helper(tmp_path, before, after, port=PORT):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x):\n    return scale(x, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "triton_path")


def test_the_branch_change_alone_is_not_carried(tmp_path):
    helper = _helper(tmp_path, PLAIN, CHANGED)
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-carried"), helper.reason
    assert "port-lacks-dropped-decorator" not in helper.rules


def test_a_dropped_decorator_the_port_never_carried_is_set_aside(tmp_path):
    helper = _helper(tmp_path, DECORATED, CHANGED)
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-carried"), helper.reason
    assert "port-lacks-dropped-decorator" in helper.rules
    assert "disable" in helper.reason


def test_an_added_decorator_is_compared(tmp_path):
    helper = _helper(tmp_path, PLAIN, CHANGED_DECORATED)
    assert "port-lacks-dropped-decorator" not in helper.rules, helper.reason
    assert helper.verdict != NOT_APPLICABLE


def test_a_dropped_decorator_the_port_carries_is_compared(tmp_path):
    helper = _helper(tmp_path, DECORATED, CHANGED, DECORATED_PORT)
    assert "port-lacks-dropped-decorator" not in helper.rules, helper.reason
    assert helper.verdict != NOT_APPLICABLE


def test_a_dropped_decorator_with_a_change_outside_the_branch_is_compared(tmp_path):
    after = CHANGED.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
    helper = _helper(tmp_path, DECORATED, after)
    assert "port-lacks-dropped-decorator" not in helper.rules, helper.reason
    assert helper.verdict != NOT_APPLICABLE
