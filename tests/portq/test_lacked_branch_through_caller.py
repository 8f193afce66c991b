"""Branches the port does not have, in a body upstream moved out of the
definition the port anchors (docs/tricky-cases.md, "branches the port does
not have"): the extracted helper's parameters have no defaults of their own,
but the anchored definition passes its own defaulted parameters straight to
it, so a parameter the port lacks still takes upstream's default there
(``lacked-branch``). A re-implementation with its own names binds upstream's
leading parameters by position when every later one has a default: it is
upstream called with fewer arguments. Positions are read at the scanned
range's base, where the port is taken as in sync, so a parameter upstream
inserts in the middle later does not shift the port's inputs.

Each runs the real ``portq scan`` over a small synthetic history: base, the
extraction, then the edit (entry 2)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "LOSS"
title    = "Row losses"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

KERNEL = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _loss_kernel(x_ptr, loss_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(loss_ptr + row, tl.sum(x * x))
'''

BODY = '''\
    loss_1d = torch.zeros(x.shape[0], device=x.device)
    _loss_kernel[(x.shape[0],)](x, loss_1d, x.shape[1], BLOCK=128)
    if scale is not None:
        loss_1d = loss_1d * scale
    loss = torch.sum(loss_1d)
    return loss
'''

SIGNATURE = 'ctx, x, target, ignore_index=-100, reduction="mean", scale=None'

BASE = KERNEL + f'''

class LossFunction(torch.autograd.Function):
    @staticmethod
    def forward({SIGNATURE}):
''' + "".join("    " + line + "\n" for line in BODY.splitlines())

EXTRACTED = KERNEL + f'''

def loss_forward(x, target, ignore_index, reduction, scale):
{BODY}

class LossFunction(torch.autograd.Function):
    @staticmethod
    def forward({SIGNATURE}):
        loss = loss_forward(x, target, ignore_index, reduction, scale)
        return loss
'''

PORT = '''\
import torch

from kernels.rows import row_loss_kernel


class RowLoss(torch.autograd.Function):
    # portq: ports vllm:ops/loss.py::LossFunction.forward
    @staticmethod
    def forward(ctx, {names}):
        losses = torch.zeros(logits.shape[0], device=logits.device)
        row_loss_kernel[(logits.shape[0],)](logits, losses, logits.shape[1], BLOCK=128)
        return torch.sum(losses)
'''

ROWS = '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/loss.py::_loss_kernel
@triton.jit
def row_loss_kernel(x_ptr, loss_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(loss_ptr + row, tl.sum(x * x))
'''

# A re-implementation with its own names: the first three of upstream's inputs, by position.
OWN_NAMES = "logits, labels, skip_label"


def _tree(names=OWN_NAMES):
    return {"kernels/rows.py": ROWS, "kernels/loss.py": PORT.format(names=names),
            "engine/train.py": "from kernels.loss import RowLoss\n\n\n"
                               "def step(x, y):\n    return RowLoss.apply(x, y, -1)\n"}


def _edit(tmp_path, after, tree=None, extracted=EXTRACTED):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": extracted}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], tree or _tree(), matrix=MATRIX)
    return verdicts[2]


_NONE_REDUCTION = EXTRACTED.replace("    loss = torch.sum(loss_1d)\n", '    if reduction == "none":\n'
                                    "        loss = loss_1d\n    else:\n        loss = torch.sum(loss_1d)\n")


def _not_carried(verdict):
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "lacked-branch" in verdict.rules, verdict.rules


def test_a_branch_for_a_mode_the_port_lacks_in_an_extracted_body_is_not_the_ports(tmp_path):
    assert _NONE_REDUCTION != EXTRACTED
    _not_carried(_edit(tmp_path, _NONE_REDUCTION))


def test_a_port_with_upstreams_names_lacks_the_rest_by_name(tmp_path):
    tree = {**_tree(), "kernels/loss.py": PORT.format(names="x, target, ignore_index").replace("logits", "x")}
    _not_carried(_edit(tmp_path, _NONE_REDUCTION, tree))


def test_an_optional_argument_left_at_none_keeps_its_branch_out_of_the_port(tmp_path):
    _not_carried(_edit(tmp_path, EXTRACTED.replace("loss_1d * scale", "loss_1d * scale * scale")))


def test_a_change_on_the_default_mode_is_still_flagged(tmp_path):
    after = _NONE_REDUCTION.replace("    else:\n        loss = torch.sum(loss_1d)\n",
                                    "    else:\n        loss = torch.sum(loss_1d) / x.shape[0]\n")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "lacked-branch" not in verdict.rules


def test_a_mode_the_caller_computes_decides_nothing(tmp_path):
    extracted = EXTRACTED.replace("loss_forward(x, target, ignore_index, reduction, scale)",
                                  "loss_forward(x, target, ignore_index, reduction.lower(), scale)")
    after = _NONE_REDUCTION.replace("loss_forward(x, target, ignore_index, reduction, scale)",
                                    "loss_forward(x, target, ignore_index, reduction.lower(), scale)")
    verdict = _edit(tmp_path, after, extracted=extracted)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "lacked-branch" not in verdict.rules


def test_positions_bind_only_when_every_later_upstream_parameter_has_a_default(tmp_path):
    required = 'ctx, x, target, ignore_index, reduction, scale=None'
    extracted = EXTRACTED.replace(SIGNATURE, required)
    after = _NONE_REDUCTION.replace(SIGNATURE, required)
    verdict = _edit(tmp_path, after, extracted=extracted)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "lacked-branch" not in verdict.rules


# --- an argument the callee never reads for the port's values ---------------------------

AUX_KERNEL = KERNEL.replace("def _loss_kernel(x_ptr, loss_ptr, n, BLOCK: tl.constexpr):",
                            "def _loss_kernel(x_ptr, loss_ptr, aux_ptr, n, BLOCK: tl.constexpr, "
                            "RETURN_AUX: tl.constexpr):") + '''\
    if RETURN_AUX:
        tl.store(aux_ptr + row, tl.max(x))
'''

AUX_BODY = '''\
    loss_1d = torch.zeros(x.shape[0], device=x.device)
    if return_aux:
        aux_1d = torch.zeros(x.shape[0], device=x.device)
    else:
        aux_1d = loss_1d  # a dummy pointer
    _loss_kernel[(x.shape[0],)](x_ptr=x, loss_ptr=loss_1d, aux_ptr=aux_1d, n=x.shape[1], BLOCK=128,
                                RETURN_AUX=return_aux)
    loss = torch.sum(loss_1d)
    return loss
'''

AUX_SIGNATURE = SIGNATURE + ", return_aux=False"

AUX_BASE = AUX_KERNEL + f'''

class LossFunction(torch.autograd.Function):
    @staticmethod
    def forward({AUX_SIGNATURE}):
''' + "".join("    " + line + "\n" for line in AUX_BODY.splitlines())

AUX_EXTRACTED = AUX_KERNEL + f'''

def loss_forward(x, target, ignore_index, reduction, scale, return_aux):
{AUX_BODY}

class LossFunction(torch.autograd.Function):
    @staticmethod
    def forward({AUX_SIGNATURE}):
        loss = loss_forward(x, target, ignore_index, reduction, scale, return_aux)
        return loss
'''


def test_a_dummy_argument_the_kernel_never_reads_for_the_ports_flags_is_not_the_ports(tmp_path):
    after = AUX_EXTRACTED.replace("        aux_1d = loss_1d  # a dummy pointer\n", "        aux_1d = None\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": AUX_BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": AUX_EXTRACTED}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], _tree(), matrix=MATRIX)
    _not_carried(verdicts[2])


def test_an_argument_the_kernel_reads_on_the_ports_path_is_still_flagged(tmp_path):
    read = AUX_EXTRACTED.replace("    if RETURN_AUX:\n        tl.store(aux_ptr + row, tl.max(x))\n",
                                 "    tl.store(aux_ptr + row, tl.max(x))\n")
    after = read.replace("        aux_1d = loss_1d  # a dummy pointer\n", "        aux_1d = None\n")
    base = AUX_BASE.replace("    if RETURN_AUX:\n        tl.store(aux_ptr + row, tl.max(x))\n",
                            "    tl.store(aux_ptr + row, tl.max(x))\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": base}),
        CommitSpec("extract the forward", files={"ops/loss.py": read}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], _tree(), matrix=MATRIX)
    assert verdicts[2].verdict in FLAGGED, verdicts[2].reason
    assert "lacked-branch" not in verdicts[2].rules


# --- positions bind only where nothing can have shifted them ------------------------------

_SKIP = EXTRACTED.replace("    loss = torch.sum(loss_1d)\n",
                          "    if ignore_index != -100:\n        loss_1d = loss_1d * (target != ignore_index)\n"
                          "    loss = torch.sum(loss_1d)\n")
_SKIP_BASE = BASE.replace("        loss = torch.sum(loss_1d)\n",
                          "        if ignore_index != -100:\n            loss_1d = loss_1d * (target != ignore_index)\n"
                          "        loss = torch.sum(loss_1d)\n")
_INSERTED = _SKIP.replace("def loss_forward(x, target, ", "def loss_forward(x, weight, target, ") \
    .replace(f"def forward({SIGNATURE}):", f"def forward({SIGNATURE.replace('x, target', 'x, weight, target')}):") \
    .replace("loss_forward(x, target, ", "loss_forward(x, weight, target, ") \
    .replace("loss_1d = torch.zeros(x.shape[0], device=x.device)",
             "loss_1d = torch.zeros(x.shape[0], device=x.device) + weight.sum()")


def test_a_required_parameter_upstream_inserted_in_the_middle_does_not_shift_the_ports_inputs(tmp_path):
    # The port (logits, labels, skip_label) mirrors upstream before `weight` was inserted: its third input is
    # upstream's ignore_index, not its new third parameter `target`; an edit under `ignore_index != -100`
    # is on a path the port runs (its callers pass -1), so it must stay flagged.
    after = _INSERTED.replace("loss_1d * (target != ignore_index)", "loss_1d * (target != ignore_index).float()")
    assert after != _INSERTED and _INSERTED != _SKIP
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": _SKIP_BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": _SKIP}),
        CommitSpec("insert a required weight", files={"ops/loss.py": _INSERTED}),
        CommitSpec("edit the skip branch", files={"ops/loss.py": after}),
    ], _tree(), matrix=MATRIX)
    assert verdicts[3].verdict in FLAGGED, verdicts[3].reason
    assert "lacked-branch" not in verdicts[3].rules


def _target_renamed(text, new):
    """The anchored method with its ``target`` parameter renamed ``new`` (the helper keeps its own names)."""
    return text.replace(f"def forward({SIGNATURE}):", f"def forward({SIGNATURE.replace('target', new)}):") \
        .replace("loss_forward(x, target, ", f"loss_forward(x, {new}, ")


def test_a_leading_parameter_upstream_renamed_in_place_since_the_base_still_binds(tmp_path):
    # `target` becomes `labels_in` in the anchored method (same slot, same neighbours) before the edit: the port's
    # second input is still that parameter, and `reduction` is still one it lacks.
    renamed_extracted = _target_renamed(EXTRACTED, "labels_in")
    after = _target_renamed(_NONE_REDUCTION, "labels_in")
    assert "forward(ctx, x, labels_in, ignore_index" in renamed_extracted
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": EXTRACTED}),
        CommitSpec("rename target", files={"ops/loss.py": renamed_extracted}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], _tree(), matrix=MATRIX)
    _not_carried(verdicts[3])



def test_a_port_name_that_is_upstreams_new_name_for_the_same_slot_binds_there(tmp_path):
    # The port called its second input `labels_in` all along; upstream renames `target` to that name since the
    # base: the same slot, so the port's names agree with upstream's positions.
    renamed_extracted = _target_renamed(EXTRACTED, "labels_in")
    after = _target_renamed(_NONE_REDUCTION, "labels_in")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": EXTRACTED}),
        CommitSpec("rename target", files={"ops/loss.py": renamed_extracted}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], _tree("logits, labels_in, skip_label"), matrix=MATRIX)
    _not_carried(verdicts[3])


def test_a_leading_parameter_removed_since_the_base_binds_nothing_by_position(tmp_path):
    # `target` is gone and two parameters stand where it stood: which one the port's second input became is
    # not known, so no branch is folded.
    signature = SIGNATURE.replace("x, target, ", "x, mask, weights, ")
    extracted = EXTRACTED.replace(f"def forward({SIGNATURE}):", f"def forward({signature}):") \
        .replace("loss_forward(x, target, ", "loss_forward(x, mask, ")
    after = _NONE_REDUCTION.replace(f"def forward({SIGNATURE}):", f"def forward({signature}):") \
        .replace("loss_forward(x, target, ", "loss_forward(x, mask, ")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": EXTRACTED}),
        CommitSpec("replace target", files={"ops/loss.py": extracted}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], _tree(), matrix=MATRIX)
    assert verdicts[3].verdict in FLAGGED, verdicts[3].reason
    assert "lacked-branch" not in verdicts[3].rules
