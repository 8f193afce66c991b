"""An autograd ``forward`` that takes over its ``setup_context`` (issue 24, the twenty-first held-out split;
``folded-setup-context``).

PyTorch's two forms of a ``Function``: ``forward(*inputs)`` beside
``setup_context(ctx, inputs, output)``, or ``forward(ctx, *inputs)`` saving
for backward itself. A commit moves from the first to the second: the old
forward's return value is bound to the name (or names) setup_context read
the output as, setup_context's statements that only write the context
follow, and forward returns what it computed. Where the tree declares that
setup_context not carried, the ported forward computes and returns what it
did: NOT_APPLICABLE/not-carried. Where the return keeps one element of what
used to be returned whole, the port's forward must already return a single
value. A computation that changes, a moved statement that writes anything
but the context, a setup_context the tree carries, or a port that returns
the whole tuple, stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row normalisation"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

SPLIT = '''\
import torch

from lib import kernels


class Norm(torch.autograd.Function):
    @staticmethod
    def forward(*args, **kwargs):
        x, eps = args
        return Norm.__forward(x, eps)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, eps = inputs
        {unpack}ctx.save_for_backward(x, {saved})
        ctx.eps = eps

    @staticmethod
    def backward(ctx, *grad_outputs):
        return grad_outputs

    @staticmethod
    def __forward(x, eps):
        y = torch.empty_like(x)
        rows, n = x.shape
        kernels.norm_kernel[(rows,)](x, y, n, eps, BLOCK=1024)
        return {returned}
'''

FOLDED = '''\
from typing import Any

import torch

from lib import kernels


class Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any):
        x, eps = args
        {bound} = Norm.__forward(x, eps)

        ctx.save_for_backward(x, {saved})
        ctx.eps = eps

        return {result}

    @staticmethod
    def backward(ctx, *grad_outputs):
        return grad_outputs

    @staticmethod
    def __forward(x, eps):
        y = torch.empty_like(x)
        rows, n = x.shape
        kernels.norm_kernel[(rows,)](x, y, n, eps, BLOCK=1024)
        return {returned}
'''

KERNELS = '''\
import triton
import triton.language as tl


@triton.jit
def norm_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, x / (tl.sum(x, axis=0) + eps), mask=mask)
'''

PORT = '''\
import torch

from kernels.norm_kernel import norm_rows


# portq: not-carried vllm:lib/host.py::Norm.setup_context -- inference only, nothing saved
# portq: not-carried vllm:lib/host.py::Norm.backward -- inference only, no gradient
class NormOp:
    # portq: ports vllm:lib/host.py::Norm.forward
    @staticmethod
    def forward(x, eps):
        return NormOp.launch(x, eps)

    # portq: ports vllm:lib/host.py::Norm.__forward
    @staticmethod
    def launch(x, eps):
        y = torch.empty_like(x)
        rows, n = x.shape
        norm_rows[(rows,)](x, y, n, eps, BLOCK=1024)
        return {returned}
'''

PORT_KERNEL = '''\
import triton
import triton.language as tl


# portq: ports vllm:lib/kernels.py::norm_kernel
@triton.jit
def norm_rows(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, x / (tl.sum(x, axis=0) + eps), mask=mask)
'''

# One output: forward returned the tensor, setup_context saved it.
ONE = dict(unpack="", saved="output", returned="y")
ONE_AFTER = dict(bound="output", saved="output", result="output", returned="y")
# Three outputs: forward returned (y, mean, rstd), setup_context unpacked them; now forward returns y alone.
THREE = dict(unpack="output, mean, rstd = output\n        ", saved="mean, rstd", returned="y, y.mean(1), y.std(1)")
THREE_AFTER = dict(bound="output, mean, rstd", saved="mean, rstd", result="output", returned="y, y.mean(1), y.std(1)")


def _forward(tmp_path, before, after, port=PORT.format(returned="y"), declared=True):
    if not declared:
        port = port.replace("# portq: not-carried vllm:lib/host.py::Norm.setup_context -- inference only, "
                            "nothing saved\n", "")
        port = port.replace("class NormOp:\n", "class NormOp:\n    # portq: ports vllm:lib/host.py::Norm.setup_context\n"
                                               "    @staticmethod\n    def save(ctx, inputs, output):\n"
                                               "        ctx.saved = output\n\n")
    tree = {"kernels/norm_kernel.py": PORT_KERNEL, "kernels/norm.py": port,
            "engine/model.py": "from kernels.norm import NormOp\n\n\ndef run(x):\n    return NormOp.forward(x, 1e-5)\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/kernels.py": KERNELS, "lib/host.py": before}),
        CommitSpec("forward saves for backward itself", files={"lib/host.py": after}),
    ], tree, matrix=MATRIX)
    found = [s for s in verdicts[1].symbols if s.symbol == "Norm.forward"]
    assert found, [(s.symbol, s.change) for s in verdicts[1].symbols]
    return found[0], verdicts[1]


def test_forward_that_takes_over_a_declared_setup_context_is_not_carried(tmp_path):
    forward, entry = _forward(tmp_path, SPLIT.format(**ONE), FOLDED.format(**ONE_AFTER))
    assert (forward.verdict, forward.justification) == (NOT_APPLICABLE, "not-carried"), forward.reason
    assert "folded-setup-context" in forward.rules
    assert "setup_context" in forward.reason
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_forward_that_now_returns_the_first_output_is_not_carried_where_the_port_returns_one(tmp_path):
    forward, entry = _forward(tmp_path, SPLIT.format(**THREE), FOLDED.format(**THREE_AFTER))
    assert (forward.verdict, forward.justification) == (NOT_APPLICABLE, "not-carried"), forward.reason
    assert "folded-setup-context" in forward.rules


def test_a_port_that_returns_the_whole_tuple_is_compared(tmp_path):
    # The port mirrors the old forward's (y, mean, rstd): upstream's forward now returns y alone.
    port = PORT.format(returned="y, y.mean(1), y.std(1)")
    forward, _ = _forward(tmp_path, SPLIT.format(**THREE), FOLDED.format(**THREE_AFTER), port=port)
    assert "folded-setup-context" not in forward.rules, forward.reason
    assert forward.verdict == NEEDS_REVIEW, forward.reason


def test_a_setup_context_the_tree_carries_is_compared(tmp_path):
    forward, _ = _forward(tmp_path, SPLIT.format(**ONE), FOLDED.format(**ONE_AFTER), declared=False)
    assert "folded-setup-context" not in forward.rules, forward.reason
    assert forward.verdict == NEEDS_REVIEW, forward.reason


def test_a_changed_computation_is_compared(tmp_path):
    after = FOLDED.format(**ONE_AFTER).replace("output = Norm.__forward(x, eps)", "output = Norm.__forward(x, eps * 2)")
    forward, _ = _forward(tmp_path, SPLIT.format(**ONE), after)
    assert "folded-setup-context" not in forward.rules, forward.reason
    assert forward.verdict == NEEDS_REVIEW, forward.reason


def test_a_moved_statement_that_writes_the_output_is_compared(tmp_path):
    before = SPLIT.format(**ONE).replace("        ctx.eps = eps\n", "        ctx.eps = eps\n        output.mul_(2)\n")
    after = FOLDED.format(**ONE_AFTER).replace("        ctx.eps = eps\n", "        ctx.eps = eps\n        output.mul_(2)\n")
    forward, _ = _forward(tmp_path, before, after)
    assert "folded-setup-context" not in forward.rules, forward.reason
    assert forward.verdict == NEEDS_REVIEW, forward.reason


def test_a_return_that_narrows_without_the_unpacking_is_compared(tmp_path):
    # setup_context never unpacked the output: forward now returns something else than before.
    after = FOLDED.format(**ONE_AFTER).replace("return output", "return output[0]")
    forward, _ = _forward(tmp_path, SPLIT.format(**ONE), after)
    assert "folded-setup-context" not in forward.rules, forward.reason
    assert forward.verdict == NEEDS_REVIEW, forward.reason
