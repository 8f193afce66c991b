"""A Triton kernel parameter renamed in place (``num_elements`` → ``N``) with its launches passing the
new keyword and the launching method's local renamed alike is no change to what anything computes
(``renamed-binding``): every launch binds the same value to the same parameter. Three things must not
hide that: a launch of another kernel in the same file passing the new keyword (its own parameter,
renamed from another name; or, in another file of the commit, a launch of a kernel imported under its own
name from a module the commit does not touch, passing the old keyword), the launch's grid naming the renamed local (the launched kernel is the
name before the grid), and a statement tree-sitter's Python grammar cannot parse
(``return g, *[None] * 2``) left unchanged elsewhere in the class."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import OPS_ROW_MATRIX as MATRIX
from tests.portq.golden.pipeline import classify_commit

KERNELS = '''\
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(x_ptr, y_ptr, {fwd}, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < {fwd}
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=mask) * 2.0, mask=mask)


@triton.jit
def bwd_kernel(g_ptr, dx_ptr, {bwd}, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < {bwd}
    tl.store(dx_ptr + i, tl.load(g_ptr + i, mask=mask) * 2.0, mask=mask)
'''

OP = '''\
import torch
import triton

from ops.kernels import bwd_kernel, fwd_kernel


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        {fwd} = x.numel()
        fwd_kernel[(triton.cdiv({fwd}, 1024),)](x_ptr=x, y_ptr=y, {fwd}={fwd}, BLOCK=1024)
        return y

    @staticmethod
    def backward(ctx, g):
        dx = torch.empty_like(g)
        {bwd} = g.numel()
        bwd_kernel[(triton.cdiv({bwd}, 1024),)](g_ptr=g, dx_ptr=dx, {bwd}={bwd}, BLOCK=1024)
        return dx, *[None] * 2
'''

TREE = {
    "kernels/double.py": '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/kernels.py::bwd_kernel
@triton.jit
def double_grad(g_ptr, dx_ptr, num_elements, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < num_elements
    tl.store(dx_ptr + i, tl.load(g_ptr + i, mask=mask) * 2.0, mask=mask)


class DoubleGrad:
    # portq: ports vllm:ops/double.py::_Double.backward
    @staticmethod
    def backward(ctx, g):
        dx = torch.empty_like(g)
        num_elements = g.numel()
        double_grad[(triton.cdiv(num_elements, 1024),)](g, dx, num_elements, BLOCK=1024)
        return dx
''',
    "engine/model.py": "from kernels.double import DoubleGrad\n\n\ndef run(g):\n    return DoubleGrad.backward(None, g)\n",
}


def test_a_kernel_parameter_renamed_with_its_launch_is_no_gap(tmp_path):
    entry = classify_commit(tmp_path,
                            {"ops/kernels.py": KERNELS.format(fwd="B", bwd="num_elements"),
                             "ops/double.py": OP.format(fwd="B", bwd="num_elements")},
                            {"ops/kernels.py": KERNELS.format(fwd="N", bwd="N"),
                             "ops/double.py": OP.format(fwd="N", bwd="N")}, TREE, MATRIX)
    assert entry.verdict not in FLAGGED, entry.reason
    kernel = next(s for s in entry.symbols if s.symbol == "bwd_kernel")
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "renamed-binding" in kernel.rules, kernel.rules
    method = next(s for s in entry.symbols if s.symbol == "_Double.backward")
    assert (method.verdict, method.justification) == (NOT_APPLICABLE, "cosmetic"), method.reason


def test_a_parameter_renamed_while_its_launch_passes_another_value_stays_flagged(tmp_path):
    entry = classify_commit(tmp_path,
                            {"ops/kernels.py": KERNELS.format(fwd="B", bwd="num_elements"),
                             "ops/double.py": OP.format(fwd="B", bwd="num_elements")},
                            {"ops/kernels.py": KERNELS.format(fwd="N", bwd="N"),
                             "ops/double.py": OP.format(fwd="N", bwd="N").replace(
                                 "N = g.numel()", "N = g.numel() // 2")}, TREE, MATRIX)
    assert entry.verdict in FLAGGED, entry.reason


OTHER = '''\
import torch

from ops.scale import scale_kernel{alias}


def scale(x):
    # {note}
    y = torch.empty_like(x)
    B = x.numel()
    {callee}[(B,)](x_ptr=x, y_ptr=y, B=B, BLOCK=1024)
    return y
'''

FWD_TREE = {
    "kernels/double.py": '''\
import triton
import triton.language as tl


# portq: ports vllm:ops/kernels.py::fwd_kernel
@triton.jit
def double_rows(x_ptr, y_ptr, count, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < count
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=mask) * 2.0, mask=mask)
''',
    "engine/model.py": "from kernels.double import double_rows\n\n\ndef run(x, y):\n    double_rows[(1,)](x, y, x.numel(), BLOCK=1024)\n",
}


SCALE = '''\
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, B, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < B
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=mask) * 3.0, mask=mask)
'''

SCALE_ALIAS = "from ops.kernels import fwd_kernel\n\nscale_kernel = fwd_kernel\n"


def _renamed_beside(tmp_path, alias: str, callee: str, untouched: dict[str, str] | None = None):
    untouched = {"ops/scale.py": SCALE} if untouched is None else untouched
    before = {"ops/kernels.py": KERNELS.format(fwd="B", bwd="num_elements"),
              "ops/double.py": OP.format(fwd="B", bwd="num_elements"),
              "ops/other.py": OTHER.format(alias=alias, callee=callee, note="scale"), **untouched}
    after = {"ops/kernels.py": KERNELS.format(fwd="N", bwd="N"),
             "ops/double.py": OP.format(fwd="N", bwd="N"),
             "ops/other.py": OTHER.format(alias=alias, callee=callee, note="scale every element"), **untouched}
    return classify_commit(tmp_path, before, after, FWD_TREE, MATRIX)


def test_another_imported_kernels_keyword_of_the_old_name_does_not_hide_the_renaming(tmp_path):
    # ops/other.py launches scale_kernel, imported under its own name from a module the commit does not
    # touch that defines it: its ``B=B`` binds scale_kernel's parameter, never the renamed kernel's
    entry = _renamed_beside(tmp_path, "", "scale_kernel")
    kernel = next(s for s in entry.symbols if s.symbol == "fwd_kernel")
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason
    assert "renamed-binding" in kernel.rules, kernel.rules


def test_a_kernel_imported_through_a_package_that_re_exports_it_is_followed(tmp_path):
    # ops/scale/__init__.py re-exports scale_kernel from the module of the package that defines it
    entry = _renamed_beside(tmp_path, "", "scale_kernel",
                            {"ops/scale/__init__.py": "from .kernel import scale_kernel\n",
                             "ops/scale/kernel.py": SCALE})
    kernel = next(s for s in entry.symbols if s.symbol == "fwd_kernel")
    assert (kernel.verdict, kernel.justification) == (NOT_APPLICABLE, "cosmetic"), kernel.reason


def test_an_imported_name_bound_to_the_renamed_kernel_stays_flagged(tmp_path):
    # the untouched module binds scale_kernel to the renamed kernel itself: its ``B=B`` no longer binds
    entry = _renamed_beside(tmp_path, "", "scale_kernel", {"ops/scale.py": SCALE_ALIAS})
    kernel = next(s for s in entry.symbols if s.symbol == "fwd_kernel")
    assert kernel.verdict in FLAGGED, kernel.reason


def test_an_imported_name_whose_module_is_not_there_stays_flagged(tmp_path):
    # nothing shows what scale_kernel is: its ``B=B`` may bind the renamed kernel
    entry = _renamed_beside(tmp_path, "", "scale_kernel", {})
    kernel = next(s for s in entry.symbols if s.symbol == "fwd_kernel")
    assert kernel.verdict in FLAGGED, kernel.reason


def test_the_renamed_kernel_launched_under_an_alias_with_the_old_keyword_stays_flagged(tmp_path):
    # the same launch through an alias of the renamed kernel still passes ``B=``: it no longer binds
    entry = _renamed_beside(tmp_path, "\nfrom ops.kernels import fwd_kernel as scaled", "scaled")
    kernel = next(s for s in entry.symbols if s.symbol == "fwd_kernel")
    assert kernel.verdict in FLAGGED, kernel.reason
