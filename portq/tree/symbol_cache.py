"""Definition lists that outlive a scan, stored next to the ledger.

Mapping a hunk to the definitions that enclose it needs, for the old and the
new blob of every owned file change, each definition's name, qualified name,
kind, language and first/last line, or the reason the file has none (the
``fallback`` of a file over the size bound or that does not parse). Parsing
blobs with tree-sitter is most of a cold scan, and a blob's definitions never
change, so ``DefinitionCache`` keeps them:

- in memory for the scan, as ``symbols.SymbolTable`` objects without trees,
  nodes or source bytes (the same ``has``/``get`` as ``SymbolTableCache``, so
  ``portq.classifier.mapping`` takes either);
- the latest full tree of each file it parsed (by path and language, at most
  ``LIVE_SOURCE_BYTES`` of sources, least recently parsed dropped first): a
  scan walks a range in order, so the old blob of a change is usually the
  new blob of the previous change to that file, and the next version of the
  file is parsed incrementally from that tree (``symbols.symbol_table``'s
  ``previous``; the same definitions, several times faster). ``forget``
  drops a deleted or renamed-away path's tree;
- on disk in ``<ledger folder>/cache/definitions.sqlite`` (the folder the
  in-tree index caches in), keyed by blob SHA, language and ``RULES``: the
  portq version plus a digest of ``portq/language/symbols.py``, so a newer portq or a
  changed extraction rule never reads lists written by another.

The same file holds ``SignatureStore``'s table: the classifier's upstream
signatures as text, by blob, path, definition and the signature code's rules,
so a rescan that decides entries again after an edit computes none of them.

Concurrent scans share the file safely: WAL journal, a busy timeout (and
``shared_sqlite.retry_while_busy`` for the first-open steps SQLite answers
BUSY at once, so two scans creating the file together both keep it), reads
that take no lock, and new lists written ``INSERT OR IGNORE`` in one
transaction per batch (two scans that parse the same blob store the same
row; the first one stays). The first write of a process also drops the
lists of other ``RULES``, so the file holds one generation, not one per
portq version or edit of ``symbols.py``. The file is a cache: deleting it
is always safe, so one that is not a usable store (not SQLite, a damaged
file, another program's table) is deleted and rebuilt, with ``replaced``
saying why, and is never read. One that cannot be used for another reason
(a read-only folder, a lock held past the busy timeout, a failed read or
write) is set aside for the rest of the scan with ``problem`` saying which;
the scan goes on parsing in memory. It never makes a scan fail.

This module does not read git (callers pass a loader for a blob's bytes),
does not decide ownership, and hands out no tree-sitter objects (the trees it
keeps only seed the next parse of their file): the classifier keeps its own
``SymbolTableCache`` with full trees for the few blobs whose signatures it
compares.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from portq import __version__
from portq.core.shared_sqlite import is_busy, retry_while_busy, use_wal
from portq.language import symbols
from portq.language.symbols import Definition, SymbolTable, language_for_path

CACHE_FILE_NAME = "definitions.sqlite"
"""The store's file name inside a cache folder (``ledger folder/cache``)."""

