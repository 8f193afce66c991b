"""Namespace wraps: a C++ file whose only change outside definitions encloses everything it defines in namespaces (DESIGN §5, form without meaning).

Upstream moves a library under a namespace (``namespace lib { namespace cuda {``
before the first definition, the closing braces after the last), and moves a
namespace-scope declaration it used (``const unsigned int MASK = 0xffffffff;``)
into a header the file now includes. Every definition keeps its body; what
the port copied runs the same, now reached under an enclosing name; the
moved declaration holds the same value where the file reads it. Cosmetic
(``namespace-wrap``).

The code: ``wrap_only`` reads the changed lines handed to it, the new side's
definitions and the text of the headers the new file includes; it reads no
git, decides no verdict and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import posixpath
import re

from portq.classifier.rules import Rule

RULES = (
    Rule("namespace-wrap", ("NOT_APPLICABLE",),
         "Changed C++ lines outside definitions that are only `#include` lines, namespace openings "
         "(`namespace lib {`) added before the file's first definition with as many closing braces added after "
         "its last, and namespace-scope lines removed from the file that a header it includes by a quoted "
         "`#include` holds verbatim after the commit: every definition keeps its body, enclosed whole in the "
         "namespaces, and a moved declaration keeps its value. Cosmetic. A namespace closed before the last "
         "definition or opened after the first, a moved line whose text changes, or a header the file does not "
         "include stays with `toplevel-use`.",
         "-const unsigned int MASK = 0xffffffff;\n+#include \"common.h\"\n+namespace lib {\n ... every "
         "definition ...\n+}  // namespace lib   (common.h: +const unsigned int MASK = 0xffffffff;)",
         "classifier.rules.namespace_wrap.wrap_only, classifier.rules.attribution.AttributionRules"),
)

_OPEN = re.compile(r"\s*(?:inline\s+)?namespace\s+[A-Za-z_][\w:]*\s*\{\s*(?://.*)?")
_CLOSE = re.compile(r"\s*\}\s*(?://.*)?")
_QUOTED_INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def included_headers(path: str, source: str) -> list[str]:
    """The paths, relative to the repository, of the headers ``source`` (at ``path``) includes with quotes,
    resolved against the file's own directory."""
    base = posixpath.dirname(path)
    return [posixpath.normpath(posixpath.join(base, m.group(1)))
            for m in (_QUOTED_INCLUDE.match(line) for line in source.splitlines()) if m]


def function_spans(root) -> list[tuple[int, int]]:
    """The (first, last) 1-based lines of every C++ function definition under ``root``, at any depth
    (inside namespaces; explicit specialisations too, which the symbol reader does not extract)."""
    spans, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            spans.append((node.start_point[0] + 1, node.end_point[0] + 1))
            continue
        stack.extend(node.named_children)
    return spans


def wrap_only(code, is_include, first_line: int | None, last_line: int | None, header_lines: set[str]) -> bool:
    """Rule ``namespace-wrap``: whether every changed code line ``(side, line, text)`` of ``code`` is an
    ``#include``, a namespace opening added before ``first_line`` (the new side's first definition), a closing
    brace added after ``last_line`` (its last), as many closings as openings and at least one, or a line
    removed whose text (spacing aside) is one of ``header_lines`` (the lines of the headers the new file
    includes, after the commit)."""
    if first_line is None or last_line is None:
        return False
    opened = closed = 0
    for side, line, text in code:
        if is_include(text):
            continue
        if side == "new" and _OPEN.fullmatch(text) and line < first_line:
            opened += 1
        elif side == "new" and _CLOSE.fullmatch(text) and line > last_line:
            closed += 1
        elif side == "old" and " ".join(text.split()) in header_lines:
            continue
        else:
            return False
    return opened > 0 and opened == closed
