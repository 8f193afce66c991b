"""The kernel matrix: which rows own which upstream paths and symbols.

``matrix/kernel-matrix.toml`` is a list of ``[[row]]`` tables (DESIGN §4)::

    [[row]]
    id       = "KERNEL-KV-CACHE"          # required, unique
    title    = "Paged KV-cache kernels"
    upstream = "vllm"                     # required: an upstream of portq.toml
    paths    = ["csrc/cache_kernels.cu"]  # globs over upstream paths
    exclude  = ["csrc/**/test_*"]         # checked first: an excluded path is never claimed
    symbols  = ["concat_and_cache_mla"]   # definition names, any path (globs allowed)
    tree     = ["kernels/kv_cache/"]      # where the port lives in the tree
    tests    = ["tests/kernels/kv_cache/"]

Ownership follows the Linux MAINTAINERS file rather than CODEOWNERS: every
row that claims a change is listed, not only the last match. Excludes are
checked first; a row claims a change by path glob or by the name of a
definition it touches; a row claiming by symbol is named before rows claiming
by path only (it is the *primary* row), matrix order breaks ties.

Globs: ``*`` and ``?`` stay inside one path component, ``**`` spans any number
of components, ``[...]`` is a character class (``[!...]`` its complement), and
a pattern ending in ``/`` owns everything below that directory. A pattern that
is not a glob (``..`` or ``.`` components, ``***``, an unclosed ``[``, a range
written backwards) is refused where it is written.

This module parses and answers ownership questions; it does not read git or
the tree. Errors name the file, the line and what was expected.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from portq.core.config import tomllib  # tomli on Python 3.10
from portq.core import toml_input
from portq.core.errors import MatrixError

ROW_KEYS = ("id", "title", "upstream", "paths", "exclude", "symbols", "tree", "tests")
"""The keys of a row, in the order they are written."""

_LIST_KEYS = ("paths", "exclude", "symbols", "tree", "tests")
_ROW_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_ROW_HEADER = re.compile(r"^\s*\[\[\s*row\s*\]\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


@lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a matrix glob to a regex over POSIX paths.

    Paths are data (a commit may add ``a\\nb.cu``), so ``**`` and a trailing
    ``/`` span newlines too. A pattern that is not a glob raises MatrixError.
    """
    problem = glob_problem(pattern)
    if problem:
        raise MatrixError(f"glob {pattern!r}: {problem}")
    if pattern.endswith("/"):
        return re.compile(_glob_body(pattern.rstrip("/")) + r"/.*\Z", re.DOTALL)
    return re.compile(_glob_body(pattern) + r"\Z", re.DOTALL)


def glob_problem(pattern: str) -> str | None:
    """What makes ``pattern`` unusable as a matrix glob, or None."""
    if not pattern:
        return "empty pattern"
    if pattern.startswith("/"):
        return "must be relative to the upstream root (no leading '/')"
    components = pattern[:-1].split("/") if pattern.endswith("/") else pattern.split("/")
    for component in components:
        if component == "":
            return "empty path component ('//'): expected one '/' between components"
        if component == "..":
            return "'..' would reach outside the upstream root: expected a path inside it"
        if component == ".":
            return "a '.' component names no directory: write the path without it"
        if "***" in component:
            return "'***' is not a glob: expected '*' within a component or '**' across components"
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            end = _class_end(pattern, i)
            if end < 0:
                return "unclosed '[' (write '[[]' for a literal '[')"
            problem = _class_problem(_class_body(pattern, i, end))
            if problem:
                return problem
            i = end + 1
        else:
            i += 1
    return None


def _class_end(pattern: str, start: int) -> int:
    """The index of the ``]`` closing the class that opens at ``start``, or -1."""
    first = start + 1
    if pattern[first:first + 1] == "!":
        first += 1
    if pattern[first:first + 1] == "]":  # a leading ']' is a member, as in fnmatch
        first += 1
    return pattern.find("]", first)


def _class_body(pattern: str, start: int, end: int) -> tuple[bool, str]:
    body = pattern[start + 1:end]
    return (True, body[1:]) if body.startswith("!") else (False, body)


def _class_items(body: str) -> Iterable[tuple[str, str]]:
    """The members of a class body as (first, last) character ranges."""
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            yield body[j], body[j + 2]
            j += 3
        else:
            yield body[j], body[j]
            j += 1


def _class_problem(negated_body: tuple[bool, str]) -> str | None:
    _, body = negated_body
    if not body:
        return "empty character class '[]'"
    for first, last in _class_items(body):
        if first > last:
            return f"bad character range {first}-{last} in '[...]': expected the lower character first"
    return None


def _class_regex(negated_body: tuple[bool, str]) -> str:
    negated, body = negated_body
    members = "".join(
        re.escape(first) if first == last else f"{re.escape(first)}-{re.escape(last)}"
        for first, last in _class_items(body)
    )
    # A class matches one character of one component, never the '/' between them.
    return f"[^/{members}]" if negated else f"(?!/)[{members}]"


