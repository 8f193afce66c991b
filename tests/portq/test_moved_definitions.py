"""A ported definition that upstream moves — renamed in place, carried into
another file when a module is split, or extracted into a helper its old owner
now calls — keeps its identity (rule ``moved-definition``): later changes to
the moved body are the port's, never a silent not-ported, and the move itself
is visible ("anchor lost at SHA: SYMBOL moved to PATH::NAME?")."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row normalisation"
upstream = "vllm"
paths    = ["ops/*.py", "ops/utils/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

KERNEL = '''\
@triton.jit
def {name}(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(y_ptr + row * n_cols + cols, {value}, mask=mask)
'''

WRAPPER = '''\
def norm(x, w):
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    {name}[(n_rows,)](x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
'''

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n\n"


def norm_module(name="_norm_fwd", value="x / rms * w"):
    return HEADER + KERNEL.format(name=name, value=value) + "\n\n" + WRAPPER.format(name=name)


TREE = {
    "kernels/rownorm.py": '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/norm.py::_norm_fwd
@triton.jit
def row_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(y_ptr + row * n_cols + cols, x / rms * w, mask=mask)


# portq: ports vllm:ops/norm.py::norm
def row_norm(x, w):
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    row_norm_kernel[(n_rows,)](x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
''',
    "engine/model.py": "from kernels.rownorm import row_norm\n\n\ndef run(x, w):\n    return row_norm(x, w)\n",
}


def _symbol(verdict, name):
    return next(s for s in verdict.symbols if s.symbol == name)


def test_a_renamed_kernel_with_the_same_body_is_followed_and_the_lost_anchor_is_shown(tmp_path):
    renamed = norm_module("_norm_fwd_kernel")
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename the kernel", files={"ops/norm.py": renamed}),
        CommitSpec("fix the mask", files={"ops/norm.py": renamed.replace("mask=mask)\n", "mask=mask & (row >= 0))\n")}),
    ], TREE, matrix=MATRIX)
    move = verdicts[1]
    old = _symbol(move, "_norm_fwd")
    assert old.verdict == NOT_APPLICABLE and old.justification == "cosmetic", old.reason
    assert "moved-definition" in old.rules
    lost = [e for e in old.evidence if e.kind == "anchor-lost"]
    assert lost and lost[0].message == f"anchor lost at {shas[1][:10]}: _norm_fwd moved to ops/norm.py::_norm_fwd_kernel?"
    assert move.verdict != REAL_GAP
    later = _symbol(verdicts[2], "_norm_fwd_kernel")
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason
    assert "_norm_fwd" in later.reason and later.ports


def test_definitions_carried_into_new_files_when_a_module_is_split_stay_ported(tmp_path):
    helpers = '''\
import torch


def device_count():
    props = torch.cuda.get_device_properties(0)
    return props.multi_processor_count


def cast_inputs(fn):
    def wrapped(*args):
        return fn(*[a.float() for a in args])
    return wrapped
'''
    device = "import torch\n\n\ndef device_count():\n    props = torch.cuda.get_device_properties(0)\n" \
             "    return props.multi_processor_count\n"
    decorators = "def cast_inputs(fn):\n    def wrapped(*args):\n        return fn(*[a.float() for a in args])\n" \
                 "    return wrapped\n"
    tree = {**TREE, "kernels/settings.py": '''\
import torch


# portq: ports vllm:ops/utils.py::device_count
def sm_count():
    props = torch.cuda.get_device_properties(0)
    return props.multi_processor_count


# portq: ports vllm:ops/utils.py::cast_inputs
def upcast(fn):
    def wrapped(*args):
        return fn(*[a.float() for a in args])
    return wrapped
''', "engine/setup.py": "from kernels.settings import sm_count, upcast\n\n\ndef plan():\n    return upcast(sm_count)()\n"}
    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module(), "ops/utils.py": helpers}),
        CommitSpec("split utils", files={"ops/utils.py": None, "ops/utils/_device.py": device,
                                         "ops/utils/_decorators.py": decorators}),
        CommitSpec("xpu", files={"ops/utils/_decorators.py": decorators.replace("a.float()", "a.to(torch.float32)")}),
        CommitSpec("fewer SMs", files={"ops/utils/_device.py": device.replace("multi_processor_count",
                                                                              "multi_processor_count // 2")}),
    ], tree, matrix=MATRIX)
    assert verdicts[1].verdict == NOT_APPLICABLE, verdicts[1].reason
    moved = next(s for s in verdicts[1].symbols if s.symbol == "cast_inputs" and s.change == "removed")
    assert any(e.message.endswith("cast_inputs moved to ops/utils/_decorators.py::cast_inputs?") for e in moved.evidence)
    nested = _symbol(verdicts[2], "cast_inputs.wrapped")  # what moved with its definition moved too
    assert nested.verdict in FLAGGED and "moved-definition" in nested.rules, nested.reason
    assert _symbol(verdicts[3], "device_count").verdict in FLAGGED  # the file git paired as the rename


def test_a_body_extracted_into_a_helper_the_ported_method_calls_carries_the_port(tmp_path):
    method = '''\


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        block = triton.next_power_of_2(n_cols)
        num_warps = 4 if block < 2048 else 8
        _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=block, num_warps=num_warps)
        ctx.save_for_backward(x, w)
        return y
'''
    extracted = '''\


def norm_forward(x, w):
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block < 2048 else 8
    _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=block, num_warps=num_warps)
    return y


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        y = norm_forward(x, w)
        ctx.save_for_backward(x, w)
        return y
'''
    base = norm_module() + method
    after = norm_module() + extracted
    tree = {**TREE, "kernels/fn.py": '''\
import torch

from kernels.rownorm import row_norm_kernel


class RowNorm(torch.autograd.Function):
    # portq: ports vllm:ops/norm.py::NormFunction.forward
    @staticmethod
    def forward(ctx, x, w):
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        row_norm_kernel[(n_rows,)](x, w, y, n_cols, BLOCK=1024, num_warps=4)
        ctx.save_for_backward(x, w)
        return y
''', "engine/train.py": "from kernels.fn import RowNorm\n\n\ndef step(x, w):\n    return RowNorm.apply(x, w)\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": base}),
        CommitSpec("extract the forward", files={"ops/norm.py": after}),
        CommitSpec("more warps", files={"ops/norm.py": after.replace("4 if block < 2048 else 8", "8 if block < 2048 else 16")}),
    ], tree, matrix=MATRIX)
    assert verdicts[1].verdict == NOT_APPLICABLE, verdicts[1].reason  # the extraction itself changes nothing
    method = _symbol(verdicts[1], "NormFunction.forward")
    assert method.justification == "cosmetic" and "moved-definition" in method.rules, method.reason
    helper = _symbol(verdicts[2], "norm_forward")
    assert helper.verdict in FLAGGED and "moved-definition" in helper.rules, helper.reason
    assert "NormFunction.forward" in helper.reason


def test_an_unrelated_new_function_is_not_taken_for_a_moved_port(tmp_path):
    other = "\n\ndef norm_backward(dy, x, w):\n    dx = torch.empty_like(dy)\n    return dx * w\n"
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("add a backward", files={"ops/norm.py": norm_module() + other}),
        CommitSpec("change it", files={"ops/norm.py": norm_module() + other.replace("dx * w", "dx * w * 2")}),
    ], TREE, matrix=MATRIX)
    assert verdicts[2].verdict == NOT_APPLICABLE and verdicts[2].justification == "not-ported"


def _portq(tmp_path, *args) -> str:
    import contextlib
    import io

    from portq.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main([*args, "--upstream", f"vllm={tmp_path / 'upstream'}", "--tree", str(tmp_path / "tree"),
                     "--matrix", str(tmp_path / "matrix.toml"), "--ledger", str(tmp_path / "ledger" / "ledger.sqlite")])
    assert code == 0
    return printed.getvalue()


def test_a_lost_anchor_is_named_by_the_scan_and_by_portq_matrix_until_the_anchor_follows(tmp_path):
    import json

    verdicts, shas = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename the kernel", files={"ops/norm.py": norm_module("_norm_fwd_kernel")}),
    ], TREE, matrix=MATRIX)
    line = f"anchor lost at {shas[1][:10]}: _norm_fwd moved to ops/norm.py::_norm_fwd_kernel?"
    assert line in _portq(tmp_path, "scan", f"{shas[0][:12]}..{shas[1][:12]}")
    problems = json.loads(_portq(tmp_path, "matrix", "--json"))["problems"]
    lost = [p for p in problems if p["kind"] == "anchor-lost"]
    assert [(p["file"], p["line"], p["detail"]) for p in lost] == [("kernels/rownorm.py", 6, line)]
    shown = _portq(tmp_path, "matrix")
    assert line in shown, shown
    anchored = (tmp_path / "tree" / "kernels" / "rownorm.py")
    anchored.write_text(anchored.read_text().replace("ops/norm.py::_norm_fwd\n", "ops/norm.py::_norm_fwd_kernel\n"))
    assert not [p for p in json.loads(_portq(tmp_path, "matrix", "--json"))["problems"] if p["kind"] == "anchor-lost"]


def test_imports_that_follow_a_renamed_kernel_change_nothing(tmp_path):
    launcher = "from .norm import _norm_fwd\n\n\ndef launch(x, y, w):\n    _norm_fwd[(1,)](x, w, y, 8, BLOCK=8)\n"
    tree = {**TREE, "kernels/launch.py": "from kernels.rownorm import row_norm_kernel\n\n\n"
                                         "# portq: ports vllm:ops/launch.py::launch\n"
                                         "def launch(x, y, w):\n    row_norm_kernel[(1,)](x, w, y, 8, BLOCK=8)\n"}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module(), "ops/launch.py": launcher}),
        CommitSpec("rename the kernel", files={"ops/norm.py": norm_module("_norm_fwd_kernel"),
                                               "ops/launch.py": launcher.replace("_norm_fwd", "_norm_fwd_kernel")}),
    ], tree, matrix=MATRIX)
    assert verdicts[1].verdict == NOT_APPLICABLE, verdicts[1].reason
    imports = next(s for s in verdicts[1].symbols if s.path == "ops/launch.py" and s.symbol == "<toplevel>")
    assert imports.justification == "cosmetic" and "moved-definition" in imports.rules, imports.reason


def test_an_extraction_whose_helper_takes_what_the_method_read_from_its_context_changes_nothing():
    from portq.classifier.moves import Move, extraction_only
    from portq.language.symbols import symbol_table

    before = symbol_table(b'''\
class Op:
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx = torch.empty_like(dy)
        _bwd[(ctx.rows,)](dy, x, w, dx, BLOCK=ctx.block, num_warps=ctx.warps)
        return dx, None
''', "ops/op.py")
    after = symbol_table(b'''\
def op_backward(dy, x, w, rows, block, warps):
    dx = torch.empty_like(dy)
    _bwd[(rows,)](dy, x, w, dx, BLOCK=block, num_warps=warps)
    return dx


class Op:
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx = op_backward(dy, x, w, ctx.rows, ctx.block, ctx.warps)
        return dx, None
''', "ops/op.py")
    move = Move(2, "0" * 40, ("ops/op.py", "Op.backward"), ("ops/op.py", "Op.backward"), ("ops/op.py", "op_backward"),
                "extracted", False)
    assert extraction_only(before, after, after, move, [move])
    changed = symbol_table(after.source.replace(b"num_warps=warps", b"num_warps=2 * warps"), "ops/op.py")
    assert not extraction_only(before, changed, changed, move, [move])


def test_a_cpp_helper_moved_to_a_new_header_with_the_include_that_follows_it_changes_nothing(tmp_path):
    helper = "template <typename T>\n__device__ void apply_mask(T &t, int n) {\n    for (int i = n; i < 8; ++i) { t[i] = -1; }\n}\n"
    kernel = "#pragma once\n#include \"softmax.h\"\n\ntemplate <typename T>\n__global__ void fwd(T *x, int n) {\n" \
             "    apply_mask(x, n);\n}\n"
    tree = {"kernels/fwd.cuh": "// portq: ports vllm:ops/softmax.h::apply_mask\ntemplate <typename T>\n"
                               "__device__ void mask_tail(T &t, int n) {\n    for (int i = n; i < 8; ++i) { t[i] = -1; }\n}\n\n"
                               "// portq: ports vllm:ops/fwd.h::fwd\ntemplate <typename T>\n__global__ void fwd(T *x, int n) {\n"
                               "    mask_tail(x, n);\n}\n",
            "engine/run.cu": "#include \"kernels/fwd.cuh\"\nvoid run(float *x, int n) {\n    fwd<<<1, 32>>>(x, n);\n}\n"}
    matrix = MATRIX.replace('"ops/*.py", "ops/utils/*.py"', '"ops/*.h"')
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/softmax.h": "#pragma once\n" + helper, "ops/fwd.h": kernel}),
        CommitSpec("masks get their own header", files={"ops/softmax.h": "#pragma once\n", "ops/mask.h": "#pragma once\n" + helper,
                                                       "ops/fwd.h": kernel.replace('#include "softmax.h"',
                                                                                   '#include "softmax.h"\n#include "mask.h"')}),
    ], tree, matrix=matrix)
    assert verdicts[1].verdict == NOT_APPLICABLE, verdicts[1].reason


REPLACEMENT = '''\
@triton.jit
def _norm_pos_fwd(x_ptr, y_ptr, pos_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.load(pos_ptr + tl.program_id(0))
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = 1.0
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(y_ptr + row * n_cols + cols, x / rms * w, mask=mask)
'''


def test_a_differently_named_definition_that_drops_the_old_parameters_replaces_rather_than_carries(tmp_path):
    # The old kernel goes and a new one with another interface (w_ptr gone, pos_ptr new) takes its
    # place: most body lines look alike, but the caller-facing parameters are not the old ones, so the anchor is
    # not followed there; the removal needs review and a later change to the new kernel is not the port's.
    replaced = HEADER + REPLACEMENT
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("replace the kernel", files={"ops/norm.py": replaced}),
        CommitSpec("fix the mask", files={"ops/norm.py": replaced.replace("mask=mask)\n", "mask=mask & (row >= 0))\n")}),
    ], TREE, matrix=MATRIX)
    old = _symbol(verdicts[1], "_norm_fwd")
    assert old.verdict in FLAGGED and "moved-definition" not in old.rules, old.reason
    later = _symbol(verdicts[2], "_norm_pos_fwd")
    assert later.verdict == NOT_APPLICABLE and later.justification == "not-ported", later.reason
    assert "moved-definition" not in later.rules


def test_a_renamed_definition_that_keeps_its_parameters_and_gains_one_is_still_followed(tmp_path):
    # Renamed with a body change and one more parameter: every old parameter is still there, so it is the same
    # definition under a new name and a later change to it stays the port's.
    renamed = norm_module("_norm_fwd_kernel").replace("n_cols, BLOCK: tl.constexpr)", "n_cols, eps, BLOCK: tl.constexpr)") \
        .replace("/ n_cols)", "/ n_cols + eps)")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename the kernel, add eps", files={"ops/norm.py": renamed}),
        CommitSpec("fix the mask", files={"ops/norm.py": renamed.replace("mask=mask)\n", "mask=mask & (row >= 0))\n")}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[2], "_norm_fwd_kernel")
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason


def test_a_moved_body_stays_the_ports_after_its_file_is_renamed(tmp_path):
    """A carrier (a definition that holds an anchored body since a move) keeps carrying it when a later
    commit renames its whole file (a package renamed, a file renamed): the file's new path holds the
    same definition, so a change to it there is still the port's."""
    renamed = norm_module("_norm_fwd_kernel")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename the kernel", files={"ops/norm.py": renamed}),
        CommitSpec("rename the file", renames={"ops/norm.py": "ops/rownorm.py"}),
        CommitSpec("fix the mask", files={"ops/rownorm.py": renamed.replace("mask=mask)\n",
                                                                            "mask=mask & (row >= 0))\n")}),
    ], TREE, matrix=MATRIX)
    later = _symbol(verdicts[3], "_norm_fwd_kernel")
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason
    assert "_norm_fwd" in later.reason and later.ports


