"""A Python definition whose changed expressions compute the same integer for every input its annotations
allow (``equal-integer-value``): a conditional on a ``bool`` parameter folded into the arithmetic, ``(stages +
int(extra)) * 8 * 2`` for ``stages * 8 * 2 if not extra else (stages + 1) * 8 * 2``, reads the same once each
``bool`` parameter is given each of its two values and each side is written out as a sum of products of the
``int`` parameters. NOT_APPLICABLE/cosmetic. Neighbours stay flagged: another constant, a parameter
annotated ``float`` (or not annotated), a flag whose default is ``None``, an operator other than ``+``, ``-`` and ``*`` (``//``), a parameter
rebound in the body, and a changed statement beside the expression.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "PLAN"
title    = "Shared-memory planning"
upstream = "vllm"
paths    = ["lib/plan.py"]
tree     = ["pkg/"]
tests    = ["tests/"]
"""

OLD = '''\
def smem_size(stages: int, block: int, extra: bool = False) -> int:
    data = stages * block * 2
    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2
    return data + barrier
'''

FOLDED = OLD.replace("    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2\n",
                     "    barrier = (stages + int(extra)) * 8 * 2\n")
DISTRIBUTED = OLD.replace("    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2\n",
                          "    barrier = 16 * stages + (16 if extra else 0)\n")
OTHER_CONSTANT = OLD.replace("    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2\n",
                             "    barrier = (stages + int(extra)) * 8 * 4\n")
FLOAT_OLD = OLD.replace("stages: int", "stages: float")
FLOAT_NEW = FOLDED.replace("stages: int", "stages: float")
UNANNOTATED_OLD = OLD.replace("stages: int", "stages")
UNANNOTATED_NEW = FOLDED.replace("stages: int", "stages")
FLOOR_OLD = OLD.replace("    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2\n",
                        "    barrier = stages // 2 * 16 if not extra else (stages // 2 + 1) * 16\n")
FLOOR_NEW = OLD.replace("    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2\n",
                        "    barrier = (stages // 2 + int(extra)) * 16\n")
REBOUND_OLD = OLD.replace("    data = stages * block * 2\n", "    data = stages * block * 2\n    stages = data\n")
REBOUND_NEW = FOLDED.replace("    data = stages * block * 2\n", "    data = stages * block * 2\n    stages = data\n")
AND_MORE = FOLDED.replace("    data = stages * block * 2\n", "    data = stages * block * 4\n")

TREE = {
    "pkg/__init__.py": "",
    "pkg/plan.py": "# portq: ports vllm:lib/plan.py::smem_size\n"
                   "def smem_size(stages: int, block: int, extra: bool = False) -> int:\n"
                   "    return stages * block * 2 + stages * 16\n",
}


def _decided(tmp_path, old: str, new: str):
    history = [CommitSpec("base", files={"lib/plan.py": old}), CommitSpec("change", files={"lib/plan.py": new})]
    verdicts, _ = classify_history(tmp_path, history, TREE, matrix=MATRIX)
    return verdicts[1]


def test_a_conditional_folded_into_the_arithmetic_is_cosmetic(tmp_path):
    verdict = _decided(tmp_path, OLD, FOLDED)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic"
    assert "equal-integer-value" in verdict.rules, verdict.rules


def test_a_product_distributed_over_the_same_terms_is_cosmetic(tmp_path):
    verdict = _decided(tmp_path, OLD, DISTRIBUTED)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" in verdict.rules, verdict.rules


def test_another_constant_stays_flagged(tmp_path):
    verdict = _decided(tmp_path, OLD, OTHER_CONSTANT)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules


def test_a_float_parameter_stays_flagged(tmp_path):
    verdict = _decided(tmp_path, FLOAT_OLD, FLOAT_NEW)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules


def test_an_unannotated_parameter_stays_flagged(tmp_path):
    verdict = _decided(tmp_path, UNANNOTATED_OLD, UNANNOTATED_NEW)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules


def test_floor_division_stays_flagged(tmp_path):
    verdict = _decided(tmp_path, FLOOR_OLD, FLOOR_NEW)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules


def test_a_parameter_rebound_in_the_body_stays_flagged(tmp_path):
    verdict = _decided(tmp_path, REBOUND_OLD, REBOUND_NEW)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules


def test_another_change_beside_it_stays_flagged(tmp_path):
    verdict = _decided(tmp_path, OLD, AND_MORE)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules


def test_a_flag_whose_default_is_none_stays_flagged(tmp_path):
    # ``extra: bool = None`` admits None, which ``int`` cannot read though a conditional can
    old, new = (text.replace("extra: bool = False", "extra: bool = None") for text in (OLD, FOLDED))
    verdict = _decided(tmp_path, old, new)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert "equal-integer-value" not in verdict.rules
