"""A binding registration ``m.def("name", &fn, "doc")`` whose only change is its docstring (a bare string
literal argument after the bound name) binds the same name to the same function: the doc computes
nothing, so a ported definition registered that way is NOT_APPLICABLE/cosmetic (rule
``binding-docstring``). The bound name, a keyword argument's name (``py::arg("x")``) or the function
bound stay compared."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "EXT"
title    = "Extension bindings"
upstream = "vllm"
paths    = ["csrc/*.cpp"]
tree     = ["port/"]
tests    = ["tests/"]
"""

EXT = '''\
#include <torch/extension.h>

void scale_rows(torch::Tensor x, float s)
{
    x.mul_(s);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    m.def("scale_rows", &scale_rows, "scale every row", py::arg("x"), py::arg("s"));
}
'''

TREE = {
    "port/ext.cpp": '''\
#include <torch/extension.h>

// portq: ports vllm:csrc/ext.cpp::scale_rows
void scale_rows(torch::Tensor x, float s)
{
    x.mul_(s);
}
''',
}


def _verdict(tmp_path, after: str):
    history = [CommitSpec("base", files={"csrc/ext.cpp": EXT}), CommitSpec("change", files={"csrc/ext.cpp": after})]
    verdicts, _ = classify_history(tmp_path, history, TREE, matrix=MATRIX)
    return verdicts[1]


def test_a_registration_whose_docstring_alone_changed_is_cosmetic(tmp_path):
    verdict = _verdict(tmp_path, EXT.replace('"scale every row"', '"scale_rows"'))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "binding-docstring" in verdict.rules


def test_a_registration_whose_keyword_name_changed_stays_flagged(tmp_path):
    verdict = _verdict(tmp_path, EXT.replace('py::arg("s")', 'py::arg("scale")'))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "binding-docstring" not in verdict.rules


def test_a_registration_binding_another_function_stays_flagged(tmp_path):
    verdict = _verdict(tmp_path, EXT.replace('&scale_rows, "scale every row"', '&scale_rows_v2, "scale_rows"'))
    assert verdict.verdict != NOT_APPLICABLE or verdict.justification != "cosmetic", verdict.reason
    assert "binding-docstring" not in verdict.rules