def test_a_carrier_of_a_renamed_file_is_not_followed_into_an_unrelated_file(tmp_path):
    """Only the file's own new path carries the body: a same-named definition elsewhere is not the port's."""
    renamed = norm_module("_norm_fwd_kernel")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename the kernel", files={"ops/norm.py": renamed}),
        CommitSpec("rename the file", renames={"ops/norm.py": "ops/rownorm.py"}),
        CommitSpec("another kernel", files={"ops/other.py": HEADER + KERNEL.format(name="_norm_fwd_kernel",
                                                                                  value="x * w")}),
    ], TREE, matrix=MATRIX)
    other = _symbol(verdicts[3], "_norm_fwd_kernel")
    assert "moved-definition" not in other.rules, other.reason


def test_a_kernel_moved_into_the_package_that_replaces_its_module_is_followed_though_rewritten(tmp_path):
    """``ops/norm.py`` becomes the package ``ops/norm/``: the one definition of the same name under it is the
    same definition (same import path), even when the commit rewrites its body (rule ``module-to-package``)."""
    rewritten = HEADER + """\
@triton.jit
def _norm_fwd(x_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    xs = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    gain = tl.load(w_ptr + cols, mask=mask, other=1.0)
    inv = tl.rsqrt(tl.sum(xs * xs, axis=0) / n_cols + 1e-6)
    tl.store(y_ptr + row * n_cols + cols, xs * inv * gain, mask=mask)
"""
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("split into a package", files={"ops/norm.py": None, "ops/norm/kernels.py": rewritten,
                                                  "ops/norm/__init__.py": "from .kernels import _norm_fwd\n"}),
        CommitSpec("fix the store", files={"ops/norm/kernels.py": rewritten.replace(
            "gain, mask=mask)\n", "gain, mask=mask & (row >= 0))\n")}),
    ], TREE, matrix=MATRIX.replace('"ops/utils/*.py"', '"ops/utils/*.py", "ops/norm/*.py"'))
    moved = _symbol(verdicts[1], "_norm_fwd")
    assert "module-to-package" in moved.rules and moved.verdict in FLAGGED, moved.reason
    later = [s for s in verdicts[2].symbols if s.symbol == "_norm_fwd"][0]
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason


