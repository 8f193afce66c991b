"""Readable copies of C/C++ (and Python) text the tree-sitter grammars cannot parse as written.

Two idioms of real CUDA/C++ sources leave ERROR nodes in tree-sitter's C++
grammar although every compiler reads them:

- a preprocessor conditional inside a parameter or argument list
  (``void f(int n,\\n#ifdef NEW\\nA shape,\\n#else\\nB shape,\\n#endif\\ndouble e)``);
- statements passed as the last argument of a function-like macro (a type
  dispatch: ``DISPATCH(t, "name", using acc_t = float; k<acc_t>(x););``).

``readable`` returns a copy of the text in which each such idiom is rewritten
in place to a form the grammar accepts, every byte offset and every line kept
(so a node's lines and columns are the original's and citations stay exact):

- the conditional keeps the text of its first branch; its directive lines and
  every other branch are blanked (each byte but the newline becomes a space).
  The blanked lines are returned too (``Readable.masked``): what they held is
  not in the tree, so a change to them is a change the tree cannot show and a
  caller must treat those lines as unparsed;
- the statement argument is read as the statements that follow the call:
  the comma before it becomes the call's closing parenthesis, a blank before
  its first statement a ';' ending the call, and the call's own closing
  parenthesis a blank (``M(t, "n");using a = f; k<a>(x); ;``). No text is
  dropped; the statements keep their lines and columns. Where no such blank
  is there, the idiom is left as written (and still fails to parse).

Three more idioms leave the grammar's tree whole but flagged (a MISSING node)
or read a definition wrongly, and are rewritten the same way:

- an upper-case identifier in declaration-specifier position (a line's start,
  after at most a template header and specifier keywords) that is followed
  by a specifier or type keyword, or by a type and then a declarator (on its
  line or, where it ends the line, the next one): an object-like macro that
  stands for specifiers (``SPEC void f(int n)``). It is blanked; a line it
  held alone is reported masked. One followed by a single name is the
  declaration's type (``UPPER_T x = 0;``, ``UPPER_T f(int n)``) and is kept;
- an empty braced default of a parameter (``T x = {}``) is read as the
  literal ``00`` over the same two bytes.
- a name or macro call between two string literals (``"n=" TO_TEXT(N) ", m"``,
  a macro the compiler expands to a literal it concatenates), or after one
  where it ends the argument (``"n=" NAME)``): the blank after the literal
  (and the one before the next) becomes '+', so the name or call is an
  operand and no token leaves the code.

It rewrites nothing else, so a real syntax error stays one. It does no I/O and
decides nothing about a change; ``symbols.parse`` asks for a copy only of text
that fails to parse.

``readable_python`` does the same for one idiom of Python that tree-sitter's
Python grammar rejects although the interpreter reads it: a starred item of an
unparenthesized tuple (after a comma, ``=``, ``return``, ``yield`` or ``in``,
or opening a statement) whose operand does not start with a name
(``return grad, *[None] * 2``, ``y = a, *(b or c)``); the grammar reads a ``*``
there only before a name, an attribute, a subscript or a call. The ``*``
becomes a blank, so its operand is read as a plain item of the same tuple;
the line holding it is returned as masked, since the tree holds no star there
and a change to that line is one the tree cannot read as written.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache

_BLANKS = b" \t"
_CONDITIONAL_OPENERS = (b"if", b"ifdef", b"ifndef")
_CONDITIONAL_ALTERNATIVES = (b"elif", b"else", b"elifdef", b"elifndef")
_OPERATOR_WORDS = frozenset({b"and", b"or", b"not", b"xor", b"bitand", b"bitor", b"compl", b"and_eq", b"or_eq",
                             b"xor_eq", b"not_eq"})
_ARGUMENTS = rb"(?:[^()\"';]|\((?:[^()\"';]|\([^()\"';]*\))*\))*"
_BETWEEN_LITERALS = re.compile(rb"[ \t]+([A-Za-z_][A-Za-z_0-9]*)(?:\s*\(" + _ARGUMENTS + rb"\))?[ \t]+")
_LAST_OPERAND = re.compile(rb"[ \t]+([A-Za-z_][A-Za-z_0-9]*)(?:[ \t]*\((?:[^()\"';\n]|\([^()\"';\n]*\))*\))?[ \t]*[),;]")
_ASSEMBLY = frozenset({b"asm", b"__asm", b"__asm__", b"volatile", b"__volatile__"})
_COMPARISONS = (b"==", b"!=", b"<=", b">=")
_NOT_CALLS = frozenset({b"for", b"if", b"while", b"switch", b"return", b"sizeof", b"decltype"})

# declaration-specifier position: a line's start, after an optional template header and specifier keywords
_LEADING_SPECIFIERS = rb"(?:(?:static|inline|constexpr|explicit|virtual|extern|friend|__device__|__host__" \
    rb"|__global__|__forceinline__|__inline__)[ \t]+)*"
_TEMPLATE_HEADER = rb"(?:template[ \t]*<(?:[^<>\n]|<(?:[^<>\n]|<[^<>\n]*>)*>)*>[ \t]*)?"
_UPPER = rb"(?=[A-Z_0-9]*[A-Z])[A-Z_][A-Z_0-9]+"
_SPECIFIER_MACROS = re.compile(rb"[ \t]*" + _TEMPLATE_HEADER + _LEADING_SPECIFIERS
                               + rb"((?:" + _UPPER + rb"[ \t]+)*" + _UPPER + rb")(?:[ \t]+|[ \t]*$)")
# what a specifier must stand before: a specifier or type keyword, or a type and then a declarator
_NAME = rb"[A-Za-z_][A-Za-z_0-9]*"
_TYPE = _NAME + rb"(?:[ \t]*(?:::[ \t]*" + _NAME + rb"|<(?:[^<>\n;{}]|<(?:[^<>\n;{}]|<[^<>\n;{}]*>)*>)*>))*"
_TYPE_AND_DECLARATOR = _TYPE + rb"(?:[ \t]*[*&]+[ \t]*|[ \t]+)(?:" + _NAME + rb"[ \t]*::[ \t]*)*(?:operator\b|" \
    + _NAME + rb"[ \t]*(?:[(;=,{\[:]|$))"
_NOT_TYPES = frozenset({b"return", b"new", b"delete", b"case", b"goto", b"throw", b"else", b"do", b"co_return",
                        b"co_yield", b"co_await", b"using", b"namespace", b"typedef", b"sizeof", b"const", b"volatile"})
_DECLARED = re.compile(rb"(?:void|bool|char|short|int|long|float|double|unsigned|signed|auto|static|inline"
                       rb"|constexpr|consteval|constinit|explicit|virtual|extern|friend|typename|struct|class|union"
                       rb"|enum|template|__device__|__host__|__global__|__forceinline__|__inline__|__noinline__)\b"
                       rb"|(?:(?:const|volatile)[ \t]+)?(?!(?:" + b"|".join(sorted(_NOT_TYPES)) + rb")\b)"
                       + _TYPE_AND_DECLARATOR)


@dataclass(frozen=True)
class Readable:
    """A rewritten copy of a text (same length, same lines) and the lines
    (1-based, inclusive spans) it blanked."""

    text: bytes
    masked: tuple[tuple[int, int], ...]


@lru_cache(maxsize=64)
def readable(source: bytes) -> Readable:
    """The copy of ``source`` with both idioms rewritten (``source`` itself,
    and no masked lines, where it holds neither)."""
    lines = source.split(b"\n")
    out = [bytearray(line) for line in lines]
    masked: list[int] = []
    brackets: list[list] = []  # [char, line, column, name, last top-level comma before any ';', first ';', last ';', open '<'s]
    # [inside parentheses (rewritten), past its first branch, brackets at its #if, brackets after its first branch]:
    # every branch of another conditional is scanned from the brackets open at its #if, and the first
    # branch's brackets go on past its #endif, so branches that open a call each their own way agree
    conditionals: list[list] = []
    statement_arguments: list[tuple] = []
    specifiers: list[tuple[int, int, int]] = []
    empty_defaults: list[tuple[int, int]] = []
    literals: list[tuple[int, int, int]] = []  # (row, start, end) of each string literal, in order
    in_comment = False
    continued_directive = False
    for row, line in enumerate(lines):
        dropping = any(frame[1] for frame in conditionals)
        if continued_directive:
            continued_directive = line.rstrip().endswith(b"\\")
            if conditionals and conditionals[-1][0]:
                _blank(out, row, masked)
            continue
        stripped = line.lstrip()
        if not in_comment and stripped.startswith(b"#"):
            continued_directive = line.rstrip().endswith(b"\\")
            word = stripped[1:].lstrip().split(None, 1)
            word = word[0].split(b"(")[0] if word else b""
            if word in _CONDITIONAL_OPENERS:
                conditionals.append([dropping or (bool(brackets) and brackets[-1][0] == b"("), False,
                                     _copied(brackets), None])
                if conditionals[-1][0]:
                    _blank(out, row, masked)
            elif word in _CONDITIONAL_ALTERNATIVES and conditionals:
                frame = conditionals[-1]
                if frame[0]:
                    frame[1] = True
                    _blank(out, row, masked)
                else:
                    if frame[3] is None:
                        frame[3] = _copied(brackets)
                    brackets[:] = _copied(frame[2])
            elif word == b"endif" and conditionals:
                frame = conditionals.pop()
                if frame[0]:
                    _blank(out, row, masked)
                elif frame[3] is not None:
                    brackets[:] = frame[3]
            elif dropping:
                _blank(out, row, masked)
            continue
        if dropping:
            _blank(out, row, masked)
            continue
        if not in_comment and all(frame[0] == b"{" for frame in brackets):
            specifiers.extend(_specifier_macros(lines, row))
        in_comment = _scan(line, row, brackets, statement_arguments, in_comment, empty_defaults, literals)
    placed = _finish(lines, statement_arguments)
    joined = _macros_between_literals(lines, literals)
    if not masked and not placed and not specifiers and not empty_defaults and not joined:
        return Readable(source, ())
    for row, column in joined:
        out[row][column:column + 1] = b"+"
    for row, column in empty_defaults:
        out[row][column:column + 2] = b"00"  # a literal over both bytes: the node's text is the `{}`
    for row, start, end in specifiers:
        out[row][start:end] = b" " * (end - start)
        if not out[row].strip():
            masked.append(row + 1)
    for (comma_row, comma_column), (blank_row, blank_column), (close_row, close_column) in placed:
        out[comma_row][comma_column:comma_column + 1] = b")"
        out[blank_row][blank_column:blank_column + 1] = b";"
        out[close_row][close_column:close_column + 1] = b" "
    return Readable(b"\n".join(bytes(line) for line in out), _spans(masked))


def _specifier_macros(lines: list[bytes], row: int) -> list[tuple[int, int, int]]:
    """The upper-case identifiers of line ``row`` that stand in declaration-specifier position (at the
    line's start, after at most a template header and specifier keywords) and before a specifier or
    type keyword, or before a type and a declarator, on the line or (where they end it) on the next
    non-blank line: (row, start, end) of each run of them. An upper-case identifier followed by
    one name only (``UPPER_T x = 0;``, ``UPPER_T f(int n)``) is the declaration's type and is kept."""
    match = _SPECIFIER_MACROS.match(lines[row])
    if match is None:
        return []
    rest = lines[row][match.end():]
    if not rest.strip():
        following = next((line for line in lines[row + 1:] if line.strip()), b"")
        rest = following.lstrip()
        if rest.startswith((b"#", b"//", b"/*")):
            return []
    if not _DECLARED.match(rest) and not _declarator_follows(lines, row, rest):
        return []
    return [(row, match.start(1), match.end(1))]


def _declarator_follows(lines: list[bytes], row: int, rest: bytes) -> bool:
    """Whether ``rest`` is a type alone that ends line ``row`` and the next non-blank line begins with a
    function's declarator (``SPEC Type\\nname(``)."""
    if not re.fullmatch(_TYPE + rb"[ \t*&]*", rest.rstrip()) or rest.split(b"<")[0].strip() in _NOT_TYPES:
        return False
    following = next((line for line in lines[row + 1:] if line.strip()), b"")
    return re.match(rb"[ \t]*(?:" + _NAME + rb"[ \t]*::[ \t]*)*" + _NAME + rb"[ \t]*\(", following) is not None


def _macros_between_literals(lines: list[bytes], literals: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The blanks to read as '+' around each name or call that stands between two string literals
    (``"a=" TO_TEXT(N) ", b"``, a macro that expands to a literal the compiler concatenates): the blank
    after the first literal and the one before the second, so the name or call is an operand and every
    token stays code; where the name or call ends the concatenation (``"n=" NAME)``, before ')', ','
    or ';' on the literal's line), the blank after the literal. An operator word (``"a" and "b"``) is
    left alone."""
    joined = []
    for (row, _start, end), (next_row, next_start, _end) in zip(literals, literals[1:] + [(None, None, None)]):
        between = None if next_row is None \
            else _BETWEEN_LITERALS.fullmatch(_text_between(lines, (row, end), (next_row, next_start)))
        if between is not None and between.group(1) not in _OPERATOR_WORDS:
            joined.extend([(row, end), (next_row, next_start - 1)])
            continue
        last = _LAST_OPERAND.match(lines[row], end)  # `"n=" NAME)`: the name ends the concatenation
        if last is not None and last.group(1) not in _OPERATOR_WORDS:
            joined.append((row, end))
    return joined


def _copied(brackets: list[list]) -> list[list]:
    return [list(frame) for frame in brackets]


def _blank(out: list[bytearray], row: int, masked: list[int]) -> None:
    out[row][:] = b" " * len(out[row])
    masked.append(row + 1)


def _spans(rows: list[int]) -> tuple[tuple[int, int], ...]:
    spans: list[list[int]] = []
    for row in sorted(set(rows)):
        if spans and spans[-1][1] == row - 1:
            spans[-1][1] = row
        else:
            spans.append([row, row])
    return tuple((first, last) for first, last in spans)


def _scan(line: bytes, row: int, brackets: list[list], found: list[tuple], in_comment: bool,
          empty_defaults: list[tuple[int, int]], literals: list[tuple[int, int, int]]) -> bool:
    """Follow brackets, commas and semicolons of one code line (comments and
    literals skipped); a closed macro call whose last argument holds
    statements is added to ``found`` when blanks allow the lambda. Returns
    whether a block comment is still open at the line's end."""
    column, end = 0, len(line)
    while column < end:
        char = line[column:column + 1]
        if in_comment:
            close = line.find(b"*/", column)
            if close < 0:
                return True
            in_comment, column = False, close + 2
            continue
        if char == b"/" and line[column + 1:column + 2] == b"/":
            return False
        if char == b"/" and line[column + 1:column + 2] == b"*":
            in_comment, column = True, column + 2
            continue
        if char in (b'"', b"'"):
            start, column = column, _after_literal(line, column)
            if char == b'"' and not any(frame[3] in _ASSEMBLY for frame in brackets):
                literals.append((row, start, column))  # (an asm statement takes literals only)
            continue
        if char == b"{" and brackets and brackets[-1][0] == b"(" and line[column + 1:column + 2] == b"}" \
                and line[:column].rstrip().endswith(b"=") and not line[:column].rstrip().endswith(_COMPARISONS):
            empty_defaults.append((row, column))  # a parameter's default `= {}`
            column += 2
            continue
        if char in (b"(", b"[", b"{"):
            brackets.append([char, row, column, _name_before(line, column) if char == b"(" else b"", None, None, None, 0])
        elif char in (b")", b"]", b"}"):
            if brackets:
                frame = brackets.pop()
                if char == b")" and frame[0] == b"(":
                    _statement_argument(frame, row, column, found)
        elif brackets and brackets[-1][0] == b"(":
            frame = brackets[-1]
            if char == b"<" and column and (line[column - 1:column].isalnum() or line[column - 1:column] == b"_"):
                frame[7] += 1  # a template's argument list (its commas separate no macro arguments)
            elif char == b">" and frame[7] and line[column - 1:column] != b"-":
                frame[7] -= 1
            elif char == b"," and not frame[7] and frame[5] is None:
                frame[4] = (row, column)
            elif char == b";":
                frame[7] = 0
                if frame[5] is None:
                    frame[5] = (row, column)
                frame[6] = (row, column)
        column += 1
    return False


def _after_literal(line: bytes, column: int) -> int:
    quote = line[column:column + 1]
    column += 1
    while column < len(line):
        if line[column:column + 1] == b"\\":
            column += 2
            continue
        if line[column:column + 1] == quote:
            return column + 1
        column += 1
    return column


def _name_before(line: bytes, column: int) -> bytes:
    end = column
    while end > 0 and line[end - 1:end] in _BLANKS:
        end -= 1
    start = end
    while start > 0 and (line[start - 1:start].isalnum() or line[start - 1:start] == b"_"):
        start -= 1
    return line[start:end]


def _statement_argument(frame: list, row: int, column: int, found: list[tuple]) -> None:
    """The lambda rewrite of a call's last argument when it is statements:
    a named call (not a keyword's parentheses) with a top-level ';' after its
    last top-level comma and only blanks after its last ';'."""
    _, _row, _column, name, comma, first_semicolon, last_semicolon, _angles = frame
    if not name or name in _NOT_CALLS or not (name[:1].isalpha() or name[:1] == b"_") \
            or comma is None or first_semicolon is None or first_semicolon < comma:
        return
    found.append((comma, last_semicolon, (row, column)))


def _finish(lines: list[bytes], found: list[tuple]) -> list[tuple[tuple[int, int], tuple[int, int], tuple[int, int]]]:
    """(last comma, blank before the first statement, closing parenthesis) of
    each found statement argument that has a blank before its first statement
    on that statement's line and only blanks after its last ';'."""
    placed = []
    for comma, (semi_row, semi_column), close in found:
        start = _first_code(lines, comma[0], comma[1] + 1)
        if start is None:
            continue
        start_row, start_column = start
        floor = comma[1] + 1 if start_row == comma[0] else 0
        if start_column - 1 < floor or lines[start_row][start_column - 1:start_column] not in _BLANKS:
            continue
        if _text_between(lines, (semi_row, semi_column + 1), close).strip():
            continue
        placed.append((comma, (start_row, start_column - 1), close))
    return placed


def _first_code(lines: list[bytes], row: int, column: int) -> tuple[int, int] | None:
    while row < len(lines):
        line = lines[row]
        while column < len(line) and line[column:column + 1] in _BLANKS:
            column += 1
        if column < len(line):
            return row, column
        row, column = row + 1, 0
    return None


def _text_between(lines: list[bytes], start: tuple[int, int], end: tuple[int, int]) -> bytes:
    if start[0] == end[0]:
        return lines[start[0]][start[1]:end[1]]
    middle = b"\n".join(lines[start[0] + 1:end[0]])
    return lines[start[0]][start[1]:] + b"\n" + middle + b"\n" + lines[end[0]][:end[1]]


_TUPLE_OPENERS = frozenset({",", "=", ";"})
_TUPLE_KEYWORDS = frozenset({"return", "yield", "in"})
_STATEMENT_STARTS = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING})
_NOT_NAME_STARTS = frozenset({"[", "(", "{", "-", "+", "~", "..."})
_IGNORED = frozenset({tokenize.NL, tokenize.COMMENT})


