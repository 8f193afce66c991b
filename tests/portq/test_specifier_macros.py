"""C++ whose declarations begin with an object-like macro standing for declaration specifiers
(an upper-case identifier a header defines as, say, ``__device__ __forceinline__``): compilers read
``SPEC_MACRO void f(...)`` after expansion, tree-sitter's grammar reads the macro as the type and
leaves an ERROR at the real one. ``readable`` blanks such an identifier in place (every byte offset
and line kept) where it stands in declaration-specifier position and is followed by a specifier
keyword or by a type and a declarator, so the definition is read; an upper-case identifier that is
the declaration's type (``UPPER_TYPE x = 0;``, ``UPPER_TYPE f(int n)``) is left as written, and a
real syntax error stays one."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW
from portq.language.readable import readable
from portq.language.symbols import masked_lines, parse, symbol_table
from tests.portq.golden.pipeline import classify_commit

SPECIFIED = b"""#include "common.h"

SPEC_INLINE void scale(float* out, const float* x, int n) {
    for (int i = 0; i < n; ++i) { out[i] = x[i] * 2.0f; }
}

HOST_DEV_SPEC
float twice(float v) {
    return v * 2.0f;
}

SPEC_INLINE half
halve(half v) { return v; }

template <typename T>
SPEC_INLINE T thrice(T v) { return v * T(3); }

struct Pipe {
  DEV_SPEC static constexpr int depth() { return 4; }
  DEV_SPEC
  const Pipe& self() const { return *this; }
  static DEV_SPEC at::Tensor make(int n);
};

