"""Python that the interpreter reads and tree-sitter's grammar does not: a starred item of an
unparenthesized tuple whose operand does not start with a name (``return x, *[None] * 2``,
``y = a, *(b or c)``). The grammar reads ``*`` there only before a name, an attribute, a subscript
or a call, and its recovery can swallow the body of the enclosing definition. ``symbols.parse`` reads
such text from a copy with the ``*`` blanked (``language.readable.readable_python``), every line and
byte offset kept, so a change elsewhere in the definition is compared, not left to ``parse-failure``.
The line holding a blanked ``*`` is one the tree cannot read as written (the star is in no node): a
change to it stays a parse failure, and so does a real syntax error."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW
from portq.language.readable import readable_python
from portq.language.symbols import SymbolTable, masked_lines, parse, symbol_table
from tests.portq.golden.pipeline import classify_commit

SOURCE = b"""import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def backward(ctx, grad):
        alpha, = ctx.saved_tensors
        return grad * alpha, *[None] * 2

    @staticmethod
    def forward(ctx, x, alpha):
        return x * alpha


def pairs(a, b):
    first = a, *(b or [])
    rest = *{a}, b
    return first, rest
"""


def _definitions(source: bytes, path: str = "lib/act.py"):
    return {(d.qualified_name, d.start_line, d.end_line) for d in symbol_table(source, path).definitions}


def test_a_starred_display_in_a_bare_tuple_parses_with_its_lines_kept():
    assert parse(SOURCE, "python").root_node.has_error is False
    copy = readable_python(SOURCE)
    assert len(copy.text) == len(SOURCE)
    assert copy.text.split(b"\n") == [line.replace(b"*[", b" [").replace(b", *(", b",  (").replace(b"= *{", b"=  {")
                                      for line in SOURCE.split(b"\n")]
    assert copy.masked == ((8, 8), (16, 17))
    assert masked_lines(SOURCE, "python") == ((8, 8), (16, 17))
    assert {(name.rsplit(".", 1)[-1], first, last) for name, first, last in _definitions(SOURCE)} \
        == {("Scale", 4, 12), ("backward", 5, 8), ("forward", 10, 12), ("pairs", 15, 18)}


def test_stars_the_grammar_reads_are_left_as_written():
    source = (b"def f(a, *args, b=2, **kw):\n    g = lambda x, *, y: x * y\n    h(*[a], **{'k': b})\n"
              b"    c = a, *args\n    d = (a, *[b])\n    return a ** 2, *args, [*kw]\n")
    assert parse(source, "python").root_node.has_error is False
    assert readable_python(source).text is source
    assert masked_lines(source, "python") == ()


def test_a_real_syntax_error_stays_one():
    broken = SOURCE.replace(b"return x * alpha", b"return x * alpha)")
    assert parse(broken, "python").root_node.has_error
    unclosed = SOURCE.replace(b"*[None] * 2", b"*[None * 2")
    assert parse(unclosed, "python").root_node.has_error


def test_the_next_version_of_a_file_read_from_a_copy_is_parsed_afresh():
    second = SOURCE.replace(b"return x * alpha", b"return alpha * x")
    previous = SymbolTable("python", [], tree=parse(SOURCE, "python"), source=SOURCE)
    assert str(parse(second, "python", previous).root_node) == str(parse(second, "python").root_node)


UPSTREAM = "lib/act.py"

TREE = {"kernels/act.py": SOURCE.decode().replace(
    "class Scale(", "# portq: ports vllm:lib/act.py::Scale\nclass Scale(")}

MATRIX = '''[[row]]
id       = "ACT"
title    = "activation"
upstream = "vllm"
paths    = ["lib/act.py"]
tree     = ["kernels/"]
tests    = ["tests/"]
'''


def _verdict(tmp_path, after, before=SOURCE.decode()):
    assert after != before
    return classify_commit(tmp_path, {UPSTREAM: before}, {UPSTREAM: after}, TREE, matrix=MATRIX, message="edit")


def _rules(verdict):
    return {rule for symbol in verdict.symbols for rule in symbol.rules}


def test_a_comment_beside_such_a_tuple_is_read_as_cosmetic(tmp_path):
    verdict = _verdict(tmp_path, SOURCE.decode().replace(
        "        alpha, = ctx.saved_tensors\n", "        # one gradient per input\n        alpha, = ctx.saved_tensors\n"))
    assert "parse-failure" not in _rules(verdict), verdict.reason
    assert verdict.verdict != NEEDS_REVIEW, verdict.reason


def test_a_body_change_beside_such_a_tuple_is_read_as_one(tmp_path):
    verdict = _verdict(tmp_path, SOURCE.decode().replace("alpha, = ctx.saved_tensors", "alpha, = ctx.saved_tensors[:1]"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" not in _rules(verdict), verdict.reason


def test_a_change_to_the_line_whose_star_the_copy_blanks_stays_a_parse_failure(tmp_path):
    verdict = _verdict(tmp_path, SOURCE.decode().replace("*[None] * 2", "[None] * 2"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in _rules(verdict), verdict.reason


def test_a_syntax_error_the_change_makes_stays_a_parse_failure(tmp_path):
    verdict = _verdict(tmp_path, SOURCE.decode().replace("alpha, = ctx.saved_tensors", "alpha, = ctx.saved_tensors)"))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert "parse-failure" in _rules(verdict), verdict.reason
