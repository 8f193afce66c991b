"""Citations: every ``path:line`` a report prints holds the text it quotes.

A reviewer checks a report by opening the cited line, so a citation whose
line number and quote disagree (a definition cited at its decorator, a
parameter quoted under the ``def`` line) costs more trust than it is worth.
Evidence records carry a line and a quote taken at scan time; ``Sources``
holds the files a report cites (the in-tree files and the two upstream sides
of the commit) and ``Sources.cite`` turns a record's location into a
``Citation`` that is true of those files: the quoted line where it sits, the
nearest line holding the quote when the recorded number is off (in another
file of the same side when the recorded file holds it nowhere), a range for a
quote of several statements, or, when no file holds the quote, the path alone
with the quote marked as not found: never a line number that holds other text.

``launch_geometry`` finds the lines that set a launch's grid and block (the
``dim3 grid(num_tokens)`` / ``grid = (num_tokens,)`` a launch-geometry gap is
about), by reading the definition's source above the launch.

This module reads only what it is handed; it opens no files or repositories
and decides nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

NEAR_LINES = 80
"""How far from the recorded line a quote is looked for before the line's own text is quoted."""

TREE = "tree"
OLD = "upstream-old"
NEW = "upstream-new"


@dataclass(frozen=True)
class Citation:
    """A checked place: side, path, first and last line, and the quoted lines."""

    side: str
    path: str
    line: int
    end_line: int | None = None
    quote: tuple[str, ...] = ()
    checked: bool = True  # False when the file could not be read
    found: bool = True  # False when the file was read and holds the quote nowhere: cited by path only

    @property
    def place(self) -> str:
        if not self.found:
            return self.path
        if self.end_line and self.end_line != self.line:
            return f"{self.path}:{self.line}-{self.end_line}"
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict:
        return {"side": self.side, "path": self.path, "line": self.line if self.found else None,
                "end_line": self.end_line if self.found else None, "place": self.place,
                "quote": list(self.quote), "checked": self.checked, "found": self.found}


