"""A namespace-scope C++ ``constexpr`` constant whose value changes (``unread-constant``): a constant
expression computes nothing at run time, so the change reaches the port only through the constant's
readers. When no ported definition of the file reads it and no file of the tree names it, it is not the
port's: NOT_APPLICABLE/not-ported, even where the new value's expression spells a word a ported
definition also uses (``std::numeric_limits<int>::max()`` beside a ported ``std::max``). A ported reader,
a tree file that names the constant, or a declaration that is not ``constexpr`` stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit

MATRIX = """\
[[row]]
id       = "GRID"
title    = "Launch helpers"
upstream = "vllm"
paths    = ["src/*.h"]
tree     = ["csrc/"]
tests    = ["tests/"]
"""

HEADER = '''\
#include <algorithm>
#include <limits>

namespace lib {{
  namespace cuda {{
    {qualifier} int max_threads = 1024;
    {qualifier} int max_blocks = {value};

    inline int block_size(int n) {{
      return std::max(1, std::min(n, {reads}));
    }}
  }}
}}
'''


def _header(value: str, reads: str = "max_threads", qualifier: str = "constexpr") -> str:
    return HEADER.format(value=value, reads=reads, qualifier=qualifier)


def _tree(extra: str = "") -> dict[str, str]:
    return {"csrc/launch.cuh": "// portq: ports vllm:src/helpers.h::block_size\n"
                               "inline int threads_for(int n) { return std::max(1, std::min(n, 1024)); }\n",
            "csrc/ops.cu": "void run(int n) { int t = threads_for(n);" + extra + " }\n"}


def _verdict(tmp_path, reads: str = "max_threads", qualifier: str = "constexpr", extra: str = ""):
    return classify_commit(tmp_path, {"src/helpers.h": _header("65535", reads, qualifier)},
                           {"src/helpers.h": "#include <cstdint>\n" + _header("std::numeric_limits<int>::max()",
                                                                            reads, qualifier)},
                           _tree(extra), MATRIX)


def test_a_constant_no_ported_definition_reads_is_not_ported(tmp_path):
    entry = _verdict(tmp_path)
    assert entry.verdict == NOT_APPLICABLE, entry.reason
    assert entry.justification == "not-ported", entry.justification
    assert "unread-constant" in entry.rules, entry.rules


def test_a_constant_a_ported_definition_reads_stays_flagged(tmp_path):
    entry = _verdict(tmp_path, reads="max_blocks")
    assert "unread-constant" not in entry.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason


def test_a_constant_a_tree_file_names_stays_flagged(tmp_path):
    entry = _verdict(tmp_path, extra=" int b = lib::cuda::max_blocks;")
    assert "unread-constant" not in entry.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason


def test_a_declaration_that_is_not_constexpr_stays_flagged(tmp_path):
    entry = _verdict(tmp_path, qualifier="static int")
    assert "unread-constant" not in entry.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason


def test_a_constant_a_ported_definition_of_another_upstream_file_reads_stays_flagged(tmp_path):
    reader = "#include \"helpers.h\"\nint blocks_for(int n) { return std::min(n, lib::cuda::max_blocks); }\n"
    tree = _tree()
    tree["csrc/grid.cu"] = ("// portq: ports vllm:src/grid.cu::blocks_for\n"
                            "int grid_for(int n) { return std::min(n, 65535); }\n")
    entry = classify_commit(tmp_path, {"src/helpers.h": _header("65535"), "src/grid.cu": reader},
                            {"src/helpers.h": _header("std::numeric_limits<int>::max()"), "src/grid.cu": reader},
                            tree, MATRIX.replace('paths    = ["src/*.h"]', 'paths    = ["src/*.h", "src/*.cu"]'))
    assert "unread-constant" not in entry.rules
    assert entry.verdict == NEEDS_REVIEW, entry.reason
