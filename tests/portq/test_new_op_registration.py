"""``new-op-registration``: a ported op-registration body (``TORCH_LIBRARY_IMPL``
and the like) whose whole change is added ``m.impl("name", fn)`` /
``m.def("name(...)")`` statements on its own registration handle, for op names
the file never used before and the port's file does not name, registers new
ops and leaves every existing op's registration alone: NOT_APPLICABLE/
not-ported (the new ops are not in the port). A registration added for an op
the file already had, a changed registration, or a new op the port already
names stays NEEDS_REVIEW.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

OPS = "csrc/cache_kernels.cu"

OPS_BEFORE = """#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(cache_ops, m) {
  m.def("scale_rows(Tensor x, float s) -> Tensor");
  m.def("copy_rows(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(cache_ops, CUDA, m) {
  m.impl("scale_rows", scale_rows);
}
"""

TREE_OPS = """#include <torch/library.h>

// portq: ports vllm:csrc/cache_kernels.cu::TORCH_LIBRARY_IMPL
TORCH_LIBRARY_IMPL(cache_ops, CUDA, m) {
  m.impl("scale_rows", scale_rows);
}
"""

TREE = {"kernels/kv_cache/ops.cu": TREE_OPS,
        "kernels/kv_cache/engine.py": "import torch\n\ndef scale(x, s):\n    return torch.ops.cache_ops.scale_rows(x, s)\n"}


def _edit(tmp_path, after, tree=TREE):
    return classify_commit(tmp_path, {OPS: OPS_BEFORE}, {OPS: after}, tree, message="edit")


def _block(extra):
    return OPS_BEFORE.replace('  m.impl("scale_rows", scale_rows);\n', '  m.impl("scale_rows", scale_rows);\n' + extra)


def _impl_symbol(verdict):
    return next(s for s in verdict.symbols if s.symbol.endswith("TORCH_LIBRARY_IMPL"))


def test_a_new_op_registered_in_a_ported_registration_body_is_not_ported(tmp_path):
    verdict = _edit(tmp_path, _block('  m.impl(\n      "fill_rows",\n      ns::fill_rows);\n'))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert "new-op-registration" in verdict.rules and "fill_rows" in _impl_symbol(verdict).reason


def test_a_registration_added_for_an_op_the_file_already_had_needs_review(tmp_path):
    verdict = _edit(tmp_path, _block('  m.impl("copy_rows", copy_rows);\n'))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "new-op-registration" not in verdict.rules, verdict.rules


def test_a_changed_registration_beside_a_new_one_needs_review(tmp_path):
    after = _block('  m.impl("fill_rows", fill_rows);\n').replace('"scale_rows", scale_rows)', '"scale_rows", scale_rows_v2)')
    verdict = _edit(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "new-op-registration" not in verdict.rules, verdict.rules


def test_a_new_op_the_port_already_names_needs_review(tmp_path):
    tree = dict(TREE, **{"kernels/kv_cache/ops.cu": TREE_OPS.replace(
        '  m.impl("scale_rows", scale_rows);\n', '  m.impl("scale_rows", scale_rows);\n  m.impl("fill_rows", fill);\n')})
    verdict = _edit(tmp_path, _block('  m.impl("fill_rows", fill_rows);\n'), tree)
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason  # the port has the registration: compared with it
    assert "new-op-registration" not in verdict.rules, verdict.rules


def test_a_new_op_registered_on_another_handle_needs_review(tmp_path):
    verdict = _edit(tmp_path, _block('  other.impl("fill_rows", fill_rows);\n'))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "new-op-registration" not in verdict.rules, verdict.rules


def test_a_new_op_registered_beside_another_expression_needs_review(tmp_path):
    verdict = _edit(tmp_path, _block('  m.impl("fill_rows", fill_rows), reset_rows();\n'))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "new-op-registration" not in verdict.rules, verdict.rules
