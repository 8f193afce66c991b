"""A kernel parameter the port lacks, with no default of its own, launched from another upstream module
(``launched-value``, followed across files): the kernel's module has no launch of it; the one launch is
in the host wrapper's module, which imports the kernel by name and passes the wrapper's own parameter,
whose default is off. Where the port anchors that wrapper and lacks the parameter, the value is the
default, and an edit confined to the branch it leaves out is not the port's. A wrapper parameter with no
default (the caller must pass it), a computed value, or a wrapper the port does not anchor stays flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, the flag added (entry 1), then
the edit inside its branch (entry 2)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "SCALE"
title    = "Row scale"
upstream = "vllm"
paths    = ["ops/*.py", "ops/_k/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

KERNEL = '''\
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(y_ptr, x_ptr, n_cols, theta, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    freqs = theta * offs
    tl.store(y_ptr + row * n_cols + offs, x * freqs, mask=offs < n_cols)
'''
KERNEL_FLAG = KERNEL.replace("n_cols, theta, BLOCK: tl.constexpr):",
                             "n_cols, theta, use_dyn: tl.constexpr, dyn_factor: tl.constexpr, BLOCK: tl.constexpr):") \
    .replace("    freqs = theta * offs\n",
             "    freqs = theta * offs\n    if use_dyn:\n        mid = 2 <= offs and offs <= 8\n"
             "        freqs = tl.where(mid, freqs / dyn_factor, freqs)\n")
KERNEL_EDIT = KERNEL_FLAG.replace("mid = 2 <= offs", "mid = 2 < offs")

WRAPPER = '''\
import torch
import triton

from ._k.scale_kernels import _scale_kernel


def scale_rows(x, theta: float = 10000.0):
    y = torch.empty_like(x)
    _scale_kernel[(x.shape[0],)](y, x, x.shape[1], theta, BLOCK=triton.next_power_of_2(x.shape[1]))
    return y
'''
WRAPPER_FLAG = WRAPPER.replace("theta: float = 10000.0):", "theta: float = 10000.0, use_dyn: bool = False, "
                               "dyn_factor: float = 8.0):") \
    .replace("x.shape[1], theta, BLOCK=", "x.shape[1], theta, use_dyn, dyn_factor if use_dyn else 0, BLOCK=")

PORT = '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/_k/scale_kernels.py::_scale_kernel
@triton.jit
def rows_kernel(out_ptr, inp_ptr, width, base, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    inp = tl.load(inp_ptr + row * width + cols, mask=cols < width, other=0.0)
    tl.store(out_ptr + row * width + cols, inp * (base * cols), mask=cols < width)


# portq: ports vllm:ops/scale.py::scale_rows
def rows(inp, base=10000.0):
    out = torch.empty_like(inp)
    rows_kernel[(inp.shape[0],)](out, inp, inp.shape[1], base, TILE=triton.next_power_of_2(inp.shape[1]))
    return out
'''
ENGINE = "from kernels.scale import rows\n\n\ndef step(x):\n    return rows(x)\n"


def _edit(tmp_path, wrapper_flag=WRAPPER_FLAG, port=PORT):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/_k/scale_kernels.py": KERNEL, "ops/_k/__init__.py": "",
                                  "ops/scale.py": WRAPPER}),
        CommitSpec("flag", files={"ops/_k/scale_kernels.py": KERNEL_FLAG, "ops/scale.py": wrapper_flag}),
        CommitSpec("edit", files={"ops/_k/scale_kernels.py": KERNEL_EDIT}),
    ], {"kernels/scale.py": port, "engine/step.py": ENGINE}, matrix=MATRIX)
    return verdicts[2]


def _kernel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "_scale_kernel")


def _flagged(verdict):
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "launched-value" not in _kernel(verdict).rules


def test_a_flag_the_wrappers_default_turns_off_in_another_module_leaves_its_branch_out(tmp_path):
    verdict = _edit(tmp_path)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    kernel = _kernel(verdict)
    assert (kernel.justification, kernel.rules) == ("not-carried", ["launched-value"]), kernel.reason
    assert "use_dyn" in kernel.reason


LOCAL_WRAPPER_FLAG = WRAPPER_FLAG.replace("from ._k.scale_kernels import _scale_kernel\n", "") \
    .replace("    y = torch.empty_like(x)\n    _scale_kernel[",
             "    from ._k.scale_kernels import _scale_kernel\n\n    y = torch.empty_like(x)\n"
             "    with torch.cuda.device(x.device):\n        _scale_kernel[")


def test_a_launch_under_a_device_guard_importing_the_kernel_locally_is_followed(tmp_path):
    verdict = _edit(tmp_path, LOCAL_WRAPPER_FLAG)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert _kernel(verdict).rules == ["launched-value"], _kernel(verdict).reason


def test_a_port_whose_positions_say_nothing_lacks_what_upstream_added_since_the_base(tmp_path):
    # the port drops theta (its own constant): its names bind nothing by position, but use_dyn and
    # dyn_factor came after the base, where the port is taken as in sync
    port = PORT.replace("width, base, TILE: tl.constexpr):", "width, TILE: tl.constexpr):") \
        .replace("inp * (base * cols)", "inp * (10000.0 * cols)").replace("inp.shape[1], base, TILE=", "inp.shape[1], TILE=")
    verdict = _edit(tmp_path, port=port)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]


def test_another_wrapper_parameter_declared_not_carried_says_nothing_of_the_flag(tmp_path):
    port = PORT.replace("# portq: ports vllm:ops/scale.py::scale_rows\n",
                        "# portq: ports vllm:ops/scale.py::scale_rows\n"
                        "# portq: not-carried vllm:ops/scale.py::scale_rows[dyn_factor] -- no dynamic scaling\n")
    verdict = _edit(tmp_path, port=port)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]


def test_a_flag_the_caller_must_pass_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, WRAPPER_FLAG.replace("use_dyn: bool = False", "use_dyn: bool")
                   .replace("theta: float = 10000.0, use_dyn", "theta: float, use_dyn")))


def test_a_launch_in_a_loop_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, LOCAL_WRAPPER_FLAG.replace("    with torch.cuda.device(x.device):\n",
                                                        "    for _ in range(1):\n")))


def test_a_computed_flag_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, WRAPPER_FLAG.replace("x.shape[1], theta, use_dyn,", "x.shape[1], theta, x.shape[1] > 64,")))


def test_a_wrapper_the_port_does_not_anchor_is_flagged(tmp_path):
    _flagged(_edit(tmp_path, port=PORT.replace("# portq: ports vllm:ops/scale.py::scale_rows\n", "")))
