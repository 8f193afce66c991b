"""``removed-internal-parameter`` for C/C++: a device or host helper (no ``__global__`` kernel)
that loses a runtime parameter which every upstream caller (in the row's files the commit
changes) passed a value it computes itself (a literal, or a name that is none of its own
parameters), while the tree calls the port's helper only from definitions that port upstream
ones: the port's helper and its copied callers are behind as a pair, wiring inside the copy;
no input of an entry point changes, so for a reader (NEEDS_REVIEW), never REAL_GAP. A caller
that handed on one of its own parameters, or tree code that is no port calling the helper,
keeps the gap.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "MATMUL"
title    = "Matmul kernels"
upstream = "vllm"
paths    = ["lib/*.cu", "lib/*.cuh"]
tree     = ["pkg/", "engine/"]
tests    = ["tests/"]
"""

DOT_OLD = """\
__device__ __forceinline__ float dot8(const float* a, const int row, const int col, const float* b, int count)
{
    const float* p = a + row * 8 + col;
    float acc = 0.0f;
    for (int i = 0; i < count; i++) acc += p[i] * b[i];
    return acc;
}
"""

DOT_NEW = """\
__device__ __forceinline__ float dot8(const float* a, const float* b, int count)
{
    float acc = 0.0f;
    for (int i = 0; i < count; i++) acc += a[i] * b[i];
    return acc;
}
"""

MATMUL = """\
#include "dot.cuh"

__global__ void matmul_kernel(const float* x, const float* w, float* out, int n{extra})
{{
    int row = blockIdx.x;
    for (int k = 0; k < n; k += 8)
    {{
        out[row] += dot8({args}, w + k, 8);
    }}
}}

void run_matmul(const float* x, const float* w, float* out, int rows, int n)
{{
    matmul_kernel<<<rows, 1>>>(x, w, out, n{passed});
}}
"""


def _matmul(args: str, extra: str = "", passed: str = "") -> str:
    return MATMUL.format(args=args, extra=extra, passed=passed)


def _pinned(text: str, path: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        for name in ("dot8", "matmul_kernel", "run_matmul"):
            if f" {name}(" in line and not line.startswith(" "):
                lines.append(f"// portq: ports vllm:{path}::{name}\n")
        lines.append(line)
    return "".join(lines)


def _tree(matmul_old: str, stranger: bool = False) -> dict[str, str]:
    tree = {
        "pkg/dot.cuh": _pinned(DOT_OLD, "lib/dot.cuh"),
        "pkg/matmul.cu": _pinned(matmul_old, "lib/matmul.cu"),
        "engine/__init__.py": "",
        "engine/layer.py": "import ext\n\n\ndef forward(x, w, out, rows, n):\n"
                           "    ext.run_matmul(x, w, out, rows, n)\n",
    }
    if stranger:
        tree["pkg/extra.cu"] = ('#include "dot.cuh"\n\n__device__ float first_dot(const float* a, const float* b)\n'
                                "{\n    return dot8(a, 0, 0, b, 8);\n}\n")
    return tree


def _run(tmp_path, old_args, new_args, extra="", passed="", stranger=False):
    old, new = _matmul(old_args, extra, passed), _matmul(new_args, extra, passed)
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/dot.cuh": DOT_OLD, "lib/matmul.cu": old}),
        CommitSpec("cache", files={"lib/dot.cuh": DOT_NEW, "lib/matmul.cu": new}),
    ], _tree(old, stranger), matrix=MATRIX)
    entry = verdicts[1]
    return entry, next(s for s in entry.symbols if s.symbol == "dot8")


def test_a_device_helper_losing_parameters_its_callers_computed_is_for_a_reader(tmp_path):
    entry, dot = _run(tmp_path, "x, row, k", "x + row * 8 + k")
    assert dot.verdict == NEEDS_REVIEW and "removed-internal-parameter" in dot.rules, dot.reason
    assert entry.verdict != REAL_GAP, [(s.symbol, s.verdict, s.reason) for s in entry.symbols]


def test_a_removed_parameter_a_caller_handed_on_from_its_own_keeps_the_gap(tmp_path):
    entry, dot = _run(tmp_path, "x, row, col0", "x + row * 8 + col0", extra=", int col0", passed=", 0")
    assert "removed-internal-parameter" not in dot.rules, dot.reason
    assert dot.verdict == REAL_GAP, dot.reason


def test_tree_code_that_is_no_port_calling_the_helper_keeps_the_gap(tmp_path):
    entry, dot = _run(tmp_path, "x, row, k", "x + row * 8 + k", stranger=True)
    assert "removed-internal-parameter" not in dot.rules, dot.reason
    assert dot.verdict == REAL_GAP, dot.reason