BUSY_TIMEOUT_S = 30.0
WRITE_BATCH = 256
"""Parsed tables held in memory before they are written in one transaction."""
LIVE_SOURCE_BYTES = 8_000_000
"""Sources whose trees are kept to seed incremental parses (a tree and its
source take about 16 bytes of memory per source byte: ~130 MB at most)."""
_QUERY_CHUNK = 500  # blob SHAs per SELECT ... IN (...), below SQLite's variable limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS definitions (
    blob        TEXT NOT NULL,
    language    TEXT NOT NULL,
    rules       TEXT NOT NULL,
    fallback    TEXT,
    definitions TEXT NOT NULL,
    PRIMARY KEY (blob, language, rules)
) WITHOUT ROWID
"""
# definitions: JSON [[name, qualified_name, kind, language, start_line, end_line], ...]
_COLUMNS = ["blob", "language", "rules", "fallback", "definitions"]


def _rules() -> str:
    """What the stored lists depend on: the portq version and the extraction code."""
    try:
        digest = hashlib.sha256(Path(symbols.__file__).read_bytes()).hexdigest()[:12]
    except OSError:
        digest = "unknown"
    return f"{__version__}+{digest}"


RULES = _rules()


@lru_cache(maxsize=8192)
def language_of(path: str) -> str:
    """``symbols.language_for_path`` of ``path``, memoised ("" for no grammar)."""
    return language_for_path(path) or ""


def light_table(table: SymbolTable) -> SymbolTable:
    """``table`` without its tree, nodes and source: what mapping needs of it."""
    return SymbolTable(
        table.language,
        [
            Definition(d.name, d.qualified_name, d.kind, d.language, d.start_line, d.end_line)
            for d in table.definitions
        ],
        fallback=table.fallback,
    )


def _encode(table: SymbolTable) -> str:
    return json.dumps(
        [[d.name, d.qualified_name, d.kind, d.language, d.start_line, d.end_line] for d in table.definitions],
        separators=(",", ":"),
    )


def _decode(language: str, fallback: str | None, text: str) -> SymbolTable:
    return SymbolTable(language or None, [Definition(*item) for item in json.loads(text)], fallback=fallback)


class _Store:
    """What the definition cache and the signature store share: a store that
    cannot be used is set aside (closed, its pending rows dropped, the
    problem kept), and the scan goes on without it."""

    _db: sqlite3.Connection | None
    _opened: bool
    _pending: list
    problem: str | None
    busy_timeout_s: float = BUSY_TIMEOUT_S  # how long a lock another process holds is waited for

    def _connection(self) -> sqlite3.Connection | None:
        """The store's connection, opened (by the subclass's ``_open``) on first use; None when set aside."""
        if not self._opened:
            self._opened = True
            if self.path is not None:
                self._open()
        return self._db

    def _set_aside(self, problem: str) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        self._db = None
        self._pending = []
        self.problem = problem

    def _connect(self, schema: str, table: str, columns: list[str], what: str,
                 probe: "Callable[[sqlite3.Connection], None] | None" = None,
                 replacing: bool = False) -> sqlite3.Connection | None:
        """The store's connection with ``table`` as ``schema`` makes it (``probe`` reads it once more),
        or None with the store set aside. A file that is not such a store (not a database, a damaged
        one, another program's table) is never trusted: it is deleted and rebuilt, with ``replaced``
        saying so; an OperationalError, such as a read-only file, is no reason to delete anything."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            self._set_aside(f"cannot open {self.path}: {error}")
            return None
        try:
            use_wal(db, self.busy_timeout_s)
            retry_while_busy(lambda: db.execute(schema), self.busy_timeout_s)
            found = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            if found != columns:
                raise sqlite3.DatabaseError(f"a {table} table with columns {', '.join(found)}")
            if probe is not None:
                probe(db)
        except sqlite3.Error as error:
            db.close()
            if is_busy(error):
                self._set_aside(f"{self.path} stayed locked by another process for over {self.busy_timeout_s:.0f} s")
            elif type(error) is sqlite3.DatabaseError and not replacing and _remove_store(self.path):
                rebuilt = self._connect(schema, table, columns, what, probe, replacing=True)
                self.replaced = f"{self.path} was not a usable {what} ({error}); it was rebuilt"
                return rebuilt
            else:
                self._set_aside(f"cannot use {self.path}: {error}")
            return None
        return db


class DefinitionCache(_Store):
    """Symbol tables without trees, by (blob SHA, language), optionally persisted.

    ``path`` None keeps them in memory only. Use as a context manager, or
    call ``close`` (which writes what is pending). ``trees_to``, a
    ``symbols.SymbolTableCache``, is handed the tree of each blob parsed here
    at a path it ``adopts`` (the classifier's, which would otherwise read and
    parse those blobs again).
    """

    def __init__(self, path: Path | str | None = None, trees_to=None) -> None:
        self.path = Path(path) if path is not None else None
        self._trees_to = trees_to
        self._tables: dict[tuple[str, str], SymbolTable] = {}
        self._pending: list[tuple[str, str, str, str | None, str]] = []
        self._absent: set[tuple[str, str]] = set()  # asked the store; it has no row
        # (path, language) -> full table (tree, source) of the blob last parsed there
        self._live: OrderedDict[tuple[str, str], SymbolTable] = OrderedDict()
        self._live_bytes = 0
        self._pruned = False  # lists of other rules dropped by this process
        self.problem: str | None = None  # why the store was set aside, if it was
        self.replaced: str | None = None  # why an unusable store was deleted and rebuilt, if it was
        self.parsed = 0  # tables parsed by this process
        self.recalled = 0  # tables read back from the store
        self._db: sqlite3.Connection | None = None
        self._holds_lists = False  # whether the store had lists of these rules when it was opened
        if self.path is not None:
            self._open()

    # --- the store ------------------------------------------------------------

    def _open(self) -> None:
        db = self._connect(_SCHEMA, "definitions", _COLUMNS, "definition cache")
        if db is None:
            return
        self._db = db
        # A new store (a cold scan's) holds nothing to recall: it is not asked chunk after chunk. Lists
        # another scan stores meanwhile are then parsed here too, with the same result.
        try:
            self._holds_lists = db.execute("SELECT 1 FROM definitions WHERE rules = ? LIMIT 1", (RULES,)).fetchone() \
                is not None
        except sqlite3.Error:
            self._holds_lists = True

    @property
    def persistent(self) -> bool:
        """Whether tables are read from and written to the store."""
        return self._db is not None

    def recall(self, keys: Iterable[tuple[str, str]]) -> None:
        """Read the stored tables of these (blob SHA, path) pairs into memory, in few queries."""
        if self._db is None or not self._holds_lists:
            return
        wanted: dict[str, set[str]] = {}
        for blob, path in keys:
            key = (blob, language_of(path))
            if key[1] and key not in self._tables and key not in self._absent:
                wanted.setdefault(key[1], set()).add(blob)
        try:
            for language, blobs in wanted.items():
                ordered = sorted(blobs)
                for start in range(0, len(ordered), _QUERY_CHUNK):
                    chunk = ordered[start:start + _QUERY_CHUNK]
                    rows = self._db.execute(
                        f"SELECT blob, fallback, definitions FROM definitions WHERE language = ? AND rules = ? "
                        f"AND blob IN ({','.join('?' * len(chunk))})",
                        (language, RULES, *chunk),
                    ).fetchall()
                    for blob, fallback, text in rows:
                        self._tables[(blob, language)] = _decode(language, fallback, text)
                    self.recalled += len(rows)
                    found = {row[0] for row in rows}
                    self._absent.update((blob, language) for blob in chunk if blob not in found)
        except (sqlite3.Error, ValueError, TypeError) as error:
            self._set_aside(f"cannot read {self.path}: {error}")

    def flush(self) -> None:
        """Write the tables parsed since the last flush, in one transaction."""
        if self._db is None or not self._pending:
            self._pending = []
            return
        pending, self._pending = self._pending, []
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if not self._pruned:
                    self._db.execute("DELETE FROM definitions WHERE rules != ?", (RULES,))
                self._db.executemany(
                    "INSERT OR IGNORE INTO definitions (blob, language, rules, fallback, definitions) "
                    "VALUES (?, ?, ?, ?, ?)",
                    pending,
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._pruned = True
        except sqlite3.Error as error:
            self._set_aside(f"cannot write {self.path}: {error}")

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> "DefinitionCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the SymbolTableCache interface ------------------------------------------

    def has(self, blob_sha: str, path: str) -> bool:
        """Whether the table of ``blob_sha`` is in memory (``recall`` first to look on disk)."""
        return (blob_sha, language_of(path)) in self._tables

    def peek(self, blob_sha: str, path: str) -> SymbolTable | None:
        """The table of ``blob_sha`` if it is in memory, without parsing."""
        return self._tables.get((blob_sha, language_of(path)))

    def get(self, blob_sha: str, path: str, load: Callable[[], bytes],
            previous_path: str | None = None) -> SymbolTable:
        """The table of ``blob_sha``: from memory, the store, or by parsing ``load()``.

        A parse starts from the latest tree kept for ``path`` or, failing
        that, for ``previous_path`` (the path a renamed file had; its tree
        moves to ``path``).
        """
        key = (blob_sha, language_of(path))
        table = self._tables.get(key)
        if table is None and key[1] and key not in self._absent:
            self.recall([(blob_sha, path)])
            table = self._tables.get(key)
        if table is None:
            previous = self._take_live(path, key[1])
            if previous is None and previous_path:
                previous = self._take_live(previous_path, key[1])
            table, live = _parsed(load(), path, key[1], previous)
            if live is not None:
                self._keep_live(path, live)
                if self._trees_to is not None and (self._trees_to.adopts(path)
                                                   or (previous_path and self._trees_to.adopts(previous_path))):
                    self._trees_to.adopt(blob_sha, path, live.tree, live.source, previous_path)
            self._tables[key] = table
            self.parsed += 1
            if key[1] and self._db is not None:
                self._pending.append((blob_sha, key[1], RULES, table.fallback, _encode(table)))
                if len(self._pending) >= WRITE_BATCH:
                    self.flush()
        return table


    # --- trees that seed incremental parses -----------------------------------------

    def _take_live(self, path: str, language: str) -> "_Live | None":
        table = self._live.pop((path, language), None)
        if table is not None:
            self._live_bytes -= len(table.source)
        return table

    def _keep_live(self, path: str, table: "_Live") -> None:
        self._take_live(path, table.language)
        self._live[(path, table.language)] = table
        self._live_bytes += len(table.source)
        while self._live_bytes > LIVE_SOURCE_BYTES and len(self._live) > 1:
            _, dropped = self._live.popitem(last=False)
            self._live_bytes -= len(dropped.source)

    def forget(self, path: str) -> None:
        """Drop the tree kept for ``path`` (the file was deleted or renamed away)."""
        language = language_of(path)
        if language:
            self._take_live(path, language)

    @property
    def live_paths(self) -> list[str]:
        """The paths whose latest tree is kept, least recently parsed first."""
        return [path for path, _ in self._live]


@dataclass
class _Live:
    """The latest parse of a file, kept to seed the next: its tree and source
    (what ``symbols.parse`` edits), and the definitions each child of its root
    (or of a C++ namespace in it) holds, by (type, first byte, end byte, scope)."""

    language: str
    tree: object
    source: bytes
    children: dict[tuple[str, int, int, tuple[str, ...]], list[Definition]]


def _parsed(source: bytes, path: str, language: str, previous: _Live | None) -> tuple[SymbolTable, _Live | None]:
    """The light table of ``source``, and what to keep of its parse.

    ``symbols.symbol_table``'s definitions, found child by child of the root
    (a C++ namespace the edit reaches is entered, child by child): after an
    incremental parse, a child that lies wholly before or after the edited
    bytes, outside every range ``Tree.changed_ranges`` reports (so its subtree
    is the one the previous version had, moved), takes the previous version's
    definitions of that child, moved by the lines the edit added; only the
    others are walked.
    """
    if not language or len(source) > symbols.MAX_PARSE_BYTES:
        return light_table(symbols.symbol_table(source, path)), None
    try:
        tree, base, edit = symbols.parse_from(source, language, previous)
    except Exception as error:  # as symbols.symbol_table reports it
        return SymbolTable(language, [], fallback=f"parse failed: {error}"), None
    moved = _unmoved_children(previous, base, tree, edit) if base is not None else None
    children: dict[tuple[str, int, int, tuple[str, ...]], list[Definition]] = {}

    def walk(nodes, scope: tuple[str, ...]) -> list[Definition]:
        found_here: list[Definition] = []
        for child in nodes:
            place = (child.type, child.start_byte, child.end_byte, scope)
            found = moved(place) if moved is not None else None
            if found is None:
                inside = symbols.namespace_body(child, scope)
                if inside is not None:
                    found = walk(inside[0].children, inside[1])
                else:
                    found = [_light(d) for d in symbols.definitions_of_child(child, language, scope)]
            children[place] = found
            found_here.extend(found)
        return found_here

    definitions = symbols.macro_declared(walk(tree.root_node.children, ()), tree.root_node, source, language)
    table = SymbolTable(language, definitions)
    if tree.root_node.has_error and not definitions:
        table.fallback = "tree-sitter reported syntax errors and found no definitions"
    return table, _Live(language, tree, source, children)


def _unmoved_children(previous: _Live, base, tree, edit):
    """place -> the previous version's definitions of a child ``edit`` left
    alone (moved to its new lines), or None where the child must be walked."""
    start, old_end, new_end, _, old_end_point, new_end_point = edit
    changed = [(r.start_byte, r.end_byte) for r in base.changed_ranges(tree)]
    byte_shift, line_shift = new_end - old_end, new_end_point[0] - old_end_point[0]

    def moved(place: tuple[str, int, int, tuple[str, ...]]) -> list[Definition] | None:
        kind, first, end, scope = place
        if any(first <= last and begin <= end for begin, last in changed):
            return None
        if end < start:
            return previous.children.get(place)
        if first > new_end:
            found = previous.children.get((kind, first - byte_shift, end - byte_shift, scope))
            if found is None or not line_shift:
                return found
            return [Definition(d.name, d.qualified_name, d.kind, d.language, d.start_line + line_shift,
                               d.end_line + line_shift, macro=d.macro) for d in found]
        return None

    return moved


def _light(d: Definition) -> Definition:
    return Definition(d.name, d.qualified_name, d.kind, d.language, d.start_line, d.end_line, macro=d.macro)


def cache_path(cache_dir: Path | str) -> Path:
    """Where the definition store of a cache folder lives."""
    return Path(cache_dir) / CACHE_FILE_NAME


# --- upstream signatures ------------------------------------------------------------

_SIGNATURE_SCHEMA = """
CREATE TABLE IF NOT EXISTS signatures (
    blob      TEXT NOT NULL,
    path      TEXT NOT NULL,
    name      TEXT NOT NULL,
    line      INTEGER NOT NULL,
    rules     TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (blob, path, name, line, rules)
) WITHOUT ROWID
"""
_SIGNATURE_COLUMNS = ["blob", "path", "name", "line", "rules", "signature"]


class SignatureStore(_Store):
    """The classifier's upstream signatures as text, by content, in the definition store's file.

    A signature of one upstream definition depends only on its blob, path,
    qualified name and first line, and on the code that extracts it, which the
    caller names in ``rules`` (``portq.classifier.verdicts`` owns what a signature is and
    how it is written as text; this store keeps the text). So a rescan that
    decides an entry again after an edit to the tree finds the upstream side
    of every comparison here instead of parsing and walking it again.

    Opened on first use; rows of other rules are never read and are dropped
    at the first write; a file that is not a usable store is deleted and
    rebuilt, any other problem sets the store aside for the scan (the
    classifier then computes every signature), as ``DefinitionCache`` does.
    New rows are written in one transaction at ``close``.
    """

    def __init__(self, path: Path | str | None, rules: "str | Callable[[], str]") -> None:
        self.path = Path(path) if path is not None else None
        self._rules = rules  # or what computes them, asked when the store is first used
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._empty = True  # whether the store held no row of these rules when opened
        self._pending: list[tuple[str, str, str, int, str, str]] = []
        self.problem: str | None = None
        self.replaced: str | None = None
        self.recalled = 0

    @property
    def rules(self) -> str:
        if callable(self._rules):
            self._rules = self._rules()
        return self._rules

    def _open(self) -> None:
        def probe(db: sqlite3.Connection) -> None:
            self._empty = db.execute("SELECT 1 FROM signatures WHERE rules = ? LIMIT 1",
                                     (self.rules,)).fetchone() is None

        self._db = self._connect(_SIGNATURE_SCHEMA, "signatures", _SIGNATURE_COLUMNS, "signature cache", probe)

    def get(self, blob: str, path: str, name: str, line: int) -> str | None:
        """The stored text of this signature, or None."""
        db = self._connection()
        if db is None or self._empty:
            return None
        try:
            row = db.execute("SELECT signature FROM signatures WHERE blob = ? AND path = ? AND name = ? "
                             "AND line = ? AND rules = ?", (blob, path, name, line, self.rules)).fetchone()
        except sqlite3.Error as error:
            self._set_aside(f"cannot read {self.path}: {error}")
            return None
        if row is not None:
            self.recalled += 1
        return row[0] if row is not None else None

    def put(self, blob: str, path: str, name: str, line: int, text: str) -> None:
        """Keep this signature's text, written at ``close``."""
        if self._connection() is not None:
            self._pending.append((blob, path, name, line, self.rules, text))

    def close(self) -> None:
        """Write what was put, in one transaction, and close."""
        db, pending, self._pending = self._db, self._pending, []
        if db is None:
            return
        try:
            if pending:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute("DELETE FROM signatures WHERE rules != ?", (self.rules,))
                    db.executemany("INSERT OR IGNORE INTO signatures (blob, path, name, line, rules, signature) "
                                   "VALUES (?, ?, ?, ?, ?, ?)", pending)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
        except sqlite3.Error as error:
            self.problem = f"cannot write {self.path}: {error}"
        finally:
            db.close()
            self._db = None


def _remove_store(path: Path) -> bool:
    """Delete a store and its journal files; whether that worked."""
    try:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    except OSError:
        return False
    return True