def test_a_same_named_kernel_in_an_unrelated_new_file_is_not_the_moved_module_s(tmp_path):
    """Only the package that takes the module's own name keeps its import path."""
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("drop it, write another elsewhere", files={"ops/norm.py": None, "ops/other.py": HEADER
                                                               + KERNEL.format(name="_norm_fwd", value="x * w")}),
    ], TREE, matrix=MATRIX)
    assert all("module-to-package" not in s.rules for s in verdicts[1].symbols)


def test_a_kernel_name_reused_for_its_launcher_follows_the_kernel_to_its_new_name(tmp_path):
    """``_norm_fwd`` (a kernel) is renamed ``_norm_fwd_kernel`` and ``_norm_fwd`` becomes the host function that
    launches it: the body is followed to the new name (rule ``name-reused``), and a later change of the kernel
    is the port's."""
    launcher = '''

def _norm_fwd(x, w, y):
    n_rows, n_cols = x.shape
    _norm_fwd_kernel[(n_rows,)](x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
'''
    after = norm_module("_norm_fwd_kernel") + launcher
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("wrap the launch", files={"ops/norm.py": after}),
        CommitSpec("fix the mask", files={"ops/norm.py": after.replace("mask=mask)\n", "mask=mask & (row >= 0))\n")}),
    ], TREE, matrix=MATRIX)
    reused = _symbol(verdicts[1], "_norm_fwd")
    assert "name-reused" in reused.rules and reused.verdict != REAL_GAP, reused.reason
    later = _symbol(verdicts[2], "_norm_fwd_kernel")
    assert later.verdict in FLAGGED and "moved-definition" in later.rules, later.reason


