"""A C/C++ file reformatted as a whole (``formatter-only``): whitespace, line wrapping, wrapped comments and
the order of its ``#include`` lines change, and nothing else: the file's tokens, comments dropped and
includes taken as a set, are the same before and after, read from the text (so also where tree-sitter
cannot parse the file). Every definition of it is NOT_APPLICABLE/cosmetic. A reformat that also changes one
token of a ported definition stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_dead_code_and_parse_scope import INSTANTIATIONS, TILE, TILE_BEFORE, TILE_MATRIX, TILE_TREE

# tree-sitter reads this file as one ERROR node; the explicit instantiation of the ported kernel is a
# file-scope line a ported definition's name ties to it
BEFORE = TILE_BEFORE + "\ntemplate __global__ void tile_kernel<float>(const float* x, float* out, int* counts, const int n);\n" \
    + INSTANTIATIONS


def _reformatted(text):
    return text.replace("#include <cuda_runtime.h>\n#include <cute/algorithm/copy.hpp>\n",
                        "#include <cute/algorithm/copy.hpp>\n#include <cuda_runtime.h>\n") \
        .replace("__global__ void tile_kernel(const float* x, float* out, int* counts, const int n) {",
                 "__global__ void tile_kernel(\n    const float *x, float *out, int *counts, const int n\n) {") \
        .replace("    if (i < n) {\n        out[i] = x[i] * layout(i);\n    }",
                 "    if (i < n) {\n        out[i] =\n            x[i] * layout(i);  // scaled\n    }") \
        .replace("if (i < n) { out[i] = x[i] * 2; }", "if (i < n) {\n        out[i] = x[i] * 2;\n    }") \
        .replace("tile_kernel<float>(const float* x, float* out, int* counts, const int n);",
                 "tile_kernel<float>(const float *x, float *out,\n                                          int *counts, const int n);") \
        .replace("MAKE_OTHER(SCALE, half, 2048, 8)", "MAKE_OTHER(SCALE,\n           half, 2048, 8)") \
        .replace("    if (i < n) {\n        out[i] =", "    if (i < n)\n    {\n        out[i] =")


def _verdict(tmp_path, after):
    return classify_commit(tmp_path, {TILE: BEFORE}, {TILE: after}, TILE_TREE, matrix=TILE_MATRIX, message="format")


def test_a_whole_file_reformat_is_cosmetic(tmp_path):
    after = _reformatted(BEFORE)
    assert after != BEFORE
    verdict = _verdict(tmp_path, after)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert any("formatter-only" in s.rules for s in verdict.symbols), [(s.symbol, s.rules) for s in verdict.symbols]


def test_a_reformat_that_changes_a_token_of_a_ported_definition_is_flagged(tmp_path):
    verdict = _verdict(tmp_path, _reformatted(BEFORE).replace("x[i] * layout(i);  // scaled", "x[i] * layout(i + 1);"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert not any("formatter-only" in s.rules for s in verdict.symbols), verdict.rules


def test_a_reformat_that_drops_a_repeated_system_include_is_cosmetic(tmp_path):
    """A second ``#include <cuda_runtime.h>`` is a no-op (a system header guards itself); a formatting
    pass that drops it changes nothing the build compiles."""
    before = BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#include <cuda_runtime.h>\n", 1)
    assert before != BEFORE
    verdict = classify_commit(tmp_path, {TILE: before}, {TILE: _reformatted(BEFORE)}, TILE_TREE, matrix=TILE_MATRIX,
                              message="format")
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert any("formatter-only" in s.rules for s in verdict.symbols), [(s.symbol, s.rules) for s in verdict.symbols]


def test_a_reformat_that_drops_a_repeated_quoted_include_is_flagged(tmp_path):
    """A project header included twice may be meant to expand twice (an X-macro table between two
    ``#define``s), so dropping a repeated ``#include "..."`` is no formatting."""
    before = BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#include \"table.def\"\n"
                            "#include \"table.def\"\n", 1)
    after = _reformatted(BEFORE).replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#include \"table.def\"\n", 1)
    assert "table.def" in after
    verdict = classify_commit(tmp_path, {TILE: before}, {TILE: after}, TILE_TREE, matrix=TILE_MATRIX, message="format")
    assert not any("formatter-only" in s.rules for s in verdict.symbols), [(s.symbol, s.rules) for s in verdict.symbols]
