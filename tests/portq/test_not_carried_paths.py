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


# --- not-carried-call-arguments: what a host hands a callee the tree declares not carried ------

HOST = '''#include <cuda_runtime.h>

template <typename Param>
void dispatch_gate(const float* x, float* out, {param}int n, cudaStream_t stream);

void run_gate(const float* x, float* out, int n, cudaStream_t stream) {
    check_inputs(x, out, n);
{local}    dispatch_gate<NoParam>(x, out, {argument}n, stream);
}
'''

HOST_PORT = '''#include <cuda_runtime.h>

// portq: ports vllm:csrc/act/host.cu::run_gate
// portq: not-carried vllm:csrc/act/host.cu::dispatch_gate -- the engine launches its gate kernel directly
void gate(const float* x, float* out, int n, cudaStream_t stream) {
    gate_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, out, n);
}

void engine(const float* x, float* out, int n) { gate(x, out, n, 0); }
'''


def _host(tmp_path, local="", argument="", port=HOST_PORT, before_argument=""):
    before = HOST.replace("{param}", "").replace("{local}", "").replace("{argument}", before_argument)
    after = HOST.replace("{param}", "Param& p, ").replace("{local}", local).replace("{argument}", argument)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/act/host.cu": before}),
        CommitSpec("pass the activation parameter", files={"csrc/act/host.cu": after})],
        {"kernels/act.cu": port})
    return next(s for s in verdicts[1].symbols if s.symbol == "run_gate")


def test_a_constant_argument_handed_to_a_not_carried_callee_is_not_carried(tmp_path):
    host = _host(tmp_path, local="    NoParam e = {};\n", argument="e, ")
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "not-carried-call-arguments" in host.rules, host.rules
    assert "dispatch_gate" in host.reason, host.reason


def test_a_literal_argument_handed_to_a_not_carried_callee_is_not_carried(tmp_path):
    host = _host(tmp_path, argument="nullptr, ")
    assert (host.verdict, host.justification) == (NOT_APPLICABLE, "not-carried"), host.reason
    assert "not-carried-call-arguments" in host.rules, host.rules


def test_an_input_handed_to_a_not_carried_callee_stays_flagged(tmp_path):
    # the host now forwards something it reads from its inputs: what it hands on is no constant
    host = _host(tmp_path, local="    float e = x[0];\n", argument="e, ")
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "not-carried-call-arguments" not in host.rules


def test_a_constant_handed_to_a_callee_the_tree_does_not_declare_stays_flagged(tmp_path):
    port = HOST_PORT.replace("// portq: not-carried vllm:csrc/act/host.cu::dispatch_gate -- the engine launches "
                             "its gate kernel directly\n", "")
    host = _host(tmp_path, local="    NoParam e = {};\n", argument="e, ", port=port)
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "not-carried-call-arguments" not in host.rules


def test_a_constant_local_also_read_elsewhere_stays_flagged(tmp_path):
    host = _host(tmp_path, local="    NoParam e = {};\n    touch(e);\n", argument="e, ")
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "not-carried-call-arguments" not in host.rules


def test_reordered_arguments_of_a_not_carried_callee_stay_flagged(tmp_path):
    # the arguments the host passes from its inputs must be the same, in order
    before = HOST.replace("{param}", "").replace("{local}", "").replace("{argument}", "")
    after = before.replace("dispatch_gate<NoParam>(x, out, n, stream)", "dispatch_gate<NoParam>(out, x, n, stream)")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"csrc/act/host.cu": before}),
        CommitSpec("swap", files={"csrc/act/host.cu": after})], {"kernels/act.cu": HOST_PORT})
    host = next(s for s in verdicts[1].symbols if s.symbol == "run_gate")
    assert host.verdict == NEEDS_REVIEW, host.reason
    assert "not-carried-call-arguments" not in host.rules
