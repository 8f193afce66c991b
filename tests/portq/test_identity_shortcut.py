"""A guard that only skips a no-op (docs/tricky-cases.md, "a short-cut around an
identity"): ``if g != 1: scale x by g`` runs its body only to multiply by ``g``,
which is the identity where the guard is false. A commit that rewrites the guard
between two tests that are each false only where ``g`` is one (``torch.ne(g,
one)`` → ``not torch.equal(g, one)``) changes when a no-op is skipped, never what
the definition leaves behind (``identity-shortcut``). A guard false anywhere
else, a body that does anything but scale in place by ``g``, or a local of the
body read after it stays flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, then
the edit (entry 1)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "GRADS"
title    = "Loss gradients"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

KERNEL = '''\
@triton.jit
def scale_rows_kernel(x_ptr, x_stride, g_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * x_stride
    g = tl.load(g_ptr)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        block = tl.load(x_ptr + offs, mask=offs < n_cols)
        tl.store(x_ptr + offs, block * g, mask=offs < n_cols)
'''

HEADER = '''\
import torch
import triton
import triton.language as tl
'''

WRAPPER = '''\
def loss_backward(grad_output, grad_x, grad_w):
    if torch.ne(grad_output, torch.tensor(1.0, device=grad_output.device)):
        rows, n = grad_x.shape
        block = min(4096, triton.next_power_of_2(n))
        scale_rows_kernel[(rows,)](grad_x, grad_x.stride(-2), grad_output, n, BLOCK=block)
        if grad_w is not None:
            rows, n = grad_w.shape
            scale_rows_kernel[(rows,)](grad_w, grad_w.stride(-2), grad_output, n, BLOCK=block)
    return grad_x, grad_w
'''

BASE = HEADER + "\n\n" + KERNEL + "\n\n" + WRAPPER
NEW_GUARD = ("torch.ne(grad_output, torch.tensor(1.0, device=grad_output.device))",
             "not torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device))")

PORT = '''\
import torch


# portq: ports vllm:ops/grads.py::loss_backward
def backward_scale(grad_loss, grad_hidden, grad_weight):
    if torch.ne(grad_loss, torch.tensor(1.0, device=grad_loss.device)):
        grad_hidden.mul_(grad_loss)
        if grad_weight is not None:
            grad_weight.mul_(grad_loss)
    return grad_hidden, grad_weight
'''

ENGINE = "from kernels.grads import backward_scale\n\n\ndef step(g, h, w):\n    return backward_scale(g, h, w)\n"


def _edit(tmp_path, before, after, extra=None):
    files = {"ops/grads.py": before}
    files.update(extra or {})
    changed = {"ops/grads.py": after}
    changed.update(extra or {})
    return classify_commit(tmp_path, files, changed, {"kernels/grads.py": PORT, "engine/step.py": ENGINE},
                           matrix=MATRIX, message="edit")


def _wrapper(verdict):
    return next(s for s in verdict.symbols if s.symbol == "loss_backward")


def _shortcut(verdict):
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    wrapper = _wrapper(verdict)
    assert (wrapper.justification, wrapper.rules) == ("cosmetic", ["identity-shortcut"]), wrapper.reason
    assert "grad_output" in wrapper.reason and "one" in wrapper.reason


def _flagged(verdict):
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "identity-shortcut" not in _wrapper(verdict).rules


def test_a_guard_rewritten_between_two_tests_for_one_only_skips_the_same_no_op(tmp_path):
    _shortcut(_edit(tmp_path, BASE, BASE.replace(*NEW_GUARD)))


def test_the_scaling_kernel_may_come_from_another_module(tmp_path):
    utils = HEADER + "\n\n" + KERNEL
    wrapper = "import torch\nimport triton\n\nfrom ops.utils import scale_rows_kernel\n\n\n" + WRAPPER
    verdict = _edit(tmp_path, wrapper, wrapper.replace("torch.ne(grad_output, torch.tensor(1.0, device=grad_output.device))",
                                                       "grad_output != 1"),
                    extra={"ops/utils.py": utils})
    _shortcut(verdict)


def test_a_guard_false_where_the_scale_is_not_one_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, BASE, BASE.replace(NEW_GUARD[0], "torch.gt(grad_output, 1.0)")))


def test_a_guard_against_another_constant_is_flagged(tmp_path):
    before = BASE.replace("torch.tensor(1.0,", "torch.tensor(2.0,")
    _flagged(_edit(tmp_path, before, before.replace("torch.ne(", "not torch.equal(")))


def test_a_kernel_that_adds_the_value_is_not_an_identity_at_one(tmp_path):
    before = BASE.replace("block * g", "block + g")
    _flagged(_edit(tmp_path, before, before.replace(*NEW_GUARD)))


def test_a_kernel_that_writes_elsewhere_is_not_an_identity(tmp_path):
    before = BASE.replace("tl.store(x_ptr + offs, block * g", "tl.store(x_ptr + offs + 1, block * g")
    _flagged(_edit(tmp_path, before, before.replace(*NEW_GUARD)))


def test_a_body_with_another_effect_is_flagged(tmp_path):
    before = BASE.replace("        rows, n = grad_x.shape\n", "        rows, n = grad_x.shape\n        grad_x.clamp_(-1, 1)\n")
    _flagged(_edit(tmp_path, before, before.replace(*NEW_GUARD)))


def test_a_local_of_the_body_read_after_it_is_flagged(tmp_path):
    before = BASE.replace("    return grad_x, grad_w\n", "    return grad_x, grad_w, n\n")
    _flagged(_edit(tmp_path, before, before.replace(*NEW_GUARD)))


def test_an_else_branch_is_flagged(tmp_path):
    before = BASE.replace("    return grad_x, grad_w\n", "    else:\n        grad_x = grad_x.clone()\n"
                                                          "    return grad_x, grad_w\n")
    _flagged(_edit(tmp_path, before, before.replace(*NEW_GUARD)))


def test_another_change_beside_the_guard_is_flagged(tmp_path):
    after = BASE.replace(*NEW_GUARD).replace("min(4096,", "min(8192,")
    _flagged(_edit(tmp_path, BASE, after))