@lru_cache(maxsize=64)
def readable_python(source: bytes) -> Readable:
    """The copy of Python ``source`` with the ``*`` of every starred item of an
    unparenthesized tuple whose operand does not start with a name blanked
    (``source`` itself, and no masked lines, where it holds none, or where
    Python's tokenizer cannot read it)."""
    stars: list[tuple[int, int]] = []
    try:
        tokens = [token for token in tokenize.tokenize(io.BytesIO(source).readline) if token.type not in _IGNORED]
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return Readable(source, ())
    depth = 0
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in ("(", "[", "{"):
            depth += 1
        elif token.type == tokenize.OP and token.string in (")", "]", "}"):
            depth = max(0, depth - 1)
        elif token.type == tokenize.OP and token.string == "*" and depth == 0 and index + 1 < len(tokens) \
                and _opens_tuple_item(tokens[index - 1] if index else None) and _not_a_name(tokens[index + 1]):
            row, column = token.start
            stars.append((row - 1, len(token.line[:column].encode("utf-8"))))
    if not stars:
        return Readable(source, ())
    lines = source.split(b"\n")
    out = [bytearray(line) for line in lines]
    for row, column in stars:
        if out[row][column:column + 1] != b"*":
            return Readable(source, ())  # the tokenizer's line is not the text's (another encoding): leave it
        out[row][column:column + 1] = b" "
    return Readable(b"\n".join(bytes(line) for line in out), _spans([row + 1 for row, _ in stars]))


def _opens_tuple_item(previous) -> bool:
    """Whether a ``*`` after ``previous`` (None at the start) can only star an item of a tuple."""
    if previous is None or previous.type in _STATEMENT_STARTS:
        return True
    if previous.type == tokenize.OP:
        return previous.string in _TUPLE_OPENERS
    return previous.type == tokenize.NAME and previous.string in _TUPLE_KEYWORDS


def _not_a_name(following) -> bool:
    """Whether a starred operand beginning with ``following`` starts with something other than a name."""
    if following.type == tokenize.OP:
        return following.string in _NOT_NAME_STARTS
    return following.type in (tokenize.STRING, tokenize.NUMBER) \
        or following.type == getattr(tokenize, "FSTRING_START", None)
