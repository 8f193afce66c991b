"""Ownership and enclosing symbols: one commit → ``model.EntryChanges``.

For each file change of a commit:

1. **Ownership, cheaply.** A change is looked at when a row's path glob
   claims its old or new path, or when it may touch a definition whose name
   a row claims. That second test never reads more than it must and never
   misses a claim; it stops at the first step that answers:

   a. a claimed name (the longest glob-free run of a claim pattern, within
      one ``::``/``.`` segment, so a qualified claim such as ``vllm::f``
      still finds ``namespace vllm { void f() }``) occurs in the diff text
      (changed or context lines, or a hunk header's section): looked at;
   b. both blobs' definitions are known (``portq.tree.symbol_cache``, from this
      scan or an earlier one): looked at only when a hunk's old or new line
      range overlaps a definition a row claims by name;
   c. otherwise the blobs are searched for a claimed name: a definition's
      name is always in its file's text, so a blob without one cannot
      define a claimed symbol. No line of this diff holds a name, so the old
      and the new blob answer alike: one blob read answers for a whole chain
      of such edits to a file, and an added or deleted file's diff (all its
      lines) answers for its blob without a read.

   Everything else is listed in ``unowned_paths``.
2. **Hunks** are parsed (``portq.upstream.hunks``) only for changes looked at.
3. **Symbols.** The old and new blobs' definitions come from a table cache
   keyed by blob SHA (``DefinitionCache``: definitions without trees,
   persisted next to the ledger; or the classifier's ``SymbolTableCache``);
   the hunk's removed lines map to definitions on the old side, its added
   lines on the new side (commits are mapped in order, old side first, so the
   cache parses a file's next version from the tree of its last one; a
   renamed file's from its old path's, and a deleted or renamed-away path's
   tree is dropped). A definition on both sides is ``modified``, only on
   the new side ``added``, only on the old ``removed``. Hunk lines outside
   every definition become one ``<toplevel>`` symbol per file (kind
   ``toplevel``); blank lines between definitions are ignored. A file that
   cannot be parsed (no grammar, over the size bound, a syntax error with no
   definitions, binary, submodule, mode-only) becomes one ``<lines>`` symbol
   (kind ``lines``) whose ``fallback`` says why.
4. **Rows.** Each touched symbol is claimed through ``Matrix.claimants``; a
   file reached only through a symbol name keeps only the symbols a row
   claims. A path-owned change stays owned even when it touches no symbol (a
   pure rename, blank lines). The entry's rows list every claimant, symbol
   claimants first.

Blobs are read for a chunk of commits at once (one ``cat-file`` round trip).
This module decides nothing about verdicts and writes nothing itself (the
definition cache it is given may persist what it parses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from portq.core.model import Commit, EntryChanges, FileChange, TouchedSymbol
from portq.language.symbols import Definition, SymbolTable
from portq.tree.matrix import Matrix
from portq.tree.symbol_cache import DefinitionCache, language_of
from portq.upstream.hunks import ensure_hunks

TOPLEVEL = "<toplevel>"
LINES = "<lines>"
KIND_TOPLEVEL = "toplevel"
KIND_LINES = "lines"

_UNPARSED_REASON = {
    "binary": "binary file: recorded, not parsed",
    "submodule": "submodule bump: recorded, not parsed",
    "mode-only": "file mode change only: no content changed",
}
_HUNK_RANGES = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_SYNTHETIC_SEGMENTS = {"schema", "<anonymous>"}
"""Parts of qualified names that portq makes up (``schema::name`` of an op
schema, ``<anonymous>`` namespaces): no file's text need contain them."""


def _literal(pattern: str) -> str | None:
    """The longest text every definition a symbol pattern claims has in its file.

    A claimed definition's name, and each part of its qualified name, is an
    identifier written in the file; so any glob-free run of the pattern that
    lies within one ``::``/``.`` segment is there too. None when no run of
    three characters or more exists (then every parseable file may qualify).
    """
    runs = [run for segment in re.split(r"::|\.|:", pattern) if segment not in _SYNTHETIC_SEGMENTS
            for run in _split_glob(segment) if run]
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


