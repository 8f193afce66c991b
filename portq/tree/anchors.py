"""Anchors: the comments that tie in-tree code to upstream symbols (DESIGN §6).

Three forms are recognised, in comments (``#``, ``//``, ``/* */``) and in
docstring lines:

* ``portq: ports UPSTREAM:PATH::SYMBOL [@SHA]`` — the definition the line is
  inside of, or directly above, ports ``SYMBOL`` of ``PATH`` in ``UPSTREAM``;
  ``@SHA`` pins the upstream commit the port reflects.
* ``portq: not-carried UPSTREAM:PATH::SYMBOL[PARAM] -- reason`` — the tree
  deliberately does not carry ``SYMBOL`` (or only its ``PARAM`` feature).
* the free-form style of C++ trees, possibly wrapped over two comment lines:
  ``Ported 1:1 from vllm/csrc/...:992-1064 (`vllm::gather_and_maybe_dequant_cache`)``
  — the first path component names the upstream.

``SYMBOL`` may be bare (``gather_and_maybe_dequant_cache``: every upstream
definition with that name in that file) or qualified (``vllm::gather...``,
``Class.method``: only that one).

This module only reads comment text from a parsed file and says which
definition each anchor belongs to. It does not walk the tree on disk (that is
``portq.tree.tree_index``) and does not decide verdicts.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from portq.language.signatures import is_docstring
from portq.language.symbols import SymbolTable

PORTS = "ports"
NOT_CARRIED = "not-carried"

# One name of a qualified symbol: an identifier (a destructor's ``~`` included)
# with the template arguments of an explicit specialisation (``Vec<half, 2>``,
# one level of nesting), an operator (``operator()``, ``operator[]``,
# ``operator+=``), or an anonymous namespace (``<anonymous>``), as the symbol
# table names C++ definitions.
_NAME = (r"(?:<anonymous>|operator\s*(?:\(\)|\[\]|[-+*/%^&|~!=<>]+)"
         r"|~?[A-Za-z_]\w*(?:<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>)?)")
_REFERENCE = (r"(?P<upstream>[A-Za-z0-9_.-]+):(?P<path>[^\s:][^\s]*?)::"
              r"(?P<symbol>" + _NAME + r"(?:(?:::|\.)" + _NAME + r")*)")
_PORTQ_ANCHOR = re.compile(
    r"portq:\s*(?P<kind>ports|not-carried)\s+" + _REFERENCE
    + r"(?:\[(?P<param>[^\]]+)\])?"
    + r"(?:\s*@\s*(?P<pin>[0-9a-fA-F]{4,40})\b)?"
    + r"(?:\s*--\s*(?P<reason>.*))?"
)
_FREE_FORM = re.compile(
    r"Ported\s+(?:1:1\s+)?from\s+(?P<upstream>[A-Za-z0-9_.-]+)/(?P<path>[^\s:`()]+)"
    r"(?::(?P<first>\d+)(?:-(?P<last>\d+))?)?\s*\(?\s*`(?P<symbol>[A-Za-z_~][\w:.~]*)`",
    re.S,
)
_DECLARED_NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")
_WHOLE_REFERENCE = re.compile(_REFERENCE + r"(?:\[(?P<param>[^\]]+)\])?")


def parse_reference(text: str) -> tuple[str, str, str, str | None] | None:
    """``UPSTREAM:PATH::SYMBOL[PARAM]`` as a comment anchor writes it → ``(upstream, path,
    symbol, param)``; None when ``text`` is not one whole reference."""
    match = _WHOLE_REFERENCE.fullmatch(text.strip())
    if match is None:
        return None
    return match.group("upstream"), match.group("path"), match.group("symbol"), match.group("param")


@dataclass(frozen=True)
class Anchor:
    """One anchor line in the tree."""

    kind: str  # ports | not-carried
    upstream: str
    path: str  # upstream path
    symbol: str  # as written: bare or qualified
    file: str  # in-tree path, relative to the tree root
    line: int
    quote: str
    style: str = "portq"  # portq | free-form
    param: str | None = None  # not-carried [PARAM]
    pin: str | None = None  # @SHA
    reason: str | None = None
    upstream_lines: tuple[int, int] | None = None  # free-form :first-last
    definition: str | None = None  # qualified name of the in-tree definition it belongs to
    definition_line: int | None = None
    declared_name: str | None = None  # a C++ prototype right below it, when no definition is

    @property
    def bare_symbol(self) -> str:
        return re.split(r"::|\.", self.symbol)[-1]

    @property
    def qualified(self) -> bool:
        return self.symbol != self.bare_symbol

    @property
    def reference(self) -> str:
        text = f"{self.upstream}:{self.path}::{self.symbol}"
        if self.param:
            text += f"[{self.param}]"
        return text

    @property
    def cite(self) -> str:
        return f"{self.file}:{self.line}"

    def matches_name(self, name: str, qualified_name: str) -> bool:
        """Does this anchor name the upstream definition ``qualified_name``?"""
        if not self.qualified:
            return name == self.symbol
        wanted = self.symbol.replace(".", "::")
        have = qualified_name.replace(".", "::")
        return have == wanted or have.endswith("::" + wanted)

    def encloses(self, qualified_name: str) -> bool:
        """Does this anchor name a definition that holds ``qualified_name``
        (``Fn`` holds ``Fn.backward``), not the definition itself?"""
        wanted = self.symbol.replace(".", "::")
        have = qualified_name.replace(".", "::")
        return have.startswith(wanted + "::") or ("::" + wanted + "::") in have

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Anchor":
        data = dict(data)
        if data.get("upstream_lines") is not None:
            data["upstream_lines"] = tuple(data["upstream_lines"])
        return cls(**data)


def comment_lines(table: SymbolTable) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and docstring line of a parsed file,
    with comment markers stripped, in line order."""
    if table.tree is None:
        return []
    found: list[tuple[int, str]] = []
    stack = [table.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment" or is_docstring(node):
            first = node.start_point[0] + 1
            text = node.text.decode("utf-8", errors="replace")
            for offset, raw in enumerate(text.splitlines()):
                found.append((first + offset, _strip_marker(raw)))
            continue
        stack.extend(node.children)
    return sorted(found)


def _strip_marker(raw: str) -> str:
    text = raw.strip()
    for marker in ("///", "//", "/*", "#", '"""', "'''", "*"):
        if text.startswith(marker):
            text = text[len(marker):]
            break
    for marker in ("*/", '"""', "'''"):
        if text.endswith(marker):
            text = text[: -len(marker)]
    return text.strip()


def find_anchors(table: SymbolTable, file: str) -> list[Anchor]:
    """Every anchor of one parsed in-tree file, attached to its definition."""
    lines = comment_lines(table)
    source_lines = table.source.decode("utf-8", errors="replace").splitlines()
    anchors: list[Anchor] = []
    for line, text in lines:
        for match in _PORTQ_ANCHOR.finditer(text):
            anchors.append(
                Anchor(
                    kind=match.group("kind"),
                    upstream=match.group("upstream"),
                    path=match.group("path"),
                    symbol=match.group("symbol"),
                    file=file,
                    line=line,
                    quote=_quote(source_lines, line),
                    param=match.group("param"),
                    pin=match.group("pin"),
                    reason=(match.group("reason") or "").strip() or None,
                )
            )
    anchors.extend(_free_form(lines, file, source_lines))
    return [_attach(anchor, table, source_lines) for anchor in anchors]


def _free_form(lines: list[tuple[int, str]], file: str, source_lines: list[str]) -> Iterable[Anchor]:
    """Free-form ``Ported ... from upstream/path:a-b (`ns::symbol`)``, which
    may wrap onto the next comment line."""
    for index, (line, text) in enumerate(lines):
        if "Ported" not in text:
            continue
        joined = text
        if index + 1 < len(lines) and lines[index + 1][0] == line + 1:
            joined = text + " " + lines[index + 1][1]
        match = _FREE_FORM.search(joined)
        if not match:
            continue
        first, last = match.group("first"), match.group("last")
        span = (int(first), int(last or first)) if first else None
        yield Anchor(
            kind=PORTS,
            upstream=match.group("upstream"),
            path=match.group("path"),
            # The free form names the kernel; its host wrapper shares the bare
            # name, so the anchor covers every definition with that name.
            symbol=re.split(r"::|\.", match.group("symbol"))[-1],
            file=file,
            line=line,
            quote=_quote(source_lines, line),
            style="free-form",
            upstream_lines=span,
        )


def _quote(source_lines: list[str], line: int) -> str:
    return source_lines[line - 1].strip() if 1 <= line <= len(source_lines) else ""


def _attach(anchor: Anchor, table: SymbolTable, source_lines: list[str]) -> Anchor:
    """The definition directly below the anchor's comment block, else the
    innermost definition containing it, else none (a module-level anchor)."""
    below = _next_code_line(anchor.line, source_lines)
    if below is not None:
        starting = [d for d in table.definitions if d.start_line == below]
        if starting:
            definition = min(starting, key=lambda d: d.span)
            return _with_definition(anchor, definition)
    inside = table.enclosing(anchor.line)
    if inside is not None:
        return _with_definition(anchor, inside)
    if below is not None and table.language == "cpp":
        match = _DECLARED_NAME.search(source_lines[below - 1])
        if match:
            return Anchor(**{**asdict(anchor), "declared_name": match.group(1)})
    return anchor


def _with_definition(anchor: Anchor, definition) -> Anchor:
    return Anchor(**{**asdict(anchor), "definition": definition.qualified_name,
                     "definition_line": definition.start_line})


def _next_code_line(line: int, source_lines: list[str]) -> int | None:
    """The first line after ``line`` that is not a comment, if no blank line comes first."""
    in_block = False
    for number in range(line + 1, len(source_lines) + 1):
        text = source_lines[number - 1].strip()
        if in_block:
            if "*/" in text:
                in_block = False
            continue
        if not text:
            return None  # a blank line ends "directly above"
        if text.startswith(("#", "//", "*")):
            continue
        if text.startswith("/*"):
            in_block = "*/" not in text
            continue
        return number
    return None
