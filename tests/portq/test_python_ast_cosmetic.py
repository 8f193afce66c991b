"""A formatter's edits that change Python tokens but not the program (aiter
``f9ee4168be``: redundant parentheses removed, ``NEOX = 0,`` → ``NEOX = (0,)``)
are proven cosmetic on the ``ast``; parentheses that regroup an expression
are not (docs/tricky-cases.md, case 17d). Each runs the real ``portq scan``."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history, classify_commit

ROPE = "aiter/ops/triton/rope.py"

BEFORE = '''import triton
import triton.language as tl
from enum import IntEnum


class RotateStyle(IntEnum):
    NEOX = 0,
    GPTJ = 1


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, out_ptr, stride_cos_t, stride_cos_d, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    """One block of tokens a program."""
    pid = tl.program_id(0)
    cos_offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cos_offs_d = tl.arange(0, BLOCK_D)
    cos_offs = (stride_cos_t * cos_offs_t[:, None] +
                stride_cos_d * cos_offs_d[None, :])
    cos = tl.load(cos_ptr + cos_offs)
    x = tl.load(x_ptr + cos_offs)
    y = (x + cos) * 2.0
    tl.store(out_ptr + cos_offs, y)


def rope_fwd(x, cos, out, rotate_style):
    if rotate_style != RotateStyle.NEOX:
        raise NotImplementedError
    t = x.shape[0]
    grid = (triton.cdiv(t, 32),)
    _rope_kernel[grid](x, cos, out, cos.stride(0), cos.stride(1), BLOCK_T=32, BLOCK_D=64)
'''

REFORMATTED = BEFORE.replace("    NEOX = 0,\n", "    NEOX = (0,)\n").replace(
    "    cos_offs = (stride_cos_t * cos_offs_t[:, None] +\n                stride_cos_d * cos_offs_d[None, :])\n",
    "    cos_offs = stride_cos_t * cos_offs_t[:, None] + stride_cos_d * cos_offs_d[None, :]\n")

REGROUPED = BEFORE.replace("    y = (x + cos) * 2.0\n", "    y = x + cos * 2.0\n")

TREE = {"kernels/rope/rope.py": '''import triton
import triton.language as tl

NEOX = 0


# portq: ports vllm:aiter/ops/triton/rope.py::_rope_kernel
@triton.jit
def _rope_rows(x_ptr, cos_ptr, out_ptr, stride_t, stride_d, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs = stride_t * tokens[:, None] + stride_d * tl.arange(0, BLOCK_D)[None, :]
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs) + tl.load(cos_ptr + offs)) * 2.0)


# portq: ports vllm:aiter/ops/triton/rope.py::rope_fwd
def rope_forward(x, cos, out, rotate_style):
    if rotate_style != NEOX:
        raise NotImplementedError
    grid = (triton.cdiv(x.shape[0], 32),)
    _rope_rows[grid](x, cos, out, cos.stride(0), cos.stride(1), BLOCK_T=32, BLOCK_D=64)
''', "kernels/rope/caller.py": "from portq_kernels.rope.rope import rope_forward\n\n\n"
     "def apply(x, cos, out):\n    rope_forward(x, cos, out, 0)\n"}


def _scan(tmp_path, after):
    return classify_commit(tmp_path, {ROPE: BEFORE}, {ROPE: after}, TREE, message="ruff")


def test_redundant_parentheses_and_a_parenthesised_tuple_are_cosmetic_on_the_ast(tmp_path):
    verdict = _scan(tmp_path, REFORMATTED)
    by_name = {s.symbol: s for s in verdict.symbols}
    assert set(by_name) >= {"_rope_kernel", "RotateStyle"}, sorted(by_name)
    for name in ("_rope_kernel", "RotateStyle"):
        assert (by_name[name].verdict, by_name[name].justification) == (NOT_APPLICABLE, "cosmetic"), \
            by_name[name].reason
        assert "same Python AST before and after" in by_name[name].reason
        assert any(e.kind == "cosmetic" and e.message == "the same Python AST before and after (formatting only)"
                   for e in by_name[name].evidence)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic")


def test_parentheses_that_regroup_an_expression_still_need_review(tmp_path):
    verdict = _scan(tmp_path, REGROUPED)
    kernel = next(s for s in verdict.symbols if s.symbol == "_rope_kernel")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "same Python AST" not in kernel.reason
    assert verdict.verdict == NEEDS_REVIEW


def test_a_one_element_tuple_losing_its_comma_is_not_cosmetic(tmp_path):
    """The token comparison drops a trailing comma before a closing bracket (formatters add those), so
    ``(BLOCK_T,)`` and ``(BLOCK_T)`` read alike there; the ``ast`` tells a tuple from an integer."""
    before = BEFORE.replace("    x = tl.load(x_ptr + cos_offs)\n", "    shape = (BLOCK_T,)\n    x = tl.load(x_ptr + cos_offs)\n")
    after = before.replace("    shape = (BLOCK_T,)\n", "    shape = (BLOCK_T)\n")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={ROPE: before}),
                                              CommitSpec("untuple", files={ROPE: after})], TREE)
    kernel = next(s for s in verdicts[1].symbols if s.symbol == "_rope_kernel")
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason
    assert "cosmetic" != kernel.justification
