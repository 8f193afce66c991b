"""A kernel constexpr its launching wrapper chooses by the input's dtype
through a helper (``DTYPE=util.acc_type(x.dtype)``) is derived from what the
kernel receives (``derived-parameter``): for a reader, never a gap; a helper
given anything a caller chooses stays a gap. And ``/`` in a Triton kernel is
true division: a row statistic divided by a sum reached from the program id
through a helper call is no program-id decomposition."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from portq.language.extraction import signature_of
from portq.language.symbols import symbol_table
from tests.portq.golden import interface_cases as cases
from tests.portq.golden.pipeline import classify_commit

HOST = cases.DERIVED_HOST
BEFORE = cases.DERIVED_BEFORE
KEYED_AFTER = BEFORE.replace(
    "import triton.language as tl\n", "import triton.language as tl\n\nfrom vllm import util\n").replace(
    "SEQ_LEN, BLOCK_D: tl.constexpr):", "SEQ_LEN, BLOCK_D: tl.constexpr, ACC: tl.constexpr):").replace(
    "BLOCK_D=x.shape[1])", "BLOCK_D=x.shape[1], ACC=util.acc_type(x.dtype))")
# Unsound neighbours: the helper is handed a value the caller chooses, or more than the dtype.
CHOSEN_AFTER = KEYED_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, acc=None):").replace(
    "ACC=util.acc_type(x.dtype))", "ACC=util.acc_type(acc))")
WIDER_AFTER = KEYED_AFTER.replace("def scale_rows(x, out):", "def scale_rows(x, out, fast=False):").replace(
    "ACC=util.acc_type(x.dtype))", "ACC=util.acc_type(x.dtype, fast))")


def _one_commit(tmp_path, after):
    return classify_commit(tmp_path, {HOST: BEFORE}, {HOST: after}, cases.derived_tree(), message="acc type")


def test_a_constexpr_chosen_by_the_input_dtype_through_a_helper_is_for_a_reader(tmp_path):
    assert KEYED_AFTER != BEFORE and "ACC=util.acc_type(x.dtype)" in KEYED_AFTER
    verdict = _one_commit(tmp_path, KEYED_AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "derived-parameter" in verdict.rules, verdict.rules


def test_a_helper_given_a_value_the_caller_chooses_is_still_a_gap(tmp_path):
    assert _one_commit(tmp_path, CHOSEN_AFTER).verdict == REAL_GAP


def test_a_helper_given_more_than_the_dtype_is_still_a_gap(tmp_path):
    assert _one_commit(tmp_path, WIDER_AFTER).verdict == REAL_GAP


KERNEL = '''\
import triton
import triton.language as tl

from lib import language


@triton.jit
def softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    top = language.row_max(x_ptr, n, pid, BLOCK)
    acc = tl.sum(tl.exp(tl.load(x_ptr + pid * n + tl.arange(0, BLOCK)) - top), 0)
    y = top / acc
    rows = pid // n
    tl.store(y_ptr + rows, y)
'''


def test_true_division_is_no_program_id_decomposition():
    table = symbol_table(KERNEL.encode(), "lib/k.py")
    definition = next(d for d in table.definitions if d.name == "softmax")
    signature = signature_of(definition, table.source, "lib/k.py")
    assert [(d.operator, d.operand) for d in signature.decomposition] == [("//", "n")]
