"""C++ that compilers read and tree-sitter's grammar does not: a preprocessor conditional inside a
parameter list, and statements passed as the last argument of a dispatch macro. ``symbols.parse``
reads such text from a copy with each idiom rewritten in place (``language.readable``), every line and
byte offset kept, so a change elsewhere in the definition is compared, not left to ``parse-failure``.
The lines the copy blanks (the directives and the untaken branch) are lines the tree cannot read: a
change to them stays a parse failure, and so does a real syntax error.

The language-level cases check the copy on small sources; the others run the real classifier over a
small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW
from portq.language.readable import readable
from portq.language.symbols import masked_lines, parse, symbol_table
from tests.portq.golden.pipeline import classify_commit

CONDITIONAL_PARAMETERS = b"""void f(int n,
    #ifdef NEW_SHAPES
    at::IntArrayRef shape,
    #else
    at::IntList shape,
    #endif
    double eps)
{
    g(n, shape, eps);
}
"""

STATEMENT_ARGUMENT = b"""void h(at::Tensor t) {
    DISPATCH_FLOATS(t.scalar_type(), "h",
        using acc_t = float;
        kernel<scalar_t, acc_t><<<1, 32>>>(t.data_ptr<scalar_t>(), t.numel());
      );
}

void one_line(at::Tensor t) {
    DISPATCH_FLOATS(t.scalar_type(), "one", using acc_t = float; kernel<acc_t>(t, 1););
}
"""


def _definitions(source: bytes):
    return {(d.name, d.start_line, d.end_line) for d in symbol_table(source, "csrc/k.cu").definitions}


def test_a_conditional_inside_a_parameter_list_parses_with_its_lines_kept():
    assert parse(CONDITIONAL_PARAMETERS, "cpp").root_node.has_error is False
    copy = readable(CONDITIONAL_PARAMETERS)
    assert len(copy.text) == len(CONDITIONAL_PARAMETERS)
    assert copy.text.count(b"\n") == CONDITIONAL_PARAMETERS.count(b"\n")
    assert b"IntArrayRef shape," in copy.text and b"IntList" not in copy.text  # the first branch is read
    assert masked_lines(CONDITIONAL_PARAMETERS, "cpp") == ((2, 2), (4, 6))
    assert _definitions(CONDITIONAL_PARAMETERS) == {("f", 1, 10)}


def test_statements_passed_to_a_macro_parse_with_their_text_kept():
    assert parse(STATEMENT_ARGUMENT, "cpp").root_node.has_error is False
    copy = readable(STATEMENT_ARGUMENT)
    assert len(copy.text) == len(STATEMENT_ARGUMENT)
    # no token is dropped: only the comma, one blank and the closing parenthesis change
    assert copy.text.replace(b")", b" ").replace(b";", b" ").replace(b",", b" ").split() \
        == STATEMENT_ARGUMENT.replace(b")", b" ").replace(b";", b" ").replace(b",", b" ").split()
    assert masked_lines(STATEMENT_ARGUMENT, "cpp") == ()
    assert _definitions(STATEMENT_ARGUMENT) == {("h", 1, 6), ("one_line", 8, 10)}


def test_text_that_parses_is_read_as_written():
    source = b"void f(int n) {\n    for (int i = 0; i < n; ++i) { g(i); }\n    CHECK(n > 0);\n}\n"
    assert readable(source).text is source
    assert masked_lines(source, "cpp") == ()


def test_a_real_syntax_error_stays_one():
    broken = CONDITIONAL_PARAMETERS.replace(b"g(n, shape, eps);", b"g(n, shape, eps;")
    assert parse(broken, "cpp").root_node.has_error
    unbalanced = STATEMENT_ARGUMENT.replace(b"t.numel());", b"t.numel();")
    assert parse(unbalanced, "cpp").root_node.has_error


UPSTREAM = "csrc/norm.cu"

NORM_BEFORE = '''#include <torch/extension.h>

template <typename T, typename A>
__global__ void norm_kernel(T* out, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = x[i] * A(2); }
}

void norm_host(
    at::Tensor out,
    #ifdef NEW_SHAPES
    at::IntArrayRef shape,
    #else
    at::IntList shape,
    #endif
    at::Tensor x)
{
    DISPATCH_FLOATS(x.scalar_type(), "norm_host",
        using acc_t = float;
        norm_kernel<scalar_t, acc_t><<<(x.numel() + 255) / 256, 256>>>(
            out.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), x.numel());
      );
}
'''

NORM_TREE = {"kernels/norm.cu": NORM_BEFORE.replace(
    "template <typename T, typename A>\n__global__",
    "// portq: ports vllm:csrc/norm.cu::norm_kernel\ntemplate <typename T, typename A>\n__global__").replace(
    "void norm_host(", "// portq: ports vllm:csrc/norm.cu::norm_host\nvoid norm_host(")}

NORM_MATRIX = '''[[row]]
id       = "NORM"
title    = "norm kernels"
upstream = "vllm"
paths    = ["csrc/norm.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
'''


def _verdict(tmp_path, after, before=NORM_BEFORE):
    assert after != before
    return classify_commit(tmp_path, {UPSTREAM: before}, {UPSTREAM: after}, NORM_TREE,
                           matrix=NORM_MATRIX, message="edit")


def _rules(verdict):
    return {rule for symbol in verdict.symbols for rule in symbol.rules}


def test_a_parameter_added_after_such_a_conditional_is_read_as_one(tmp_path):
    # nothing in the tree calls the vendored host: the new input is a gap no caller reaches
    verdict = _verdict(tmp_path, NORM_BEFORE.replace("    at::Tensor x)\n{", "    at::Tensor x,\n    double eps)\n{"))
    assert "parse-failure" not in _rules(verdict), verdict.reason
    assert {"parameter-change", "caller-reachability"} <= _rules(verdict), verdict.reason


def test_a_statement_of_a_macro_argument_that_changes_is_a_body_change(tmp_path):
    verdict = _verdict(tmp_path, NORM_BEFORE.replace("using acc_t = float;", "using acc_t = double;"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert _rules(verdict) == {"body-change"}, verdict.reason


def test_a_change_to_the_branch_the_copy_blanks_stays_a_parse_failure(tmp_path):
    verdict = _verdict(tmp_path, NORM_BEFORE.replace("at::IntList shape,", "at::IntList sizes,"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in _rules(verdict), verdict.reason


def test_a_changed_directive_of_such_a_conditional_stays_a_parse_failure(tmp_path):
    # branches naming two types: with one type under two spellings the flip is `equal-alternatives`
    before = NORM_BEFORE.replace("at::IntList shape,", "std::vector<int64_t> shape,")
    verdict = _verdict(tmp_path, before.replace("#ifdef NEW_SHAPES", "#ifndef NEW_SHAPES"), before=before)
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in _rules(verdict), verdict.reason


def test_a_syntax_error_the_change_makes_stays_a_parse_failure(tmp_path):
    verdict = _verdict(tmp_path, NORM_BEFORE.replace("x.numel());\n      );", "x.numel();\n      );"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in _rules(verdict), verdict.reason


def test_branches_that_open_a_call_each_their_own_way_leave_later_conditionals_alone():
    source = b"""void f(int n) {
#if defined(FAST)
    launch_fast(n,
#else
    launch_slow(n,
#endif
        1);
#ifdef EXTRA
    extra(n);
#else
    plain(n);
#endif
}
"""
    # only a conditional inside parentheses is rewritten: none here is
    assert readable(source).masked == ()
    assert masked_lines(source, "cpp") == ()


def test_the_next_version_of_a_file_read_from_a_copy_is_parsed_afresh():
    from portq.language.symbols import SymbolTable

    first = CONDITIONAL_PARAMETERS
    second = first.replace(b"g(n, shape, eps);", b"g(n, shape, eps * 2);")
    previous = SymbolTable("cpp", [], tree=parse(first, "cpp"), source=first)
    assert str(parse(second, "cpp", previous).root_node) == str(parse(second, "cpp").root_node)
    edited = first.replace(b"    at::IntList shape,\n", b"    at::IntList shape, int k,\n")
    assert str(parse(edited, "cpp", previous).root_node) == str(parse(edited, "cpp").root_node)
