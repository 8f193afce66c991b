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

RING = "pkg/ops/ring.py"

RING_BEFORE = '''import torch


def _step(q, k, v, out):
    return q @ k.t() @ v if out is None else out + q @ k.t() @ v


def ring_forward(q, k, v, steps, buf):
    out = None
    for step in range(steps):
        next_k = torch.roll(k, 1, 0)
        next_v = torch.roll(v, 1, 0)
        out = _step(q, k, v, out)
        if step + 1 != steps:
            k = next_k
            v = next_v
    return out
'''

RING_AFTER = RING_BEFORE.replace("            k = next_k\n            v = next_v\n",
                                 "            k, v = next_k, next_v\n")

RING_TREE = {"kernels/ring/ring.py": '''import torch


# portq: ports vllm:pkg/ops/ring.py::ring_forward
def rotate_attention(q, k, v, steps, buf):
    out = None
    for step in range(steps):
        next_k = torch.roll(k, 1, 0)
        next_v = torch.roll(v, 1, 0)
        part = q @ k.t() @ v
        out = part if out is None else out + part
        if step + 1 != steps:
            k = next_k
            v = next_v
    return out
''', "kernels/ring/engine.py": "from portq_kernels.ring.ring import rotate_attention\n\n\n"
     "def run(q, k, v):\n    return rotate_attention(q, k, v, 4, None)\n"}


def _ring(tmp_path, before, after):
    return classify_commit(tmp_path, {RING: before}, {RING: after}, RING_TREE, message="nfc")


def _forward(verdict):
    return next(s for s in verdict.symbols if s.symbol == "ring_forward")


def _flagged(tmp_path, before, after):
    verdict = _ring(tmp_path, before, after)
    forward = _forward(verdict)
    assert forward.verdict == NEEDS_REVIEW, (forward.verdict, forward.reason)
    assert "parallel-assignment" not in forward.rules, forward.rules


def test_two_assignments_written_as_one_tuple_assignment_are_cosmetic(tmp_path):
    verdict = _ring(tmp_path, RING_BEFORE, RING_AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    forward = _forward(verdict)
    assert "parallel-assignment" in forward.rules, forward.rules
    assert "tuple assignment" in forward.reason, forward.reason


def test_a_tuple_assignment_split_into_two_is_cosmetic(tmp_path):
    verdict = _ring(tmp_path, RING_AFTER, RING_BEFORE)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "parallel-assignment" in _forward(verdict).rules


def test_an_earlier_target_read_by_its_own_right_side_is_cosmetic(tmp_path):
    before = RING_BEFORE.replace("            k = next_k\n", "            k = k + next_k\n")
    after = RING_AFTER.replace("k, v = next_k, next_v", "k, v = k + next_k, next_v")
    verdict = _ring(tmp_path, before, after)
    assert "parallel-assignment" in _forward(verdict).rules, _forward(verdict).reason


def test_a_swap_is_still_flagged(tmp_path):
    before = RING_BEFORE.replace("            k = next_k\n            v = next_v\n",
                                 "            k = v\n            v = k\n")
    _flagged(tmp_path, before, before.replace("            k = v\n            v = k\n", "            k, v = v, k\n"))


def test_a_later_right_side_reading_an_earlier_target_is_still_flagged(tmp_path):
    before = RING_BEFORE.replace("            v = next_v\n", "            v = next_v + k\n")
    _flagged(tmp_path, before, RING_AFTER.replace("k, v = next_k, next_v", "k, v = next_k, next_v + k"))


def test_subscript_targets_are_still_flagged(tmp_path):
    before = RING_BEFORE.replace("            k = next_k\n            v = next_v\n",
                                 "            buf[0] = next_k\n            buf[1] = next_v\n")
    _flagged(tmp_path, before, before.replace("            buf[0] = next_k\n            buf[1] = next_v\n",
                                              "            buf[0], buf[1] = next_k, next_v\n"))


def test_attribute_targets_are_still_flagged(tmp_path):
    before = RING_BEFORE.replace("            k = next_k\n            v = next_v\n",
                                 "            buf.k = next_k\n            buf.v = next_v\n")
    _flagged(tmp_path, before, before.replace("            buf.k = next_k\n            buf.v = next_v\n",
                                              "            buf.k, buf.v = next_k, next_v\n"))


def test_a_later_right_side_that_calls_is_still_flagged(tmp_path):
    before = RING_BEFORE.replace("            v = next_v\n", "            v = torch.roll(next_v, 1, 0)\n")
    _flagged(tmp_path, before, RING_AFTER.replace("k, v = next_k, next_v", "k, v = next_k, torch.roll(next_v, 1, 0)"))


def test_a_pair_inside_try_is_still_flagged(tmp_path):
    wrap = ("            try:\n                k = next_k\n                v = next_v\n"
            "            except NameError:\n                pass\n")
    before = RING_BEFORE.replace("            k = next_k\n            v = next_v\n", wrap)
    after = before.replace("                k = next_k\n                v = next_v\n",
                           "                k, v = next_k, next_v\n")
    _flagged(tmp_path, before, after)


def test_a_changed_value_is_still_flagged(tmp_path):
    _flagged(tmp_path, RING_BEFORE, RING_AFTER.replace("k, v = next_k, next_v", "k, v = next_k, next_k"))