def test_a_launch_moved_into_a_helper_the_ported_wrapper_calls_is_not_a_stopped_launch(tmp_path):
    """The wrapper's launch moves into a helper of another file that it now calls (and its output's dtype
    changes on the way, so the move is not cosmetic): the launch is still the wrapper's (rule ``extracted-launch``), so never 'upstream stopped launching'."""
    helper = '''\
import triton

from ops.norm import _norm_fwd


def launch_norm(x, w, y):
    n_rows, n_cols = x.shape
    _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
'''
    after = norm_module().replace(WRAPPER.format(name="_norm_fwd"), '''\
def norm(x, w):
    y = torch.empty_like(x, dtype=torch.float32)
    launch_norm(x, w, y)
    return y
''').replace("import triton.language as tl\n", "import triton.language as tl\n\nfrom ops.launch import launch_norm\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("launch through a helper", files={"ops/norm.py": after, "ops/launch.py": helper}),
    ], TREE, matrix=MATRIX)
    wrapper = _symbol(verdicts[1], "norm")
    assert wrapper.verdict != REAL_GAP and "stopped launching" not in wrapper.reason, wrapper.reason
    assert "extracted-launch" in wrapper.rules, wrapper.rules


def test_a_kernel_that_newly_reads_the_grid_size_is_for_a_reader_not_behind(tmp_path):
    """Rule ``num-programs-read``: reading ``tl.num_programs`` to branch on the last block packs no work into
    the program id, so a port without it is not behind on the launch (never REAL_GAP on that alone)."""
    last_block = norm_module().replace(
        "    row = tl.program_id(0)\n",
        "    row = tl.program_id(0)\n    last = row == tl.num_programs(0) - 1\n").replace(
        "    mask = cols < n_cols\n", "    mask = (cols < n_cols) | (last & (cols < 0))\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("branch on the last block", files={"ops/norm.py": last_block}),
    ], TREE, matrix=MATRIX)
    kernel = _symbol(verdicts[1], "_norm_fwd")
    assert kernel.verdict in FLAGGED and kernel.verdict != REAL_GAP, kernel.reason
    assert "num-programs-read" in kernel.rules, kernel.rules


