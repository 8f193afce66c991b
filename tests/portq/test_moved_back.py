"""A body upstream carries away from an anchored definition and later moves
back to a place it held before (docs/tricky-cases.md, "a body moved back"):
the definition the commit adds under the earlier name is where the carrier
the commit removes went, so the move is followed like any other (the added
one is the port's code, the removed one moved with the same body), not a
new definition judged against the port nor a coverage hole. A body changed
on the way back stays flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, the
launch extracted into a helper of another file, the helper moved to a third
file, then moved back (entry 3)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import OPS_ROW_MATRIX as MATRIX
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

BASE = '''\
import torch

from ops.kernels import act_kernel


class Act:
    @staticmethod
    def forward(x, BLOCK):
        out = torch.empty_like(x)
        n = x.numel()
        act_kernel[(n // BLOCK,)](x, out, n, BLOCK=BLOCK)
        return out
'''

CALLER = '''\
import torch

from ops.launch import act_launch


class Act:
    @staticmethod
    def forward(x, BLOCK):
        out = torch.empty_like(x)
        act_launch(x, out, BLOCK)
        return out
'''

HELPER = '''\
from ops.kernels import act_kernel


def act_launch(x, out, BLOCK):
    n = x.numel()
    act_kernel[(n // BLOCK,)](x, out, n, BLOCK=BLOCK)
'''


REEXPORT = "from ops.launch_impl import act_launch\n"

KERNELS = '''\
import triton


@triton.jit
def act_kernel(x, out, n, BLOCK: tl.constexpr):
    pass
'''

PORT = '''\
import torch

from kernels.k import act_kernel


class GatedAct:
    # portq: ports vllm:ops/act.py::Act.forward
    @staticmethod
    def forward(x, block):
        out = torch.empty_like(x)
        n = x.numel()
        act_kernel[(n // block,)](x, out, n, BLOCK=block)
        return out
'''

TREE = {"kernels/act.py": PORT,
        "engine/run.py": "from kernels.act import GatedAct\n\n\ndef step(x):\n    return GatedAct.forward(x, 128)\n"}


BACK = "# launch helpers, kept beside the entry points again\n" + HELPER


def _history(tmp_path, back=BACK):
    moved_back = {"ops/launch.py": back, "ops/launch_impl.py": None}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/act.py": BASE, "ops/kernels.py": KERNELS}),
        CommitSpec("extract the launch", files={"ops/act.py": CALLER, "ops/launch.py": HELPER}),
        CommitSpec("move the launch", files={"ops/launch.py": REEXPORT, "ops/launch_impl.py": HELPER}),
        CommitSpec("move it back", files=moved_back),
    ], TREE, matrix=MATRIX)
    return verdicts[3]


def _decided(verdict, path):
    return next(s for s in verdict.symbols if (s.path, s.symbol) == (path, "act_launch"))


def test_a_carrier_moved_back_to_its_earlier_place_is_followed_there(tmp_path):
    verdict = _history(tmp_path)
    left, back = _decided(verdict, "ops/launch_impl.py"), _decided(verdict, "ops/launch.py")
    # the carrier it left moved with the same body, and the definition added back is where it went
    assert (left.verdict, left.justification, left.rules) == (NOT_APPLICABLE, "cosmetic", ["moved-definition"]), \
        left.reason
    assert (back.verdict, back.justification) == (NOT_APPLICABLE, "cosmetic"), back.reason
    assert "where this commit moved" in back.reason, back.reason


def test_a_carrier_changed_on_the_way_back_stays_flagged(tmp_path):
    verdict = _history(tmp_path, back=BACK.replace("(n // BLOCK,)", "(n // BLOCK + 1,)"))
    assert verdict.verdict in FLAGGED, verdict.reason
    assert _decided(verdict, "ops/launch.py").verdict in FLAGGED
