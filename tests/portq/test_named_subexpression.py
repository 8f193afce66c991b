"""A Python definition that names a repeated read (``rows = shape[0]``) once at its top and reads the new local
where it read the expression (``named-subexpression``) computes what it did when the local is bound once, the
expression calls nothing and what it reads is never rebound, stored into or called on in the definition: the
definition is NOT_APPLICABLE/cosmetic. A local rebound later, an expression that calls something, a base the body
stores into, or a changed use stay flagged. Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

PICK = "pkg/ops/pick.py"

PICK_BEFORE = '''import torch


def pick_kernel(shape, kernels, timings):
    best = None
    for kind in kernels:
        if shape[0] > 8 and kind == "narrow":
            continue
        if shape[0] < 4 and kind == "wide":
            continue
        if best is None or timings[kind] < timings[best]:
            best = kind
    return best
'''

PICK_AFTER = PICK_BEFORE.replace("    best = None\n", "    best = None\n    rows = shape[0]\n") \
    .replace("if shape[0] > 8", "if rows > 8").replace("if shape[0] < 4", "if rows < 4")

PICK_TREE = {"kernels/pick/pick.py": '''import torch


# portq: ports vllm:pkg/ops/pick.py::pick_kernel
def choose(shape, kernels, timings):
    best = None
    for kind in kernels:
        if shape[0] > 8 and kind == "narrow":
            continue
        if shape[0] < 4 and kind == "wide":
            continue
        if best is None or timings[kind] < timings[best]:
            best = kind
    return best
''', "kernels/pick/engine.py": "from portq_kernels.pick.pick import choose\n\n\n"
     "def run(shape, kernels, timings):\n    return choose(shape, kernels, timings)\n"}


def _pick(tmp_path, before, after):
    return classify_commit(tmp_path, {PICK: before}, {PICK: after}, PICK_TREE, message="nfc")


def _symbol(verdict):
    return next(s for s in verdict.symbols if s.symbol == "pick_kernel")


def _flagged(tmp_path, before, after):
    symbol = _symbol(_pick(tmp_path, before, after))
    assert symbol.verdict == NEEDS_REVIEW, (symbol.verdict, symbol.reason)
    assert "named-subexpression" not in symbol.rules, symbol.rules


def test_a_repeated_read_named_once_is_cosmetic(tmp_path):
    verdict = _pick(tmp_path, PICK_BEFORE, PICK_AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "named-subexpression" in _symbol(verdict).rules, _symbol(verdict).rules


def test_the_local_rebound_later_is_still_flagged(tmp_path):
    _flagged(tmp_path, PICK_BEFORE, PICK_AFTER.replace("            best = kind\n",
                                                       "            best = kind\n            rows = 0\n"))


def test_an_expression_that_calls_is_still_flagged(tmp_path):
    before = PICK_BEFORE.replace("shape[0]", "len(shape)")
    _flagged(tmp_path, before, PICK_AFTER.replace("rows = shape[0]", "rows = len(shape)"))


def test_a_base_the_body_stores_into_is_still_flagged(tmp_path):
    store = "            best = kind\n"
    before = PICK_BEFORE.replace(store, store + "            shape[0] = 1\n")
    _flagged(tmp_path, before, PICK_AFTER.replace(store, store + "            shape[0] = 1\n"))


def test_a_changed_use_is_still_flagged(tmp_path):
    _flagged(tmp_path, PICK_BEFORE, PICK_AFTER.replace("if rows < 4", "if rows < 2"))
