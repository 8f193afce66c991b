"""A change confined to a definition's one ``return`` whose new form the port's one ``return`` already reads
(parameters by position, callees through the tree's anchors) is IN_SYNC (rule ``port-has-returned-change``);
a port returning something else, or calling a helper that ports another definition, stays flagged."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "ACT"
title    = "Activations"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

UPSTREAM = '''\
import triton
import triton.language as tl


@triton.jit
def sigmoid(input):
    """Sigmoid."""
    return 1 / (1 + tl.exp(-input))


@triton.jit
def relu(input):
    return tl.maximum(0, input)


@triton.jit
def tanh(input):
    """Tanh."""
    return {tanh}
'''

OWN = "2 * sigmoid(2 * input) - 1"


def _tree(tanh_body: str, relu_anchor: str = "relu") -> dict[str, str]:
    return {
        "kernels/act.py": f'''\
import triton
import triton.language as tl


# portq: ports vllm:lib/act.py::sigmoid
@triton.jit
def sigmoid_f(x):
    return 1 / (1 + tl.exp(-x))


# portq: ports vllm:lib/act.py::{relu_anchor}
@triton.jit
def relu_f(x):
    return tl.maximum(0, x)


# portq: ports vllm:lib/act.py::tanh
@triton.jit
def tanh_f(y):
{tanh_body}


@triton.jit
def act_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tanh_f(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


def run_act(x):
    y = x.new_empty(x.shape)
    act_kernel[(1,)](x, y, x.numel(), BLOCK=1024)
    return y
''',
        "engine/model.py": "from kernels.act import run_act\n\n\ndef run(x):\n    return run_act(x)\n",
    }


def _tanh(tmp_path, tree_body: str, back_to: str = OWN, relu_anchor: str = "relu"):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/act.py": UPSTREAM.format(tanh=OWN)}),
        CommitSpec("use the library tanh", files={"lib/act.py": UPSTREAM.format(tanh="tl.math.tanh(input)")}),
        CommitSpec("compute tanh through sigmoid", files={"lib/act.py": UPSTREAM.format(tanh=back_to)}),
    ], _tree(tree_body, relu_anchor), matrix=MATRIX, first=2)
    return next(s for s in verdicts[1].symbols if s.symbol == "tanh")


def test_a_return_the_port_already_computes_through_its_own_helper_is_in_sync(tmp_path):
    kernel = _tanh(tmp_path, "    return 2 * sigmoid_f(2 * y) - 1")
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert kernel.rules == ["port-has-returned-change"]


def test_a_port_returning_another_expression_stays_flagged(tmp_path):
    kernel = _tanh(tmp_path, "    return 2 * sigmoid_f(2 * y) + 1")
    assert kernel.verdict in FLAGGED and "port-has-returned-change" not in kernel.rules, kernel.reason


def test_a_port_calling_a_helper_that_ports_something_else_stays_flagged(tmp_path):
    kernel = _tanh(tmp_path, "    return 2 * relu_f(2 * y) - 1")
    assert kernel.verdict in FLAGGED and "port-has-returned-change" not in kernel.rules, kernel.reason


def test_a_port_with_two_returns_stays_flagged(tmp_path):
    kernel = _tanh(tmp_path, "    if y is None:\n        return y\n    return 2 * sigmoid_f(2 * y) - 1")
    assert kernel.verdict in FLAGGED and "port-has-returned-change" not in kernel.rules, kernel.reason


def test_a_port_reading_a_local_where_upstream_reads_a_parameter_stays_flagged(tmp_path):
    kernel = _tanh(tmp_path, "    z = y * 0.5\n    return 2 * sigmoid_f(2 * z) - 1")
    assert kernel.verdict in FLAGGED and "port-has-returned-change" not in kernel.rules, kernel.reason
