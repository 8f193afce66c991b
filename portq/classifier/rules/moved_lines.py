"""Moved-lines rule: C/C++ lines outside definitions that a commit carries, unchanged, into another file (DESIGN §5).

When upstream splits a file (op schemas into a ``*_defs.cpp``, host
declarations into a new header), the definitions move and ``moved-definition``
follows them by identity; the lines outside definitions that go with them
(``#define DEFAULT_PAGE_SIZE 64`` beside the schemas that read it, include
lines) are left behind as a top-level change of the old file:

* ``moved-toplevel-lines``: a C/C++ file's changed lines outside definitions,
  each blank, a comment, an ``#include`` line (``cosmetic-includes``), or a
  line that the same commit adds to another C/C++ file, text for text once
  surrounding whitespace is set aside (for a removed line), or removes from
  another one (for an added line), where no macro a moved-away ``#define``
  names is still named by the file it left: the lines moved with the code
  that reads them, so NOT_APPLICABLE/``cosmetic``. A line that changed on the
  way, one that moved within the file (its order may matter), or a macro the
  old file still reads stays flagged.

Read from the diff's text, so a file tree-sitter cannot parse (schemas built
by string-pasting macros) is read too. ``MovedLineRules`` holds the method
of the verdict table (``portq.classifier.verdicts.SymbolClassifier``); it must
not import the verdict table or anything after it, and a rule never names a
corpus symbol, path or commit.
"""

from __future__ import annotations

import re
from collections import Counter

from portq.classifier.rules import Rule
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.symbols import language_for_path
from portq.upstream.hunks import ensure_hunks

RULES = (
    Rule("moved-toplevel-lines", ("NOT_APPLICABLE",),
         "A C/C++ file's changed lines outside definitions, each blank, a comment, an `#include` line, or a line "
         "the same commit adds unchanged to another C/C++ file (a removed line) or removes unchanged from one (an "
         "added line), no macro a moved-away `#define` names still named by the file it left, moved with the "
         "code that reads them: cosmetic. A line changed on the way, one moved within its file, or a macro the "
         "old file still reads stays flagged.",
         "kv.cpp:\n-#define PAGE 64\n-TORCH_LIBRARY_FRAGMENT(ns, m) { m.def(\"f(int p=\" STRING(PAGE) \")\"); }\n"
         "kv_defs.cpp:\n+#define PAGE 64\n+TORCH_LIBRARY_FRAGMENT(ns, m) { m.def(\"f(int p=\" STRING(PAGE) \")\"); }",
         "classifier.rules.moved_lines.MovedLineRules._moved_toplevel_lines"),
)

_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)")
_INCLUDE = re.compile(r"^\s*#\s*include\b")


def _plain(text: str) -> bool:
    """A line with nothing but whitespace, a comment or an include."""
    stripped = text.strip()
    return not stripped or stripped.startswith(("//", "/*", "* ", "*/")) or stripped == "*" \
        or bool(_INCLUDE.match(stripped))


class MovedLineRules:
    """Verdict-table method applying ``moved-toplevel-lines`` (mixed into ``SymbolClassifier``)."""

    def _moved_toplevel_lines(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``moved-toplevel-lines`` (see the module); None otherwise."""
        if language_for_path(symbol.path) != "cpp" or symbol.name != "<toplevel>" or symbol.change != "modified":
            return None
        found = self._toplevel_changes(entry, symbol)
        if found is None:
            return None
        change, tables, changed = found
        elsewhere = {"old": Counter(), "new": Counter()}  # lines other C/C++ files of the commit remove / add
        for other in entry.commit.changes:
            if other is change or language_for_path(other.new_path or other.old_path or "") != "cpp":
                continue
            try:
                hunks = ensure_hunks(other)
            except ValueError:
                continue
            for hunk in hunks:
                elsewhere["old"].update(t.strip() for t in hunk.removed_text if t.strip())
                elsewhere["new"].update(t.strip() for t in hunk.added_text if t.strip())
        moved: list[str] = []
        for side, _, text in changed:
            if _plain(text):
                continue
            counterpart = elsewhere["new" if side == "old" else "old"]
            if counterpart[text.strip()] <= 0:
                return None
            counterpart[text.strip()] -= 1
            moved.append(text.strip())
        if not moved:
            return None
        left = tables[1].source.decode("utf-8", errors="replace")
        for text in moved:
            macro = _DEFINE.match(text)
            if macro and re.search(rf"\b{re.escape(macro.group(1))}\b", left):
                return None  # the file it left still reads the macro
        return self._base("moved-toplevel-lines", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"the changed lines outside definitions are include lines, blank lines and {len(moved)} "
                          "line(s) this commit carries unchanged to or from another file "
                          f"({moved[0][:60]}{' …' if len(moved) > 1 else ''}), no moved macro still read here: they "
                          "moved with the code that reads them, so cosmetic",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=moved[0][:80],
                                    message=f"{len(moved)} top-level line(s) moved unchanged between files")])
