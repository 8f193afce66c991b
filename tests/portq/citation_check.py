"""Check a rendered report's citations against the files they cite.

``verify_report(markdown, context, read, matrix_text)`` asserts that every
citation of the report's context holds its quoted text in the file it names
(``read(side, path)`` returns the in-tree file or the upstream blob of that
side), that every ``path:line`` printed in the markdown is one of those
checked citations, printed with its own quote, and that the matrix lines a
report cites are the ``[[row]]`` line of the row it names. Returns the
number of citations printed in the markdown.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from portq import reports

PRINTED = re.compile(r"`(?P<path>[^`\s:]+):(?P<line>\d+)(?:-(?P<end>\d+))?`")


def verify_report(markdown: str, context: dict, read, matrix_text: str | None = None) -> int:
    by_place = {}
    for citation in context["citations"]:
        text = read(citation["side"], citation["path"])
        assert text is not None, f"{citation['place']} ({citation['side']}) names a file that does not exist"
        assert citation["checked"], f"{citation['place']} was not checked against its file"
        lines = [line.strip() for line in text.splitlines()]
        first, last = citation["line"], citation["end_line"] or citation["line"]
        quote = citation["quote"]
        window = lines[first - 1:last]
        if quote:
            assert window[0] == quote[0], f"{citation['place']} holds {window[0]!r}, the report quotes {quote[0]!r}"
            assert window[-1] == quote[-1], f"{citation['place']} ends at {window[-1]!r}, the report quotes {quote[-1]!r}"
            assert all(q in window for q in quote), f"{citation['place']}: a quoted line is outside the range"
        by_place.setdefault(citation["place"], []).append(citation)
    printed = 0
    for match in PRINTED.finditer(markdown):
        place = match.group(0).strip("`")
        if context.get("matrix_path") and match["path"] == context["matrix_path"]:
            assert matrix_text is not None
            matrix_lines = matrix_text.splitlines()
            line = int(match["line"])
            assert matrix_lines[line - 1].strip() == "[[row]]", f"{place} is not a [[row]] line"
            assert any(f'"{r["id"]}"' in matrix_lines[line] for r in context["rows"] if r["line"] == line)
            continue
        assert place in by_place, f"{place} is printed in the report but is not a checked citation"
        assert any(reports.md_cite(c) in markdown for c in by_place[place]), f"{place} is printed without its quote"
        printed += 1
    return printed


def reader(tree: Path, upstream: Path, sha: str):
    """``read(side, path)`` over an in-tree directory and an upstream clone at commit ``sha``."""

    def read(side: str, path: str) -> str | None:
        if side == "tree":
            file = tree / path
            return file.read_text() if file.is_file() else None
        revision = f"{sha}^" if side == "upstream-old" else sha
        done = subprocess.run(["git", "-C", str(upstream), "show", f"{revision}:{path}"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    return read
