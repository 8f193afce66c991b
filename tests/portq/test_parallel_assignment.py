"""Consecutive assignments written as one tuple assignment (``parallel-assignment``):
``a = x`` then ``b = y`` becoming ``a, b = x, y`` binds the same values when the
targets are distinct plain names and no later right side reads a target bound
before it (or calls anything, or runs where an exception could be caught), so the
definition is NOT_APPLICABLE/cosmetic. A swap (``a, b = b, a``), a right side that
reads an earlier target, attribute or subscript targets, a right side that calls,
a pair inside ``try`` and a changed value stay flagged. Each runs the real
``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

ROTATE = "pkg/ops/rotate.py"

ROTATE_BEFORE = '''import torch


def _step(q, k, v, out):
    return q @ k.t() @ v if out is None else out + q @ k.t() @ v


def rotate_forward(q, k, v, steps, buf):
    out = None
    for step in range(steps):
        incoming_a = torch.roll(k, 1, 0)
        incoming_b = torch.roll(v, 1, 0)
        out = _step(q, k, v, out)
        if step + 1 != steps:
            k = incoming_a
            v = incoming_b
    return out
'''

ROTATE_AFTER = ROTATE_BEFORE.replace("            k = incoming_a\n            v = incoming_b\n",
                                     "            k, v = incoming_a, incoming_b\n")

ROTATE_TREE = {"kernels/rotate/rotate.py": '''import torch


# portq: ports vllm:pkg/ops/rotate.py::rotate_forward
def rotate_attention(q, k, v, steps, buf):
    out = None
    for step in range(steps):
        incoming_a = torch.roll(k, 1, 0)
        incoming_b = torch.roll(v, 1, 0)
        part = q @ k.t() @ v
        out = part if out is None else out + part
        if step + 1 != steps:
            k = incoming_a
            v = incoming_b
    return out
''', "kernels/rotate/engine.py": "from portq_kernels.rotate.rotate import rotate_attention\n\n\n"
     "def run(q, k, v):\n    return rotate_attention(q, k, v, 4, None)\n"}


def _rotate(tmp_path, before, after):
    return classify_commit(tmp_path, {ROTATE: before}, {ROTATE: after}, ROTATE_TREE, message="nfc")


def _forward(verdict):
    return next(s for s in verdict.symbols if s.symbol == "rotate_forward")


def _flagged(tmp_path, before, after):
    verdict = _rotate(tmp_path, before, after)
    forward = _forward(verdict)
    assert forward.verdict == NEEDS_REVIEW, (forward.verdict, forward.reason)
    assert "parallel-assignment" not in forward.rules, forward.rules


def test_two_assignments_written_as_one_tuple_assignment_are_cosmetic(tmp_path):
    verdict = _rotate(tmp_path, ROTATE_BEFORE, ROTATE_AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    forward = _forward(verdict)
    assert "parallel-assignment" in forward.rules, forward.rules
    assert "tuple assignment" in forward.reason, forward.reason


def test_a_tuple_assignment_split_into_two_is_cosmetic(tmp_path):
    verdict = _rotate(tmp_path, ROTATE_AFTER, ROTATE_BEFORE)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "parallel-assignment" in _forward(verdict).rules


def test_an_earlier_target_read_by_its_own_right_side_is_cosmetic(tmp_path):
    before = ROTATE_BEFORE.replace("            k = incoming_a\n", "            k = k + incoming_a\n")
    after = ROTATE_AFTER.replace("k, v = incoming_a, incoming_b", "k, v = k + incoming_a, incoming_b")
    verdict = _rotate(tmp_path, before, after)
    assert "parallel-assignment" in _forward(verdict).rules, _forward(verdict).reason


def test_a_swap_is_still_flagged(tmp_path):
    before = ROTATE_BEFORE.replace("            k = incoming_a\n            v = incoming_b\n",
                                 "            k = v\n            v = k\n")
    _flagged(tmp_path, before, before.replace("            k = v\n            v = k\n", "            k, v = v, k\n"))


def test_a_later_right_side_reading_an_earlier_target_is_still_flagged(tmp_path):
    before = ROTATE_BEFORE.replace("            v = incoming_b\n", "            v = incoming_b + k\n")
    _flagged(tmp_path, before, ROTATE_AFTER.replace("k, v = incoming_a, incoming_b", "k, v = incoming_a, incoming_b + k"))


def test_subscript_targets_are_still_flagged(tmp_path):
    before = ROTATE_BEFORE.replace("            k = incoming_a\n            v = incoming_b\n",
                                 "            buf[0] = incoming_a\n            buf[1] = incoming_b\n")
    _flagged(tmp_path, before, before.replace("            buf[0] = incoming_a\n            buf[1] = incoming_b\n",
                                              "            buf[0], buf[1] = incoming_a, incoming_b\n"))


def test_attribute_targets_are_still_flagged(tmp_path):
    before = ROTATE_BEFORE.replace("            k = incoming_a\n            v = incoming_b\n",
                                 "            buf.k = incoming_a\n            buf.v = incoming_b\n")
    _flagged(tmp_path, before, before.replace("            buf.k = incoming_a\n            buf.v = incoming_b\n",
                                              "            buf.k, buf.v = incoming_a, incoming_b\n"))


def test_a_later_right_side_that_calls_is_still_flagged(tmp_path):
    before = ROTATE_BEFORE.replace("            v = incoming_b\n", "            v = torch.roll(incoming_b, 1, 0)\n")
    _flagged(tmp_path, before, ROTATE_AFTER.replace("k, v = incoming_a, incoming_b", "k, v = incoming_a, torch.roll(incoming_b, 1, 0)"))


def test_a_pair_inside_try_is_still_flagged(tmp_path):
    wrap = ("            try:\n                k = incoming_a\n                v = incoming_b\n"
            "            except NameError:\n                pass\n")
    before = ROTATE_BEFORE.replace("            k = incoming_a\n            v = incoming_b\n", wrap)
    after = before.replace("                k = incoming_a\n                v = incoming_b\n",
                           "                k, v = incoming_a, incoming_b\n")
    _flagged(tmp_path, before, after)


def test_a_changed_value_is_still_flagged(tmp_path):
    _flagged(tmp_path, ROTATE_BEFORE, ROTATE_AFTER.replace("k, v = incoming_a, incoming_b", "k, v = incoming_a, incoming_a"))
