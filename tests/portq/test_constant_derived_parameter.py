"""A new kernel parameter the launching wrapper computes from its inputs
against a module-level constant (``constant-derived-parameter``): a body-level
change of the wrapper and kernel pair, for a reader, never a gap; a value a
caller supplies, or a module-level name that is rebound, stays a gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_commit

HOST = cases.DERIVED_HOST
BEFORE = cases.DERIVED_BEFORE
# The kernel gains a wide-offsets flag; the wrapper picks it from the input's
# length against a limit bound once at module level.
CONSTANT_AFTER = BEFORE.replace(
    "import triton.language as tl\n",
    "import triton.language as tl\n\nLIMIT = 2**31 - 4 * 1024\n").replace(
    "SEQ_LEN, BLOCK_D: tl.constexpr):", "SEQ_LEN, BLOCK_D: tl.constexpr, WIDE: tl.constexpr):").replace(
    "    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    if WIDE:\n        row = row.to(tl.int64)\n").replace(
    "BLOCK_D=x.shape[1])", "BLOCK_D=x.shape[1], WIDE=0 if t <= LIMIT else 1)")

# Unsound neighbours: the module-level name is rebound by a setter callers use,
# or read from the environment; either is an input the port's callers choose.
REBOUND_AFTER = CONSTANT_AFTER + "\n\ndef set_limit(value):\n    global LIMIT\n    LIMIT = value\n"
ENVIRONMENT_AFTER = CONSTANT_AFTER.replace("LIMIT = 2**31 - 4 * 1024\n",
                                           "import os\nLIMIT = int(os.environ.get('LIMIT', '0'))\n")
SUPPLIED_AFTER = CONSTANT_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, wide=0):").replace(
    "WIDE=0 if t <= LIMIT else 1)", "WIDE=wide)")


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, cases.derived_tree(), message="wide offsets")


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_flag_derived_against_a_module_constant_is_for_a_reader(tmp_path):
    verdict = _one_commit(tmp_path, CONSTANT_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    for name in ("scale_rows", "_scale_rows_kernel"):
        symbol = _symbol(verdict, name)
        assert symbol.verdict == NEEDS_REVIEW, (name, symbol.reason)
        assert "constant-derived-parameter" in symbol.rules, (name, symbol.rules)
        derived = [e for e in symbol.evidence if e.kind == "derivation" and e.subject == "wide"]
        assert derived and "LIMIT = 2**31 - 4 * 1024" in derived[0].quote, (name, [e.message for e in symbol.evidence])
    assert "LIMIT" in _symbol(verdict, "scale_rows").reason


def test_a_rebound_module_name_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, REBOUND_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "constant-derived-parameter" not in verdict.rules


def test_a_module_name_read_from_the_environment_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, ENVIRONMENT_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason


def test_a_flag_a_caller_supplies_is_still_a_gap(tmp_path):
    verdict = _one_commit(tmp_path, SUPPLIED_AFTER)
    assert verdict.verdict == REAL_GAP, verdict.reason