def hunk_ranges(patch: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (first, last) old-side and new-side lines of each hunk, from its ``@@`` header alone."""
    old, new = [], []
    for old_start, old_length, new_start, new_length in _HUNK_RANGES.findall(patch):
        for ranges, start, length in ((old, old_start, old_length), (new, new_start, new_length)):
            count = int(length) if length else 1
            if count:
                ranges.append((int(start), int(start) + count - 1))
    return old, new


@dataclass
class _Touch:
    """Accumulates the lines of one definition touched on either side."""

    old: Definition | None = None
    new: Definition | None = None
    headers: list[str] | None = None


@dataclass
class _Plan:
    """What mapping one change needs: the rows its path globs give, and, for a
    change no glob claims, whether it may touch a definition a row claims by
    name (True, False, or None while only the blobs can tell)."""

    change: FileChange
    paths: tuple[str, ...]
    file_rows: list[str]
    claim: bool | None
    anchored: bool = False  # no row owns it, but an in-tree anchor names the file (or a name it had)
    _sides: list[tuple[str, str]] | None = field(default=None, repr=False, compare=False)

    @property
    def looked_at(self) -> bool:
        return bool(self.file_rows) or bool(self.claim) or self.anchored

    def sides(self) -> list[tuple[str, str]]:
        """(blob, path) of the old and new side that exist and may be parsed (worked out once)."""
        if self._sides is None:
            change = self.change
            self._sides = [] if not change.parsed or not language_of(change.path) else [
                (blob, path) for blob, path in ((change.old_blob, change.old_path), (change.new_blob, change.new_path))
                if blob and path]
        return self._sides


class ChangeMapper:
    """Maps the commits of one upstream against one matrix.

    ``symbol_tables`` is anything with ``has(blob, path)`` and ``get(blob,
    path, load)`` (a ``DefinitionCache``, the default, or a
    ``SymbolTableCache``); where it also has ``recall(keys)`` (a
    ``DefinitionCache``), stored tables are read in one query per chunk of
    commits.
    """

    def __init__(
        self,
        matrix: Matrix,
        upstream: str,
        read_blob: Callable[[str], bytes],
        symbol_tables=None,
        read_blobs: Callable[[list[str]], dict[str, bytes]] | None = None,
        anchored: Callable[[set[str]], bool] | None = None,
        aliases: dict[str, set[str]] | None = None,
    ) -> None:
        """``anchored(paths)`` says whether an in-tree anchor names any of
        ``paths`` (the tree index, built before mapping), ``aliases`` every
        other name a path had through the range's renames
        (``rename_aliases``): a file no row owns but a port names is mapped
        like an owned one, here and only here."""
        self.anchored = anchored
        self.aliases = aliases or {}
        self.matrix = matrix
        self.upstream = upstream
        self.read_blob = read_blob
        self.read_blobs = read_blobs or (lambda shas: {sha: read_blob(sha) for sha in shas})
        self.symbol_tables = symbol_tables if symbol_tables is not None else DefinitionCache()
        self._mentions: dict[str, bool] = {}  # blob SHA -> holds a claimed symbol name
        self._prefetched: dict[str, bytes] = {}  # blobs of the commits being mapped
        self._path_rows: dict[tuple[str, ...], list[str]] = {}
        self._symbol_claims: dict[tuple, tuple[list[str], list[str]]] = {}
        self._claimed_names: dict[tuple[str, str], bool] = {}
        self._claimed_spans: dict[tuple[str, str], list[tuple[int, int]]] = {}  # (blob, language) -> lines
        self._rows = matrix.rows_for(upstream)
        self._forget = getattr(self.symbol_tables, "forget", None)
        patterns = matrix.symbol_names(upstream)
        literals = [_literal(p) for p in patterns]
        # A pattern without a usable literal means every parseable file is a candidate.
        self._match_any_file = any(lit is None for lit in literals)
        self._literals = tuple(dict.fromkeys(lit for lit in literals if lit))
        self._literal_bytes = tuple(lit.encode() for lit in self._literals)
        # A name within one line: the name search may pass its answer across a change (_search_names).
        self._names_fit_a_line = not any("\n" in lit or "\r" in lit for lit in self._literals)

    # --- ownership ----------------------------------------------------------

    def _claim_from_diff(self, change: FileChange) -> bool | None:
        """Whether a symbol some row claims may be defined in this change.

        True when the diff text names one, False when none can be; None when
        only the definitions or the blobs can tell.
        """
        if not (self._literals or self._match_any_file) or not change.parsed:
            return False
        if not language_of(change.path):
            return False
        if self._match_any_file or any(lit in change.patch for lit in self._literals):
            return True
        return None

    def _claim_from_tables(self, plan: _Plan) -> bool | None:
        """Whether a hunk's line range overlaps a claimed definition; None
        unless the definitions of every side are already known."""
        sides = plan.sides()
        if not sides or not all(self.symbol_tables.has(blob, path) for blob, path in sides):
            return None
        old_ranges, new_ranges = hunk_ranges(plan.change.patch)
        for (blob, path), ranges in zip(self._sides_by_role(plan.change), (old_ranges, new_ranges)):
            if blob is None:
                continue
            spans = self._spans_claimed(blob, path)
            if any(start <= last and first <= end for start, end in spans for first, last in ranges):
                return True
        return False

    @staticmethod
    def _sides_by_role(change: FileChange) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
        return (change.old_blob, change.old_path), (change.new_blob, change.new_path)

    @staticmethod
    def _not_loaded() -> bytes:  # pragma: no cover - only called for tables already held
        raise AssertionError("a table reported present had to be loaded")

    def _spans_claimed(self, blob: str, path: str) -> list[tuple[int, int]]:
        """The lines of the blob's definitions some row claims by name (excludes ignored: a superset)."""
        key = (blob, language_of(path))
        spans = self._claimed_spans.get(key)
        if spans is None:
            table = self.symbol_tables.get(blob, path, self._not_loaded)
            spans = self._claimed_spans[key] = [] if table.fallback else [
                (d.start_line, d.end_line) for d in table.definitions if self._is_claimed(d.name, d.qualified_name)
            ]
        return spans

    def _is_claimed(self, name: str, qualified_name: str) -> bool:
        key = (name, qualified_name)
        claimed = self._claimed_names.get(key)
        if claimed is None:
            names = tuple(dict.fromkeys(key))
            claimed = self._claimed_names[key] = any(row.claims_symbol(names) for row in self._rows)
        return claimed

    def _blob(self, sha: str) -> bytes:
        data = self._prefetched.get(sha)
        return data if data is not None else self.read_blob(sha)

    def _table(self, blob: str | None, path: str | None, previous_path: str | None = None) -> SymbolTable | None:
        if not blob or not path:
            return None
        return self.symbol_tables.get(blob, path, lambda: self._blob(blob), previous_path)

    def _file_rows(self, paths: tuple[str, ...]) -> list[str]:
        rows = self._path_rows.get(paths)
        if rows is None:
            rows = self._path_rows[paths] = self.matrix.claimants(self.upstream, paths)[1]
        return rows

    def _claimants(self, paths: tuple[str, ...], names: tuple[str, ...]) -> tuple[list[str], list[str]]:
        key = (paths, names)
        found = self._symbol_claims.get(key)
        if found is None:
            found = self._symbol_claims[key] = self.matrix.claimants(self.upstream, paths, names)
        return found

    def _plan(self, commit: Commit) -> list[_Plan]:
        plans = []
        for change in commit.changes:
            paths = tuple(p for p in (change.old_path, change.new_path) if p)
            file_rows = self._file_rows(paths)
            # A change a path glob claims keeps every touched symbol: no name test needed.
            plan = _Plan(change, paths, file_rows, False if file_rows else self._claim_from_diff(change))
            if self.anchored is not None and change.old_path and change.new_path and change.old_path != change.new_path:
                self._learn_rename(change.old_path, change.new_path)
            if not file_rows and self.anchored is not None:
                named = set(paths).union(*(self.aliases.get(p, set()) for p in paths))
                plan.anchored = self.anchored(named)
            plans.append(plan)
        return plans

    def _learn_rename(self, old: str, new: str) -> None:
        group = {old, new} | self.aliases.get(old, set()) | self.aliases.get(new, set())
        for path in group:
            self.aliases[path] = group - {path}

    def settle_renames(self, entries: list[EntryChanges]) -> list[EntryChanges]:
        """Entries mapped before a later commit of the range renamed one of
        their unowned files to a name an anchor uses, mapped again now that
        every rename of the range is known (mapping decides ownership alone)."""
        if self.anchored is None:
            return entries
        self.aliases = {path: set(names) for path, names in rename_aliases(e.commit for e in entries).items()}
        settled = []
        for entry in entries:
            late = [p for p in entry.unowned_paths if p in self.aliases and self.anchored({p} | self.aliases[p])]
            settled.append(self.map_commit(entry.position, entry.commit) if late else entry)
        return settled

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

    def _prefetch(self, plans: list[_Plan]) -> None:
        """Settle every change's claim, then read the blobs whose definitions are still needed.

        At most two ``cat-file`` round trips per chunk: one for the name
        search together with the blobs to parse of every change already
        known to be looked at, one for those of the changes the search finds
        a name in (none when no chain of edits is searched for the first time).
        """
        recall = getattr(self.symbol_tables, "recall", None)
        if recall is not None:
            recall([side for plan in plans if plan.looked_at or plan.claim is None for side in plan.sides()])
        unsettled: list[_Plan] = []
        for plan in plans:
            if plan.claim is None:
                plan.claim = self._claim_from_tables(plan)
                if plan.claim is None:
                    unsettled.append(plan)
        unknown = self._known_mentions(unsettled)
        for plan in unsettled:
            if all(blob in self._mentions for blob, _ in plan.sides()):
                plan.claim = any(self._mentions[blob] for blob, _ in plan.sides())
        fetched = self._search_names(unknown, self._to_parse(plans))
        for plan in unsettled:
            if plan.claim is None:
                plan.claim = any(self._mentions[blob] for blob, _ in plan.sides())
        wanted = [blob for blob in self._to_parse(plans) if blob not in fetched]
        if wanted:
            fetched.update(self.read_blobs(wanted))
        self._prefetched = fetched

    def _to_parse(self, plans: list[_Plan]) -> list[str]:
        """The blobs of the changes looked at whose definitions are not known yet."""
        return list(dict.fromkeys(blob for plan in plans if plan.looked_at for blob, path in plan.sides()
                                  if not self.symbol_tables.has(blob, path)))

    def _known_mentions(self, plans: list[_Plan]) -> dict[str, list[str]]:
        """Which blobs of these changes hold a claimed name, into ``_mentions`` as far as earlier
        answers tell; returns the chains still unknown (a blob to read: the blobs it answers for).

        A change reaches here only when no line of its diff holds a claimed
        name. A name lies within one line, so the old and the new blob then
        hold one alike: their answers are one answer, found by reading one
        blob of each chain of such changes (or none, when an earlier chunk
        already answered for one of its blobs). An added or a deleted file's
        diff holds all its lines, so its blob holds none.
        """
        parent: dict[str, str] = {}

        def root(blob: str) -> str:
            while parent.setdefault(blob, blob) != blob:
                parent[blob] = parent[parent[blob]]
                blob = parent[blob]
            return blob

        for plan in plans if self._names_fit_a_line else ():
            blobs = [blob for blob, _ in plan.sides()]
            if plan.change.old_blob is None or plan.change.new_blob is None:
                self._mentions.update(dict.fromkeys(blobs, False))
            elif len(blobs) == 2:
                parent[root(blobs[0])] = root(blobs[1])
        members: dict[str, list[str]] = {}
        for plan in plans:
            for blob, _ in plan.sides():
                members.setdefault(root(blob), []).append(blob)
        unknown = {}
        for key, blobs in members.items():
            known = next((self._mentions[blob] for blob in blobs if blob in self._mentions), None)
            if known is None:
                unknown[key] = blobs
            else:
                self._mentions.update(dict.fromkeys(blobs, known))
        return unknown

    def _search_names(self, unknown: dict[str, list[str]], also: Sequence[str] = ()) -> dict[str, bytes]:
        """Read one blob of each chain still ``unknown`` (``_known_mentions``) and the blobs ``also``,
        in one round trip; note which chains hold a claimed name. Returns the blobs read."""
        wanted = list(dict.fromkeys([*unknown, *also]))
        fetched = self.read_blobs(wanted) if wanted else {}
        for key, blobs in unknown.items():
            found = any(lit in fetched[key] for lit in self._literal_bytes)
            self._mentions.update(dict.fromkeys(blobs, found))
        return fetched

    # --- mapping ------------------------------------------------------------

    def map_commit(self, position: int, commit: Commit) -> EntryChanges:
        """Map one commit (``map_commits`` maps many with fewer blob round trips)."""
        return next(self._map_chunk([commit], position))

    def _map_planned(self, position: int, commit: Commit, plans: list[_Plan]) -> EntryChanges:
        owned: list[FileChange] = []
        symbols: list[TouchedSymbol] = []
        unowned: list[str] = []
        by_symbol: set[str] = set()
        by_path: set[str] = set()
        for plan in plans:
            change, file_rows = plan.change, plan.file_rows
            if not plan.looked_at:
                unowned.append(change.path)
                self._forget_gone_path(change)
                continue
            by_path.update(file_rows)
            touched = []
            for symbol in self._touched_symbols(change):
                symbol_rows, path_rows = self._claimants(plan.paths, _names(symbol))
                if not (symbol_rows or path_rows or plan.anchored):
                    continue
                by_symbol.update(symbol_rows)
                by_path.update(path_rows)
                touched.append(replace(symbol, rows=tuple(symbol_rows + path_rows)))
            if touched or file_rows or plan.anchored:
                owned.append(change)
                symbols.extend(touched)
            else:
                unowned.append(change.path)
            self._forget_gone_path(change)
        return EntryChanges(
            position=position,
            commit=commit,
            rows=tuple(self.matrix.order(by_symbol, by_path)),
            owned_changes=owned,
            symbols=symbols,
            unowned_paths=tuple(unowned),
        )

    def _forget_gone_path(self, change: FileChange) -> None:
        """A deleted or renamed-away path's kept tree (``DefinitionCache.forget``) is dropped."""
        if self._forget is not None and change.status in ("deleted", "renamed") and change.old_path:
            self._forget(change.old_path)

    def _touched_symbols(self, change: FileChange) -> list[TouchedSymbol]:
        base = dict(
            path=change.path,
            language=language_of(change.path) or None,
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
        new_table = self._table(change.new_blob, change.new_path, change.old_path)
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


def rename_aliases(commits) -> dict[str, set[str]]:
    """upstream path -> every other name it had through renames in ``commits``."""
    groups: dict[str, set[str]] = {}
    for commit in commits:
        for change in commit.changes:
            if change.old_path and change.new_path and change.old_path != change.new_path \
                    and change.status in ("renamed", "copied"):
                group = groups.get(change.old_path, {change.old_path}) | groups.get(change.new_path, {change.new_path})
                for path in group:
                    groups[path] = group
    return {path: group - {path} for path, group in groups.items()}


def _lines_symbol(base: dict, change: FileChange, hunks, reason: str) -> TouchedSymbol:
    removed = [line for hunk in hunks for line in hunk.removed_lines]
    added = [line for hunk in hunks for line in hunk.added_lines]
    return _line_span_symbol(base, change, LINES, KIND_LINES, removed, added, [h.header for h in hunks], reason)
