"""Ownership and enclosing symbols: one commit → ``model.EntryChanges``.

For each file change of a commit:

1. **Ownership, cheaply.** A change is looked at when a row's path glob
   claims its old or new path, or when the name of a symbol some row claims
   occurs in its diff or in its old/new blob (a substring test; only then is
   anything parsed). Everything else is listed in ``unowned_paths``.
2. **Hunks** are parsed (``portq.hunks``) only for changes looked at.
3. **Symbols.** The old and new blobs are parsed once each (symbol tables are
   cached by blob SHA); the hunk's removed lines map to definitions on the
   old side, its added lines on the new side. A definition on both sides is
   ``modified``, only on the new side ``added``, only on the old ``removed``.
   Hunk lines outside every definition become one ``<toplevel>`` symbol per
   file (kind ``toplevel``); blank lines between definitions are ignored. A file that cannot be parsed (no grammar, over
   the size bound, a syntax error with no definitions, binary, submodule,
   mode-only) becomes one ``<lines>`` symbol (kind ``lines``) whose
   ``fallback`` says why.
4. **Rows.** Each touched symbol is claimed through ``Matrix.claimants``; a
   file reached only through a symbol name keeps only the symbols a row
   claims. A path-owned change stays owned even when it touches no symbol (a
   pure rename, blank lines). The entry's rows list every claimant, symbol
   claimants first.

This module decides nothing about verdicts and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from portq.hunks import ensure_hunks
from portq.matrix import Matrix
from portq.model import Commit, EntryChanges, FileChange, TouchedSymbol
from portq.symbols import Definition, SymbolTable, SymbolTableCache, language_for_path

TOPLEVEL = "<toplevel>"
LINES = "<lines>"
KIND_TOPLEVEL = "toplevel"
KIND_LINES = "lines"

_UNPARSED_REASON = {
    "binary": "binary file: recorded, not parsed",
    "submodule": "submodule bump: recorded, not parsed",
    "mode-only": "file mode change only: no content changed",
}


def _literal(pattern: str) -> str | None:
    """The longest glob-free run of a symbol pattern, for substring tests."""
    runs = [run for run in _split_glob(pattern) if run]
    best = max(runs, key=len, default="")
    return best if len(best) >= 3 else None


def _split_glob(pattern: str) -> list[str]:
    runs, current, depth = [], [], 0
    for char in pattern:
        if char == "[":
            depth += 1
        if depth or char in "*?":
            runs.append("".join(current))
            current = []
        else:
            current.append(char)
        if char == "]" and depth:
            depth -= 1
    runs.append("".join(current))
    return runs


@dataclass
class _Touch:
    """Accumulates the lines of one definition touched on either side."""

    old: Definition | None = None
    new: Definition | None = None
    headers: list[str] | None = None


class ChangeMapper:
    """Maps the commits of one upstream against one matrix."""

    def __init__(
        self,
        matrix: Matrix,
        upstream: str,
        read_blob: Callable[[str], bytes],
        symbol_tables: SymbolTableCache | None = None,
        read_blobs: Callable[[list[str]], dict[str, bytes]] | None = None,
    ) -> None:
        self.matrix = matrix
        self.upstream = upstream
        self.read_blob = read_blob
        self.read_blobs = read_blobs or (lambda shas: {sha: read_blob(sha) for sha in shas})
        self.symbol_tables = symbol_tables or SymbolTableCache()
        self._mentions: dict[str, bool] = {}  # blob SHA -> holds a claimed symbol name
        self._prefetched: dict[str, bytes] = {}  # blobs of the commit being mapped
        patterns = matrix.symbol_names(upstream)
        literals = [_literal(p) for p in patterns]
        # A pattern without a usable literal means every parseable file is a candidate.
        self._match_any_file = any(lit is None for lit in literals)
        self._literals = tuple(lit for lit in literals if lit)

    # --- ownership ----------------------------------------------------------

    def _may_define_claimed_symbol(self, change: FileChange) -> bool | None:
        """Whether a symbol some row claims may be defined in this change.

        None when only the blobs can tell (the diff does not name one).
        """
        if not (self._literals or self._match_any_file) or not change.parsed:
            return False
        if language_for_path(change.path) is None:
            return False
        if self._match_any_file or any(lit in change.patch for lit in self._literals):
            return True
        return None

    def _blob_mentions_claimed_symbol(self, blob: str) -> bool:
        if blob not in self._mentions:
            data = self._blob(blob)
            self._mentions[blob] = any(lit.encode() in data for lit in self._literals)
        return self._mentions[blob]

    def _blob(self, sha: str) -> bytes:
        data = self._prefetched.get(sha)
        return data if data is not None else self.read_blob(sha)

    def _table(self, blob: str | None, path: str | None) -> SymbolTable | None:
        if not blob or not path:
            return None
        return self.symbol_tables.get(blob, path, lambda: self._blob(blob))

    def _plan(self, commit: Commit) -> list[tuple[FileChange, list[str], bool | None]]:
        """Per change: (change, rows claiming its path, may define a claimed symbol)."""
        plans = []
        for change in commit.changes:
            paths = [p for p in (change.old_path, change.new_path) if p]
            _, file_rows = self.matrix.claimants(self.upstream, paths)
            plans.append((change, file_rows, None if file_rows else self._may_define_claimed_symbol(change)))
        return plans

    def map_commits(self, commits, start: int = 1, chunk: int = 32):
        """Map commits in order, reading the blobs of ``chunk`` commits per round trip."""
        pending: list[Commit] = []
        position = start
        for commit in commits:
            pending.append(commit)
            if len(pending) == chunk:
                yield from self._map_chunk(pending, position)
                position += len(pending)
                pending = []
        yield from self._map_chunk(pending, position)

    def _map_chunk(self, commits: list[Commit], position: int):
        plans = [self._plan(commit) for commit in commits]
        self._prefetch([plan for commit_plans in plans for plan in commit_plans])
        try:
            for offset, (commit, commit_plans) in enumerate(zip(commits, plans)):
                yield self._map_planned(position + offset, commit, commit_plans)
        finally:
            self._prefetched = {}

    def _prefetch(self, plans: list[tuple[FileChange, list[str], bool | None]]) -> None:
        """Read every blob these changes' mapping will need in one round trip."""
        wanted: list[str] = []
        for change, file_rows, may_define in plans:
            if not file_rows and may_define is False:
                continue
            if language_for_path(change.path) is None or not change.parsed:
                continue
            for blob, path in ((change.old_blob, change.old_path), (change.new_blob, change.new_path)):
                if not blob:
                    continue
                if (file_rows or may_define) and not self.symbol_tables.has(blob, path):
                    wanted.append(blob)
                elif may_define is None and blob not in self._mentions:
                    wanted.append(blob)
        self._prefetched = self.read_blobs(wanted) if wanted else {}

    # --- mapping ------------------------------------------------------------

    def map_commit(self, position: int, commit: Commit) -> EntryChanges:
        """Map one commit (``map_commits`` maps many with fewer blob round trips)."""
        return next(self._map_chunk([commit], position))

    def _map_planned(self, position: int, commit: Commit, plans) -> EntryChanges:
        owned: list[FileChange] = []
        symbols: list[TouchedSymbol] = []
        unowned: list[str] = []
        by_symbol: set[str] = set()
        by_path: set[str] = set()
        for change, file_rows, may_define in plans:
            paths = [p for p in (change.old_path, change.new_path) if p]
            if may_define is None:
                may_define = any(self._blob_mentions_claimed_symbol(b) for b in (change.old_blob, change.new_blob) if b)
            if not file_rows and not may_define:
                unowned.append(change.path)
                continue
            by_path.update(file_rows)
            touched = []
            for symbol in self._touched_symbols(change):
                symbol_rows, path_rows = self.matrix.claimants(self.upstream, paths, _names(symbol))
                if not (symbol_rows or path_rows):
                    continue
                by_symbol.update(symbol_rows)
                by_path.update(path_rows)
                touched.append(replace(symbol, rows=tuple(symbol_rows + path_rows)))
            if touched or file_rows:
                owned.append(change)
                symbols.extend(touched)
            else:
                unowned.append(change.path)
        return EntryChanges(
            position=position,
            commit=commit,
            rows=tuple(self.matrix.order(by_symbol, by_path)),
            owned_changes=owned,
            symbols=symbols,
            unowned_paths=tuple(unowned),
        )

    def _touched_symbols(self, change: FileChange) -> list[TouchedSymbol]:
        base = dict(
            path=change.path,
            language=language_for_path(change.path),
            old_path=change.old_path if change.old_path != change.new_path else None,
            old_blob=change.old_blob,
            new_blob=change.new_blob,
        )
        if not change.parsed:
            return [_lines_symbol(base, change, [], _UNPARSED_REASON.get(change.content, change.content))]
        try:
            hunks = ensure_hunks(change)
        except ValueError as error:
            return [_lines_symbol(base, change, [], str(error))]
        if not hunks:  # a pure rename: the file's row still owns the change
            return []
        if base["language"] is None:
            return [_lines_symbol(base, change, hunks, "not a C/C++/CUDA or Python file")]
        old_table = self._table(change.old_blob, change.old_path)
        new_table = self._table(change.new_blob, change.new_path)
        fallback = next((t.fallback for t in (old_table, new_table) if t is not None and t.fallback), None)
        if fallback:
            return [_lines_symbol(base, change, hunks, fallback)]

        touches: dict[tuple[str, int], _Touch] = {}
        old_keys, old_by_key = _index(old_table)
        new_keys, new_by_key = _index(new_table)
        toplevel_old: list[int] = []
        toplevel_new: list[int] = []
        toplevel_headers: list[str] = []

        def touch(definition: Definition | None, keys, side: str, line: int, header: str, outside: list[int]) -> None:
            if definition is None:
                outside.append(line)
                if header not in toplevel_headers:
                    toplevel_headers.append(header)
                return
            key = keys[id(definition)]
            entry = touches.setdefault(key, _Touch(headers=[]))
            setattr(entry, side, definition)
            if header not in entry.headers:
                entry.headers.append(header)

        for hunk in hunks:
            for line, text in zip(hunk.removed_lines, hunk.removed_text):
                definition = old_table.enclosing(line) if old_table else None
                if definition is not None or text.strip():
                    touch(definition, old_keys, "old", line, hunk.header, toplevel_old)
            for line, text in zip(hunk.added_lines, hunk.added_text):
                definition = new_table.enclosing(line) if new_table else None
                if definition is not None or text.strip():
                    touch(definition, new_keys, "new", line, hunk.header, toplevel_new)

        symbols: list[TouchedSymbol] = []
        for key, entry in touches.items():
            old = entry.old or old_by_key.get(key)
            new = entry.new or new_by_key.get(key)
            definition = new or old
            symbols.append(
                TouchedSymbol(
                    name=definition.name,
                    qualified_name=definition.qualified_name,
                    kind=definition.kind,
                    change="modified" if old and new else ("added" if new else "removed"),
                    old_lines=(old.start_line, old.end_line) if old else None,
                    new_lines=(new.start_line, new.end_line) if new else None,
                    hunk_headers=tuple(entry.headers),
                    **base,
                )
            )
        symbols.sort(key=lambda s: (s.new_lines or s.old_lines or (0, 0))[0])
        if toplevel_old or toplevel_new:
            symbols.append(
                _line_span_symbol(base, change, TOPLEVEL, KIND_TOPLEVEL, toplevel_old, toplevel_new, toplevel_headers)
            )
        return symbols


