"""A method's receiver is never a parameter the port lacks (docs/tricky-cases.md, "a receiver is not a
lacked parameter"): ``lacked-branch`` folds the parameters a port does not have at upstream's default, but
``self`` (``cls``, ``ctx``) is the object the method runs on, and a ported method that has it reads the same
members upstream's does. A change to what the method computes through its receiver is the port's: flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

PICKER = "pkg/ops/picker.py"

PICKER_BEFORE = '''import torch


class Picker(torch.nn.Module):
    def __init__(self, kernels):
        super().__init__()
        self.kernels = kernels

    def warm(self, size, args):
        timed = {}
        for i, kernel in enumerate(self.kernels):
            if size > 32 and kernel.kind == "split":
                continue
            if size < 16 and kernel.kind == "full":
                continue
            timed[i] = kernel.time(args)
        return timed

    def pick(self, size):
        return self.kernels[0] if size > 1 else self.kernels[-1]
'''

# The port carries warm as upstream writes it, receiver and all, and not pick.
PICKER_TREE = {"kernels/picker/picker.py": '''import torch


class Picker(torch.nn.Module):
    def __init__(self, kernels):
        super().__init__()
        self.kernels = kernels

    # portq: ports vllm:pkg/ops/picker.py::Picker.warm
    def warm(self, size, args):
        timed = {}
        for i, kernel in enumerate(self.kernels):
            if size > 32 and kernel.kind == "split":
                continue
            if size < 16 and kernel.kind == "full":
                continue
            timed[i] = kernel.time(args)
        return timed
''', "kernels/picker/engine.py": "from portq_kernels.picker.picker import Picker\n\n\n"
     "def run(kernels, size, args):\n    return Picker(kernels).warm(size, args)\n"}


def _picker(tmp_path, after, tree=PICKER_TREE):
    return classify_commit(tmp_path, {PICKER: PICKER_BEFORE}, {PICKER: after}, tree, message="edit")


def test_a_threshold_change_in_a_ported_method_is_not_set_aside_through_its_receiver(tmp_path):
    after = PICKER_BEFORE.replace("if size > 32 and", "if size > 16 and")
    verdict = _picker(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "lacked-branch" not in verdict.rules, verdict.rules


def test_a_change_to_what_the_receiver_is_read_for_is_the_ports(tmp_path):
    after = PICKER_BEFORE.replace("timed[i] = kernel.time(args)", "timed[i] = kernel.time(args) * len(self.kernels)")
    verdict = _picker(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "lacked-branch" not in verdict.rules, verdict.rules


# Upstream's skip tests with an empty body (a skip not yet wired to the loop): the port has every
# parameter upstream's warm has, so no branch is the port's to lack, whatever the thresholds now select.
_EMPTY_SKIPS = PICKER_BEFORE.replace("                continue\n", "                pass\n")
_EMPTY_SKIPS_TREE = {**PICKER_TREE, "kernels/picker/picker.py": PICKER_TREE["kernels/picker/picker.py"]
                     .replace("                continue\n", "                pass\n")}


def test_a_threshold_change_in_an_empty_skip_of_a_ported_method_is_not_a_lacked_branch(tmp_path):
    after = _EMPTY_SKIPS.replace("if size > 32 and", "if size > 16 and")
    verdict = classify_commit(tmp_path, {PICKER: _EMPTY_SKIPS}, {PICKER: after}, _EMPTY_SKIPS_TREE, message="edit")
    assert "lacked-branch" not in verdict.rules, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert verdict.verdict == NEEDS_REVIEW, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