@dataclass
class Sources:
    """The text of every file a report may cite, by side and path.

    ``read(side, path)`` returns the file's text or None; results are cached.
    Every citation made is kept in ``made`` (in order, once), so a report can
    list them and a test can check each against the files.
    """

    read: Callable[[str, str], str | None]
    paths: Callable[[str], Iterable[str]] = lambda side: ()  # every readable path of a side, for a quote cited under the wrong file
    _lines: dict[tuple[str, str], list[str] | None] = field(default_factory=dict)
    made: list[Citation] = field(default_factory=list)

    def lines(self, side: str, path: str) -> list[str] | None:
        key = (side, path)
        if key not in self._lines:
            text = self.read(side, path) if path else None
            self._lines[key] = text.splitlines() if text is not None else None
        return self._lines[key]

    def _keep(self, citation: Citation) -> Citation:
        if citation not in self.made:
            self.made.append(citation)
        return citation

    def cite(self, side: str | None, path: str | None, line: int | None, quote: str | None = None,
             name: str | None = None) -> Citation | None:
        """The true citation of a recorded location, or None when it names no line.

        ``name``, for a definition, cites the line that declares it (the
        ``def``/signature line at or after the recorded start, past
        decorators and comments) rather than a quoted parameter.
        """
        if not side or not path or not line:
            return None
        lines = self.lines(side, path)
        if lines is None:
            return self._keep(Citation(side, path, line, None, (quote.strip(),) if quote else (), checked=False))
        if name:
            found = _declaring_line(lines, line, name)
            if found is not None:
                return self._keep(Citation(side, path, found, None, (lines[found - 1].strip(),)))
        wanted = (quote or "").strip()
        if not wanted:
            if not 1 <= line <= len(lines):
                return None
            return self._keep(Citation(side, path, line, None, (lines[line - 1].strip(),)))
        # Several quoted lines are joined by "; ", but one line of C++ can hold
        # "; " itself: the whole quote as one line is tried first.
        readings = [[wanted]] + ([[p.strip() for p in wanted.split("; ")]] if "; " in wanted else [])
        for candidate in [path, *(p for p in self.paths(side) if p != path)]:
            for parts in readings:
                found = self._locate(side, candidate, line if candidate == path else 1, parts)
                if found is not None:
                    return found
        return self._keep(Citation(side, path, line, None, (wanted,), found=False))

    def _locate(self, side: str, path: str, line: int, parts: list[str]) -> Citation | None:
        """The quote's lines in one file (nearest to ``line``), as one citation, or None."""
        lines = self.lines(side, path)
        if lines is None:
            return None
        numbers = []
        for part in parts:
            number = _nearest(lines, line, part, len(lines))
            if number is None:
                return None
            numbers.append(number)
        if len(numbers) == 1:
            return self._keep(Citation(side, path, numbers[0], None, (parts[0],)))
        return self.cite_range(side, path, numbers)

    def cite_range(self, side: str, path: str, numbers: Iterable[int]) -> Citation | None:
        """One citation ``path:a-b`` quoting the given lines (in order) of one file."""
        lines = self.lines(side, path)
        numbers = sorted(set(n for n in numbers if lines is not None and 1 <= n <= len(lines)))
        if not numbers:
            return None
        quote = tuple(lines[n - 1].strip() for n in numbers)
        return self._keep(Citation(side, path, numbers[0], numbers[-1] if len(numbers) > 1 else None, quote))

    def launch_geometry(self, side: str, path: str, launch_line: int, start_line: int | None = None) -> Citation | None:
        """The lines that set a launch's grid and block, with the launch's own first line.

        The launch text is read from ``launch_line`` to the end of its
        configuration (``>>>`` in CUDA, ``](`` in Triton); the identifiers in
        that configuration are followed back to their declarations above the
        launch (inside the definition that starts at ``start_line``), two
        levels deep, so ``dim3 block(thread_block_size)`` brings
        ``constexpr int thread_block_size = 64;`` along.
        """
        lines = self.lines(side, path)
        if lines is None or not 1 <= launch_line <= len(lines):
            return None
        text, last = "", launch_line
        for number in range(launch_line, min(len(lines), launch_line + 8) + 1):
            text += lines[number - 1] + "\n"
            last = number
            if ">>>" in text or "](" in text:
                break
        config = re.search(r"<<<(.*?)>>>", text, re.S) or re.search(r"\[(.*?)\]\s*\(", text, re.S)
        if config is None:
            return None
        # the grid and the block (CUDA's first two configuration terms; Triton's grid)
        terms = [t.strip() for t in config.group(1).split(",")][:2]
        wanted = {t for t in terms if re.fullmatch(r"[A-Za-z_]\w*", t)}
        top = max(1, start_line or launch_line - NEAR_LINES)
        chosen: set[int] = set()
        for level in range(2):
            found = set()
            for number in range(launch_line - 1, top - 1, -1):
                line = lines[number - 1]
                for identifier in list(wanted):
                    if _declares(line, identifier) and (level == 0 or _is_setting(line)):
                        found.add(number)
                        wanted.discard(identifier)
            chosen |= found
            # one level further only for a size named by one identifier: dim3 block(thread_block_size)
            wanted = {r.strip() for n in found for r in [_right_side(lines[n - 1])]
                      if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", r)} - _KEYWORDS
        if not chosen:
            return None
        launch = [n for n in range(launch_line, last + 1) if re.search(r"<<<|\[.*\]\s*\(", lines[n - 1])] or [launch_line]
        return self.cite_range(side, path, [*chosen, launch[0]])


_KEYWORDS = frozenset({"const", "constexpr", "int", "int32_t", "int64_t", "unsigned", "auto", "static_cast",
                       "dim3", "static", "size_t", "std", "min", "max", "triton", "cdiv"})


def _declares(line: str, identifier: str) -> bool:
    """Whether ``line`` declares or assigns ``identifier`` (``x = ...``, ``T x = ...``, ``dim3 x(...)``)."""
    code = line.split("//")[0].split("#")[0]
    pattern = rf"(^|[\s,(*&])({re.escape(identifier)})\s*(=(?!=)|\(|\{{)"
    match = re.search(pattern, code)
    if match is None:
        return False
    before = code[: match.start(2)].strip()
    # a call ``f(x)`` or a use ``y = x(...)`` is not a declaration of x
    return before == "" or bool(re.fullmatch(r"[\w:<>,\s*&]*", before)) and "=" not in before


def _is_setting(line: str) -> bool:
    """A declaration that sets a size from literals (``= 64``, ``? 128 : 256``), not from a call."""
    right = _right_side(line)
    return bool(re.search(r"\b\d+\b", right)) and not re.search(r"[A-Za-z_]\w*\s*\(", right)


def _right_side(line: str) -> str:
    code = line.split("//")[0].split("#")[0]
    if "=" in code:
        return code.split("=", 1)[1]
    match = re.search(r"\((.*)\)", code)
    return match.group(1) if match else ""


def _nearest(lines: list[str], line: int, wanted: str, reach: int = NEAR_LINES) -> int | None:
    """The line nearest ``line`` (after it first, at equal distance) whose text is ``wanted``."""
    for distance in range(0, reach + 1):
        for number in (line + distance, line - distance):
            if 1 <= number <= len(lines) and lines[number - 1].strip() == wanted:
                return number
    return None


def _declaring_line(lines: list[str], line: int, name: str) -> int | None:
    """The first line at or after ``line`` that declares ``name`` (within a few lines)."""
    bare = re.split(r"::|\.", name)[-1]
    pattern = re.compile(rf"\b{re.escape(bare)}\b")
    for number in range(max(1, line), min(len(lines), line + 12) + 1):
        text = lines[number - 1].strip()
        if pattern.search(text) and not text.startswith(("#", "//", "@")):
            return number
    return None
