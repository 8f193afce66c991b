"""Code upstream runs only on a path the tree declares it does not carry (``not-carried-selector``,
``declared-class-body``).

A binding picks its row-major or column-major launcher through a local flag; the tree ports the
column-major launcher and declares the row-major one not carried. A commit adds a check inside
``if (by_rows) { ... }``: with the flag false, the path the port runs, the binding is unchanged,
so not-carried. A check added outside those branches, a flag assigned again, or a flag that
selects nothing declared stays flagged. A parameters struct the tree declares not carried gains
fields: the lines are the struct's members, not a use of the names they read."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

BINDING = '''#include <torch/extension.h>

at::Tensor conv_fwd(const at::Tensor &x, int dim) {
    TORCH_CHECK(x.stride(2) == 1 || x.stride(1) == 1);
    const bool by_rows = x.stride(1) == 1 && x.stride(2) > 1;
{reassign}    if (by_rows) {
        TORCH_CHECK(dim % 8 == 0, "dim must be a multiple of 8");
{inside}    }
{outside}    at::Tensor out = torch::empty_like(x);
    if (!by_rows) {
        launch_cols(x, out);
    } else {
        {rows_call}(x, out);
    }
    return out;
}
'''

PORT = '''#include <torch/extension.h>

// portq: ports vllm:csrc/conv/binding.cpp::conv_fwd
at::Tensor fwd(const at::Tensor &x, int dim) {
    TORCH_CHECK(x.stride(2) == 1);
    at::Tensor out = torch::empty_like(x);
    cols(x, out);
    return out;
}

// portq: ports vllm:csrc/conv/launch.cu::launch_cols
void cols(const at::Tensor &x, at::Tensor &out) { }

// portq: not-carried vllm:csrc/conv/launch.cu::launch_rows -- the engine keeps tensors column-major

void engine(const at::Tensor &x) { fwd(x, 8); }
'''

CHECK = '        TORCH_CHECK(x.stride(0) % 8 == 0, "strides must be multiples of 8");\n'


def _binding(inside="", outside="", reassign="", rows_call="launch_rows"):
    return (BINDING.replace("{inside}", inside).replace("{outside}", outside).replace("{reassign}", reassign)
            .replace("{rows_call}", rows_call))


def _conv(tmp_path, **changed):
    base = {k: v for k, v in changed.items() if k in ("reassign", "rows_call")}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/conv/binding.cpp": _binding(**base)}),
        CommitSpec("check strides", files={"csrc/conv/binding.cpp": _binding(**changed)})],
        {"kernels/conv.cpp": PORT})
    return next(s for s in verdicts[1].symbols if s.symbol == "conv_fwd")


def test_a_check_inside_the_branch_of_a_flag_selecting_a_not_carried_launcher_is_not_carried(tmp_path):
    conv = _conv(tmp_path, inside=CHECK)
    assert (conv.verdict, conv.justification) == (NOT_APPLICABLE, "not-carried"), conv.reason
    assert "not-carried-selector" in conv.rules, conv.rules
    assert "by_rows" in conv.reason and "launch_rows" in conv.reason, conv.reason


def test_a_check_outside_those_branches_stays_flagged(tmp_path):
    conv = _conv(tmp_path, inside=CHECK, outside=CHECK.replace("        ", "    "))
    assert conv.verdict == NEEDS_REVIEW, conv.reason
    assert "not-carried-selector" not in conv.rules


def test_a_flag_assigned_again_stays_flagged(tmp_path):
    conv = _conv(tmp_path, inside=CHECK, reassign="    by_rows = dim > 64;\n")
    assert conv.verdict == NEEDS_REVIEW, conv.reason
    assert "not-carried-selector" not in conv.rules


def test_a_flag_selecting_nothing_declared_stays_flagged(tmp_path):
    conv = _conv(tmp_path, inside=CHECK, rows_call="launch_tiles")
    assert conv.verdict == NEEDS_REVIEW, conv.reason
    assert "not-carried-selector" not in conv.rules


HEADER = '''#pragma once
using index_t = uint32_t;

struct Params {
    void *__restrict__ x_ptr;
    index_t x_stride;
};

struct GradParams: public Params {
    void *__restrict__ dx_ptr;
{fields}};
'''

HEADER_PORT = '''// portq: ports vllm:csrc/conv/params.h::Params
struct FwdParams {
    void *__restrict__ x_ptr;
    index_t x_stride;
};
// portq: not-carried vllm:csrc/conv/params.h::GradParams -- inference only

void engine(FwdParams p) { }
'''


def _params(tmp_path, declared=True):
    fields = "    bool deterministic;\n    void *__restrict__ workspace_ptr;\n    index_t workspace_stride;\n"
    tree = HEADER_PORT if declared else HEADER_PORT.replace("// portq: not-carried", "// not carried:")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/conv/params.h": HEADER.replace("{fields}", "")}),
        CommitSpec("deterministic backward", files={"csrc/conv/params.h": HEADER.replace("{fields}", fields)})],
        {"kernels/params.h": tree})
    return next(s for s in verdicts[1].symbols if s.symbol == "GradParams")


def test_fields_added_to_a_struct_declared_not_carried_are_not_carried(tmp_path):
    grad = _params(tmp_path)
    assert (grad.verdict, grad.justification) == (NOT_APPLICABLE, "not-carried"), grad.reason
    assert "declared-class-body" in grad.rules, grad.rules


def test_fields_added_to_an_undeclared_struct_stay_flagged(tmp_path):
    grad = _params(tmp_path, declared=False)
    assert grad.verdict == NEEDS_REVIEW, grad.reason
    assert "declared-class-body" not in grad.rules