def _index(table: SymbolTable | None) -> tuple[dict[int, tuple[str, int]], dict[tuple[str, int], Definition]]:
    """Key every definition by (qualified name, ordinal among same-named ones).

    Returns ``id(definition) → key`` and ``key → definition``; the ordinal
    pairs overloads old ↔ new in source order.
    """
    keys: dict[int, tuple[str, int]] = {}
    by_key: dict[tuple[str, int], Definition] = {}
    seen: dict[str, int] = {}
    for definition in table.definitions if table else ():
        ordinal = seen.get(definition.qualified_name, 0)
        seen[definition.qualified_name] = ordinal + 1
        key = (definition.qualified_name, ordinal)
        keys[id(definition)] = key
        by_key[key] = definition
    return keys, by_key


def _names(symbol: TouchedSymbol) -> tuple[str, ...]:
    if symbol.kind in (KIND_TOPLEVEL, KIND_LINES):
        return ()
    return tuple(dict.fromkeys((symbol.name, symbol.qualified_name)))


def _span(lines: list[int]) -> tuple[int, int] | None:
    return (min(lines), max(lines)) if lines else None


def _file_level_change(change: FileChange) -> str:
    return {"added": "added", "deleted": "removed"}.get(change.status, "modified")


def _line_span_symbol(base: dict, change: FileChange, name: str, kind: str, removed, added, headers,
                      fallback: str | None = None) -> TouchedSymbol:
    """A pseudo-symbol (``<toplevel>``, ``<lines>``) covering the lines it names."""
    return TouchedSymbol(
        name=name,
        qualified_name=name,
        kind=kind,
        change=_file_level_change(change),
        old_lines=_span(removed),
        new_lines=_span(added),
        hunk_headers=tuple(headers),
        fallback=fallback,
        **base,
    )


def _lines_symbol(base: dict, change: FileChange, hunks, reason: str) -> TouchedSymbol:
    removed = [line for hunk in hunks for line in hunk.removed_lines]
    added = [line for hunk in hunks for line in hunk.added_lines]
    return _line_span_symbol(base, change, LINES, KIND_LINES, removed, added, [h.header for h in hunks], reason)