__global__ void kernel(float* out, const float* x, int n) {
    SHARED_SPEC float buf[32];
    DTYPE acc = 0;
    buf[0] = acc;
    scale(out, x, n);
}
"""


def _definitions(source: bytes):
    return {(d.name, d.start_line, d.end_line) for d in symbol_table(source, "csrc/k.cu").definitions}


def test_a_specifier_macro_before_a_declaration_parses_with_its_lines_kept():
    assert parse(SPECIFIED, "cpp").root_node.has_error is False
    copy = readable(SPECIFIED)
    assert len(copy.text) == len(SPECIFIED)
    assert copy.text.count(b"\n") == SPECIFIED.count(b"\n")
    for spec in (b"SPEC_INLINE", b"HOST_DEV_SPEC", b"DEV_SPEC", b"SHARED_SPEC"):
        assert spec not in copy.text
    assert b"DTYPE acc = 0;" in copy.text  # an upper-case type is the declaration's type: kept
    names = {name for name, _first, _last in _definitions(SPECIFIED)}
    assert {"scale", "twice", "halve", "thrice", "kernel"} <= names
    assert ("scale", 3, 5) in _definitions(SPECIFIED)


def test_nodes_after_a_blanked_specifier_keep_their_lines_and_columns():
    tree = parse(SPECIFIED, "cpp")
    row = SPECIFIED.split(b"\n").index(b"SPEC_INLINE void scale(float* out, const float* x, int n) {")
    function = next(node for node in tree.root_node.children if node.type == "function_definition"
                    and node.start_point[0] == row)
    declarator = function.child_by_field_name("declarator")
    assert declarator.start_point == (row, len(b"SPEC_INLINE void "))
    assert SPECIFIED[declarator.start_byte:declarator.end_byte].startswith(b"scale(float* out")


def test_an_upper_case_type_is_read_as_the_type():
    # an upper-case return type and an upper-case variable type are no specifiers: with an error
    # elsewhere in the file the copy keeps them
    source = b"UPPER_T make(int n) { return UPPER_T(n); }\nvoid g() { UPPER_T x = 0; h(x; }\nUPPER_T\nmade(int n);\n"
    copy = readable(source)
    assert copy.text.count(b"UPPER_T") == 4
    assert parse(source, "cpp").root_node.has_error


def test_a_real_syntax_error_after_a_specifier_macro_stays_one():
    broken = SPECIFIED.replace(b"return v * 2.0f;", b"return v * 2.0f")
    assert parse(broken, "cpp").root_node.has_error
    unbalanced = SPECIFIED.replace(b"{ return 4; }", b"{ return 4; ")
    assert parse(unbalanced, "cpp").root_node.has_error


def test_a_specifier_macro_inside_parentheses_is_left_alone():
    source = b"void f(int n) { g(n,\n  SPEC_X int); }\nSPEC_INLINE void h() {}\n"
    copy = readable(source)
    assert b"SPEC_X int" in copy.text and b"SPEC_INLINE" not in copy.text
    assert masked_lines(b"HOST_DEV_SPEC\nfloat f(float v) { return v; }\n", "cpp") == ((1, 1),)


def test_an_empty_braced_default_of_a_parameter_is_read_as_a_default():
    source = b"void f(std::optional<at::Tensor> scale = {},\n       int n = {}) {\n    g(n == {} ? 1 : 2);\n}\n"
    assert parse(source.replace(b"g(n == {} ? 1 : 2);", b"g(n);"), "cpp").root_node.has_error is False
    tree = parse(source.replace(b"g(n == {} ? 1 : 2);", b"g(n);"), "cpp")
    defaults = [node for node in _walk(tree.root_node) if node.type == "optional_parameter_declaration"]
    assert [source[node.child_by_field_name("default_value").start_byte:
                   node.child_by_field_name("default_value").end_byte] for node in defaults] == [b"{}", b"{}"]
    assert b"n == {}" in readable(source).text  # only a default's braces


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


UPSTREAM = "csrc/scale.cu"

SCALE_BEFORE = '''#include "common.h"

SPEC_INLINE float scale_of(float v) {
    return v * 2.0f;
}

__global__ void scale_kernel(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = scale_of(x[i]); }
}
'''

SCALE_TREE = {"kernels/scale.cu": SCALE_BEFORE.replace(
    "SPEC_INLINE float scale_of", "// portq: ports vllm:csrc/scale.cu::scale_of\nSPEC_INLINE float scale_of")}

SCALE_MATRIX = '''[[row]]
id       = "SCALE"
title    = "scale kernels"
upstream = "vllm"
paths    = ["csrc/scale.cu"]
tree     = ["kernels/"]
tests    = ["tests/"]
'''


def _verdict(tmp_path, after, before=SCALE_BEFORE):
    assert after != before
    return classify_commit(tmp_path, {UPSTREAM: before}, {UPSTREAM: after}, SCALE_TREE,
                           matrix=SCALE_MATRIX, message="edit")


def _rules(verdict):
    return {rule for symbol in verdict.symbols for rule in symbol.rules}


def test_a_body_change_of_a_definition_with_a_specifier_macro_is_read_not_a_parse_failure(tmp_path):
    verdict = _verdict(tmp_path, SCALE_BEFORE.replace("return v * 2.0f;", "return v * 4.0f;"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" not in _rules(verdict), verdict.reason
    assert "body-change" in _rules(verdict), verdict.reason


def test_a_syntax_error_in_such_a_definition_stays_a_parse_failure(tmp_path):
    verdict = _verdict(tmp_path, SCALE_BEFORE.replace("return v * 2.0f;", "return v * 2.0f"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in _rules(verdict), verdict.reason


SCHEMA = b"""void register_ops(Library& m) {
  m.def("scale(Tensor x, int block=" TO_TEXT(
      DEFAULT_BLOCK) ", float eps=1e-6) -> Tensor");
  m.def("count(Tensor x) -> int " FORMAT_WORD " done");
  TORCH_CHECK(n > 0, "n=" FORMAT_WORD);
}
"""


def test_a_macro_between_two_string_literals_is_read_as_code():
    assert parse(SCHEMA, "cpp").root_node.has_error is False
    copy = readable(SCHEMA)
    assert len(copy.text) == len(SCHEMA) and copy.text.count(b"\n") == SCHEMA.count(b"\n")
    # every token is kept (only the blanks around the macro change) and none lands in a comment
    assert copy.text.replace(b"+", b" ").split() == SCHEMA.split()
    assert b"/*" not in copy.text and b"//" not in copy.text
    calls = [node for node in _walk(parse(SCHEMA, "cpp").root_node) if node.type == "call_expression"
             and SCHEMA[node.start_byte:node.end_byte].startswith(b"TO_TEXT")]
    assert len(calls) == 1 and b"DEFAULT_BLOCK" in SCHEMA[calls[0].start_byte:calls[0].end_byte]


def test_an_operator_word_or_an_asm_template_between_two_string_literals_is_left_alone():
    source = b'void f() { g("a" and "b"); h("x" MACRO_Y "z"); k(; asm volatile("op" SUFFIX_Z ";" :: "r"(x)); }\n'
    copy = readable(source)
    assert b'"a" and "b"' in copy.text and b'"op" SUFFIX_Z ";"' in copy.text  # an asm statement takes literals and b'"x"+MACRO_Y+"z"' in copy.text
    assert parse(source, "cpp").root_node.has_error
