"""A caller that stops passing a keyword because its callee drops that parameter in the same commit
(``dropped-keyword``) makes no change of its own: the removal is decided at the callee, against the
callee's port. The caller stays flagged when the callee keeps the parameter (the dropped value falls
back to a default), when the dropped value is computed by a call, or when the caller changes more."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import OPS_ROW_MATRIX as MATRIX
from tests.portq.golden.pipeline import classify_commit

HELPERS = '''\
import torch


def run_backward(g, up, {params}BLOCK{rest}):
    dx = torch.empty_like(g)
    dx.copy_(g * up * 2.0)
    return dx
'''

OP = '''\
import torch

from ops.helpers import run_backward


def gate_grad(state, dy):
    up = state.up
    dx = run_backward(
        g=dy,
        up=up,
        {passed}BLOCK=state.BLOCK,
    )
    return dx
'''

TREE = {
    "kernels/gate.py": '''\
import torch


# portq: ports vllm:ops/helpers.py::run_backward
def gate_backward(g, up, BLOCK):
    dx = torch.empty_like(g)
    dx.copy_(g * up * 2.0)
    return dx


# portq: ports vllm:ops/gate.py::gate_grad
def grad(state, dy):
    up = state.up
    dx = gate_backward(
        g=dy,
        up=up,
        BLOCK=state.BLOCK,
    )
    return dx
''',
    "engine/model.py": "from kernels.gate import grad\n\n\ndef run(state, dy):\n    return grad(state, dy)\n",
}


def _commit(tmp_path, new_params, new_passed, new_rest=""):
    return classify_commit(tmp_path,
                           {"ops/helpers.py": HELPERS.format(params="width, ", rest=""),
                            "ops/gate.py": OP.format(passed="width=state.width,\n            ")},
                           {"ops/helpers.py": HELPERS.format(params=new_params, rest=new_rest),
                            "ops/gate.py": OP.format(passed=new_passed)}, TREE, MATRIX)


def _backward(entry):
    return next(s for s in entry.symbols if s.symbol == "gate_grad")


def test_a_keyword_dropped_with_its_callee_parameter_is_no_change_of_the_caller(tmp_path):
    entry = _commit(tmp_path, "", "")
    method = _backward(entry)
    assert (method.verdict, method.justification) == (NOT_APPLICABLE, "cosmetic"), method.reason
    assert "dropped-keyword" in method.rules, method.rules
    assert entry.verdict not in FLAGGED, entry.reason


def test_a_keyword_dropped_while_the_callee_keeps_the_parameter_stays_flagged(tmp_path):
    entry = _commit(tmp_path, "width=4, ", "")
    method = _backward(entry)
    assert method.verdict in FLAGGED, method.reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_keyword_dropped_whose_value_was_a_call_stays_flagged(tmp_path):
    entry = classify_commit(tmp_path,
                            {"ops/helpers.py": HELPERS.format(params="width, ", rest=""),
                             "ops/gate.py": OP.format(passed="width=state.pop(),\n            ")},
                            {"ops/helpers.py": HELPERS.format(params="", rest=""),
                             "ops/gate.py": OP.format(passed="")}, TREE, MATRIX)
    assert _backward(entry).verdict in FLAGGED, _backward(entry).reason


def test_a_keyword_dropped_alongside_another_change_stays_flagged(tmp_path):
    entry = classify_commit(tmp_path,
                            {"ops/helpers.py": HELPERS.format(params="width, ", rest=""),
                             "ops/gate.py": OP.format(passed="width=state.width,\n            ")},
                            {"ops/helpers.py": HELPERS.format(params="", rest=""),
                             "ops/gate.py": OP.format(passed="").replace("g=dy,", "g=dy * 2,")},
                            TREE, MATRIX)
    assert _backward(entry).verdict in FLAGGED, _backward(entry).reason


def test_a_keyword_dropped_into_a_callee_catch_all_stays_flagged(tmp_path):
    # the callee still receives the keyword through `**options`, so the call no longer passes it
    entry = _commit(tmp_path, "", "", new_rest=", **options")
    assert _backward(entry).verdict in FLAGGED, _backward(entry).reason