def test_a_new_grid_through_an_unresolved_helper_is_not_proven_behind(tmp_path):
    """Rule ``opaque-new-grid``: the launch's grid now goes through a project helper that cannot be resolved
    (it may count the same programs), so a port that keeps the old grid is for a reader, not behind."""
    helper_grid = norm_module().replace("_norm_fwd[(n_rows,)]", "_norm_fwd[(blocks_of(n_rows, 1),)]").replace(
        "import triton.language as tl\n", "import triton.language as tl\n\nfrom ops.utils.sizes import blocks_of\n")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("grid through a helper", files={"ops/norm.py": helper_grid}),
    ], TREE, matrix=MATRIX)
    wrapper = _symbol(verdicts[1], "norm")
    assert wrapper.verdict in FLAGGED and wrapper.verdict != REAL_GAP, wrapper.reason
    assert "opaque-new-grid" in wrapper.rules, (wrapper.rules, wrapper.reason)



def _allocated_in_a_helper(tmp_path, rows="n_rows, n_cols = x.shape"):
    """A renamed wrapper whose allocation and sizes move into a helper it unpacks: the grid's text stays
    `(n_rows,)`, its value now comes through the helper's returned tuple."""
    renamed = norm_module().replace("def norm(x, w):", "def norm_rows(x, w):")
    allocate = "    y = torch.empty_like(x)\n    n_rows, n_cols = x.shape\n"
    helper = "def _allocate(x):\n    y = torch.empty_like(x)\n    " + rows + "\n    return y, n_rows, n_cols\n\n\n"
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": norm_module()}),
        CommitSpec("rename the wrapper", files={"ops/norm.py": renamed}),
        CommitSpec("allocate in a helper", files={"ops/norm.py": renamed.replace(
            "def norm_rows(x, w):\n" + allocate, helper + "def norm_rows(x, w):\n    y, n_rows, n_cols = _allocate(x)\n")}),
    ], TREE, matrix=MATRIX)
    return _symbol(verdicts[2], "norm_rows")


