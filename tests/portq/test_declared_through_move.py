"""A parameter the tree declares not carried (``[PARAM]``) on the upstream
definition it anchors, when upstream later moves that definition to another
file under a new name with the same body (docs/tricky-cases.md, "branches
the port does not have"): the declaration follows the definition by
identity, so the moved definition's parameter of that name is as absent for
the port as it was, and a change confined to the branches it selects is not
the port's (``moved-declared-param`` with ``lacked-branch``). A change on
the port's path and a tree that declares nothing stay flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, the
move and rename into another file, then the edit (entry 2)."""
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


def act(x, fast, BLOCK):
''' + BODY

MOVED = '''\
import torch


def act_impl(x, fast, BLOCK):
''' + BODY

PORT = '''\
import torch


# portq: ports vllm:ops/act.py::act
{declared}
def gated_act(x, BLOCK):
    return x / (1 + torch.exp(-x))
'''

DECLARED = "# portq: not-carried vllm:ops/act.py::act[fast] -- one exact path only"


def _tree(declared=DECLARED):
    return {"kernels/act.py": PORT.format(declared=declared),
            "engine/run.py": "from kernels.act import gated_act\n\n\n"
                             "def step(x):\n    return gated_act(x, 128)\n"}


def _edit(tmp_path, after, tree=None):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/act.py": BASE}),
        CommitSpec("move and rename", files={"ops/act.py": None, "ops/act_impl.py": MOVED}),
        CommitSpec("edit", files={"ops/act_impl.py": after}),
    ], tree or _tree(), matrix=MATRIX)
    return verdicts[2]


FAST_CHANGED = MOVED.replace("out = x * torch.sigmoid(x)", "out = torch.nn.functional.silu(x) * 1.0")
EXACT_CHANGED = MOVED.replace("out = x / (1 + torch.exp(-x))", "out = x / (1 + torch.exp(-x.float()))")


def test_a_change_under_a_parameter_declared_on_the_old_name_is_not_the_ports_after_a_move(tmp_path):
    verdict = _edit(tmp_path, FAST_CHANGED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert {"moved-declared-param", "lacked-branch"} <= set(verdict.rules), verdict.rules


def test_a_change_on_the_ports_path_of_the_moved_definition_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, EXACT_CHANGED)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_with_nothing_declared_the_moved_definitions_branch_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, FAST_CHANGED, tree=_tree(declared="# no declaration"))
    assert verdict.verdict in FLAGGED, verdict.reason
