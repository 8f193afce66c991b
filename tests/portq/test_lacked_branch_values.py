"""What a port lacking upstream's options computes, read through more of Python
(docs/tricky-cases.md, "branches the port does not have"): with the lacked
parameters at their values (``lacked-branch``), a conditional expression takes
its branch wherever it stands (``HAS_CAP=True if cap is not None else False``
is ``False``, so the kernel never reads ``cap`` and that argument is left
out); ``isinstance(flag, int)`` and ``flag in _TABLE`` (a module-level table
literal) are decided; an ``assert`` those values make true does nothing and
is left out; and an input the port lacks that upstream requires (no default,
so no value) is decided case by case where the code only asks whether it is
``None``: the two sides must agree when it is ``None`` and when it is not.

Each runs the real ``portq scan`` over a small synthetic history: base, the
extraction of the forward into a helper (with a required class-weight input
inserted), then the edit (entry 2)."""
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

_bool_to_int = {True: 1, False: 0}


@triton.jit
def _loss_kernel(x_ptr, w_ptr, loss_ptr, z_ptr, n, cap, RETURN_Z: tl.constexpr, HAS_W: tl.constexpr,
                 HAS_CAP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    if HAS_CAP:
        x = cap * tl.sigmoid(x / cap)
    if HAS_W:
        x = x * tl.load(w_ptr + offs, mask=offs < n, other=0.0)
    tl.store(loss_ptr + row, tl.sum(x * x))
    if RETURN_Z:
        tl.store(z_ptr + row, tl.sum(x))
'''

HELPER = '''

def loss_forward(x, target, weight, ignore_index, cap, return_z):
    if not isinstance(return_z, int):
        assert return_z in _bool_to_int, "return_z must be True or False"
        return_z = _bool_to_int[return_z]
    else:
        assert return_z in _bool_to_int, "return_z must be True or False"
    loss_1d = torch.zeros(x.shape[0], device=x.device)
    if return_z == 1:
        z_1d = torch.zeros(x.shape[0], device=x.device)
    else:
        z_1d = None
    _loss_kernel[(x.shape[0],)](
        x_ptr=x,
        w_ptr=weight if weight is not None else x,
        loss_ptr=loss_1d,
        z_ptr=z_1d,
        n=x.shape[1],
        cap=cap if cap is not None else 0.0,
        RETURN_Z=return_z,
        HAS_W=True if weight is not None else False,
        HAS_CAP=True if cap is not None else False,
        BLOCK=128,
    )
    return torch.sum(loss_1d)


class LossFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target, weight, ignore_index=-100, cap=None, return_z=False):
        return loss_forward(x, target, weight, ignore_index, cap, return_z)
'''

EXTRACTED = KERNEL + HELPER

_BODY = HELPER[HELPER.index("    if not isinstance"):HELPER.index("\n\nclass LossFunction")]
BASE = KERNEL + '''

class LossFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target, ignore_index=-100, cap=None, return_z=False):
        weight = None
''' + "".join(("    " + line if line else line) + "\n" for line in _BODY.splitlines())

_ASSERTS = ('''    if not isinstance(return_z, int):
        assert return_z in _bool_to_int, "return_z must be True or False"
        return_z = _bool_to_int[return_z]
    else:
        assert return_z in _bool_to_int, "return_z must be True or False"
''', '''    assert isinstance(return_z, bool), "return_z must be True or False"
''')
_Z_STORE = ('''    if return_z == 1:
        z_1d = torch.zeros(x.shape[0], device=x.device)
    else:
        z_1d = None
''', '''    z_1d = torch.zeros(x.shape[0], device=x.device) if return_z else None
''')
_WEIGHT = ("w_ptr=weight if weight is not None else x,", "w_ptr=weight,")
_CAP = ("cap=cap if cap is not None else 0.0,", "cap=cap,")

PORT = '''\
import torch

from kernels.rows import row_loss_kernel


class RowLoss(torch.autograd.Function):
    # portq: ports vllm:ops/loss.py::LossFunction.forward
    @staticmethod
    def forward(ctx, logits, labels, skip_label):
        losses = torch.zeros(logits.shape[0], device=logits.device)
        row_loss_kernel[(logits.shape[0],)](logits, losses, logits.shape[1], BLOCK=128)
        return torch.sum(losses)
'''

ROWS = '''\
import triton
import triton.language as tl


