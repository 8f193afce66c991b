"""A same-named definition added for another build (``other-build-sibling``): a commit that puts a copy of
a ported kernel, with another body, under ``#if defined(USE_GPU_B)`` above the unchanged kernel, now in
the ``#else``, leaves what the default build compiles as it was. The diff pairs same-named definitions by
their order in the file, so it pairs the old kernel with the new copy; the copy is the other build's
sibling, which nothing ports: NOT_APPLICABLE/``not-ported``, and so are the directives around it. A
default-build kernel that changes too, a macro a tree file sets, or a copy that replaces the kernel in the
default build stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

KERNEL = '''\
__global__ void ScaleKernel(const float* x, float* y, const int* lengths, int dims)
{
    int row = blockIdx.x;
#if defined(USE_GPU_B)
    row = __builtin_b_row(row);
#endif
    for (int t = threadIdx.x; t < lengths[row]; t += kLanes) {
        y[row * dims + t] = x[row * dims + t] * 2.0f;
    }
}
'''
OTHER_BUILD_KERNEL = '''\
__global__ void ScaleKernel(const float* x, float* y, const int* lengths, int dims)
{
    int half = threadIdx.x < 32 ? 0 : 1;
    int lane = threadIdx.x - 32 * half;
    y[(blockIdx.x * 2 + half) * dims + lane] = x[(blockIdx.x * 2 + half) * dims + lane] * 2.0f;
}
'''
BEFORE = f'''\
#include "row_norm.h"

namespace norm {{

DEVICE_INLINE float twice(float v)
{{
    return v * 2.0f;
}}

{KERNEL}
void scaleRows(const float* x, float* y, const int* lengths, int dims, int rows)
{{
    ScaleKernel<<<rows, 256>>>(x, y, lengths, dims);
}}

}}  // namespace norm
'''
SIBLING_ADDED = BEFORE.replace(KERNEL, f"#if defined(USE_GPU_B)\n{OTHER_BUILD_KERNEL}#else\n{KERNEL}#endif\n")
BOTH_CHANGED = SIBLING_ADDED.replace("#else\n" + KERNEL, "#else\n" + KERNEL.replace("* 2.0f", "* 3.0f"))
CONVERT = (
    "#if defined(USE_GPU_B)\n"
    "__global__ void ConvertKernel(float* x, int n)\n{\n    x[threadIdx.x] = x[threadIdx.x] * 0.5f;\n}\n\n"
    "void convertRows(float* x, int n)\n{\n    ConvertKernel<<<1, n>>>(x, n);\n}\n"
    "#endif\n\n"
)
NEW_FOR_OTHER_BUILD = BEFORE.replace("void scaleRows(", CONVERT + "void scaleRows(")
NEW_FOR_BOTH_BUILDS = BEFORE.replace("void scaleRows(", CONVERT.replace(
    "#endif\n", "#else\nstatic int laneCount()\n{\n    return 32;\n}\n#endif\n") + "void scaleRows(")
CONSTANT = "constexpr int kLanes = 32;\n\n"
WITH_CONSTANT = BEFORE.replace("namespace norm {\n\n", "namespace norm {\n\n" + CONSTANT)
CONSTANT_WRAPPED = WITH_CONSTANT.replace(CONSTANT, "#if !defined(USE_GPU_B)\n" + CONSTANT + "#endif\n")
DEFAULT_REPLACED = BEFORE.replace(KERNEL, f"#if !defined(USE_GPU_B)\n{OTHER_BUILD_KERNEL}#else\n{KERNEL}#endif\n")

PORT = {"kernels/scale.cu": (
    "constexpr int kLanes = 32;\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::ScaleKernel\n"
    "__global__ void scale_kernel(const float* x, float* y, const int* lengths, int dims)\n{\n"
    "    int row = blockIdx.x;\n"
    "    for (int t = threadIdx.x; t < lengths[row]; t += kLanes) {\n"
    "        y[row * dims + t] = x[row * dims + t] * 2.0f;\n    }\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::scaleRows\n"
    "void scale_rows(const float* x, float* y, const int* lengths, int dims, int rows)\n{\n"
    "    scale_kernel<<<rows, 256>>>(x, y, lengths, dims);\n}\n\n"
    "void run_scale(const float* x, float* y, const int* lengths, int dims, int rows)\n{\n"
    "    scale_rows(x, y, lengths, dims, rows);\n}\n")}


def _scan(tmp_path, after, port=PORT, before=BEFORE):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("change", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    entry = verdicts[1]
    return entry, {s.symbol: s for s in entry.symbols if s.path == SOURCE}


def _assert_default_build_unchanged(lines):
    """The file's lines outside definitions, where only another build's branch changed. The fixture's
    file parses whole (its helper's specifier macro included), so ``default-build-lines`` reads every
    conditional and decides them first: the default build compiles the same tokens, cosmetic. (The
    ``other-build-*`` rules decide such lines, not-ported, where the file holds lines the grammar cannot
    read.)"""
    assert lines.verdict == NOT_APPLICABLE and lines.justification == "cosmetic", lines.reason
    assert "default-build-lines" in lines.rules, lines.rules


def test_a_copy_for_another_build_above_the_unchanged_kernel_is_not_the_ports_change(tmp_path):
    entry, symbols = _scan(tmp_path, SIBLING_ADDED)
    kernel = symbols["norm::ScaleKernel"]
    assert kernel.verdict == NOT_APPLICABLE and kernel.justification == "not-ported", kernel.reason
    assert "other-build-sibling" in kernel.rules, kernel.rules
    assert "USE_GPU_B" in kernel.reason, kernel.reason
    _assert_default_build_unchanged(symbols["<toplevel>"])
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_the_default_builds_kernel_changed_too_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, BOTH_CHANGED)
    assert "other-build-sibling" not in symbols["norm::ScaleKernel"].rules
    assert entry.verdict in FLAGGED, entry.reason


def test_a_copy_that_replaces_the_kernel_in_the_default_build_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, DEFAULT_REPLACED)
    assert "other-build-sibling" not in symbols["norm::ScaleKernel"].rules
    assert entry.verdict in FLAGGED, entry.reason


def test_a_macro_the_tree_sets_is_not_assumed_off(tmp_path):
    port = {**PORT, "setup.py": "macros = ['-DUSE_GPU_B']\n"}
    entry, symbols = _scan(tmp_path, SIBLING_ADDED, port=port)
    assert "other-build-sibling" not in symbols["norm::ScaleKernel"].rules
    assert entry.verdict in FLAGGED, entry.reason


def test_a_new_definition_for_another_build_and_its_directives_are_not_the_ports_change(tmp_path):
    entry, symbols = _scan(tmp_path, NEW_FOR_OTHER_BUILD)
    _assert_default_build_unchanged(symbols["<toplevel>"])
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_an_unchanged_line_wrapped_in_a_branch_the_default_build_drops_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, CONSTANT_WRAPPED.replace("#if !defined", "#if defined"), before=WITH_CONSTANT)
    assert "other-build-lines" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_conditional_whose_taken_branch_adds_code_to_the_default_build_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, NEW_FOR_BOTH_BUILDS)
    assert "other-build-lines" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason
