"""Branches the port does not have (docs/tricky-cases.md, "branches the port
does not have"): a change confined to code that the port's build or
parameter set never runs is not the port's change, and a change on the path
the port does run is still flagged.

* ``default-build`` (C/C++): a preprocessor conditional on a macro that no
  source of the file defines selects its default branch (``#ifdef FLAG`` is
  off, ``#ifndef FLAG`` on); an edit confined to the branch the default
  build drops is NOT_APPLICABLE/not-carried.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.test_form_without_meaning import SOFTMAX_BEFORE, _softmax

_LINE = "    return (x - m) * kShift;\n"


def _not_carried(verdict, rule):
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-carried"), \
        [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    assert rule in verdict.rules, verdict.rules


def test_an_opt_in_build_flag_branch_around_unchanged_code_is_not_the_ports(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifdef SLOW_EXACT_MATH\n    return __fmul_rn(x - m, kShift);\n#else\n"
                                   + _LINE + "#endif\n")
    assert after != SOFTMAX_BEFORE
    _not_carried(_softmax(tmp_path, after), "default-build")


def test_an_ifndef_keeps_its_body_in_the_default_build(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifndef NO_SHIFT\n" + _LINE + "#else\n    return x - m;\n#endif\n")
    _not_carried(_softmax(tmp_path, after), "default-build")


def test_an_if_defined_condition_is_read_like_ifdef(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#if defined(SLOW_EXACT_MATH) && !defined(NDEBUG)\n    return 0;\n#endif\n"
                                   + _LINE)
    _not_carried(_softmax(tmp_path, after), "default-build")


def test_a_change_to_the_default_branch_is_still_flagged(tmp_path):
    after = SOFTMAX_BEFORE.replace(_LINE, "#ifdef SLOW_EXACT_MATH\n    return (x - m) * kShift;\n#else\n"
                                   "    return (x - m) * kShift * 2;\n#endif\n")
    verdict = _softmax(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules


def test_a_flag_the_file_defines_is_not_assumed_off(tmp_path):
    after = SOFTMAX_BEFORE.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#define FAST_SHIFT\n", 1) \
        .replace(_LINE, "#ifdef FAST_SHIFT\n    return x - m;\n#else\n" + _LINE + "#endif\n")
    assert "#define FAST_SHIFT" in after
    verdict = _softmax(tmp_path, after)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "default-build" not in verdict.rules