def test_a_grid_size_unpacked_from_a_helpers_return_is_that_element_of_it(tmp_path):
    """`y, n_rows, n_cols = _allocate(x)`: `n_rows` is the second item the helper returns (`x.shape[0]`
    there), not the whole returned tuple; the grid is the port's, so the launch is no gap."""
    wrapper = _allocated_in_a_helper(tmp_path)
    assert wrapper.verdict != REAL_GAP, wrapper.reason
    assert not any(e.kind == "launch-grid" for e in wrapper.evidence), wrapper.reason


def test_a_grid_size_a_helper_now_returns_differently_is_still_a_gap(tmp_path):
    # the neighbour: the helper's second item is another value, so the port's grid is the old one
    wrapper = _allocated_in_a_helper(tmp_path, rows="n_rows, n_cols = x.shape[0] // 2, x.shape[1]")
    assert wrapper.verdict == REAL_GAP, wrapper.reason
    assert "launch" == wrapper.decided_by, wrapper.reason

CLASS_MODULE = '''\
import torch


class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        {extra}variance = x.pow(2).mean(-1, keepdim=True)
        y = x * torch.rsqrt(variance + eps) * w
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w, None, None


def {entry}(x, w, eps):
    return {name}.apply(x, w, eps)
'''

CLASS_TREE = {
    "kernels/rownorm.py": '''\
import torch


class RowNorm(torch.autograd.Function):
    # portq: ports vllm:ops/norm.py::_Norm.forward
    @staticmethod
    def forward(ctx, x, w, eps):
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + eps) * w
''',
    "engine/model.py": "from kernels.rownorm import RowNorm\n\n\ndef run(x, w):\n    return RowNorm.apply(x, w, 1e-6)\n",
}


def test_the_methods_of_a_renamed_class_are_followed_with_it(tmp_path):
    # The class and its entry point are renamed with every body unchanged: the mapping names the
    # classes, not their methods, and the ported method must still be followed into the new class.
    renamed = CLASS_MODULE.format(name="_NormOp", entry="norm_op", extra="")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": CLASS_MODULE.format(name="_Norm", entry="norm", extra="")}),
        CommitSpec("rename the class", files={"ops/norm.py": renamed}),
        CommitSpec("default eps", files={"ops/norm.py": CLASS_MODULE.format(
            name="_NormOp", entry="norm_op", extra="eps = 1e-6 if eps is None else eps\n        ")}),
    ], CLASS_TREE, matrix=MATRIX)
    assert verdicts[1].verdict not in FLAGGED, verdicts[1].reason
    later = _symbol(verdicts[2], "_NormOp.forward")
    assert "moved-definition" in later.rules, later.reason
    assert later.verdict in FLAGGED, later.reason
    assert "_Norm.forward" in later.reason and later.ports


KERNELS = '''\
import triton
import triton.language as tl


@triton.jit
def {fwd}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2.0, mask=i < n)


@triton.jit
def {bwd}(g_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dx_ptr + i, tl.load(g_ptr + i, mask=i < n) * 2.0, mask=i < n)
'''

