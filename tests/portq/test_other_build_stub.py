"""A new function for another build with a default-build stub of the same name (``other-build-stub``): a
commit that adds ``#if defined(USE_GPU_B)`` … a new kernel and host … ``#else`` … a host of the same name
that only refuses … ``#endif`` gives the default build one new function under a name the file never used,
the counterpart of the other build's; nothing in the tree ports or declares either and nothing else in
the file calls them, so the directives around them are not-ported, like the definitions. A default-build
function with no counterpart in the other build's branch, a name the file already had, a name the tree
ports, or a stub a definition of the file calls (a warp-size query a ported launcher now reads) stays
flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.test_other_build_sibling import BEFORE, CONVERT, PORT, SOURCE, _scan

STUB = "void convertRows(float* x, int n)\n{\n    throw_unsupported(\"convertRows\");\n}\n"
WITH_STUB = BEFORE.replace("void scaleRows(", CONVERT.replace("#endif\n", "#else\n" + STUB + "#endif\n")
                           + "void scaleRows(")
OTHER_NAME = WITH_STUB.replace("#else\nvoid convertRows(", "#else\nvoid convertAll(")
HAD_NAME = BEFORE.replace("void scaleRows(", "void convertRows(float* x, int n);\n\nvoid scaleRows(")
CALLED = WITH_STUB.replace("    ScaleKernel<<<rows, 256>>>(x, y, lengths, dims);\n",
                           "    ScaleKernel<<<rows, 256>>>(x, y, lengths, dims);\n#if defined(USE_GPU_B)\n"
                           "    convertRows(y, dims);\n#endif\n")
CALLED_BEFORE = BEFORE.replace("    ScaleKernel<<<rows, 256>>>(x, y, lengths, dims);\n",
                               "    ScaleKernel<<<rows, 256>>>(x, y, lengths, dims);\n#if defined(USE_GPU_B)\n"
                               "    y[0] = 0.f;\n#endif\n")


def test_a_default_build_stub_beside_another_builds_new_function_is_not_the_ports_change(tmp_path):
    entry, symbols = _scan(tmp_path, WITH_STUB)
    lines = symbols["<toplevel>"]
    assert lines.verdict == NOT_APPLICABLE and lines.justification == "not-ported", lines.reason
    assert "other-build-stub" in lines.rules, lines.rules
    assert "convertRows" in lines.reason, lines.reason
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_a_default_build_function_with_no_counterpart_in_the_other_build_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, OTHER_NAME)
    assert "other-build-stub" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_stub_under_a_name_the_file_already_had_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, WITH_STUB, before=HAD_NAME)
    assert "other-build-stub" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_stub_whose_name_the_tree_ports_is_still_flagged(tmp_path):
    port = {**PORT, "kernels/convert.cu": f"// portq: ports vllm:{SOURCE}::norm::convertRows\n"
                                          "void convert_rows(float* x, int n)\n{\n    x[0] = 0.f;\n}\n"}
    entry, symbols = _scan(tmp_path, WITH_STUB, port=port)
    assert "other-build-stub" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_stub_a_definition_of_the_file_calls_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, CALLED, before=CALLED_BEFORE)
    assert "other-build-stub" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason
