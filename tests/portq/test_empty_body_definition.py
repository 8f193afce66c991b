"""A C++ function with an empty body followed by a stray ``;``
(``void f(T a) {};``) is a function definition: tree-sitter reads it as a
declaration whose declarator is a function declarator given the initialiser
``{}``, which no declaration of a function can have, so it can only be the
function's body. Its lines belong to that definition, not to the lines
outside definitions. A declaration of an object (``Tile t(rows, cols){};``,
parameters without names) or a function declarator with a non-empty
initialiser stays outside definitions.

The last two run the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from portq.language.symbols import symbol_table
from tests.portq.golden.pipeline import classify_commit

SOURCE = b"""namespace ops {
int rows(const Tensor& t) { return t.size(0); }

void fill_meta(
    Tensor cache,
    Tensor scale) {};

Tile tile(rows, cols){};
}  // namespace ops
"""


def _names(source):
    return {d.qualified_name: (d.start_line, d.end_line) for d in symbol_table(source, "ops.cpp").definitions}


def test_an_empty_bodied_function_before_a_stray_semicolon_is_a_definition():
    assert _names(SOURCE).get("ops::fill_meta") == (4, 6), _names(SOURCE)


def test_an_object_initialised_with_braces_is_not_a_definition():
    assert not any(name.endswith("tile") for name in _names(SOURCE)), _names(SOURCE)


OPS = "csrc/cache_kernels.cu"

OPS_BEFORE = """#include <torch/library.h>

namespace ops {
Tensor scale_rows_meta(Tensor cache, Tensor scale) {
  return empty_like(cache);
}
}  // namespace ops
"""

OPS_TREE = {"kernels/kv_cache/ops.cu": """#include <torch/library.h>

namespace ops {
// portq: ports vllm:csrc/cache_kernels.cu::ops::scale_rows_meta
Tensor scale_rows_meta(Tensor cache, Tensor scale) {
  return empty_like(cache);
}
}  // namespace ops
""", "kernels/kv_cache/engine.cu": """#include "ops.cu"

Tensor engine_scale(Tensor c, Tensor s) { return ops::scale_rows_meta(c, s); }
"""}


def test_a_new_empty_bodied_function_is_not_ported_rather_than_a_top_level_change(tmp_path):
    after = OPS_BEFORE.replace("}  // namespace ops", "\nvoid fill_meta(\n    Tensor cache,\n    Tensor scale) {};\n"
                                                   "}  // namespace ops")
    verdict = classify_commit(tmp_path, {OPS: OPS_BEFORE}, {OPS: after}, OPS_TREE, message="edit")
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]


def test_a_new_brace_initialised_object_stays_a_top_level_change(tmp_path):
    after = OPS_BEFORE.replace("}  // namespace ops", "\nTile cache(scale, 2){};\n}  // namespace ops")
    verdict = classify_commit(tmp_path, {OPS: OPS_BEFORE}, {OPS: after}, OPS_TREE, message="edit")
    assert verdict.verdict == NEEDS_REVIEW, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