LAUNCHING_CLASS = '''\
import torch
import triton

from ops.kern import {fwd}, {bwd}


class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        {fwd}[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
        return y

    @staticmethod
    def backward(ctx, g):
        dx = torch.empty_like(g)
        n = g.numel()
        {bwd}[(triton.cdiv(n, 1024),)](g, dx, n, BLOCK=1024)
        return dx
'''

LAUNCHING_TREE = {
    "kernels/double.py": '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/kern.py::_fwd
@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2.0, mask=i < n)


class Double(torch.autograd.Function):
    # portq: ports vllm:ops/norm.py::_Double.forward
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        n = x.numel()
        double_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
''',
    "engine/model.py": "from kernels.double import Double\n\n\ndef run(x):\n    return Double.apply(x)\n",
}


def test_a_followed_method_that_only_follows_renamed_kernels_is_cosmetic(tmp_path):
    # The class is renamed (its methods followed with it); a later commit renames both kernels, the
    # anchored one and one no anchor names, at their definitions, the import and the launches.
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/kern.py": KERNELS.format(fwd="_fwd", bwd="_bwd"),
                                  "ops/norm.py": LAUNCHING_CLASS.format(name="_Double", fwd="_fwd", bwd="_bwd")}),
        CommitSpec("rename the class", files={"ops/norm.py": LAUNCHING_CLASS.format(
            name="_DoubleOp", fwd="_fwd", bwd="_bwd")}),
        CommitSpec("rename the kernels", files={
            "ops/kern.py": KERNELS.format(fwd="double_fwd", bwd="double_bwd"),
            "ops/norm.py": LAUNCHING_CLASS.format(name="_DoubleOp", fwd="double_fwd", bwd="double_bwd")}),
    ], LAUNCHING_TREE, matrix=MATRIX)
    forward = _symbol(verdicts[2], "_DoubleOp.forward")
    assert "moved-definition" in forward.rules, forward.reason
    assert (forward.verdict, forward.justification) == (NOT_APPLICABLE, "cosmetic"), forward.reason
    assert verdicts[2].verdict not in FLAGGED, verdicts[2].reason


def test_a_launch_extracted_into_a_wrapper_that_takes_a_kernels_name_is_followed(tmp_path):
    # The kernel is renamed and its old name given to a wrapper that launches it, with the launch
    # moved out of the followed method into the wrapper: the block size the method bound to a local
    # is now the wrapper's parameter, bound by the call, and the grid reads it there.
    wrapper = KERNELS.format(fwd="_fwd_kernel", bwd="_bwd") + '''

def _fwd(x, y, BLOCK):
    n = x.numel()
    _fwd_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
'''
    calling = LAUNCHING_CLASS.format(name="_DoubleOp", fwd="_fwd", bwd="_bwd").replace(
        "        n = x.numel()\n        BLOCK = 1024\n        _fwd[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)\n",
        "        _fwd(x, y, BLOCK=1024)\n")
    assert calling != LAUNCHING_CLASS.format(name="_DoubleOp", fwd="_fwd", bwd="_bwd")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/kern.py": KERNELS.format(fwd="_fwd", bwd="_bwd"),
                                  "ops/norm.py": LAUNCHING_CLASS.format(name="_Double", fwd="_fwd", bwd="_bwd")}),
        CommitSpec("rename the class", files={"ops/norm.py": LAUNCHING_CLASS.format(
            name="_DoubleOp", fwd="_fwd", bwd="_bwd")}),
        CommitSpec("launch through a wrapper", files={"ops/kern.py": wrapper, "ops/norm.py": calling}),
    ], LAUNCHING_TREE, matrix=MATRIX)
    forward = _symbol(verdicts[2], "_DoubleOp.forward")
    assert "extracted-launch" in forward.rules, forward.reason
    assert forward.verdict != REAL_GAP, forward.reason


def test_a_class_renamed_with_the_same_body_is_no_change_to_a_ported_reader_of_it(tmp_path):
    # A package rename: the module moves and its class is renamed, every body
    # unchanged. The ported entry point reads the class by name; the class's own header is no change
    # to it: cosmetic, never a change outside definitions for a reader.
    tree = dict(CLASS_TREE)
    tree["kernels/rownorm.py"] += '''

# portq: ports vllm:ops/norm.py::norm
def row_norm(x, w, eps):
    return RowNorm.apply(x, w, eps)
