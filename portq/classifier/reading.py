"""Reading a touched symbol: what the verdict rules look at besides signatures.

The range's facts about an entry (``RangeFacts``: its net-zero partner, the
renames of its paths, the definitions it moves), the lines a change touched
in or around a symbol, where a parse failed, which names a line defines or
uses, the module an import names, an equal Python ``ast``, and the evidence
records that cite anchors and callers. The rules (``portq.classifier.rules``)
and the verdict table (``portq.classifier.verdicts``) share them.

This module reads the syntax trees and changes handed to it; it reads no
git, no tree index, decides no verdict and imports no rule.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from portq.classifier.callees import Module
from portq.classifier.moves import Moves
from portq.core.evidence import Evidence, Kind, Location, Side
from portq.core.model import EntryChanges, FileChange, TouchedSymbol
from portq.language.memo import TEXT_OR_NONE, content_digest, per_definition
from portq.language.symbols import (KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION, KIND_TRITON_KERNEL, language_for_path,
                                    macro_extents)
from portq.tree.anchors import Anchor


def _kind_class(kind: str) -> str:
    return "kernel" if kind in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL, KIND_DEVICE_FUNCTION) else "host"


# Identifiers too common to tie a top-level change to a ported definition.
_COMMON_IDENTIFIERS = frozenset(
    """self cls const int void auto return if else for while true false nullptr None True False
    def class import from as torch tl triton std namespace template typename static inline
    unsigned float double bool char size_t int32_t int64_t uint32_t uint64_t and or not in is
    pass with try except finally raise assert lambda yield global struct public private case
    break continue switch default sizeof define include ifdef ifndef endif pragma once typing
    Optional Tensor tensor dtype device shape data_ptr numel size stride the a an of to""".split()
)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# a function-like macro invoked alone on a file-scope line (an instantiation table entry)
_MACRO_CALL = re.compile(r"\s*([A-Za-z_]\w*)\s*\(.*\)\s*;?\s*$")
# words every C++ definition shares: a line's keywords and built-in types tie it to none of them
_CPP_KEYWORDS = frozenset(
    "auto bool char char16_t char32_t class const constexpr double enum extern float inline int long "
    "mutable register short signed static struct template typename union unsigned void volatile "
    "__device__ __forceinline__ __global__ __host__ __restrict__ __shared__ __constant__".split())


@dataclass
class RangeFacts:
    """What the whole range says about one entry (from ``portq.classifier.classify``)."""

    net_zero_partner: tuple[int, str] | None = None  # (entry position, sha) of the paired commit
    aliases: dict[str, set[str]] = field(default_factory=dict)  # upstream path -> every name it had in the range
    moves: Moves = field(default_factory=Moves)  # ported definitions carried elsewhere in the range
    losses: "AnchorLosses | None" = None  # ported definitions removed with no move followed (``anchor_losses``)


@dataclass(frozen=True)
class AnchorLoss:
    """A ported upstream definition one commit removed with no move followed: the anchors naming it
    lost their symbol. ``files`` are where what it became may be: the files that commit created or
    renamed, and files a later commit created while it removed definitions from one of those (each by
    every name it had since)."""

    position: int
    sha: str
    lost: tuple[str, str]  # (upstream path, qualified name) the anchors name
    rows: tuple[str, ...]
    anchors: tuple[Anchor, ...]
    files: frozenset[str]
    ended: int | None = None  # the entry that defined the lost name again where it was: the anchor names it again
    ports: tuple = field(default=(), compare=False)  # the in-tree ports whose anchors lost their symbol
    kind: str | None = field(default=None, compare=False)  # the lost definition's kind and language
    language: str | None = field(default=None, compare=False)

    def could_become(self, symbol: TouchedSymbol) -> int:
        """How plausibly ``symbol`` is what the lost definition became: the words its name shares with
        the lost name (``_name_words``), or 1 for a definition of the lost one's kind in its language (a
        kernel rewritten as a kernel under a new name); 0 when neither holds: a definition of another
        kind or language whose name shares nothing with the lost one is no candidate for its identity."""
        shared = _name_words(symbol.qualified_name) & _name_words(self.lost[1])
        if shared:
            return 1 + len(shared)
        return int(self.kind is not None and symbol.kind == self.kind and symbol.language == self.language)

    @property
    def message(self) -> str:
        """The line a scan shows for the lost anchor."""
        return (f"anchor lost at {self.sha[:10]}: {self.lost[1]} removed from {self.lost[0]} and no move "
                "followed; what it became is unknown")


@dataclass
class AnchorLosses:
    """Every anchor loss of the range, and the entry where each definition first appeared in it."""

    losses: list[AnchorLoss] = field(default_factory=list)
    first_added: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, qualified name) -> entry

    def successor_of(self, symbol: TouchedSymbol, paths: set[str], position: int) -> AnchorLoss | None:
        """The loss of a row ``symbol`` belongs to that happened at or before entry ``position``, when
        ``symbol`` (or a definition enclosing it) first appeared in the range with that loss (the commit
        that lost the anchor added it; a later commit that moved it under its name to another file keeps
        that first appearance), in one of the files the loss names (``paths``: every name of ``symbol``'s
        file). None when it was there before the loss, was added by a later commit (a new sibling), or
        ``position`` is at or after the entry that defined the lost name again where it was (from then on
        the anchor names a definition again)."""
        parts = re.split(r"(::|\.)", symbol.qualified_name)
        names = {"".join(parts[:i]) for i in range(1, len(parts) + 1, 2)}
        seen = [self.first_added[(p, n)] for p in paths for n in names if (p, n) in self.first_added]
        if not seen:
            return None
        first = min(seen)
        found = [loss for loss in self.losses
                 if first == loss.position and first <= position and (loss.ended is None or position < loss.ended)
                 and set(loss.rows) & set(symbol.rows) and paths & loss.files]
        # the loss whose lost definition ``symbol`` most plausibly became; none when it could become none
        best = max(found, key=lambda loss: loss.could_become(symbol), default=None)
        return best if best is not None and best.could_become(symbol) else None


def _name_words(qualified_name: str) -> set[str]:
    """The words of a definition's own name (its last component), split at underscores and case changes
    and lower-cased: ``Ops::scaledMatmul_v2`` → {scaled, matmul, v2}."""
    own = re.split(r"::|\.", qualified_name)[-1]
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+", own)
    return {w.lower() for w in words}


# --- changed lines ----------------------------------------------------------------


def _unchanged_moves(entry: EntryChanges) -> dict[str, str]:
    """Dotted Python modules the commit renamed without changing them
    (``aiter/utils/arch.py`` → ``aiter/utils/arch_info.py``, same blob)."""
    def dotted(path: str) -> str:
        return path[:-3].replace("/", ".") if path.endswith(".py") else path.replace("/", ".")

    moves = {}
    for change in entry.commit.changes:
        if change.status == "renamed" and change.old_path and change.new_path and change.old_blob == change.new_blob \
                and change.old_path.endswith(".py"):
            moves[dotted(change.old_path)] = dotted(change.new_path)
    return moves


def _file_change(entry: EntryChanges, symbol: TouchedSymbol) -> FileChange | None:
    for change in list(entry.owned_changes) + list(entry.commit.changes):
        if change.path == symbol.path or (symbol.old_path and change.old_path == symbol.old_path):
            return change
    return None


def _changed_lines(change: FileChange | None, symbol: TouchedSymbol, old_table, new_table,
                   outside_definitions: bool) -> list[tuple[str, int, str]]:
    """``(side, line, text)`` of the '-'/'+' lines of ``symbol``: inside its
    extent, or outside every definition for top-level symbols."""
    if change is None:
        return []
    found: list[tuple[str, int, str]] = []

    def wanted(line: int, extent, table) -> bool:
        if outside_definitions:
            return table is None or table.enclosing(line) is None
        return extent is None or extent[0] <= line <= extent[1]

    for hunk in change.hunks:
        for line, text in zip(hunk.removed_lines, hunk.removed_text):
            if wanted(line, symbol.old_lines, old_table):
                found.append(("old", line, text))
        for line, text in zip(hunk.added_lines, hunk.added_text):
            if wanted(line, symbol.new_lines, new_table):
                found.append(("new", line, text))
    return found


_DEFINING = {
    "preproc_def": "name", "preproc_function_def": "name",  # a macro belongs to what expands it
    "type_definition": "declarator", "alias_declaration": "name",
}


def _names_used_by_others(table, line: int, text: str, symbol: TouchedSymbol) -> set[str]:
    """The names a changed top-level line stands for, attributed by use: a
    macro, ``typedef``, ``using``, a declaration or a Python assignment
    defines names, and only they can tie the change to a ported definition
    (not every identifier its body shares with one); any other line
    (a dispatch table entry, a bare call) offers its identifiers."""
    if table is not None and table.language == "cpp" and re.match(r"\s*#\s*include\b", text):
        return set()  # a header's path names a file, not anything a definition uses
    words = set(_IDENTIFIER.findall(_strip_comment(text, symbol.path)))
    if table is not None and table.language == "python":
        bound = _python_import_bindings(_strip_comment(text, symbol.path))
        if bound is not None:
            return bound  # an import line stands for the names it binds, not the package path it reads
        words = set(_IDENTIFIER.findall(_without_plain_strings(_strip_comment(text, symbol.path))))
    if table is None or table.tree is None:
        return words
    if table.language == "cpp":  # a macro's continuation lines, however tree-sitter recovered from them
        extents = macro_extents(table.source)
        macro = next((name for name, (first, last) in extents.items() if first <= line <= last), None)
        if macro is not None:
            return {macro}
        invoked = _MACRO_CALL.match(_strip_comment(text, symbol.path))
        called = [invoked.group(1)] if invoked is not None and invoked.group(1) in extents \
            else _wrapped_macro_calls(table, line, extents)
        if called:
            # `MAKE_K(float, 64)` at file scope stands for its macro and the file's definitions the
            # macro's body names (what it instantiates), not for type names its arguments share with
            # every kernel of the file; so does a line of a run of such calls a formatter wrapped
            body = set()
            for name in called:
                body |= set(_IDENTIFIER.findall(_source_lines(table.source, extents[name])))
            return set(called) | {d.name for d in table.definitions if d.name in body}
        words -= _CPP_KEYWORDS
        declared = _declared_function(table.source, line)
        if declared is not None:
            return {declared}
    def spans(node) -> bool:  # a preprocessor line's node ends at column 0 of the next line
        last = node.end_point[0] + (1 if node.end_point[1] > 0 else 0)
        return node.start_point[0] + 1 <= line <= last

    statement = next((n for n in table.tree.root_node.named_children if spans(n)), None)
    while statement is not None and statement.type in ("namespace_definition", "declaration_list", "linkage_specification"):
        body = statement.child_by_field_name("body") or statement
        inner = next((n for n in body.named_children if spans(n)), None)
        if inner is None or inner == statement:
            break
        statement = inner
    if statement is None:
        return words
    if statement.type in ("namespace_definition", "declaration_list", "linkage_specification"):
        # a namespace's own head or brace stands for the definitions it holds (a port among
        # them names itself), not for the namespace name every definition in the file shares
        first, last = statement.start_point[0] + 1, statement.end_point[0] + 1
        return {d.name for d in table.definitions if first <= d.start_line <= last}
    field_name = _DEFINING.get(statement.type)
    if field_name is not None:
        name = statement.child_by_field_name(field_name)
        if name is not None and statement.type == "type_definition":
            # a function type's parameter names have prototype scope: the typedef defines its own name only
            return {node.text.decode("utf-8", errors="replace") for node in _outside_parameters(name)
                    if node.type in ("identifier", "type_identifier")} or words
        return set(_IDENTIFIER.findall(name.text.decode("utf-8", errors="replace"))) if name is not None else words
    if statement.type == "declaration":  # `static constexpr int kTile = 64;` defines kTile
        declarators = [statement.child_by_field_name("declarator")]
        names = {node.text.decode() for d in declarators if d is not None for node in _outside_parameters(d)
                 if node.type == "identifier" and (node.parent is None or node.parent.type != "init_declarator"
                                                   or node.parent.child_by_field_name("declarator") == node)}
        return names or words
    if statement.type == "expression_statement" and statement.named_children \
            and statement.named_children[0].type == "assignment":  # Python `TILE = 64`
        left = statement.named_children[0].child_by_field_name("left")
        return set(_IDENTIFIER.findall(left.text.decode())) if left is not None else words
    return words


_FUNCTION_DECLARATION = re.compile(
    r"(?:extern\s+)?(?:template\s*(?:<[^;{}()]*>)?\s+)?(?:[\w:*&<>,\s]+?\s|[*&]\s*)"
    r"(?P<name>[A-Za-z_]\w*)\s*(?:<[^;{}()]*>)?\s*\((?P<parameters>[^;{}]*)\)\s*(?:const\s*)?;",
    re.DOTALL)
_STATEMENT_END = re.compile(r"[;{}]\s*(?://.*)?$|^\s*#")


def _declared_function(source: bytes | None, line: int) -> str | None:
    """The name of the function a C++ declaration without a body declares (an explicit instantiation
    ``template __global__ void k<float>(float* x, int n);`` or a prototype), when file line ``line`` lies in
    one, read from the text, so across continuation lines and where tree-sitter does not parse the file;
    None otherwise. Its parameter names are scoped to it: the line stands for the declared function alone."""
    if source is None:
        return None
    lines = source.decode("utf-8", errors="replace").splitlines()
    if not 1 <= line <= len(lines):
        return None
    first = line
    while first > 1 and not _STATEMENT_END.search(lines[first - 2]) and lines[first - 2].strip() \
            and line - first < 40:
        first -= 1
    last = line
    while last < len(lines) and not re.search(r";\s*(?://.*)?$", lines[last - 1]) and last - line < 40:
        if re.search(r"[{}]|^\s*#", lines[last - 1]):
            return None
        last += 1
    text = "\n".join(re.sub(r"//.*$", "", t) for t in lines[first - 1:last]).strip()
    if re.match(r"\s*#", text):
        return None
    found = _FUNCTION_DECLARATION.fullmatch(text)
    if found is None or found.group("name") in _CPP_KEYWORDS:
        return None
    return found.group("name")


_PLAIN_STRING = re.compile(r"""(?<![\w'"])([rRbBuU]{0,2})('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""")


def _without_plain_strings(text: str) -> str:
    """``text`` with the contents of its one-line string literals dropped: a message's words name no
    binding. f-strings keep theirs (their braces read names)."""
    return _PLAIN_STRING.sub(lambda m: m.group(1) + "''", text)


def _python_import_bindings(code: str) -> set[str] | None:
    """The names a one-line Python import binds (``from a.b import c as d`` binds d; ``import a.b`` binds
    a; ``import a.b as c`` binds c), or None when ``code`` is no import line."""
    found = re.fullmatch(r"\s*from\s+[\w.]+\s+import\s+\(?([\w\s,]*)\)?\s*", code)
    if found is not None:
        parts = [p.split() for p in found.group(1).split(",") if p.strip()]
        return {p[-1] for p in parts if len(p) in (1, 3)}
    found = re.fullmatch(r"\s*import\s+([\w.\s,]+)", code)
    if found is not None:
        parts = [p.split() for p in found.group(1).split(",") if p.strip()]
        return {p[-1] if len(p) == 3 else p[0].split(".")[0] for p in parts}
    return None


def _if_bodies(statement) -> list:
    """The blocks a Python ``if`` statement may run, in source order: its consequence, each ``elif``'s
    consequence and the ``else`` body (None for a block the parser could not find)."""
    return [statement.child_by_field_name("consequence")] + [
        c.child_by_field_name("body") if c.type == "else_clause" else c.child_by_field_name("consequence")
        for c in statement.children if c.type in ("elif_clause", "else_clause")]


def _outside_parameters(node):
    """``_walk_nodes`` of a declarator, less what its parameter lists hold: a parameter's name in a declarator
    that is no definition (a function-pointer type, a prototype) has prototype scope and binds nothing else."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in current.children if c.type != "parameter_list")


def _walk_nodes(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def assignment_targets(node):
    """The target of each C/C++ assignment (``x = …``, ``x += …``) and step (``++x``) under ``node``: what
    the statement writes, whatever it is (a name, an element, a field)."""
    for current in _walk_nodes(node):
        if current.type == "assignment_expression":
            target = current.child_by_field_name("left")
        elif current.type == "update_expression":
            target = current.child_by_field_name("argument")
        else:
            continue
        if target is not None:
            yield target


_TOP_LEVEL_SUFFIXES = ("_definition", "declaration", "_statement", "_specifier", "_instantiation",
                       "_specification", "comment")


def _stands_at_top_level(node) -> bool:
    """Whether a child of a file's root is a whole top-level construct
    (a definition, declaration, statement, directive or comment) rather
    than a stray token or fragment that recovery left beside them."""
    return node.is_named and node.type != "parameter_declaration" and \
        (node.type.startswith("preproc_") or node.type.endswith(_TOP_LEVEL_SUFFIXES))


def _error_spans(root) -> list[tuple[int, int]]:
    """(first, last line, 1-based) of every syntax error or missing token, in order.

    A root that tree-sitter's recovery left as an ERROR node (a run of
    macro invocations without semicolons at the end of a CUDA file does it)
    still holds the file's definitions as children: its errors are its
    erroneous children and the stray tokens among them, not every line."""
    spans: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and (node.type == "ERROR" or node.is_missing):
            spans.add((node.start_point[0] + 1, node.end_point[0] + 1))
        elif node is root and node.type == "ERROR":
            spans.update((child.start_point[0] + 1, child.end_point[0] + 1) for child in node.children
                         if not _stands_at_top_level(child))
            stack.extend(reversed(node.children))
        elif node.has_error:
            stack.extend(reversed(node.children))
    return sorted(spans)


def _source_lines(source: bytes, extent: tuple[int, int]) -> str:
    return "\n".join(source.decode("utf-8", errors="replace").splitlines()[extent[0] - 1:extent[1]])


_MACRO_NAME_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _wrapped_macro_calls(table, line: int, extents: dict[str, tuple[int, int]]) -> list[str]:
    """The function-like macros of ``extents`` (the file's ``#define``\\ s) whose calls make up the whole of
    ``line``, 1-based, when it lies in a run of such calls outside any definition, directive or comment that
    a formatter wrapped as one expression (``MAKE_K(float, A) MAKE_K(`` / ``    half, B`` / ``) MAKE_K(half,
    A)``): every non-blank character of the line inside a call's parentheses or a called macro's name, a
    closing ``;`` aside. Empty for any other line (a word outside a call, a call of another name)."""
    source = table.source.decode("utf-8", errors="replace")
    lines = source.split("\n")
    if not 0 < line <= len(lines) or not lines[line - 1].strip():
        return []
    inside = {number for first, last in extents.values() for number in range(first, last + 1)}
    inside |= {number for d in table.definitions for number in range(d.start_line, d.end_line + 1)}
    if line in inside:
        return []
    first = line  # the run: neighbouring lines outside definitions, directives, comments and blanks
    while first > 1 and first - 1 not in inside and lines[first - 2].strip() \
            and not lines[first - 2].lstrip().startswith(("#", "//", "/*", "*")):
        first -= 1
    last = line
    while last < len(lines) and last + 1 not in inside and lines[last].strip() \
            and not lines[last].lstrip().startswith(("#", "//", "/*", "*")):
        last += 1
    run = lines[first - 1:last]
    if any(t.lstrip().startswith(("#", "//", "/*", "*")) or "//" in t or "/*" in t for t in run):
        return []
    text = "\n".join(run)
    offset = sum(len(t) + 1 for t in run[:line - first])  # where the line starts in ``text``
    end = offset + len(run[line - first])
    covered = [False] * len(text)
    called: list[str] = []
    at = 0
    while at < len(text):
        if text[at].isspace() or text[at] == ";":
            at += 1
            continue
        match = _MACRO_NAME_CALL.match(text, at)
        if match is None or match.group(1) not in extents:
            if offset <= at < end:
                return []  # a character of the line outside any call
            at += 1
            continue
        depth, close = 0, None
        for index in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                close = index
                break
        if close is None:
            return []
        for index in range(at, close + 1):
            covered[index] = True
        if at < end and close >= offset:
            called.append(match.group(1))
        at = close + 1
    if any(not covered[i] and not text[i].isspace() and text[i] != ";" for i in range(offset, end)):
        return []
    return list(dict.fromkeys(called))


def _stands_for(table, line: int, symbol: TouchedSymbol) -> set[str]:
    """The names a (possibly unparsable) line stands for: the macro whose
    continuation lines hold it, else what its top-level statement defines."""
    text = table.source.decode("utf-8", errors="replace").splitlines()[line - 1] \
        if 0 < line <= table.source.count(b"\n") + 1 else ""
    return _names_used_by_others(table, line, text, symbol)


def _strip_comment(text: str, path: str) -> str:
    if language_for_path(path) == "python":
        return text.split("#", 1)[0]
    return text.split("//", 1)[0]


def _comment_lines(table) -> frozenset[int]:
    """The 1-based lines of ``table``'s file that hold nothing but comment (and blanks), as its parse tree's
    comment nodes cover them: a block comment's inner lines, which need not start with ``*``, included.
    Empty when the file has no parse tree."""
    if table is None or getattr(table, "tree", None) is None or table.source is None:
        return frozenset()
    lines = table.source.split(b"\n")
    covered: dict[int, list[tuple[int, int]]] = {}
    stack = [table.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            (first, start), (last, end) = node.start_point, node.end_point
            for row in range(first, last + 1):
                covered.setdefault(row, []).append((start if row == first else 0,
                                                    end if row == last else len(lines[row]) if row < len(lines) else 0))
            continue
        stack.extend(node.children)
    found = set()
    for row, spans in covered.items():
        text = lines[row] if row < len(lines) else b""
        if all(any(a <= i < b for a, b in spans) for i, c in enumerate(text) if not chr(c).isspace()):
            found.add(row + 1)
    return frozenset(found)


def _is_code_line(text: str, path: str) -> bool:
    stripped = _strip_comment(text, path).strip()
    if not stripped:
        return False
    return not stripped.startswith(("/*", "*", "*/"))


@per_definition("python-ast-digest", TEXT_OR_NONE)
def _python_ast_dump(node) -> str | None:
    """A digest of the ``ast.dump`` of a Python definition's source with
    docstrings removed (as the token comparison ignores them), or None when
    the text does not parse. Dumps are only compared, so their digests are
    what is kept (``portq.language.memo``), not the dumps."""
    return _docstringless_ast_digest(node, drop_passes=False)


def _docstringless_ast_digest(node, drop_passes: bool) -> str | None:
    """The digest both ``ast`` comparisons keep: the definition's source parsed at its own indentation,
    redundant ``pass`` statements dropped first when ``drop_passes``, then every docstring removed; None
    when the text does not parse. Not memoised itself: each caller keeps its own product."""
    column = node.start_point[1]
    text = " " * column + node.text.decode("utf-8", errors="replace")
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    if drop_passes:
        tree = drop_redundant_passes(tree)
    for scope in ast.walk(tree):
        body = getattr(scope, "body", None)
        if isinstance(scope, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            scope.body = body[1:]
    return content_digest(ast.dump(tree, include_attributes=False))


def drop_redundant_passes(tree: ast.AST) -> ast.AST:
    """``tree`` with every ``pass`` removed from a block (a body, ``else`` or
    ``finally``) that holds another statement: there it does nothing. A block
    whose only statement is ``pass`` keeps it."""
    for scope in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(scope, name, None)
            if isinstance(block, list) and any(isinstance(s, ast.stmt) and not isinstance(s, ast.Pass) for s in block):
                setattr(scope, name, [s for s in block if not isinstance(s, ast.Pass)])
    return tree


@per_definition("python-passless-ast-digest", TEXT_OR_NONE)
def _python_passless_ast_dump(node) -> str | None:
    """``_python_ast_dump`` once redundant ``pass`` statements are dropped (``drop_redundant_passes``)."""
    return _docstringless_ast_digest(node, drop_passes=True)


def new_side_evidence(symbol: TouchedSymbol, kind: Kind, message: str, subject: str | None = None) -> Evidence:
    """A fact about a touched symbol's upstream-new definition, cited at its first line."""
    return Evidence(kind=kind, message=message, side="upstream-new", path=symbol.path,
                    line=symbol.new_lines[0] if symbol.new_lines else None, symbol=symbol.name, subject=subject)


def _same_ast_evidence(symbol: TouchedSymbol) -> Evidence:
    return Evidence(kind=Kind.COSMETIC, message="the same Python AST before and after (formatting only)",
                    side="upstream-new", path=symbol.path,
                    line=symbol.new_lines[0] if symbol.new_lines else None,
                    end_line=symbol.new_lines[1] if symbol.new_lines else None, symbol=symbol.name,
                    before=Location(Side.OLD, symbol.old_path or symbol.path,
                                    symbol.old_lines[0] if symbol.old_lines else None,
                                    symbol.old_lines[1] if symbol.old_lines else None),
                    after=Location(Side.NEW, symbol.path,
                                   symbol.new_lines[0] if symbol.new_lines else None,
                                   symbol.new_lines[1] if symbol.new_lines else None))


def _module_resolver(table_of):
    """``(resolve, modules)``: ``resolve(importer, module)`` is the ``callees.Module`` of the file ``from
    MODULE import`` names, built once from ``table_of(path)`` (None when it gives no parsed table);
    ``modules`` holds every path asked, built or None."""
    modules: dict = {}

    def resolve(importer: str, module: str):
        path = _module_path(importer, module)
        if path not in modules:
            table = table_of(path)
            modules[path] = Module(path, table, resolve) if table is not None and table.tree is not None else None
        return modules[path]

    return resolve, modules


def _module_path(importer: str, module: str) -> str:
    """The file ``from MODULE import ...`` names, seen from ``importer``: relative to its folder, or the
    dotted path from the root of its package (the same top-level folder)."""
    folder = Path(importer).parent
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        for _ in range(dots - 1):
            folder = folder.parent
        rest = module[dots:]
        return (folder / (rest.replace(".", "/") + ".py")).as_posix() if rest else (folder / "__init__.py").as_posix()
    top = Path(importer).parts[0] if Path(importer).parts else ""
    path = module.replace(".", "/") + ".py"
    return path if path.split("/")[0] == top else ""


def _anchor_evidence(anchor: Anchor, message: str, kind: Kind = Kind.ANCHOR) -> Evidence:
    return Evidence(kind=kind, message=message, side="tree", path=anchor.file, line=anchor.line,
                    quote=anchor.quote, symbol=anchor.definition or anchor.declared_name)


def _caller_evidence(site, message: str, test: bool) -> Evidence:
    return Evidence(kind=Kind.CALLER, message=f"{message}: {site.caller or '<module>'} calls {site.callee}",
                    side="tree", path=site.file, line=site.line, quote=site.quote, symbol=site.callee, test=test,
                    subject=site.caller)
