"""Include lines moved under a conditional for another build (``other-build-includes``): a commit that
wraps a file's ``#include`` lines in ``#if !defined(USE_GPU_B)`` and gives the ``#else`` branch another
build's headers and a definition of a name the ported kernel reads leaves what the default build compiles
outside definitions as it was, its include lines aside: NOT_APPLICABLE/``cosmetic``. A definition the
default build now compiles, a macro a tree file sets, or an unchanged line wrapped in the dropped branch
stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.test_other_build_sibling import BEFORE, PORT, _scan

INCLUDES = '#include "row_norm.h"\n'
OTHER_BUILD = '#else\n    #include "row_norm_b.h"\n    #define kLanes 64\n#endif\n'
WRAPPED = BEFORE.replace(INCLUDES, "#if !defined(USE_GPU_B)\n    " + INCLUDES + OTHER_BUILD)
DEFAULT_DEFINES = BEFORE.replace(INCLUDES, "#if defined(USE_GPU_B)\n    " + INCLUDES + OTHER_BUILD)
NEW_LINE_TAKEN = BEFORE.replace(INCLUDES, "#if !defined(USE_GPU_B)\n    " + INCLUDES + "    #define kLanes 32\n"
                                + OTHER_BUILD)


def test_includes_wrapped_with_another_builds_lines_are_cosmetic(tmp_path):
    entry, symbols = _scan(tmp_path, WRAPPED)
    lines = symbols["<toplevel>"]
    assert lines.verdict == NOT_APPLICABLE and lines.justification == "cosmetic", lines.reason
    # the fixture's file parses whole (its helper's specifier macro included), so default-build-lines
    # reads every conditional and decides first; other-build-includes decides where lines stay unread
    assert "default-build-lines" in lines.rules, lines.rules
    assert "USE_GPU_B" in lines.reason, lines.reason
    assert entry.verdict == NOT_APPLICABLE, entry.reason


def test_the_default_build_compiling_the_other_branch_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, DEFAULT_DEFINES)
    assert "other-build-includes" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_new_line_beside_the_includes_in_the_default_build_is_still_flagged(tmp_path):
    entry, symbols = _scan(tmp_path, NEW_LINE_TAKEN)
    assert "other-build-includes" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason


def test_a_macro_the_tree_sets_is_not_assumed_off(tmp_path):
    port = {**PORT, "setup.py": "macros = ['-DUSE_GPU_B']\n"}
    entry, symbols = _scan(tmp_path, WRAPPED, port=port)
    assert "other-build-includes" not in symbols["<toplevel>"].rules, symbols["<toplevel>"].reason
    assert entry.verdict in FLAGGED, entry.reason