@triton.jit
def row_loss_kernel(x_ptr, loss_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(loss_ptr + row, tl.sum(x * x))
'''

TREE = {"kernels/rows.py": ROWS, "kernels/loss.py": PORT,
        "engine/train.py": "from kernels.loss import RowLoss\n\n\ndef step(x, y):\n    return RowLoss.apply(x, y, -1)\n"}


def _edit(tmp_path, *changes, extracted=EXTRACTED):
    after = extracted
    for old, new in changes:
        assert old in after, old
        after = after.replace(old, new)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": BASE}),
        CommitSpec("extract the forward", files={"ops/loss.py": extracted}),
        CommitSpec("edit", files={"ops/loss.py": after}),
    ], TREE, matrix=MATRIX)
    return verdicts[2]


def _helper(verdict):
    return next(s for s in verdict.symbols if s.symbol == "loss_forward")


def _not_carried(verdict):
    helper = _helper(verdict)
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-carried"), helper.reason
    assert "lacked-branch" in helper.rules, helper.rules


def _flagged(verdict):
    assert verdict.verdict in FLAGGED, verdict.reason
    assert _helper(verdict).verdict in FLAGGED, _helper(verdict).reason


def test_an_argument_the_kernel_reads_only_under_a_flag_a_conditional_expression_clears_is_left_out(tmp_path):
    _not_carried(_edit(tmp_path, _CAP))


def test_asserts_the_lacked_values_make_true_do_nothing(tmp_path):
    _not_carried(_edit(tmp_path, _ASSERTS))


def test_a_store_whose_value_folds_to_a_call_free_one_is_a_dead_store(tmp_path):
    _not_carried(_edit(tmp_path, _Z_STORE))


def test_a_required_input_the_port_lacks_is_decided_when_it_is_none_and_when_it_is_not(tmp_path):
    _not_carried(_edit(tmp_path, _WEIGHT))


def test_all_of_it_together(tmp_path):
    _not_carried(_edit(tmp_path, _ASSERTS, _Z_STORE, _WEIGHT, _CAP))


def test_a_dummy_the_kernel_reads_when_the_input_is_none_is_flagged(tmp_path):
    # HAS_W no longer follows the weight: with weight None the kernel now reads the None pointer
    _flagged(_edit(tmp_path, _WEIGHT, ("HAS_W=True if weight is not None else False,", "HAS_W=True,")))


def test_a_required_input_compared_otherwise_is_flagged(tmp_path):
    # a test on the weight's value, not on whether it is None, decides nothing case by case
    _flagged(_edit(tmp_path, ("w_ptr=weight if weight is not None else x,", "w_ptr=weight if weight else x,")))


def test_an_assert_that_can_fail_for_the_lacked_values_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, _ASSERTS, ('assert isinstance(return_z, bool), "return_z must be True or False"',
                                        'assert isinstance(return_z, str), "return_z must be True or False"')))


def test_a_changed_value_for_the_lacked_defaults_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, ("cap=cap if cap is not None else 0.0,", "cap=cap if cap is not None else 1.0,"),
                   ("HAS_CAP=True if cap is not None else False,", "HAS_CAP=True,")))


# The kernel in a module of its own, imported by the file whose helper launches it.
KERNEL_MODULE = KERNEL.replace("_bool_to_int = {True: 1, False: 0}\n", "")
IMPORTING = KERNEL.replace(KERNEL[KERNEL.index("\n\n@triton.jit"):], "\n") \
    .replace("import triton.language as tl\n", "import triton.language as tl\n\nfrom ops.kern import _loss_kernel\n")


def _edit_imported(tmp_path, *changes, kernel=KERNEL_MODULE, kernel_after=None):
    extracted = IMPORTING + HELPER
    base = IMPORTING + BASE[len(KERNEL):]
    after = extracted
    for old, new in changes:
        assert old in after, old
        after = after.replace(old, new)
    edited = {"ops/loss.py": after}
    if kernel_after is not None:
        edited["ops/kern.py"] = kernel_after
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/loss.py": base, "ops/kern.py": kernel}),
        CommitSpec("extract the forward", files={"ops/loss.py": extracted}),
        CommitSpec("edit", files=edited),
    ], TREE, matrix=MATRIX)
    return verdicts[2]


def test_the_kernel_may_come_from_another_module_the_commit_changes(tmp_path):
    # the kernel's module is read where the commit changes it (its blobs are read with the commit's)
    kernel_after = KERNEL_MODULE.replace("    row = tl.program_id(0)\n", "    row = tl.program_id(0)  # one row\n")
    _not_carried(_edit_imported(tmp_path, _CAP, _WEIGHT, kernel_after=kernel_after))


def test_a_kernel_module_the_commit_leaves_alone_is_not_read(tmp_path):
    _flagged(_edit_imported(tmp_path, _CAP, _WEIGHT))


def test_an_argument_the_kernel_reads_is_still_compared_in_another_module(tmp_path):
    _flagged(_edit_imported(tmp_path, ("n=x.shape[1],", "n=x.shape[1] - 1,")))


_FLAG = ("RETURN_Z=return_z,", "RETURN_Z=0,")


def test_a_flag_passed_as_a_value_the_kernel_cannot_tell_apart_is_the_same_argument(tmp_path):
    # RETURN_Z=0 -> RETURN_Z=False: the kernel only asks `if RETURN_Z:`, which both answer alike
    extracted = EXTRACTED.replace(*_FLAG)
    verdict = _edit(tmp_path, ("RETURN_Z=0,", "RETURN_Z=False,"), extracted=extracted)
    _not_carried(verdict)


def test_a_flag_value_the_kernel_tells_apart_is_flagged(tmp_path):
    extracted = EXTRACTED.replace(*_FLAG)
    _flagged(_edit(tmp_path, ("RETURN_Z=0,", "RETURN_Z=2,"), extracted=extracted))


def test_a_flag_the_kernel_uses_as_a_number_is_flagged(tmp_path):
    extracted = EXTRACTED.replace(*_FLAG).replace("    tl.store(loss_ptr + row, tl.sum(x * x))\n",
                                                  "    tl.store(loss_ptr + row, tl.sum(x * x) + RETURN_Z)\n")
    _flagged(_edit(tmp_path, ("RETURN_Z=0,", "RETURN_Z=False,"), extracted=extracted))
