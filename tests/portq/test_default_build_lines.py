"""A C/C++ file's lines outside definitions that preprocess to the same tokens in the default build
(``default-build-lines``): constants moved under the ``#else`` of a test for a macro no source of the
file defines and no file of the port's tree sets (``#if defined(USE_GPU_B)`` … ``#else`` with the same
values), or a shim for that build moved into a header the file now includes, leave what the default
build compiles unchanged: cosmetic. A default-build value that changes, or a macro a tree file sets
(``#define`` or ``-D``), stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

BEFORE = '''\
#include "row_norm.h"

#if defined(USE_GPU_B)
#define shfl_xor(mask, v, lane) shfl_b(v, lane)
#endif

// y = x * w
#define NUM_WARPS 32
#define WARP_SIZE 32
#define NUM_THREADS (NUM_WARPS * WARP_SIZE)

namespace norm {

__global__ void NormKernel(const float* x, float* y, int dims)
{
    float v = x[blockIdx.x * dims + threadIdx.x];
    v += shfl_xor(0xffffffff, v, 1);
    y[blockIdx.x * dims + threadIdx.x] = v / (NUM_WARPS * WARP_SIZE);
}

void normRows(const float* x, float* y, int dims, int rows)
{
    NormKernel<<<rows, NUM_THREADS>>>(x, y, dims);
}

}  // namespace norm
'''
MOVED = BEFORE.replace('''#if defined(USE_GPU_B)
#define shfl_xor(mask, v, lane) shfl_b(v, lane)
#endif

// y = x * w
#define NUM_WARPS 32
#define WARP_SIZE 32
''', '''#if defined(USE_GPU_B)
#define shfl_xor(mask, v, lane) shfl_b(v, lane)
#define NUM_WARPS (1024 / warp_size)
#define WARP_SIZE (warp_size)
#else
#define NUM_WARPS 32
#define WARP_SIZE 32
#endif

// y = x * w
''')
CHANGED = MOVED.replace("#else\n#define NUM_WARPS 32", "#else\n#define NUM_WARPS 16")
SHIM_MOVED = BEFORE.replace('''#include "row_norm.h"

#if defined(USE_GPU_B)
#define shfl_xor(mask, v, lane) shfl_b(v, lane)
#endif
''', '''#include "row_norm.h"
#include "compat.h"
''')
COMPAT = "#pragma once\n\n#if defined(USE_GPU_B)\n#define shfl_xor(mask, v, lane) shfl_b(v, lane)\n#endif\n"

PORT = {"kernels/norm.cu": (
    "#define THREADS 1024\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::NormKernel\n"
    "__global__ void norm_kernel(const float* x, float* y, int dims)\n{\n"
    "    float v = x[blockIdx.x * dims + threadIdx.x];\n    v += shfl_xor(0xffffffff, v, 1);\n"
    "    y[blockIdx.x * dims + threadIdx.x] = v / THREADS;\n}\n\n"
    f"// portq: ports vllm:{SOURCE}::norm::normRows\n"
    "void norm_rows(const float* x, float* y, int dims, int rows)\n{\n"
    "    norm_kernel<<<rows, THREADS>>>(x, y, dims);\n}\n\n"
    "void run_norm(const float* x, float* y, int dims, int rows)\n{\n    norm_rows(x, y, dims, rows);\n}\n")}


def _toplevel(tmp_path, after, port=PORT, extra=None):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: BEFORE}),
                   CommitSpec("change", files={SOURCE: after, **(extra or {})})], port, matrix=MATRIX_WITH_NORM)
    return verdicts[1], next(s for s in verdicts[1].symbols if s.path == SOURCE and s.symbol == "<toplevel>")


def test_constants_moved_under_the_else_of_an_unset_macro_are_cosmetic(tmp_path):
    entry, lines = _toplevel(tmp_path, MOVED)
    assert lines.verdict == NOT_APPLICABLE, lines.reason
    assert "default-build-lines" in lines.rules, lines.rules
    assert entry.verdict == NOT_APPLICABLE, entry.verdict


def test_a_shim_for_the_other_build_moved_into_an_included_header_is_cosmetic(tmp_path):
    entry, lines = _toplevel(tmp_path, SHIM_MOVED, extra={"csrc/norm/compat.h": COMPAT})
    assert lines.verdict == NOT_APPLICABLE, lines.reason
    assert "default-build-lines" in lines.rules, lines.rules


def test_a_default_build_value_that_changes_is_still_flagged(tmp_path):
    _, lines = _toplevel(tmp_path, CHANGED)
    assert lines.verdict in FLAGGED, lines.reason


def test_a_macro_the_tree_sets_is_not_assumed_off(tmp_path):
    port = {**PORT, "setup.py": "macros = ['-DUSE_GPU_B']\n"}
    _, lines = _toplevel(tmp_path, MOVED, port=port)
    assert lines.verdict in FLAGGED, lines.reason
