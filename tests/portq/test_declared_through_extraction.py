"""A parameter the tree declares not carried on the definition it anchors,
passed on unchanged to a helper upstream extracted that definition's body
into (docs/tricky-cases.md, "branches the port does not have"): the helper's
own parameter receives exactly that input, so it is as absent for the port,
and a change confined to the branches it selects in the helper is not the
port's (``extracted-declared-param`` with ``lacked-branch``). A helper
parameter the caller computes from the declared one, a change on the
port's path, and a tree that declares nothing stay flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, the
extraction into another file, then the edit (entry 2)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import OPS_ROW_MATRIX as MATRIX
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

BODY = '''\
    out = torch.empty_like(x)
    if fast:
        out = x * torch.sigmoid(x)
    else:
        out = x / (1 + torch.exp(-x))
    return out
'''

BASE = '''\
import torch


class Act(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, use_fast, BLOCK):
        fast = use_fast
''' + "".join("    " + line + "\n" for line in BODY.splitlines())

CALLER = '''\
import torch

from ops.act_forward import act_forward


class Act(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, use_fast, BLOCK):
        return act_forward(x=x, fast={argument}, BLOCK=BLOCK)
'''

HELPER = '''\
import torch


def act_forward(x, fast, BLOCK):
''' + BODY

PORT = '''\
import torch


class GatedAct(torch.autograd.Function):
    # portq: ports vllm:ops/act.py::Act.forward
    {declared}
    @staticmethod
    def forward(ctx, x, BLOCK):
        return x / (1 + torch.exp(-x))
'''

DECLARED = "# portq: not-carried vllm:ops/act.py::Act.forward[use_fast] -- one exact path only"


def _tree(declared=DECLARED):
    return {"kernels/act.py": PORT.format(declared=declared),
            "engine/run.py": "from kernels.act import GatedAct\n\n\n"
                             "def step(x):\n    return GatedAct.apply(x, 128)\n"}


def _edit(tmp_path, helper_after, argument="use_fast", tree=None):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/act.py": BASE}),
        CommitSpec("extract the forward", files={"ops/act.py": CALLER.format(argument=argument),
                                                 "ops/act_forward.py": HELPER}),
        CommitSpec("edit", files={"ops/act_forward.py": helper_after}),
    ], tree or _tree(), matrix=MATRIX)
    return verdicts[2]


FAST_CHANGED = HELPER.replace("out = x * torch.sigmoid(x)", "out = torch.nn.functional.silu(x) * 1.0")
EXACT_CHANGED = HELPER.replace("out = x / (1 + torch.exp(-x))", "out = x / (1 + torch.exp(-x.float()))")


def test_a_change_under_a_declared_input_passed_on_to_an_extracted_helper_is_not_the_ports(tmp_path):
    verdict = _edit(tmp_path, FAST_CHANGED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert {"extracted-declared-param", "lacked-branch"} <= set(verdict.rules), verdict.rules


def test_a_change_on_the_ports_path_of_the_helper_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, EXACT_CHANGED)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_helper_input_computed_from_the_declared_one_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, FAST_CHANGED, argument="not use_fast")
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "extracted-declared-param" not in verdict.rules


def test_with_nothing_declared_the_helpers_branch_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, FAST_CHANGED, tree=_tree(declared="# no declaration"))
    assert verdict.verdict in FLAGGED, verdict.reason
