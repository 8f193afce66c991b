"""A C++ parameter that gains or loses its name and nothing else (``unread-parameter-name``): C++
binds arguments by position, so a name that no other token of the definition spells binds nothing the
body reads, and shadows nothing it reads: the definition computes the same from the same arguments,
NOT_APPLICABLE/cosmetic. A name the body reads (here one that now shadows a file-scope constant the body
used) stays with the other rules."""
from __future__ import annotations

from portq.core.model import NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["src/*.cu"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

SOURCE = '''\
const int scale = 2;

void compute(const float* x,
             const int rows,
             const int {second},
             float* y) {{
  for (int i = 0; i < rows; ++i)
    y[i] = x[i] * scale;
}}
'''

TREE = {"csrc/norm.cu": "// portq: ports vllm:src/norm.cu::compute\n"
                        "void compute(const float* x, const int rows, const int, float* y) {\n"
                        "  for (int i = 0; i < rows; ++i)\n    y[i] = x[i] * 2;\n}\n",
        "csrc/ops.cu": "void run(const float* x, float* y) { compute(x, 4, 8, y); }\n"}


def _verdict(tmp_path, before: str, after: str):
    return classify_commit(tmp_path, {"src/norm.cu": SOURCE.format(second=before)},
                           {"src/norm.cu": SOURCE.format(second=after)}, TREE, MATRIX)


def test_naming_an_unnamed_parameter_nothing_reads_is_cosmetic(tmp_path):
    entry = _verdict(tmp_path, "", "axis_size")
    assert entry.verdict == NOT_APPLICABLE, entry.reason
    assert entry.justification == "cosmetic", entry.justification
    assert "unread-parameter-name" in entry.rules, entry.rules


def test_dropping_an_unread_parameter_name_is_cosmetic(tmp_path):
    entry = _verdict(tmp_path, "depth", "")
    assert entry.verdict == NOT_APPLICABLE, entry.reason
    assert entry.justification == "cosmetic", entry.justification
    assert "unread-parameter-name" in entry.rules, entry.rules


def test_a_name_that_shadows_what_the_body_reads_stays_flagged(tmp_path):
    entry = _verdict(tmp_path, "", "scale")
    assert "unread-parameter-name" not in entry.rules
    assert (entry.verdict, entry.justification) != (NOT_APPLICABLE, "cosmetic"), entry.reason
