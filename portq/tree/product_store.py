"""Per-definition products that outlive a scan, in the definition store's file.

``portq.language.memo`` keeps the products of a definition's content
(comment-free tokens, alpha-renamed tokens, a Python ``ast`` dump) for one
scan; ``ProductStore`` is its backing store, so a rescan that decides entries
again after an edit to the tree reads them instead of walking the same
definitions again. It holds JSON text by (product, content key, version):
the version is the portq version and a digest of the code that computes the
products (``memo.products_version``), so rows written by another portq or by
changed product code are never read, and are dropped at the first write.

The store is bounded: at most ``bound`` rows (``DEFAULT_BOUND``). Each row
carries the generation of the last scan that used it; a scan's ``close``
writes its new rows and the generation of those it read, then deletes the
least recently used rows beyond the bound. A file that is not a usable store
(not SQLite, truncated, another program's table) is deleted and rebuilt, and
one locked past ``busy_timeout_s`` or otherwise unusable is set aside for the
scan (every product is then computed), as ``DefinitionCache`` does: it never
makes a scan fail and is never trusted over computing.

This module computes no product and decides nothing; it stores text.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable

from portq import __version__
from portq.tree.symbol_cache import BUSY_TIMEOUT_S, _Store

DEFAULT_BOUND = 20_000
"""Rows kept across scans (a few KB each at most: tens of MB of file at the bound)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS products (
    product TEXT NOT NULL,
    key     TEXT NOT NULL,
    version TEXT NOT NULL,
    value   TEXT NOT NULL,
    used    INTEGER NOT NULL,
    PRIMARY KEY (product, key, version)
) WITHOUT ROWID
"""
_COLUMNS = ["product", "key", "version", "value", "used"]


def default_version() -> str:
    from portq.language.memo import products_version

    return f"{__version__}+{products_version()}"


class ProductStore(_Store):
    """``memo.Backing`` over SQLite: ``get``/``put`` text by (product, key); ``close`` writes and trims."""

    def __init__(self, path: Path | str | None, bound: int = DEFAULT_BOUND,
                 version: "str | Callable[[], str]" = default_version, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path) if path is not None else None
        self.bound = bound
        self.busy_timeout_s = busy_timeout_s
        self._version = version
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._empty = True  # no row of this version when opened: nothing to ask
        self._generation = 1
        self._pending: list[tuple[str, str, str, str, int]] = []
        self._used: set[tuple[str, str]] = set()
        self.problem: str | None = None
        self.replaced: str | None = None
        self.recalled = 0
        self.trimmed = 0

    @property
    def version(self) -> str:
        if callable(self._version):
            self._version = self._version()
        return self._version

    def _open(self) -> None:
        def probe(db: sqlite3.Connection) -> None:
            self._empty = db.execute("SELECT 1 FROM products WHERE version = ? LIMIT 1",
                                     (self.version,)).fetchone() is None
            self._generation = (db.execute("SELECT MAX(used) FROM products").fetchone()[0] or 0) + 1

        self._db = self._connect(_SCHEMA, "products", _COLUMNS, "product cache", probe)

    def get(self, product: str, key: str) -> str | None:
        db = self._connection()
        if db is None or self._empty:
            return None
        try:
            row = db.execute("SELECT value FROM products WHERE product = ? AND key = ? AND version = ?",
                             (product, key, self.version)).fetchone()
        except sqlite3.Error as error:
            self._set_aside(f"cannot read {self.path}: {error}")
            return None
        if row is None:
            return None
        self.recalled += 1
        self._used.add((product, key))
        return row[0]

    def put(self, product: str, key: str, text: str) -> None:
        if self._connection() is not None:
            self._pending.append((product, key, self.version, text, self._generation))

    def close(self) -> None:
        """Write what was put, mark what was read as used by this scan, trim to the bound, and close."""
        db, pending, used = self._db, self._pending, self._used
        self._pending, self._used = [], set()
        if db is None:
            return
        try:
            if pending or used:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute("DELETE FROM products WHERE version != ?", (self.version,))
                    db.executemany("INSERT OR REPLACE INTO products (product, key, version, value, used) "
                                   "VALUES (?, ?, ?, ?, ?)", pending)
                    db.executemany("UPDATE products SET used = ? WHERE product = ? AND key = ? AND version = ?",
                                   [(self._generation, product, key, self.version) for product, key in used])
                    self.trimmed = self._trim(db)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
        except sqlite3.Error as error:
            self.problem = f"cannot write {self.path}: {error}"
        finally:
            db.close()
            self._db = None

    def _trim(self, db: sqlite3.Connection) -> int:
        """Delete the least recently used rows beyond the bound; how many."""
        count = db.execute("SELECT COUNT(*) FROM products").fetchone()[0]
        excess = count - self.bound
        if excess <= 0:
            return 0
        db.execute("DELETE FROM products WHERE (product, key, version) IN "
                   "(SELECT product, key, version FROM products ORDER BY used, product, key LIMIT ?)", (excess,))
        return excess
