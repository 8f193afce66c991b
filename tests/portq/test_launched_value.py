"""A kernel parameter the port lacks, with no default of its own, takes the value its
one launch gives it (docs/tricky-cases.md, "a mode chosen by the entry point's
default"): followed from the launch back through the launching wrapper's parameter,
a module-level table looked up by a known key (``mode = _str_to_mode[mode]``), to
the default of the ported entry point that calls the wrapper (``mode="fp32"``).
An edit confined to the branches that value leaves out is not the port's
(``launched-value``). Another default, a second launch, a key computed at run
time, a rebinding that is not a table lookup, or an entry point whose port takes
the mode stays flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, the mode
added (entry 1), then the edit (entry 2)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["ops/*.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

BASE = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _norm_kernel(y_ptr, x_ptr, w_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    w = tl.load(w_ptr + offs, mask=offs < n_cols, other=0.0)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    y = x * rstd * w
    tl.store(y_ptr + row * n_cols + offs, y, mask=offs < n_cols)


def norm_forward(x, w, eps):
    y = torch.empty_like(x)
    _norm_kernel[(x.shape[0],)](y, x, w, x.shape[1], eps, BLOCK=triton.next_power_of_2(x.shape[1]))
    return y


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        return norm_forward(x, w, eps)
'''

MODES = '''\
_MODE_NONE = tl.constexpr(-1)
_MODE_FP32 = tl.constexpr(0)
_MODE_LOW = tl.constexpr(1)

_str_to_mode = {
    "fp32": _MODE_FP32.value,
    "low": _MODE_LOW.value,
    "none": _MODE_NONE.value,
}
'''

WITH_MODE = BASE.replace("import triton.language as tl\n", "import triton.language as tl\n\n" + MODES) \
    .replace("n_cols, eps, BLOCK: tl.constexpr):", "n_cols, eps, mode: tl.constexpr, BLOCK: tl.constexpr):") \
    .replace("    rstd = tl.rsqrt", "    if mode == _MODE_FP32:\n        x = x.to(tl.float32)\n    rstd = tl.rsqrt") \
    .replace("def norm_forward(x, w, eps):\n",
             "def norm_forward(x, w, eps, mode):\n    if not isinstance(mode, int):\n"
             "        mode = _str_to_mode[mode]\n") \
    .replace("x.shape[1], eps, BLOCK=", "x.shape[1], eps, mode, BLOCK=") \
    .replace("def forward(ctx, x, w, eps):\n        return norm_forward(x, w, eps)",
             "def forward(ctx, x, w, eps, mode=\"fp32\"):\n        return norm_forward(x, w, eps, mode)")

EDIT = WITH_MODE.replace("    rstd = tl.rsqrt", "    if mode == _MODE_NONE:\n        eps = eps.to(x.dtype)\n"
                                              "    rstd = tl.rsqrt") \
    .replace("    tl.store(y_ptr", "    if mode == _MODE_LOW:\n        y = y.to(tl.float16)\n    tl.store(y_ptr")

PORT = '''\
import torch
import triton
import triton.language as tl


# portq: ports vllm:ops/norm.py::_norm_kernel
@triton.jit
def rows_kernel(out_ptr, inp_ptr, scale_ptr, width, eps, TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    inp = tl.load(inp_ptr + row * width + cols, mask=cols < width, other=0.0).to(tl.float32)
    scale = tl.load(scale_ptr + cols, mask=cols < width, other=0.0)
    inv = tl.rsqrt(tl.sum(inp * inp, axis=0) / width + eps)
    tl.store(out_ptr + row * width + cols, inp * inv * scale, mask=cols < width)


class RowNorm(torch.autograd.Function):
    # portq: ports vllm:ops/norm.py::NormFunction.forward
    @staticmethod
    def forward(ctx, inp, scale, eps):
        out = torch.empty_like(inp)
        rows_kernel[(inp.shape[0],)](out, inp, scale, inp.shape[1], eps, TILE=triton.next_power_of_2(inp.shape[1]))
        return out
'''

ENGINE = "from kernels.norm import RowNorm\n\n\ndef step(x, w):\n    return RowNorm.apply(x, w, 1e-6)\n"


def _edit(tmp_path, with_mode=WITH_MODE, edit=EDIT, port=PORT):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("mode", files={"ops/norm.py": with_mode}),
        CommitSpec("edit", files={"ops/norm.py": edit}),
    ], {"kernels/norm.py": port, "engine/step.py": ENGINE}, matrix=MATRIX)
    return verdicts[2]


def _kernel(verdict):
    return next(s for s in verdict.symbols if s.symbol == "_norm_kernel")


def _flagged(verdict):
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "launched-value" not in _kernel(verdict).rules


def _both(text, old, new):
    return text.replace(old, new)


def test_an_edit_under_modes_the_entry_points_default_leaves_out_is_not_the_ports(tmp_path):
    verdict = _edit(tmp_path)
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    kernel = _kernel(verdict)
    assert (kernel.justification, kernel.rules) == ("not-carried", ["launched-value"]), kernel.reason
    assert "mode" in kernel.reason


def test_a_default_that_selects_the_edited_mode_is_flagged(tmp_path):
    old, new = 'mode="fp32"', 'mode="none"'
    _flagged(_edit(tmp_path, _both(WITH_MODE, old, new), _both(EDIT, old, new)))


def test_a_second_launch_with_another_mode_is_flagged(tmp_path):
    second = ("\n\ndef norm_low(x, w, eps):\n    y = torch.empty_like(x)\n"
              "    _norm_kernel[(x.shape[0],)](y, x, w, x.shape[1], eps, 1, BLOCK=64)\n    return y\n")
    _flagged(_edit(tmp_path, WITH_MODE + second, EDIT + second))


def test_a_key_computed_at_run_time_is_flagged(tmp_path):
    old, new = "_str_to_mode[mode]", "_str_to_mode[mode.lower()]"
    _flagged(_edit(tmp_path, _both(WITH_MODE, old, new), _both(EDIT, old, new)))


def test_a_rebinding_that_is_not_a_table_lookup_is_flagged(tmp_path):
    old, new = "_str_to_mode[mode]", "parse_mode(mode)"
    _flagged(_edit(tmp_path, _both(WITH_MODE, old, new), _both(EDIT, old, new)))


def test_a_table_changed_after_it_is_bound_is_flagged(tmp_path):
    old, new = "\n\n\n@triton.jit", '\n_str_to_mode["fp32"] = _MODE_NONE.value\n\n\n@triton.jit'
    _flagged(_edit(tmp_path, _both(WITH_MODE, old, new), _both(EDIT, old, new)))


def test_a_port_whose_entry_point_takes_the_mode_is_flagged(tmp_path):
    port = PORT.replace("def forward(ctx, inp, scale, eps):", "def forward(ctx, inp, scale, eps, mode):")
    _flagged(_edit(tmp_path, port=port))


def test_neighbouring_parameters_renamed_in_place_together_are_followed(tmp_path):
    def renamed(text):
        return text.replace("def _norm_kernel(y_ptr, x_ptr, w_ptr,", "def _norm_kernel(out_ptr, in_ptr, w_ptr,") \
            .replace("tl.load(x_ptr +", "tl.load(in_ptr +").replace("tl.store(y_ptr +", "tl.store(out_ptr +")
    verdict = _edit(tmp_path, renamed(WITH_MODE), renamed(EDIT))
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert _kernel(verdict).rules == ["launched-value"], _kernel(verdict).reason


def test_a_run_renamed_beside_an_inserted_parameter_binds_nothing(tmp_path):
    def renamed(text):
        return text.replace("def _norm_kernel(y_ptr, x_ptr, w_ptr,", "def _norm_kernel(out_ptr, extra, in_ptr, w_ptr,") \
            .replace("tl.load(x_ptr +", "tl.load(in_ptr +").replace("tl.store(y_ptr +", "tl.store(out_ptr +") \
            .replace("](y, x, w,", "](y, 0, x, w,")
    _flagged(_edit(tmp_path, renamed(WITH_MODE), renamed(EDIT)))


def test_a_bool_default_is_an_int_as_python_tests_it(tmp_path):
    # isinstance(False, int) is true: the table lookup does not run, and the flag stays False, which == 0
    with_flag = WITH_MODE.replace('mode="fp32"', "mode=False").replace('"fp32": _MODE_FP32.value',
                                                                       "False: _MODE_LOW.value")
    edit = with_flag.replace("    rstd = tl.rsqrt", "    if mode == 0:\n        eps = eps.to(x.dtype)\n    rstd = tl.rsqrt")
    _flagged(_edit(tmp_path, with_flag, edit))


_OTHER = '''\
import torch

from ops.norm import _norm_kernel


def norm_low(x, w, eps):
    y = torch.empty_like(x)
    _norm_kernel[(x.shape[0],)](y, x, w, x.shape[1], eps, {mode}, BLOCK=64)
    return y
'''


def _with_other_launch(tmp_path, mode_before, mode_after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("mode", files={"ops/norm.py": WITH_MODE, "ops/low.py": _OTHER.format(mode=mode_before)}),
        CommitSpec("edit", files={"ops/norm.py": EDIT, "ops/low.py": _OTHER.format(mode=mode_after)}),
    ], {"kernels/norm.py": PORT, "engine/step.py": ENGINE}, matrix=MATRIX)
    return verdicts[2]


def test_a_launch_in_another_file_the_commit_changes_with_another_mode_is_flagged(tmp_path):
    _flagged(_with_other_launch(tmp_path, "1", "1 "))


def test_a_launch_in_another_file_with_the_same_mode_agrees(tmp_path):
    verdict = _with_other_launch(tmp_path, "0", "False")
    assert _kernel(verdict).rules == ["launched-value"], _kernel(verdict).reason
