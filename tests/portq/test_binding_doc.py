"""``binding-doc``: an extension module's binding ``m.def("name", &fn, "text")`` whose only change is a
documentation argument (an argument after the bound name made of string literals alone: the text a binding
library shows as the function's ``__doc__``) changes no computation: NOT_APPLICABLE/cosmetic. The bound
name, the bound function, a keyword's name (``arg("x")``) or any other argument changed stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

EXT = "csrc/cache_kernels.cu"

EXT_BEFORE = """#include <torch/extension.h>

void scale_rows(torch::Tensor x, float s)
{
    x.mul_(s);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("scale_rows", &scale_rows, "scale every row by s");
}
"""

TREE_EXT = """#include <torch/extension.h>

// portq: ports vllm:csrc/cache_kernels.cu::scale_rows
void scale_rows(torch::Tensor x, float s)
{
    x.mul_(s);
}
"""

TREE = {"kernels/kv_cache/ext.cu": TREE_EXT,
        "kernels/kv_cache/engine.py": "import ext\n\ndef scale(x, s):\n    return ext.scale_rows(x, s)\n"}


def _edit(tmp_path, after, tree=TREE):
    return classify_commit(tmp_path, {EXT: EXT_BEFORE}, {EXT: after}, tree, message="edit")


def _where(verdict):
    return [(s.symbol, s.verdict, s.justification, s.reason) for s in verdict.symbols]


def test_a_reworded_binding_doc_is_cosmetic(tmp_path):
    verdict = _edit(tmp_path, EXT_BEFORE.replace('"scale every row by s"', '"scale_rows"'))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _where(verdict)
    assert "binding-doc" in verdict.rules, verdict.rules


def test_a_reworded_doc_beside_a_new_binding_nobody_ports_is_not_the_ports(tmp_path):
    # the ported binding's own justification is shown first (what the commit means to the port)
    after = EXT_BEFORE.replace('"scale every row by s"', '"scale_rows"').replace(
        "PYBIND11_MODULE", "void fill_rows(torch::Tensor x, float v)\n{\n    x.fill_(v);\n}\n\nPYBIND11_MODULE") \
        .replace('"scale_rows");\n', '"scale_rows");\n    m.def("fill_rows", &fill_rows, "fill_rows");\n')
    verdict = _edit(tmp_path, after)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), _where(verdict)
    assert "binding-doc" in verdict.rules, verdict.rules


def test_a_binding_to_another_function_is_still_flagged(tmp_path):
    verdict = _edit(tmp_path, EXT_BEFORE.replace('&scale_rows, "scale every row by s"', '&scale_rows_v2, "scale_rows"'))
    assert verdict.verdict == NEEDS_REVIEW, _where(verdict)
    assert "binding-doc" not in verdict.rules, verdict.rules


def test_a_renamed_keyword_of_a_binding_is_still_flagged(tmp_path):
    before = EXT_BEFORE.replace('"scale every row by s");', '"scale every row by s", py::arg("x"), py::arg("s"));')
    after = before.replace('py::arg("s")', 'py::arg("factor")').replace('"scale every row by s"', '"scale_rows"')
    verdict = classify_commit(tmp_path, {EXT: before}, {EXT: after}, TREE, message="edit")
    assert verdict.verdict == NEEDS_REVIEW, _where(verdict)
    assert "binding-doc" not in verdict.rules, verdict.rules
