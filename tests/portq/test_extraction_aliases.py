"""A method that first copies what it reads from its context into locals (``block = ctx.block``) and
then uses the locals has its body extracted into a helper that the method now calls with the context's
attributes themselves (``op_backward(..., block=ctx.block)``). The old body's local holds the attribute's
value at every read (bound once, before any read, and the context only read, never written, called
through or passed on), so it reads as the attribute: the extraction changes nothing
(``moved-definition``). A local bound again, a context the body calls a method of or hands on, or a
helper passing something else keeps the extraction a change."""
from __future__ import annotations

from portq.classifier.moves import Move, extraction_only
from portq.core.model import FLAGGED, NOT_APPLICABLE
from portq.language.symbols import symbol_table
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

BEFORE = '''\
class Op:
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        block = ctx.block
        mode = ctx.mode

        dx = torch.empty_like(dy)
        if mode == Mode.fast:
            _bwd_fast(dy, x, w, dx, block)
        elif mode == Mode.plain:
            _bwd[(ctx.rows,)](dy, x, w, dx, BLOCK=block)
        else:
            raise ValueError(f"unexpected mode ({mode})")

        return dx, None, None
'''

HELPER = '''\
def op_backward(dy, x, w, mode, block, rows):
    dx = torch.empty_like(dy)
    if mode == Mode.fast:
        _bwd_fast(dy, x, w, dx, block)
    elif mode == Mode.plain:
        _bwd[(rows,)](dy, x, w, dx, BLOCK=block)
    else:
        raise ValueError(f"unexpected mode ({mode})")

    return dx


'''

AFTER = HELPER + '''\
class Op:
    def backward(ctx, dy):
        x, w = ctx.saved_tensors

        dx = op_backward(dy=dy, x=x, w=w, mode=ctx.mode, block=ctx.block, rows=ctx.rows)

        return dx, None, None
'''

MOVE = Move(2, "0" * 40, ("ops/op.py", "Op.backward"), ("ops/op.py", "Op.backward"), ("ops/op.py", "op_backward"),
            "extracted", False)


def _extraction_only(before: str, after: str = AFTER) -> bool:
    old = symbol_table(before.encode(), "ops/op.py")
    new = symbol_table(after.encode(), "ops/op.py")
    return extraction_only(old, new, new, MOVE, [MOVE])


def test_locals_that_copy_the_contexts_attributes_read_as_those_attributes():
    assert _extraction_only(BEFORE)


def test_a_local_bound_again_is_not_the_attribute():
    # Neighbour: `block` is doubled before the launch, so it no longer holds `ctx.block` there.
    assert not _extraction_only(BEFORE.replace("        dx = torch.empty_like(dy)\n",
                                               "        dx = torch.empty_like(dy)\n        block = block * 2\n"))


def test_a_local_read_before_its_copy_is_not_the_attribute():
    # Neighbour: `mode` is read (a module-level name) before the statement that copies the attribute.
    assert not _extraction_only(BEFORE.replace("        block = ctx.block\n",
                                               "        block = ctx.block\n        print(mode)\n"))


def test_a_context_the_body_calls_a_method_of_is_not_only_read():
    # Neighbour: `ctx.refresh()` may change `ctx.block` after the local copied it.
    assert not _extraction_only(BEFORE.replace("        dx = torch.empty_like(dy)\n",
                                               "        ctx.refresh()\n        dx = torch.empty_like(dy)\n"))


def test_a_context_written_through_is_not_only_read():
    # Neighbour: the body sets `ctx.block` after the local copied it.
    assert not _extraction_only(BEFORE.replace("        dx = torch.empty_like(dy)\n",
                                               "        ctx.block = 64\n        dx = torch.empty_like(dy)\n"))


def test_a_helper_passed_another_attribute_is_a_change():
    # Neighbour: the call passes `ctx.block_bwd` where the old body used its copy of `ctx.block`.
    assert not _extraction_only(BEFORE, AFTER.replace("block=ctx.block", "block=ctx.block_bwd"))


TREE = {
    "kernels/op.py": '''\
import torch


class Op(torch.autograd.Function):
    # portq: ports vllm:ops/op.py::Op.backward
    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx = torch.empty_like(dy)
        _bwd[(ctx.rows,)](dy, x, w, dx, BLOCK=ctx.block)
        return dx, None, None
''',
    "engine/run.py": "from kernels.op import Op\n\n\ndef step(x):\n    return Op.apply(x)\n",
}

MATRIX = '''[[row]]
id       = "OP"
title    = "op"
upstream = "vllm"
paths    = ["ops/op.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
'''


def _extraction_verdict(tmp_path, after: str):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/op.py": BEFORE}),
        CommitSpec("extract the backward", files={"ops/op.py": after}),
    ], TREE, matrix=MATRIX)
    return verdicts[1]


def test_an_extraction_that_reads_the_attributes_the_old_locals_copied_changes_nothing(tmp_path):
    verdict = _extraction_verdict(tmp_path, AFTER)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    method = next(s for s in verdict.symbols if s.symbol == "Op.backward")
    assert method.justification == "cosmetic" and "moved-definition" in method.rules, method.reason
    assert "extracted-attribute-alias" in method.rules, method.rules


def test_an_extraction_passing_another_attribute_stays_flagged(tmp_path):
    verdict = _extraction_verdict(tmp_path, AFTER.replace("block=ctx.block", "block=ctx.block_bwd"))
    assert verdict.verdict in FLAGGED, verdict.reason