'''
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": CLASS_MODULE.format(name="_Norm", entry="norm", extra="")}),
        CommitSpec("rename the package", files={"ops/norm.py": None, "ops/utils/norm.py": CLASS_MODULE.format(
            name="_NormOp", entry="norm", extra="")}),
    ], tree, matrix=MATRIX)
    assert verdicts[1].verdict not in FLAGGED, verdicts[1].reason
    old_class = _symbol(verdicts[1], "_Norm")
    assert (old_class.verdict, old_class.justification) == (NOT_APPLICABLE, "cosmetic"), old_class.reason


_KEYED_GRID_BEFORE = b'''\
class Op:
    def forward(ctx, x, BLOCK_fwd):
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        _fwd[grid](x, y, n, BLOCK=BLOCK_fwd)
        return y
'''

_KEYED_GRID_AFTER = b'''\
def op_forward(x, BLOCK):
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta[KEY]),)
    _fwd[grid](x, y, n, BLOCK=BLOCK)
    return y


class Op:
    def forward(ctx, x, BLOCK_fwd):
        return op_forward(x=x, BLOCK=BLOCK_fwd)
'''


def _keyed_grid_extraction(before_key: bytes, helper_key: bytes) -> bool:
    from portq.classifier.moves import Move, extraction_only
    from portq.language.symbols import symbol_table

    before = symbol_table(_KEYED_GRID_BEFORE.replace(b'"BLOCK"', before_key), "ops/op.py")
    after = symbol_table(_KEYED_GRID_AFTER.replace(b"KEY", helper_key), "ops/op.py")
    move = Move(2, "0" * 40, ("ops/op.py", "Op.forward"), ("ops/op.py", "Op.forward"), ("ops/op.py", "op_forward"),
                "extracted", False)
    return extraction_only(before, after, after, move, [move])


def test_a_string_key_spelled_like_a_helper_parameter_is_the_same_key_not_the_argument():
    # The launch config key the grid reads is a string: the helper's parameter of that name
    # (bound to another argument by the call) does not rename it.
    assert _keyed_grid_extraction(b'"BLOCK"', b'"BLOCK"')


def test_a_string_key_that_changed_with_the_extraction_is_not_read_as_the_argument():
    # Neighbour: the old grid read another key; the helper's key only spells its parameter's name.
    assert not _keyed_grid_extraction(b'"BLOCK_fwd"', b'"BLOCK"')


_TUNED_METHOD = '''\


class NormFunction(torch.autograd.Function):
    @staticmethod
{decorator}    def forward(ctx, x, w, block_fwd):
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=block_fwd)
        ctx.save_for_backward(x, w)
        return y
'''

_TUNED_CALLER = '''\
from .forward import norm_forward


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, block_fwd):
        ctx.save_for_backward(x, w)
        return norm_forward(x=x, w=w, block=block_fwd)
'''

_TUNED_HELPER = '''\
import torch

from .norm import _norm_fwd


@tuned(configs=[dict(block=64), dict(block=128)])
def norm_forward(x, w, block):
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    _norm_fwd[(n_rows,)](x, w, y, n_cols, BLOCK=block)
    return y
'''

_TUNED_TREE = {**TREE, "kernels/fn.py": '''\
import torch

from kernels.rownorm import row_norm_kernel


class RowNorm(torch.autograd.Function):
    # portq: ports vllm:ops/norm.py::NormFunction.forward
    @staticmethod
    def forward(ctx, x, w, block):
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        row_norm_kernel[(n_rows,)](x, w, y, n_cols, BLOCK=block)
        ctx.save_for_backward(x, w)
        return y
''', "engine/train.py": "from kernels.fn import RowNorm\n\n\ndef step(x, w):\n    return RowNorm.apply(x, w, 128)\n"}


def _extracted_into_a_new_module(tmp_path, decorator: str):
    base = norm_module() + _TUNED_METHOD.format(decorator=decorator)
    after = norm_module() + "\n\n" + _TUNED_CALLER
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": base}),
        CommitSpec("extract the forward", files={"ops/norm.py": after, "ops/forward.py": _TUNED_HELPER}),
    ], _TUNED_TREE, matrix=MATRIX)
    return verdicts[1]


def test_a_body_extracted_into_a_new_module_with_the_decorator_it_had_changes_nothing(tmp_path):
    verdict = _extracted_into_a_new_module(tmp_path, "    @tuned(configs=[dict(block_fwd=64), dict(block_fwd=128)])\n")
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert _symbol(verdict, "NormFunction.forward").justification == "cosmetic"


def test_a_body_extracted_into_a_new_module_under_a_decorator_it_lacked_needs_review(tmp_path):
    # Neighbour: the helper's module binds the extracted body under a decorator the method never had.
    verdict = _extracted_into_a_new_module(tmp_path, "")
    assert verdict.verdict in FLAGGED, verdict.reason
