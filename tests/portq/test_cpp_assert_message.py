"""A C++ definition whose only change is the message string of a compile-time or assertion check
(``static_assert(cond, "msg")`` or an all-caps macro whose name ends in ASSERT, ``MY_ASSERT(cond, "msg")``, or in
CHECK, ``MY_CHECK(cond, "msg", n)``), the condition and every other token the same (``assert-message``): the message is text for whoever reads a failed build
or a failed check, so the change is cosmetic. A changed condition, a message beside another change, or a
string changed in any other call stays flagged."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "SCALE"
title    = "Scaled copy"
upstream = "vllm"
paths    = ["csrc/*.cuh"]
tree     = ["kernels/"]
tests    = ["tests/"]
"""

KERNEL = '''\
#pragma once

template <int kWidth>
__global__ void scaled_copy(const float* in, float* out, float s, int n) {{
    {check}
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        {log}out[i] = in[i] * s;
    }}
}}
'''

TREE = {
    "kernels/scaled_copy.cuh": "#pragma once\n\n// portq: ports vllm:csrc/scaled.cuh::scaled_copy\n"
                               "template <int kWidth>\n"
                               "__global__ void scaled_copy(const float* in, float* out, float s, int n) {\n"
                               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i < n) out[i] = in[i] * s;\n}\n",
}


def _run(tmp_path, old: dict, new: dict):
    files = lambda kw: {"csrc/scaled.cuh": KERNEL.format(**{"log": "", **kw})}
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files=files(old)),
                                              CommitSpec("msg", files=files(new))], TREE, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "scaled_copy")


def test_a_static_assert_message_typo_is_cosmetic(tmp_path):
    symbol = _run(tmp_path, {"check": 'static_assert(kWidth <= 32, "To many lanes");'},
                  {"check": 'static_assert(kWidth <= 32, "Too many lanes");'})
    assert symbol.verdict == NOT_APPLICABLE, symbol.reason
    assert "assert-message" in symbol.rules, symbol.rules


def test_an_assertion_macro_message_is_cosmetic(tmp_path):
    symbol = _run(tmp_path, {"check": 'LIB_STATIC_ASSERT(kWidth <= 32, "To many " "lanes");'},
                  {"check": 'LIB_STATIC_ASSERT(kWidth <= 32, "Too many lanes");'})
    assert symbol.verdict == NOT_APPLICABLE, symbol.reason
    assert "assert-message" in symbol.rules, symbol.rules


def test_a_changed_condition_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'static_assert(kWidth <= 32, "To many lanes");'},
                  {"check": 'static_assert(kWidth <= 16, "Too many lanes");'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules


def test_a_message_beside_another_change_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'static_assert(kWidth <= 32, "To many lanes");'},
                  {"check": 'static_assert(kWidth <= 32, "Too many lanes");', "log": "s = s * 2.0f; "})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules


def test_a_string_in_another_call_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'printf(kWidth, "To many lanes");'},
                  {"check": 'printf(kWidth, "Too many lanes");'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules
    symbol = _run(tmp_path / "eq", {"check": 'LIB_ASSERT_EQ(kWidth, "lanes");'},
                  {"check": 'LIB_ASSERT_EQ(kWidth, "rows");'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules


# A runtime check macro (an all-caps name ending in CHECK) reports its failure with the string literals after its
# condition: rewording them is cosmetic, the condition and every argument that is not string literals alone kept.

def test_a_check_macro_message_reworded_is_cosmetic(tmp_path):
    symbol = _run(tmp_path, {"check": 'LIB_CHECK(n > 0, "n must be positive");'},
                  {"check": 'LIB_CHECK(n > 0, "expected a positive n");'})
    assert symbol.verdict == NOT_APPLICABLE, symbol.reason
    assert "assert-message" in symbol.rules, symbol.rules
    symbol = _run(tmp_path / "two", {"check": 'LIB_CHECK(false, "bad width ", "for n=", n);'},
                  {"check": 'LIB_CHECK(false, "unsupported width ", "with n = ", n);'})
    assert symbol.verdict == NOT_APPLICABLE, symbol.reason
    assert "assert-message" in symbol.rules, symbol.rules


def test_a_check_macro_condition_changed_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'LIB_CHECK(n > 0, "n must be positive");'},
                  {"check": 'LIB_CHECK(n >= 0, "n must not be negative");'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules


def test_a_check_macro_non_literal_argument_changed_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'LIB_CHECK(n > 0, "n=", n);'},
                  {"check": 'LIB_CHECK(n > 0, "n=", kWidth);'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules


def test_a_single_argument_check_macro_changed_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'LIB_CHECK(do_launch(in));'},
                  {"check": 'LIB_CHECK(do_launch(out));'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules
    symbol = _run(tmp_path / "str", {"check": 'LIB_CHECK(do_launch(in, "a"));'},
                  {"check": 'LIB_CHECK(do_launch(in, "b"));'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules


def test_a_lower_case_check_function_stays_flagged(tmp_path):
    symbol = _run(tmp_path, {"check": 'check(n > 0, "n must be positive");'},
                  {"check": 'check(n > 0, "expected a positive n");'})
    assert symbol.verdict == NEEDS_REVIEW, symbol.reason
    assert "assert-message" not in symbol.rules
