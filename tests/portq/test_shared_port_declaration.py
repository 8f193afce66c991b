"""A parameter declaration belongs to the in-tree definition it sits on (issue 24;
``shared-port-declaration``).

One in-tree definition ports two upstream definitions, an old entry point and
the helper its path now runs through, and declares a parameter of the entry
point not carried (``entry[smooth]``). The helper takes a parameter of the
same name, defaulted on. The port has no such parameter at all, so what the
declaration says of the port holds for the helper's parameter too: the
branches it selects are off (``lacked-branch``) and a change only inside them
is NOT_APPLICABLE/not-carried. A declaration sitting on another in-tree
definition, a port that takes a parameter of that name, or a change outside
the branch stays flagged."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BEFORE = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


def triton_path(x, BLOCK=128, smooth=True):
    y = torch.empty_like(x)
    if smooth:
        x = x - x.mean()
    n = x.numel()
    scale_kernel[(n // BLOCK + 1,)](x, y, n, BLOCK=BLOCK)
    return y


def entry(x, smooth=False):
    return triton_path(x, smooth=smooth)
'''

IN_BRANCH = BEFORE.replace("        x = x - x.mean()\n", "        x = x - x.mean(dim=-1, keepdim=True)\n")

PORT = '''import torch
import triton
import triton.language as tl


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::scale_kernel
@triton.jit
def _double(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)


# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::entry
# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::triton_path
# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::entry[smooth] -- inputs are scaled as they come
def scale(x, block=128):
    y = torch.empty_like(x)
    n = x.numel()
    _double[(n // block + 1,)](x, y, n, BLOCK=block)
    return y
'''

ELSEWHERE_PORT = PORT.replace(
    "# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::entry[smooth] -- inputs are scaled as they come\n",
    "").replace("def scale(x, block=128):", '''def scale(x, block=128):
    return _scale(x, block)


# portq: not-carried vllm:aiter/ops/triton/gather_kv_b_proj.py::entry[smooth] -- inputs are scaled as they come
def _scale(x, block):''')

TAKING_PORT = PORT.replace("def scale(x, block=128):", "def scale(x, block=128, smooth=False):")


def _helper(tmp_path, before, after, port=PORT):
    tree = {"kernels/mla_prefix/scale.py": port,
            "kernels/mla_prefix/caller.py": "from portq_kernels.mla_prefix.scale import scale\n\n\n"
                                            "def apply(x):\n    return scale(x, 128)\n"}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={OPS: before}),
                                              CommitSpec("change", files={OPS: after})], tree)
    return next(s for s in verdicts[1].symbols if s.symbol == "triton_path")


def test_a_change_in_the_branch_of_a_parameter_declared_on_a_sibling_is_not_carried(tmp_path):
    helper = _helper(tmp_path, BEFORE, IN_BRANCH)
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-carried"), helper.reason
    assert "shared-port-declaration" in helper.rules
    assert "smooth" in helper.reason


def test_a_declaration_on_another_in_tree_definition_is_not_shared(tmp_path):
    helper = _helper(tmp_path, BEFORE, IN_BRANCH, ELSEWHERE_PORT)
    assert "shared-port-declaration" not in helper.rules, helper.reason
    assert helper.verdict != NOT_APPLICABLE


def test_a_port_taking_the_parameter_is_compared(tmp_path):
    helper = _helper(tmp_path, BEFORE, IN_BRANCH, TAKING_PORT)
    assert "shared-port-declaration" not in helper.rules, helper.reason
    assert helper.verdict != NOT_APPLICABLE


def test_a_change_outside_the_branch_is_compared(tmp_path):
    after = IN_BRANCH.replace("    y = torch.empty_like(x)\n", "    y = torch.zeros_like(x)\n")
    helper = _helper(tmp_path, BEFORE, after)
    assert "shared-port-declaration" not in helper.rules, helper.reason
    assert helper.verdict != NOT_APPLICABLE
