"""A C++ file whose changed lines outside definitions only wrap everything it defines in namespaces
(``namespace lib {`` before its first definition, ``}  // namespace lib`` after its last), with
``#include`` lines and namespace-scope declarations moved verbatim into a header the file now includes
(``namespace-wrap``): every definition keeps its body and is reached under an enclosing name, and the
moved declaration holds the same value where the file still reads it. Cosmetic. A namespace closed
before the last definition, a declaration whose value changes on the way, or one moved to a header the
file does not include stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

SOURCE = "csrc/reduce/sum.cu"
COMMON = "csrc/reduce/common.h"
MATRIX = """\
[[row]]
id       = "REDUCE"
title    = "A warp reduction and its launcher"
upstream = "vllm"
paths    = ["csrc/reduce/sum.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

BEFORE = '''\
#include <cuda_runtime.h>

const unsigned int FULL_MASK = 0xffffffff;

__global__ void row_sum(float* out, const float* x, int n)
{
    float v = x[blockIdx.x * n + threadIdx.x];
    for (int m = 16; m > 0; m >>= 1) {
        v += __shfl_xor_sync(FULL_MASK, v, m, 32);
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = v;
    }
}

void launch_row_sum(float* out, const float* x, int rows, int n, cudaStream_t s)
{
    row_sum<<<rows, n, 0, s>>>(out, x, n);
}
'''
COMMON_BEFORE = "#pragma once\n\nconst int WARP = 32;\n"
COMMON_AFTER = "#pragma once\n\nconst int WARP = 32;\nconst unsigned int FULL_MASK = 0xffffffff;\n"
AFTER = BEFORE.replace("#include <cuda_runtime.h>\n\nconst unsigned int FULL_MASK = 0xffffffff;\n",
                       "#include <cuda_runtime.h>\n#include \"common.h\"\nnamespace lib {\nnamespace cuda {\n") \
    + "}  // namespace cuda\n}  // namespace lib\n"

# Unsound neighbours.
CLOSED_EARLY = AFTER.replace("}\n\nvoid launch_row_sum", "}\n}  // namespace cuda\n}  // namespace lib\n\nvoid launch_row_sum") \
    .replace("}  // namespace cuda\n}  // namespace lib\n", "", 0)
CLOSED_EARLY = CLOSED_EARLY[:CLOSED_EARLY.rindex("}  // namespace cuda\n")]
COMMON_CHANGED = COMMON_AFTER.replace("0xffffffff", "0x0000ffff")


def _entry(tmp_path, after, common_after):
    tree = {"kernels/sum.cu": BEFORE.replace("\n__global__ void row_sum(", f"\n// portq: ports vllm:{SOURCE}::row_sum\n"
                                             "__global__ void row_sum(").replace(
        "\nvoid launch_row_sum(", f"\n// portq: ports vllm:{SOURCE}::launch_row_sum\nvoid launch_row_sum("),
        "kernels/run.cu": "void run(float* o, const float* x, cudaStream_t s)\n{\n"
                          "    launch_row_sum(o, x, 4, 32, s);\n}\n"}
    return classify_commit(tmp_path, {SOURCE: BEFORE, COMMON: COMMON_BEFORE}, {SOURCE: after, COMMON: common_after},
                           tree, matrix=MATRIX, message="namespaces")


def test_the_neighbour_closes_before_the_last_definition():
    assert CLOSED_EARLY.count("namespace lib {") == 1 and CLOSED_EARLY.count("}  // namespace lib") == 1
    assert CLOSED_EARLY.rindex("}  // namespace lib") < CLOSED_EARLY.index("void launch_row_sum")


def test_a_file_wrapped_in_namespaces_is_cosmetic(tmp_path):
    verdict = _entry(tmp_path, AFTER, COMMON_AFTER)
    assert verdict.verdict == NOT_APPLICABLE, verdict.reason
    assert verdict.justification == "cosmetic", verdict.justification
    top = next(s for s in verdict.symbols if s.symbol == "<toplevel>")
    assert "namespace-wrap" in top.rules, top.rules


def test_a_namespace_closed_before_the_last_definition_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, CLOSED_EARLY, COMMON_AFTER)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_moved_declaration_whose_value_changes_is_still_flagged(tmp_path):
    verdict = _entry(tmp_path, AFTER, COMMON_CHANGED)
    assert verdict.verdict in FLAGGED, verdict.reason
