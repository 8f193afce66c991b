"""``regrouped-return``: a method that returned what a helper of its class
returns (``return Norm.__backward(g, x, w)``) and now unpacks the helper's
shorter tuple and returns it with ``None`` put back at the positions the helper
stopped returning returns the same values, when that call is the helper's only
reference in the module and the helper ends in a return: both methods are
cosmetic. A second caller, another position, a dropped element that was not
``None``, or any other change stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

OPS = "vllm/_custom_ops.py"

BEFORE = '''import torch


class Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, *grad_outputs):
        (grad_output,) = grad_outputs
        x, w = ctx.saved_tensors
        return Norm.__backward(grad_output, x, w)

    @staticmethod
    def __backward(grad_output, x, w):
        staging = torch.empty((x.shape[0], x.shape[1]), device=x.device)
        grad_input = grad_output * w
        grad_weight = torch.sum(staging * grad_output * x, 0)
        return grad_input, None, grad_weight, None
'''

AFTER = BEFORE.replace(
    "        return Norm.__backward(grad_output, x, w)\n",
    "        grad_input, grad_weight = Norm.__backward(grad_output, x, w)\n"
    "        return grad_input, None, grad_weight, None\n").replace(
    "torch.empty((x.shape[0], x.shape[1]), device=x.device)", "torch.empty(x.shape[0], x.shape[1], device=x.device)")
AFTER = AFTER[:AFTER.rindex("        return grad_input, None, grad_weight, None\n")] + "        return grad_input, grad_weight\n"

TREE = {"kernels/kv_cache/norm.py": BEFORE.replace("    @staticmethod\n    def backward",
                                                   "    # portq: ports vllm:vllm/_custom_ops.py::Norm.backward\n"
                                                   "    @staticmethod\n    def backward").replace(
    "    @staticmethod\n    def __backward",
    "    # portq: ports vllm:vllm/_custom_ops.py::Norm.__backward\n    @staticmethod\n    def __backward")}


def _edit(tmp_path, after, before=BEFORE, tree=TREE):
    return classify_commit(tmp_path, {OPS: before}, {OPS: after}, tree, message="edit")


def _symbols(verdict):
    return [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]


def test_a_tuple_regrouped_across_caller_and_callee_is_cosmetic(tmp_path):
    verdict = _edit(tmp_path, AFTER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _symbols(verdict)
    assert "regrouped-return" in verdict.rules, verdict.rules


def test_a_single_value_regrouped_is_cosmetic(tmp_path):
    before = BEFORE.replace("return grad_input, None, grad_weight, None", "return grad_input, None")
    after = before.replace("        return Norm.__backward(grad_output, x, w)\n",
                           "        grad_input = Norm.__backward(grad_output, x, w)\n        return grad_input, None\n")
    after = after[:after.rindex("        return grad_input, None\n")] + "        return grad_input\n"
    verdict = _edit(tmp_path, after, before)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _symbols(verdict)
    assert "regrouped-return" in verdict.rules, verdict.rules


def test_a_none_put_back_at_another_position_stays_flagged(tmp_path):
    after = AFTER.replace("        return grad_input, None, grad_weight, None\n",
                          "        return grad_input, grad_weight, None, None\n")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict != NOT_APPLICABLE, _symbols(verdict)
    assert "regrouped-return" not in verdict.rules, verdict.rules


def test_a_helper_with_a_second_caller_stays_flagged(tmp_path):
    second = "\n    @staticmethod\n    def grads(g, x, w):\n        return Norm.__backward(g, x, w)\n"
    before = BEFORE.replace("\n    @staticmethod\n    def __backward", second + "\n    @staticmethod\n    def __backward")
    after = AFTER.replace("\n    @staticmethod\n    def __backward", second + "\n    @staticmethod\n    def __backward")
    verdict = _edit(tmp_path, after, before)
    assert verdict.verdict != NOT_APPLICABLE, _symbols(verdict)
    assert "regrouped-return" not in verdict.rules, verdict.rules


def test_a_dropped_value_that_was_not_none_stays_flagged(tmp_path):
    before = BEFORE.replace("return grad_input, None, grad_weight, None", "return grad_input, x, grad_weight, None")
    after = before.replace("        return Norm.__backward(grad_output, x, w)\n",
                           "        grad_input, grad_weight = Norm.__backward(grad_output, x, w)\n"
                           "        return grad_input, None, grad_weight, None\n")
    after = after[:after.rindex("        return grad_input, x, grad_weight, None\n")] + \
        "        return grad_input, grad_weight\n"
    verdict = _edit(tmp_path, after, before)
    assert verdict.verdict != NOT_APPLICABLE, _symbols(verdict)
    assert "regrouped-return" not in verdict.rules, verdict.rules


def test_a_nested_function_returning_a_tuple_does_not_block_the_regroup(tmp_path):
    grid = "        def grid(meta):\n            return (x.shape[0],)\n\n"
    before = BEFORE.replace("        grad_input = grad_output * w\n", grid + "        grad_input = grad_output * w\n")
    after = AFTER.replace("        grad_input = grad_output * w\n", grid + "        grad_input = grad_output * w\n")
    verdict = _edit(tmp_path, after, before)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _symbols(verdict)


def test_a_public_helper_another_module_may_call_stays_flagged(tmp_path):
    before, after = (text.replace("__backward", "backward_impl") for text in (BEFORE, AFTER))
    tree = {path: text.replace("__backward", "backward_impl") for path, text in TREE.items()}
    verdict = _edit(tmp_path, after, before, tree)
    assert verdict.verdict != NOT_APPLICABLE, _symbols(verdict)
    assert "regrouped-return" not in verdict.rules, verdict.rules
