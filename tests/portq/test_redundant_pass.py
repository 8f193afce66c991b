"""A formatter pass that drops redundant ``pass`` statements (``redundant-pass``):
a ``pass`` in a block that holds other statements does nothing, so a
definition, or the module's lines outside definitions, that is the same
program once such statements are set aside is NOT_APPLICABLE/cosmetic; a
``pass`` that is a block's only statement, replaced or removed with its
block, stays flagged. Each runs the real ``portq scan`` over a small
synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_form_without_meaning import NORM, NORM_TREE

BEFORE = '''import torch
import triton
import triton.language as tl

SCALE : int = 2
pass


@triton.jit
def _norm_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask = offs < n)
    if MODE == 1:
        x = x * SCALE
    pass
    tl.store(out_ptr + offs, x, mask = offs < n)
pass


def norm_forward(x, out, mode=1):
    n = x.numel()
    if n == 0: return out
    _norm_kernel[(triton.cdiv(n, 128),)](x, out, n, MODE = mode, BLOCK = 128)
    return out
pass
'''

# The formatter: keyword spacing, one-line ifs unfolded, redundant passes gone.
FORMATTED = '''import torch
import triton
import triton.language as tl

SCALE: int = 2


@triton.jit
def _norm_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MODE == 1:
        x = x * SCALE
    tl.store(out_ptr + offs, x, mask=offs < n)


def norm_forward(x, out, mode=1):
    n = x.numel()
    if n == 0:
        return out
    _norm_kernel[(triton.cdiv(n, 128),)](x, out, n, MODE=mode, BLOCK=128)
    return out
'''


def _norm(tmp_path, before, after):
    return classify_commit(tmp_path, {NORM: before}, {NORM: after}, NORM_TREE, message="format")


def _flagged(verdict):
    return [(s.symbol, s.verdict, s.reason) for s in verdict.symbols if s.verdict != NOT_APPLICABLE]


def test_a_formatter_dropping_redundant_passes_is_cosmetic(tmp_path):
    verdict = _norm(tmp_path, BEFORE, FORMATTED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _flagged(verdict)
    assert "redundant-pass" in verdict.rules, verdict.rules
    kernel = next(s for s in verdict.symbols if s.symbol == "_norm_kernel")
    assert "redundant-pass" in kernel.rules and "pass" in kernel.reason, kernel.reason


def test_a_pass_that_was_a_blocks_only_statement_replaced_is_still_flagged(tmp_path):
    before = BEFORE.replace("        x = x * SCALE\n    pass\n", "        pass\n")
    verdict = _norm(tmp_path, before, FORMATTED)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "redundant-pass" not in verdict.rules


def test_a_block_holding_only_pass_removed_with_its_test_is_still_flagged(tmp_path):
    before = BEFORE.replace("    n = x.numel()\n", "    n = x.numel()\n    if torch.cuda.synchronize():\n        pass\n")
    verdict = _norm(tmp_path, before, FORMATTED)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert not any("redundant-pass" in s.rules for s in verdict.symbols if s.symbol == "norm_forward")


def test_a_dropped_pass_beside_a_real_change_is_still_flagged(tmp_path):
    verdict = _norm(tmp_path, BEFORE, FORMATTED.replace("x = x * SCALE", "x = x * SCALE + 1"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
