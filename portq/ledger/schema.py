"""The ledger's schema: each version's statements and the ordered migrations between them.

``MIGRATIONS`` is append-only: a released step is never edited, and each
step says why it exists. ``portq.ledger.store`` applies them to a file that
is older than ``SCHEMA_VERSION`` and refuses one that is newer. This module
only holds statements; it must not open a file or read a verdict.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

_SCHEMA_V1 = (
    """
    CREATE TABLE waves (
        id                 INTEGER PRIMARY KEY AUTOINCREMENT,
        range_spec         TEXT NOT NULL,
        upstream           TEXT NOT NULL,
        base_sha           TEXT NOT NULL,
        tip_sha            TEXT NOT NULL,
        tree               TEXT NOT NULL,
        entry_count        INTEGER NOT NULL,
        portq_version      TEXT NOT NULL,
        matrix_fingerprint TEXT NOT NULL,
        tree_fingerprint   TEXT NOT NULL,
        status             TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
        owner              TEXT NOT NULL,
        started_at         TEXT NOT NULL,
        finished_at        TEXT
    )""",
    """
    CREATE TABLE entries (
        id       INTEGER PRIMARY KEY,
        upstream TEXT NOT NULL,
        tree     TEXT NOT NULL,
        sha      TEXT NOT NULL,
        title    TEXT NOT NULL,
        pr       INTEGER,
        UNIQUE (upstream, tree, sha)
    )""",
    """
    CREATE TABLE wave_entries (
        wave_id  INTEGER NOT NULL REFERENCES waves(id),
        position INTEGER NOT NULL,
        entry_id INTEGER NOT NULL REFERENCES entries(id),
        rows     TEXT NOT NULL,
        symbols  TEXT NOT NULL,
        PRIMARY KEY (wave_id, position),
        UNIQUE (wave_id, entry_id)
    )""",
    """
    CREATE TABLE verdict_events (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_id      INTEGER NOT NULL REFERENCES entries(id),
        wave_id       INTEGER REFERENCES waves(id),
        source        TEXT NOT NULL CHECK (source IN ('scan', 'review')),
        verdict       TEXT NOT NULL,
        justification TEXT,
        decided_by    TEXT NOT NULL,
        reason        TEXT NOT NULL DEFAULT '',
        who           TEXT,
        why           TEXT,
        evidence      TEXT NOT NULL DEFAULT '[]',
        detail        TEXT,
        undoes        INTEGER REFERENCES verdict_events(id),
        version       TEXT NOT NULL,
        created_at    TEXT NOT NULL
    )""",
    """CREATE UNIQUE INDEX one_scan_event_per_wave_entry ON verdict_events (wave_id, entry_id) WHERE source = 'scan'""",
    """CREATE INDEX verdict_events_by_entry ON verdict_events (entry_id, id)""",
    """CREATE TRIGGER verdict_events_no_update BEFORE UPDATE ON verdict_events BEGIN SELECT RAISE(ABORT, 'verdict events are append-only'); END""",
    """CREATE TRIGGER verdict_events_no_delete BEFORE DELETE ON verdict_events BEGIN SELECT RAISE(ABORT, 'verdict events are append-only'); END""",
    """
    CREATE TABLE reports (
        fingerprint TEXT PRIMARY KEY,
        path        TEXT NOT NULL,
        entry_id    INTEGER REFERENCES entries(id),
        wave_id     INTEGER REFERENCES waves(id),
        data        TEXT,
        created_at  TEXT NOT NULL
    )""",
)


def _schema_v1(db: sqlite3.Connection) -> None:
    # Statement by statement: executescript() would commit the migration's
    # transaction half-way.
    for statement in _SCHEMA_V1:
        db.execute(statement)


_SCHEMA_V2 = (
    # A rowid table: its texts run to kilobytes, which WITHOUT ROWID stores at twice their size.
    """CREATE TABLE texts (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, text TEXT NOT NULL)""",
    "ALTER TABLE verdict_events ADD COLUMN detail_ref TEXT REFERENCES texts(hash)",
    "ALTER TABLE wave_entries ADD COLUMN symbols_ref TEXT REFERENCES texts(hash)",
    "ALTER TABLE wave_entries ADD COLUMN changes_ref TEXT REFERENCES texts(hash)",
    "ALTER TABLE wave_entries ADD COLUMN decision_key TEXT",
    "ALTER TABLE waves ADD COLUMN reuses_wave INTEGER REFERENCES waves(id)",
    "ALTER TABLE waves ADD COLUMN redecided TEXT",
)


def _schema_v2(db: sqlite3.Connection) -> None:
    for statement in _SCHEMA_V2:
        db.execute(statement)


def _schema_v3(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE verdict_events ADD COLUMN rules TEXT")


MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None]]] = [
    (1, "initial schema: waves, entries, append-only verdict events, filed reports", _schema_v1),
    (2, "evidence, verdicts and symbol lists stored once by content hash, and waves that reuse an earlier "
        "wave's decisions by reference, so rescans cost references rather than copies; earlier rows keep "
        "their inline text and are never reused (they have no decision key)", _schema_v2),
    (3, "the ids of the classifier rules that decided a scan event, as a JSON list beside its verdict, so a "
        "ledger says which rule decided without decoding the verdict; reviews and earlier events have none", _schema_v3),
]
"""Ordered (version, reason, apply). Append; never edit a released step."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
