"""A launch through a kernel pointer a same-file picker returns (``picked-kernel``).

A C++ host that chose between instances of one kernel template in an ``if``
(``K<true><<<g, b>>>(...)`` or ``K<false><<<g, b>>>(...)``) now asks a function
of its own file for the instance (``fp k = pick(flag); k<<<g, b>>>(...)``), the
function returning only instances of that one kernel. The host still launches
the same kernel: the pointer is resolved to it, so no kernel was added or
dropped from the launch, and what changed is the host's body (a reader's, DESIGN
§5). A picker that can return another kernel, or a pointer the host binds to a
kernel it never launched, stays a ``launch-kernel`` gap.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_declared_sibling import HEADER, MATRIX_WITH_NORM, SOURCE

KERNELS = '''\
#include "row_norm.h"

template<bool wide>
__global__ void ScaleKernel(const float* x, float* y, int n)
{
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) y[i] = wide ? x[i] * 2.0f : x[i] * 3.0f;
}

template<bool wide>
__global__ void ShiftKernel(const float* x, float* y, int n)
{
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) y[i] = wide ? x[i] + 2.0f : x[i] + 3.0f;
}
'''
BEFORE = KERNELS + '''
void scaleRows(const float* x, float* y, int n, bool wide)
{
    int blocks = (n + 63) / 64;
    if (wide)
        ScaleKernel<true><<<blocks, 64>>>(x, y, n);
    else
        ScaleKernel<false><<<blocks, 64>>>(x, y, n);
}
'''
PICKER = '''
typedef void (*fp_scale_kernel)(const float*, float*, int);

fp_scale_kernel pickScale(bool wide)
{
    if (wide) {
        return ScaleKernel<true>;
    } else {
        return ScaleKernel<false>;
    }
}

void scaleRows(const float* x, float* y, int n, bool wide)
{
    int blocks = (n + 63) / 64;
    fp_scale_kernel kernel = pickScale(wide);
    kernel<<<blocks, 64>>>(x, y, n);
}
'''
AFTER = KERNELS + PICKER
"""The same kernel, its instance now picked by a function of the file."""

# Unsound neighbours: the picker can return another kernel, or returns only a kernel the host never launched.
MIXED = KERNELS + PICKER.replace("return ScaleKernel<false>;", "return ShiftKernel<false>;")
OTHER = KERNELS + PICKER.replace("return ScaleKernel<false>;", "return ShiftKernel<false>;") \
    .replace("return ScaleKernel<true>;", "return ShiftKernel<true>;")

PORT = {"kernels/scale.cu": (
    f"// portq: ports vllm:{SOURCE}::ScaleKernel\n"
    "template <bool W>\n__global__ void scale_kernel(const float* x, float* y, int n)\n{\n"
    "    int i = blockIdx.x * 64 + threadIdx.x;\n"
    "    if (i < n) y[i] = W ? x[i] * 2.0f : x[i] * 3.0f;\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::scaleRows\n"
    "void scale_rows(const float* x, float* y, int n, bool wide)\n{\n"
    "    const int blocks = (n + 63) / 64;\n"
    "    if (wide) scale_kernel<true><<<blocks, 64>>>(x, y, n);\n"
    "    else scale_kernel<false><<<blocks, 64>>>(x, y, n);\n}\n\n"
    "void run_scale(const float* x, float* y, int n)\n{\n    scale_rows(x, y, n, true);\n}\n")}


def _verdict(tmp_path, after):
    base = {HEADER: "#pragma once\n", SOURCE: BEFORE}
    return classify_commit(tmp_path, base, {SOURCE: after}, PORT, matrix=MATRIX_WITH_NORM)


def test_a_kernel_launched_through_a_pointer_its_picker_returns_is_the_same_launch(tmp_path):
    verdict = _verdict(tmp_path, AFTER)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    host = next(s for s in verdict.symbols if s.symbol == "scaleRows")
    assert "launch-kernel" not in host.rules, (host.rules, host.reason)


def test_a_picker_that_can_return_another_kernel_stays_a_gap(tmp_path):
    verdict = _verdict(tmp_path, MIXED)
    assert verdict.verdict == REAL_GAP, verdict.reason


def test_a_picker_returning_a_kernel_the_host_never_launched_stays_a_gap(tmp_path):
    verdict = _verdict(tmp_path, OTHER)
    assert verdict.verdict == REAL_GAP, verdict.reason
    assert "shift" in verdict.reason.lower(), verdict.reason