def _glob_body(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif char == "*":
            out.append(r"[^/]*")
            i += 1
        elif char == "?":
            out.append(r"[^/]")
            i += 1
        elif char == "[":
            end = _class_end(pattern, i)
            out.append(_class_regex(_class_body(pattern, i, end)))
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def path_matches(pattern: str, path: str) -> bool:
    return glob_regex(pattern).match(path) is not None


@dataclass(frozen=True)
class Row:
    """One matrix row. ``line`` is the 1-based line of its ``[[row]]`` header."""

    id: str
    title: str
    upstream: str
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    tree: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    line: int = 0

    def excludes(self, path: str) -> bool:
        return any(path_matches(pattern, path) for pattern in self.exclude)

    def claims_path(self, path: str) -> bool:
        """Whether a path glob claims ``path`` (excludes already applied)."""
        return not self.excludes(path) and any(path_matches(p, path) for p in self.paths)

    def claims_symbol(self, names: Iterable[str]) -> bool:
        """Whether one of ``names`` (definition names) is a symbol of this row."""
        for name in names:
            for pattern in self.symbols:
                if name == pattern or (_has_glob(pattern) and fnmatch.fnmatchcase(name, pattern)):
                    return True
        return False


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


@dataclass
class Matrix:
    """The rows of one matrix file, in file order."""

    rows: list[Row]
    path: Path | None = None
    _by_id: dict[str, Row] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {row.id: row for row in self.rows}

    @classmethod
    def load(cls, path: Path | str) -> "Matrix":
        path = Path(path)
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            raise MatrixError(f"{path}:{line}: not UTF-8 (byte {data[error.start]:#04x}): save the matrix as UTF-8") from None
        except FileNotFoundError:
            raise MatrixError(f"{path}: matrix file does not exist (pass --matrix PATH or set matrix in portq.toml)") from None
        except OSError as error:
            raise MatrixError(f"{path}: cannot read matrix: {error.strerror or error}") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: Path | str = "<matrix>") -> "Matrix":
        path = Path(path)
        try:
            data = toml_input.loads(text)
        except tomllib.TOMLDecodeError as error:
            match = re.search(r"\(at line (\d+)", str(error))
            message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
            raise MatrixError(f"{path}:{match.group(1) if match else '?'}: invalid TOML: {message}") from None
        lines = text.splitlines()
        unknown = sorted(set(data) - {"row"})
        if unknown:
            raise MatrixError(
                f"{path}:{_key_line(lines, 0, len(lines), unknown[0]) or 1}: unknown top-level key "
                f"'{unknown[0]}' (expected [[row]] tables)"
            )
        raw_rows = data.get("row", [])
        if not isinstance(raw_rows, list) or not all(isinstance(r, dict) for r in raw_rows):
            raise MatrixError(f"{path}:{_key_line(lines, 0, len(lines), 'row') or 1}: 'row' must be written as [[row]] tables")
        if not raw_rows:
            raise MatrixError(f"{path}:1: no [[row]] tables: expected at least one row")
        starts = [i for i, line in enumerate(lines) if _ROW_HEADER.match(line)]
        if len(starts) != len(raw_rows):  # rows written inline: no per-row lines to cite
            starts = [0] * len(raw_rows)
        rows: list[Row] = []
        seen: dict[str, int] = {}
        for index, raw in enumerate(raw_rows):
            start = starts[index]
            end = _section_end(lines, start)
            rows.append(_parse_row(raw, path, lines, start, end, seen))
        return cls(rows, path)

    # --- questions --------------------------------------------------------

    def row(self, row_id: str) -> Row:
        return self._by_id[row_id]

    def upstreams(self) -> list[str]:
        """Upstream names the rows use, in order of first use."""
        return list(dict.fromkeys(row.upstream for row in self.rows))

    def rows_for(self, upstream: str) -> list[Row]:
        return [row for row in self.rows if row.upstream == upstream]

    def symbol_names(self, upstream: str) -> list[str]:
        """Every symbol pattern rows of ``upstream`` claim."""
        return list(dict.fromkeys(s for row in self.rows_for(upstream) for s in row.symbols))

    def claimants(
        self, upstream: str, paths: str | Iterable[str], symbol_names: Iterable[str] = ()
    ) -> tuple[list[str], list[str]]:
        """``(rows claiming by symbol, rows claiming by path only)``, matrix order.

        ``paths`` is one path or several (the old and new path of a rename);
        a row whose exclude matches a path claims nothing there, not even by
        symbol.
        """
        path_list = [paths] if isinstance(paths, str) else [p for p in paths if p]
        names = tuple(symbol_names)
        by_symbol: list[str] = []
        by_path: list[str] = []
        for row in self.rows_for(upstream):
            candidates = [p for p in path_list if not row.excludes(p)]
            if not candidates:
                continue
            if names and row.claims_symbol(names):
                by_symbol.append(row.id)
            elif any(path_matches(glob, p) for glob in row.paths for p in candidates):
                by_path.append(row.id)
        return by_symbol, by_path

    def claims(self, upstream: str, paths: str | Iterable[str], symbol_names: Iterable[str] = ()) -> list[str]:
        """Row ids claiming a change to ``paths`` touching ``symbol_names``, primary first.

        Rows claiming by symbol come first, then rows claiming by path only,
        each group in matrix order.
        """
        by_symbol, by_path = self.claimants(upstream, paths, symbol_names)
        return by_symbol + by_path

    def order(self, by_symbol: Iterable[str], by_path: Iterable[str]) -> list[str]:
        """Merge claimants of several changes: symbol claimants first, matrix order."""
        symbol_set, path_set = set(by_symbol), set(by_path)
        ids = [row.id for row in self.rows]
        return [i for i in ids if i in symbol_set] + [i for i in ids if i in path_set and i not in symbol_set]

    def check_upstreams(self, known: Iterable[str]) -> None:
        """Reject a row whose upstream is not among ``known``."""
        known_set = set(known)
        for row in self.rows:
            if row.upstream not in known_set:
                listed = ", ".join(sorted(known_set)) or "none"
                raise MatrixError(
                    f"{self.path}:{row.line}: row {row.id} names upstream '{row.upstream}', "
                    f"which is not configured (configured: {listed}); add [upstream.{row.upstream}] "
                    f"to portq.toml or pass --upstream {row.upstream}=PATH"
                )

    def fingerprint(self) -> str:
        """A stable digest of the rows (for the ledger's wave record)."""
        import hashlib
        import json

        canonical = json.dumps(
            [[getattr(row, key) for key in ROW_KEYS] for row in self.rows], sort_keys=True
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _section_end(lines: Sequence[str], start: int) -> int:
    for i in range(start + 1, len(lines)):
        if _ANY_HEADER.match(lines[i]) and not lines[i].lstrip().startswith("[\""):
            return i
    return len(lines)


def _key_line(lines: Sequence[str], start: int, end: int, key: str) -> int | None:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for i in range(start, end):
        if pattern.match(lines[i]):
            return i + 1
    return None


def outside_the_tree(place: str) -> bool:
    """Whether a ``tree``/``tests`` entry names something outside the tree's root (absolute, ``~`` or ``..``)."""
    posix = place.replace("\\", "/")
    return posix.startswith(("/", "~")) or (len(posix) > 1 and posix[1] == ":") or ".." in posix.split("/")


def _parse_row(raw: dict, path: Path, lines, start: int, end: int, seen: dict[str, int]) -> Row:
    row_line = start + 1

    def fail(key: str | None, expected: str) -> MatrixError:
        line = (_key_line(lines, start, end, key) if key else None) or row_line
        label = raw.get("id") if isinstance(raw.get("id"), str) else None
        where = f"row {label}" if label else "row"
        return MatrixError(f"{path}:{line}: {where}: {expected}")

    unknown = [key for key in raw if key not in ROW_KEYS]
    if unknown:
        raise fail(unknown[0], f"unknown key '{unknown[0]}' (expected one of: {', '.join(ROW_KEYS)})")
    for key in ("id", "upstream"):
        if key not in raw:
            raise fail(None, f"missing '{key}' (expected {key} = \"...\")")
    for key in ("id", "title", "upstream"):
        if key in raw and (not isinstance(raw[key], str) or (key != "title" and not raw[key])):
            raise fail(key, f"'{key}' must be a non-empty string, not {raw[key]!r}")
    if not _ROW_ID.match(raw["id"]):
        raise fail("id", f"id {raw['id']!r} must start with a letter and use letters, digits, '-', '_' or '.'")
    if raw["id"] in seen:
        raise fail("id", f"duplicate id {raw['id']} (first defined at line {seen[raw['id']]})")
    seen[raw["id"]] = row_line
    values: dict[str, tuple[str, ...]] = {}
    for key in _LIST_KEYS:
        value = raw.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise fail(key, f"'{key}' must be a list of non-empty strings, not {value!r}")
        if key in ("paths", "exclude"):
            for pattern in value:
                problem = glob_problem(pattern)
                if problem:
                    raise fail(key, f"glob {pattern!r}: {problem}")
        if key in ("tree", "tests"):
            for place in value:
                if outside_the_tree(place):
                    raise fail(key, f"{key} {place!r} is outside the repository: expected a path relative to the "
                                    "tree's root, without '..'")
        values[key] = tuple(value)
    if not values["paths"] and not values["symbols"]:
        raise fail(None, "claims nothing: expected 'paths' or 'symbols'")
    return Row(
        id=raw["id"],
        title=raw.get("title", ""),
        upstream=raw["upstream"],
        line=row_line,
        **values,
    )
