"""The ledger: waves, entries and their verdict history, in one SQLite file.

Every scan is a **wave** ``PORTQ-N`` (its range, upstream, tree, times, portq
version, matrix and tree fingerprints, status). An **entry** is one upstream
commit as seen by one tree (``upstream, tree, sha``), so the same commit
audited against two ports keeps two histories; a wave lists its entries by
position (``wave_entries``). **Verdict events** are append-only (triggers
refuse UPDATE and DELETE): a scan appends one ``source='scan'`` event per
wave and entry; ``portq review`` appends ``source='review'`` events; an undo
is a review event whose ``undoes`` names the review it cancels. **Reports**
record each filed report by fingerprint, so filing is idempotent.

A rescan's wave may **reuse** a complete wave of the same range and tree
(``reuses_wave``): it records rows and events only for the positions it
decides again (``redecided``) and has every other entry, with its scan
event, by reference (``wave_entries`` reads through the chain; a reused
event is presented as the new wave's, ``Event.reused_from`` naming where it
was recorded). Texts that repeat across waves (a scan event's full verdict,
with its evidence inside, a symbol list, a commit's file changes) are stored
once in ``texts`` by content hash and referenced. Each entry row keeps the
``decision_key`` it was decided under (``portq.classifier.decision_keys``), which is how
a later scan knows what it may reuse (``decisions(wave)``).

The current verdict of an entry is its latest standing human review, else its
latest scan. A later scan that disagrees with the standing review is kept and
shown as a *proposal*, never applied over the human (``Current.proposal``).

Public API (``open_ledger(path)`` returns a ``Ledger``; use it as a context
manager or call ``close``):

- waves: ``begin_wave(..., reuses_wave=None, redecided=()) -> (Wave, resumed)``,
  ``record_scan_entries(wave, [...])``, ``recorded_positions(wave)``, ``finish_wave(wave, status)``,
  ``reusable_wave(...)``, ``decisions(wave) -> {position: Decision}``,
  ``wave(n)``, ``latest_wave(range_spec=None, upstream=None)``, ``waves()``;
- entries: ``wave_entries(wave) -> [EntryRecord]``, ``entry_at(wave, n)``,
  ``current(entry_id) -> Current``, ``history(entry_id) -> [Event]``;
- reviews: ``record_review(entry_id, verdict, justification, why, who, ...)``,
  ``undo_review(entry_id, who, why)`` (restores what stood before the review:
  an earlier review, else the scan's verdict);
- reports: ``record_report(fingerprint, path, ...) -> (Report, created)``,
  ``report(fingerprint)``, ``reports_for(entry_id)``.

Durability and concurrency: WAL journal, a generous busy timeout so that
concurrent portq processes wait for each other instead of failing (the
first-open steps that SQLite answers BUSY at once are retried within it, so
two scans creating one ledger both open it; a lock held longer is reported as
a lock, never as a foreign file), and one
``BEGIN IMMEDIATE`` transaction per batch of recorded entries
(``record_scan_entries``), so a scan killed at any point leaves whole
entries only. Reading a wave back costs two queries however many entries it
has, and an event's evidence and full verdict are decoded from JSON only
when asked for; a scan that recorded every entry of its wave itself is given
back the records it wrote (``keep_recorded``), unless a review
names one of them. A wave left ``running`` by a dead process
(or ``interrupted`` by Ctrl-C) is resumed by the next scan of the same range,
tree, matrix and portq version; a wave whose writer is alive is never
touched by another process, so two scans at once record two waves.

Schema changes go into ``MIGRATIONS`` (``portq.ledger.schema``: ordered, each
with its reason). A
file that is not a portq ledger, or one written by a newer portq, is refused
with a ``LedgerError`` and left untouched.

This module stores and answers; it does not read git, decide verdicts or
print.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
from dataclasses import dataclass, field, is_dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from portq import __version__
from portq.core.errors import LedgerError, sqlite_message, sqlite_problem
from portq.core.model import JUSTIFICATIONS, NOT_APPLICABLE, VERDICTS, Evidence, Verdict
from portq.core.shared_sqlite import retry_while_busy, use_wal

APPLICATION_ID = 0x706F7274  # "port": marks the SQLite file as a portq ledger
BUSY_TIMEOUT_S = 60.0
"""A generous busy timeout keeps concurrent writers waiting rather than failing."""


_SQLITE_MAGIC = b"SQLite format 3\x00"


from portq.ledger.schema import MIGRATIONS, SCHEMA_VERSION  # noqa: E402,F401 (part of the store's API)


_EVENT_SELECT = (
    "SELECT ve.id, ve.entry_id, ve.wave_id, ve.source, ve.verdict, ve.justification, ve.decided_by, ve.reason, "
    "ve.who, ve.why, ve.evidence, COALESCE(detail_text.text, ve.detail), ve.undoes, "
    "ve.version, ve.created_at, ve.rules FROM verdict_events ve "
    "LEFT JOIN texts detail_text ON detail_text.hash = ve.detail_ref"
)
"""verdict_events in ``Event`` field order, ``evidence``/``detail`` as their JSON text. A scan event
since schema 2 references its full verdict by content hash and keeps its evidence only there
(``evidence`` is empty); reviews, and scans recorded before, keep both inline."""

_VIEW_CHAIN = """
WITH RECURSIVE chain(wave_id, depth) AS (
    SELECT :wave, 0
    UNION ALL
    SELECT w.reuses_wave, chain.depth + 1 FROM waves w JOIN chain ON w.id = chain.wave_id
    WHERE w.reuses_wave IS NOT NULL
)
"""
_VIEW_WHERE = """
WHERE (chain.depth = 0 OR we.position NOT IN
       (SELECT value FROM json_each(COALESCE((SELECT redecided FROM waves WHERE id = :wave), '[]'))))
  AND (:position IS NULL OR we.position = :position)
GROUP BY we.position
"""
_VIEW_ROWS = _VIEW_CHAIN + """
SELECT we.position, we.wave_id AS source_wave, we.entry_id, we.rows,
       COALESCE(symbols_text.text, we.symbols) AS symbols, changes_text.text AS changes, we.decision_key,
       MIN(chain.depth) AS depth
FROM wave_entries we JOIN chain ON we.wave_id = chain.wave_id
LEFT JOIN texts symbols_text ON symbols_text.hash = we.symbols_ref
LEFT JOIN texts changes_text ON changes_text.hash = we.changes_ref
""" + _VIEW_WHERE
"""The entries a wave has: its own rows, then (for positions it does not decide itself) those of
the wave it reuses, and so on down the chain (SQLite takes the other columns from the row of the
smallest depth). Only complete waves are reused, so only the top wave's ``redecided`` positions
need excluding: an unfinished rescan never shows a stale decision for an entry it re-decides."""

_VIEW_POSITIONS = _VIEW_CHAIN + "SELECT we.position FROM wave_entries we JOIN chain ON we.wave_id = chain.wave_id" \
    + _VIEW_WHERE
"""The positions of ``_VIEW_ROWS``, without reading the texts its rows reference (what counting needs)."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str) -> bool:
    """Whether the process that owns a running wave may still be writing it."""
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return True  # another machine: assume alive rather than steal its wave
    pid = int(pid_text)
    if pid == os.getpid():
        return False  # this process is not writing it now: it asked to begin a wave
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


from portq.ledger.records import (  # noqa: E402,F401 (part of the store's API)
    REVIEW_DECIDED_BY, Current, Decision, EntryRecord, Event, Report, Wave, stored_json)


def _read_only_reason(path: Path) -> str | None:
    """Why this process cannot write the ledger at ``path`` (or create it), or None."""
    folder = path.parent
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable"
    return None


EXPECTED_TABLES = ("waves", "entries", "wave_entries", "verdict_events", "reports", "texts")
"""The tables of the current schema: a ledger at SCHEMA_VERSION that lacks one is damaged."""


def open_ledger(path: Path | str, *, create: bool = True) -> "Ledger":
    """Open (and, with ``create``, create or migrate) the ledger at ``path``."""
    return Ledger(Path(path), create=create)


class Ledger:
    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        self._keeping: dict[int, list[EntryRecord]] = {}  # wave id -> its records as recorded (keep_recorded)
        if not path.exists():
            if not create:
                raise LedgerError(f"no ledger at {path}: run portq scan first (or pass --ledger PATH)")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise LedgerError(f"cannot create the ledger directory {path.parent}: {error.strerror}") from None
        elif path.is_dir():
            raise LedgerError(f"{path} is a directory, not a portq ledger file")
        else:
            self._check_header()
        self.read_only = _read_only_reason(path)
        """Why this process cannot write the ledger (None when it can): a read-only
        ledger still answers every read, and any write is refused before it starts."""
        if self.read_only and create:
            raise LedgerError(sqlite_message("read-only", path, self.read_only))
        self.db = self._connect(immutable=False)
        try:
            try:
                # identity first: a foreign file is refused before anything is written to it
                retry_while_busy(self._check_identity, BUSY_TIMEOUT_S)
            except sqlite3.OperationalError as error:
                if not (self.read_only and sqlite_problem(error) in ("read-only", "cannot-open")):
                    raise
                # A WAL ledger in a folder this process cannot write has no shared-memory
                # file to read through; nobody without write access can change it either.
                self.db.close()
                self.db = self._connect(immutable=True)
                self._check_identity()
            if self.read_only:
                if self._version() < SCHEMA_VERSION:
                    raise LedgerError(
                        f"{path} needs a schema upgrade, which needs write access ({self.read_only}): "
                        "run portq scan where the ledger is writable"
                    )
            else:
                use_wal(self.db, BUSY_TIMEOUT_S)
                self.db.execute("PRAGMA foreign_keys = ON")
                retry_while_busy(self._migrate, BUSY_TIMEOUT_S)
        except sqlite3.DatabaseError as error:
            self.db.close()
            kind = sqlite_problem(error) or "not-sqlite"
            if kind == "not-sqlite":
                raise LedgerError(f"{path} is not a portq ledger ({error})") from None
            raise LedgerError(sqlite_message(kind, path, str(error))) from None
        except LedgerError:
            self.db.close()
            raise

    # --- opening ---------------------------------------------------------------

    def _connect(self, *, immutable: bool) -> sqlite3.Connection:
        if self.read_only:
            options = "mode=ro&immutable=1" if immutable else "mode=ro"
            target, uri = f"{Path(self.path).absolute().as_uri()}?{options}", True
        else:
            target, uri = str(self.path), False
        try:
            db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=uri)
        except sqlite3.Error as error:
            raise LedgerError(sqlite_message(sqlite_problem(error) or "cannot-open", self.path, str(error))) from None
        db.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        return db

    def _check_header(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                header = handle.read(len(_SQLITE_MAGIC))
        except OSError as error:
            raise LedgerError(
                f"cannot read the ledger {self.path}: {error.strerror}: give portq read access, or pass --ledger PATH"
            ) from None
        if header and header != _SQLITE_MAGIC:
            raise LedgerError(f"{self.path} is not a portq ledger (not an SQLite database)")

    def require_intact(self) -> None:
        """Refuse to write into a ledger whose pages are damaged (``PRAGMA quick_check``)."""
        problems = [r[0] for r in self.db.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise LedgerError(sqlite_message("damaged", self.path, problems[0]))

    def _version(self) -> int:
        has_table = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not has_table:
            return 0
        row = self.db.execute("SELECT version FROM schema_version").fetchone()
        return int(row[0]) if row else 0

    def _check_identity(self) -> None:
        application_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if application_id not in (0, APPLICATION_ID) or (tables and "schema_version" not in tables):
            raise LedgerError(f"{self.path} is not a portq ledger (an SQLite database with other tables)")
        version = self._version()
        if version > SCHEMA_VERSION:
            raise LedgerError(
                f"{self.path} has ledger schema {version}, newer than this portq ({__version__}) "
                f"understands ({SCHEMA_VERSION}): upgrade portq"
            )
        # Read the tables again after the version: another process may have
        # created the whole schema (one transaction) since ``tables`` was read.
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [name for name in EXPECTED_TABLES if name not in tables]
        if version == SCHEMA_VERSION and missing:
            raise LedgerError(sqlite_message("damaged", self.path, f"table {missing[0]} is missing"))

    def _migrate(self) -> None:
        if self._version() == SCHEMA_VERSION:
            return
        with self._transaction():
            version = self._version()  # another process may have migrated meanwhile
            if version > SCHEMA_VERSION:
                raise LedgerError(f"{self.path} has ledger schema {version}, newer than this portq understands")
            if version == 0:
                self.db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                self.db.execute("INSERT INTO schema_version VALUES (0)")
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for step, _reason, apply in MIGRATIONS:
                if step > version:
                    apply(self.db)
                    self.db.execute("UPDATE schema_version SET version = ?", (step,))

    def _transaction(self):
        ledger = self

        class Transaction:
            def __enter__(self):
                if ledger.read_only:
                    raise LedgerError(sqlite_message("read-only", ledger.path, ledger.read_only))
                ledger.db.execute("BEGIN IMMEDIATE")
                return ledger.db

            def __exit__(self, kind, value, traceback):
                if kind is None:
                    ledger.db.execute("COMMIT")
                else:
                    ledger.db.execute("ROLLBACK")
                return False

        return Transaction()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- waves -------------------------------------------------------------------

    def begin_wave(
        self,
        *,
        range_spec: str,
        upstream: str,
        base_sha: str,
        tip_sha: str,
        tree: str,
        entry_count: int,
        matrix_fingerprint: str,
        tree_fingerprint: str,
        reuses_wave: int | None = None,
        redecided: Sequence[int] = (),
    ) -> tuple[Wave, bool]:
        """A new wave, or an abandoned one of the same scan to complete: ``(wave, resumed)``.

        With ``reuses_wave`` (a complete wave of the same range and tree), the
        new wave decides only the ``redecided`` positions itself and has the
        other entries of that wave by reference.
        """
        redecided_text = json.dumps(sorted(redecided)) if reuses_wave is not None else None
        key = (upstream, base_sha, tip_sha, tree, matrix_fingerprint, tree_fingerprint, __version__,
               reuses_wave, redecided_text)
        self.require_intact()  # a wave is never begun in a damaged file
        with self._transaction() as db:
            candidates = db.execute(
                "SELECT id, owner, status FROM waves WHERE upstream = ? AND base_sha = ? AND tip_sha = ? "
                "AND tree = ? AND matrix_fingerprint = ? AND tree_fingerprint = ? AND portq_version = ? "
                "AND reuses_wave IS ? AND redecided IS ? AND status != 'complete' ORDER BY id",
                key,
            ).fetchall()
            for row in candidates:
                if row["status"] == "interrupted" or not _owner_alive(row["owner"]):
                    db.execute("UPDATE waves SET owner = ?, status = 'running' WHERE id = ?", (_owner(), row["id"]))
                    return self._wave_row(row["id"]), True
            cursor = db.execute(
                "INSERT INTO waves (range_spec, upstream, base_sha, tip_sha, tree, entry_count, portq_version, "
                "matrix_fingerprint, tree_fingerprint, status, owner, started_at, reuses_wave, redecided) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
                (range_spec, upstream, base_sha, tip_sha, tree, entry_count, __version__,
                 matrix_fingerprint, tree_fingerprint, _owner(), _now(), reuses_wave, redecided_text),
            )
            return self._wave_row(cursor.lastrowid), False

    def record_scan_entry(self, wave: Wave, **entry: Any) -> bool:
        """Record one entry of a wave and its scan verdict atomically (see ``record_scan_entries``)."""
        return self.record_scan_entries(wave, [entry]) == 1

    def keep_recorded(self, wave: Wave) -> list[EntryRecord]:
        """A list that every later ``record_scan_entries`` of ``wave`` (in this process) appends the
        ``EntryRecord`` of each entry it records to, as ``wave_entries`` would read it back while no
        review names the entry: pass it to ``wave_entries`` as ``recorded``."""
        kept: list[EntryRecord] = []
        self._keeping[wave.id] = kept
        return kept

    def record_scan_entries(self, wave: Wave, entries: Sequence[dict[str, Any]]) -> int:
        """Record entries of a wave with their scan verdicts in ONE transaction.

        Each entry is a dict with ``position, sha, title, pr, rows, symbols,
        verdict`` (a ``model.Verdict``), and optionally ``changes`` (the
        commit's ``[old path, new path]`` pairs) and ``decision_key`` (what
        the decision rests on, ``portq.classifier.decision_keys``), without which a
        later scan never reuses it. Evidence, the full verdict and the symbol
        list are stored once by content hash and referenced. A position the
        wave already has is skipped (a resumed scan may classify it again).
        Returns how many were recorded. A batch is all or nothing, so a
        killed scan loses at most the batch in flight, never half an entry.
        Each recorded entry's record is kept where ``keep_recorded`` asked for it.
        """
        kept = self._keeping.get(wave.id)
        created_at = _now()
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO entries (upstream, tree, sha, title, pr) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (upstream, tree, sha) DO UPDATE SET title = excluded.title, pr = excluded.pr",
                [(wave.upstream, wave.tree, entry["sha"], entry["title"], entry["pr"]) for entry in entries],
            )
            ids = self._entry_ids(wave, [entry["sha"] for entry in entries])
            # what the wave's own rows already hold is skipped, as the key and unique columns would refuse it
            taken, taken_ids = self._recorded_among(wave, [entry["position"] for entry in entries], set(ids.values()))
            texts: dict[str, str] = {}  # hash -> text, in order of first use
            placed, events = [], []
            for entry in entries:
                entry_id = ids[entry["sha"]]
                if entry["position"] in taken or entry_id in taken_ids:
                    continue
                taken.add(entry["position"])
                taken_ids.add(entry_id)
                changes = entry.get("changes")
                placed.append((wave.id, entry["position"], entry_id, json.dumps(list(entry["rows"])),
                               _hashed(texts, to_json_text(list(entry["symbols"]))),
                               _hashed(texts, json.dumps(changes)) if changes is not None else None,
                               entry.get("decision_key")))
                verdict: Verdict = entry["verdict"]
                events.append((entry_id, wave.id, verdict.verdict, verdict.justification, verdict.decided_by,
                               verdict.reason, _hashed(texts, to_json_text(verdict)), verdict.version or __version__,
                               created_at, json.dumps(verdict.rules) if verdict.rules else None))
            db.executemany("INSERT OR IGNORE INTO texts (hash, text) VALUES (?, ?)", list(texts.items()))
            db.executemany(
                "INSERT INTO wave_entries (wave_id, position, entry_id, rows, symbols, symbols_ref, changes_ref, "
                "decision_key) VALUES (?, ?, ?, ?, '', ?, ?, ?)", placed)
            db.executemany(  # the evidence is read from the verdict's own (``Event.evidence``)
                "INSERT INTO verdict_events (entry_id, wave_id, source, verdict, justification, decided_by, "
                "reason, evidence, detail_ref, version, created_at, rules) VALUES (?, ?, 'scan', ?, ?, ?, ?, '', ?, ?, ?, ?)",
                events)
            if kept is not None and events:
                last_id = db.execute("SELECT last_insert_rowid()").fetchone()[0]
                kept.extend(self._as_recorded(wave, entries, placed, events, texts, last_id))
        return len(placed)

    def _as_recorded(self, wave: Wave, entries, placed, events, texts: dict[str, str], last_id: int) -> list[EntryRecord]:
        """The records of the entries one ``record_scan_entries`` transaction just wrote, made from what it
        wrote. The transaction holds the write lock and nothing else inserts events, so its events have
        the consecutive ids that end at ``last_id``; that is checked, and where it does not hold nothing is
        kept (the wave is then read back)."""
        first_id = last_id - len(events) + 1
        count = self.db.execute("SELECT COUNT(*) FROM verdict_events WHERE id BETWEEN ? AND ? AND wave_id = ? "
                                "AND source = 'scan'", (first_id, last_id, wave.id)).fetchone()[0]
        if count != len(events):
            return []
        about = {entry["position"]: entry for entry in entries}
        records = []
        for number, ((_, position, entry_id, rows, symbols_ref, _, _), event) in enumerate(zip(placed, events)):
            entry = about[position]
            scan = Event(first_id + number, entry_id, wave.id, "scan", *event[2:6], None, None, "", texts[event[6]],
                         None, *event[7:10])
            records.append(EntryRecord(
                entry_id=entry_id, wave_id=wave.id, position=position, upstream=wave.upstream, tree=wave.tree,
                sha=entry["sha"], title=entry["title"], pr=entry["pr"], rows=stored_json(rows, "an entry's rows"),
                symbols=stored_json(texts[symbols_ref], "an entry's symbols"), scan=scan, current=Current(scan),
                source_wave=wave.id))
        return records

    def _entry_ids(self, wave: Wave, shas: list[str]) -> dict[str, int]:
        """sha -> entry id of the wave's upstream and tree, for ``shas``."""
        ids: dict[str, int] = {}
        for start in range(0, len(shas), _IN_CHUNK):
            chunk = shas[start:start + _IN_CHUNK]
            ids.update(self.db.execute(
                f"SELECT sha, id FROM entries WHERE upstream = ? AND tree = ? AND sha IN ({','.join('?' * len(chunk))})",
                (wave.upstream, wave.tree, *chunk)).fetchall())
        return ids

    def _recorded_among(self, wave: Wave, positions: list[int], entry_ids: set[int]) -> tuple[set[int], set[int]]:
        """Which of ``positions``, and of ``entry_ids``, the wave's own rows hold."""
        found_positions: set[int] = set()
        found_ids: set[int] = set()
        for start in range(0, len(positions), _IN_CHUNK):
            chunk = positions[start:start + _IN_CHUNK]
            found_positions.update(row[0] for row in self.db.execute(
                f"SELECT position FROM wave_entries WHERE wave_id = ? AND position IN ({','.join('?' * len(chunk))})",
                (wave.id, *chunk)))
        ordered = sorted(entry_ids)
        for start in range(0, len(ordered), _IN_CHUNK):
            chunk = ordered[start:start + _IN_CHUNK]
            found_ids.update(row[0] for row in self.db.execute(
                f"SELECT entry_id FROM wave_entries WHERE wave_id = ? AND entry_id IN ({','.join('?' * len(chunk))})",
                (wave.id, *chunk)))
        return found_positions, found_ids

    def recorded_positions(self, wave: Wave) -> set[int]:
        """The positions the wave has: those it recorded, and those it reuses."""
        return {row[0] for row in self.db.execute(_VIEW_POSITIONS, {"wave": wave.id, "position": None})}

    def finish_wave(self, wave: Wave, status: str = "complete") -> Wave:
        """Mark a wave complete (all entries recorded or reused) or interrupted."""
        if status not in ("complete", "interrupted"):
            raise ValueError(f"status must be complete or interrupted, not {status!r}")
        with self._transaction() as db:
            if status == "complete":
                recorded = len(self.recorded_positions(wave))
                if recorded != wave.entry_count:
                    raise LedgerError(
                        f"{wave.name} has {recorded} of {wave.entry_count} entries; it cannot be complete", 1
                    )
            db.execute("UPDATE waves SET status = ?, finished_at = ? WHERE id = ?", (status, _now(), wave.id))
        return self._wave_row(wave.id)

    def reusable_wave(self, *, upstream: str, base_sha: str, tip_sha: str, tree: str) -> Wave | None:
        """The newest complete wave of this range and tree, whose decisions a rescan may reuse."""
        row = self.db.execute(
            "SELECT id FROM waves WHERE upstream = ? AND base_sha = ? AND tip_sha = ? AND tree = ? "
            "AND status = 'complete' ORDER BY id DESC LIMIT 1",
            (upstream, base_sha, tip_sha, tree),
        ).fetchone()
        return self._wave_row(row[0]) if row else None

    def decisions(self, wave: Wave) -> dict[int, "Decision"]:
        """position -> what a rescan needs to know of each entry's decision in ``wave`` (one query)."""
        rows = self.db.execute(
            f"SELECT view.position, view.source_wave, view.rows, view.changes, view.decision_key, e.sha, "
            f"ve.justification FROM ({_VIEW_ROWS}) view JOIN entries e ON e.id = view.entry_id "
            "LEFT JOIN verdict_events ve ON ve.entry_id = view.entry_id AND ve.wave_id = view.source_wave "
            "AND ve.source = 'scan'",
            {"wave": wave.id, "position": None},
        ).fetchall()
        return {
            row["position"]: Decision(
                sha=row["sha"],
                rows=tuple(stored_json(row["rows"], "an entry's rows")),
                changes=(tuple(tuple(pair) for pair in stored_json(row["changes"], "an entry's changes"))
                         if row["changes"] else None),
                key=row["decision_key"],
                justification=row["justification"],
                wave_id=row["source_wave"],
            )
            for row in rows
        }

    def _wave_row(self, wave_id: int) -> Wave:
        row = self.db.execute("SELECT * FROM waves WHERE id = ?", (wave_id,)).fetchone()
        return Wave(**{k: row[k] for k in row.keys() if k != "owner"})

    def wave(self, wave: int | str) -> Wave:
        """A wave by number or name (``3`` or ``"PORTQ-3"``)."""
        text = str(wave)
        number = text.upper().removeprefix("PORTQ-")
        if not number.isdigit():
            raise LedgerError(f"wave '{wave}': expected PORTQ-N or N")
        row = self.db.execute("SELECT id FROM waves WHERE id = ?", (int(number),)).fetchone()
        if row is None:
            raise LedgerError(f"no wave PORTQ-{number} in {self.path}")
        return self._wave_row(row[0])

    def waves(self) -> list[Wave]:
        return [self._wave_row(r[0]) for r in self.db.execute("SELECT id FROM waves ORDER BY id")]

    def latest_wave(self, range_spec: str | None = None, upstream: str | None = None) -> Wave | None:
        """The newest wave, or the newest of ``range_spec``.

        A range matches the text given to the scan, or its resolved SHAs by
        prefix (``portq show 3 --range c76a4252..e126687a``).
        """
        clauses, arguments = [], []
        if upstream:
            clauses.append("upstream = ?")
            arguments.append(upstream)
        if range_spec:
            left, sep, right = range_spec.partition("..")
            condition = "range_spec = ?"
            arguments.append(range_spec)
            if sep and _is_hex(left) and _is_hex(right):
                condition += " OR (base_sha LIKE ? AND tip_sha LIKE ?)"
                arguments += [left.lower() + "%", right.lower() + "%"]
            clauses.append(f"({condition})")
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        row = self.db.execute(f"SELECT id FROM waves {where} ORDER BY id DESC LIMIT 1", arguments).fetchone()
        return self._wave_row(row[0]) if row else None

    # --- entries and events ----------------------------------------------------

    def wave_entries(self, wave: Wave, recorded: Sequence[EntryRecord] | None = None) -> list[EntryRecord]:
        """Every entry of a wave (recorded or reused), in position order (two queries, however many entries).

        ``recorded``: the records ``record_scan_entries`` kept of this wave's entries (in this process):
        when they are every entry of a wave that reuses none, and no review names any of them, they are
        what a read-back would give (each entry's latest scan event is this wave's), and they are
        returned instead of reading back what was just written."""
        if recorded is not None and wave.reuses_wave is None and len(recorded) == wave.entry_count:
            ordered = sorted(recorded, key=lambda record: record.position)
            # a review, or another wave's scan event recorded since (a concurrent scan), changes what stands
            if [r.position for r in ordered] == list(range(1, wave.entry_count + 1)) and not self.db.execute(
                    "SELECT 1 FROM wave_entries we JOIN verdict_events ve ON ve.entry_id = we.entry_id "
                    "WHERE we.wave_id = :wave AND (ve.source = 'review' OR (ve.wave_id IS NOT :wave AND ve.id > :first)) "
                    "LIMIT 1", {"wave": wave.id, "first": min(r.scan.id for r in ordered)}).fetchone():
                return ordered
        rows = self.db.execute(
            f"SELECT view.*, e.* FROM ({_VIEW_ROWS}) view JOIN entries e ON e.id = view.entry_id "
            "ORDER BY view.position",
            {"wave": wave.id, "position": None},
        ).fetchall()
        events: dict[int, list[Event]] = {}
        # What the records need of each entry's history, however many waves it is in: every
        # review, the scan event this wave shows, and the latest scan.
        for row in self.db.execute(
            f"WITH view AS ({_VIEW_ROWS}) {_EVENT_SELECT} WHERE ve.entry_id IN (SELECT entry_id FROM view) AND ("
            "ve.source = 'review' OR (ve.entry_id, ve.wave_id) IN (SELECT entry_id, source_wave FROM view) "
            "OR ve.id IN (SELECT MAX(id) FROM verdict_events WHERE source = 'scan' "
            "AND entry_id IN (SELECT entry_id FROM view) GROUP BY entry_id)) ORDER BY ve.entry_id, ve.id",
            {"wave": wave.id, "position": None},
        ):
            event = Event(*row)
            events.setdefault(event.entry_id, []).append(event)
        return [self._entry_record(wave, row, events.get(row["id"], [])) for row in rows]

    def entry_at(self, wave: Wave, position: int) -> EntryRecord:
        row = self.db.execute(
            f"SELECT view.*, e.* FROM ({_VIEW_ROWS}) view JOIN entries e ON e.id = view.entry_id",
            {"wave": wave.id, "position": position},
        ).fetchone()
        if row is None:
            recorded = len(self.recorded_positions(wave))
            raise LedgerError(
                f"{wave.name} ({wave.range_spec}) has no entry {position}: it has entries 1..{wave.entry_count}"
                + (f", {recorded} recorded" if recorded != wave.entry_count else "")
            )
        return self._entry_record(wave, row)

    def _entry_record(self, wave: Wave, row: sqlite3.Row, events: list[Event] | None = None) -> EntryRecord:
        if events is None:
            events = self._events(row["id"])
        source_wave = row["source_wave"]
        scan = next((e for e in events if e.source == "scan" and e.wave_id == source_wave), None)
        if scan is not None and source_wave != wave.id:
            scan = scan.reused_by(wave.id)  # this wave's decision, by reference (recorded in ``source_wave``)
        return EntryRecord(
            entry_id=row["id"],
            wave_id=wave.id,
            position=row["position"],
            upstream=row["upstream"],
            tree=row["tree"],
            sha=row["sha"],
            title=row["title"],
            pr=row["pr"],
            rows=stored_json(row["rows"], "an entry's rows"),
            symbols=stored_json(row["symbols"], "an entry's symbols"),
            scan=scan,
            current=_current(events, scan if scan is not None and scan.reused_from else None),
            source_wave=source_wave,
        )

    def _events(self, entry_id: int) -> list[Event]:
        rows = self.db.execute(f"{_EVENT_SELECT} WHERE ve.entry_id = ? ORDER BY ve.id", (entry_id,))
        return [Event(*row) for row in rows]

    def history(self, entry_id: int) -> list[Event]:
        """Every verdict event of an entry, oldest first; undone reviews marked."""
        events = self._events(entry_id)
        undone = {e.undoes for e in events if e.undoes is not None}
        return [replace(e, undone=e.id in undone) for e in events]

    def current(self, entry_id: int) -> Current:
        return _current(self._events(entry_id))

    def record_review(
        self,
        entry_id: int,
        *,
        verdict: str,
        justification: str | None,
        why: str,
        who: str,
        evidence: Iterable[Evidence | dict[str, Any]] = (),
        wave_id: int | None = None,
        when: str | None = None,
    ) -> Event:
        """Append a human decision; it stands until a later review or an undo. ``when``: the time it was
        decided, when that was before now (a review the reviews file carries)."""
        if verdict not in VERDICTS:
            raise LedgerError(f"--verdict {verdict}: expected one of {', '.join(VERDICTS)}")
        if verdict == NOT_APPLICABLE and justification not in JUSTIFICATIONS:
            raise LedgerError(
                f"a NOT_APPLICABLE review needs --justification, one of {', '.join(JUSTIFICATIONS)}"
            )
        if not why or not why.strip():
            raise LedgerError("a review needs a reason: --because \"...\"")
        items = [e.to_dict() if isinstance(e, Evidence) else dict(e) for e in evidence]
        return self._append_review(entry_id, verdict, justification, why, who, items, wave_id, undoes=None, when=when)

    def undo_review(self, entry_id: int, *, who: str, why: str = "undo", wave_id: int | None = None) -> Event:
        """Cancel the standing review; the entry falls back to what stood before it."""
        with self._transaction():
            events = self._events(entry_id)
            standing = _standing_reviews(events)
            if not standing:
                raise LedgerError(f"entry {entry_id} has no review to undo")
            cancelled = standing[-1]
            scans = [e for e in events if e.source == "scan"]
            restored = standing[-2] if len(standing) > 1 else (scans[-1] if scans else cancelled)
            return self._insert_review(
                entry_id, restored.verdict, restored.justification, why, who, [], wave_id, undoes=cancelled.id
            )

    def _append_review(self, entry_id, verdict, justification, why, who, evidence, wave_id, undoes, when=None) -> Event:
        with self._transaction():
            return self._insert_review(entry_id, verdict, justification, why, who, evidence, wave_id, undoes, when)

    def _insert_review(self, entry_id, verdict, justification, why, who, evidence, wave_id, undoes, when=None) -> Event:
        self.require_intact()  # a human decision is never written into a damaged file
        if self.db.execute("SELECT 1 FROM entries WHERE id = ?", (entry_id,)).fetchone() is None:
            raise LedgerError(f"no entry with id {entry_id} in {self.path}")
        cursor = self.db.execute(
            "INSERT INTO verdict_events (entry_id, wave_id, source, verdict, justification, decided_by, reason, who, "
            "why, evidence, undoes, version, created_at) VALUES (?, ?, 'review', ?, ?, ?, '', ?, ?, ?, ?, ?, ?)",
            (entry_id, wave_id, verdict, justification, REVIEW_DECIDED_BY, who, why, json.dumps(evidence),
             undoes, __version__, when or _now()),
        )
        return next(e for e in self._events(entry_id) if e.id == cursor.lastrowid)

    # --- reports -------------------------------------------------------------------

    def record_report(
        self,
        fingerprint: str,
        path: str,
        *,
        entry_id: int | None = None,
        wave_id: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> tuple[Report, bool]:
        """Record a filed report once: ``(report, created)``; an existing fingerprint wins."""
        with self._transaction() as db:
            created = db.execute(
                "INSERT OR IGNORE INTO reports (fingerprint, path, entry_id, wave_id, data, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (fingerprint, str(path), entry_id, wave_id, json.dumps(data) if data is not None else None, _now()),
            ).rowcount == 1
        return self.report(fingerprint), created

    def report(self, fingerprint: str) -> Report | None:
        row = self.db.execute("SELECT * FROM reports WHERE fingerprint = ?", (fingerprint,)).fetchone()
        return _report(row) if row else None

    def reports_for(self, entry_id: int) -> list[Report]:
        rows = self.db.execute("SELECT * FROM reports WHERE entry_id = ? ORDER BY created_at, fingerprint", (entry_id,))
        return [_report(r) for r in rows]


def _fields_of(value: Any) -> dict[str, Any]:
    if is_dataclass(value):
        return value.__dict__
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


_ENCODER = json.JSONEncoder(default=_fields_of)
"""``json.dumps(value, default=_fields_of)``, built once rather than per call."""


_IN_CHUNK = 500
"""Values per ``IN (...)`` list, below SQLite's limit on bound variables."""


def _hashed(texts: dict[str, str], text: str) -> str:
    """The content hash under which ``text`` is stored once, noted in ``texts`` for one write."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    texts.setdefault(digest, text)
    return digest


def to_json_text(value: Any) -> str:
    """JSON of a dataclass tree, encoded in one pass (no intermediate dicts)."""
    return _ENCODER.encode(value)


def _report(row: sqlite3.Row) -> Report:
    return Report(**{**dict(row), "data": stored_json(row["data"], "a report's data") if row["data"] else None})


def _is_hex(text: str) -> bool:
    return len(text) >= 4 and all(c in "0123456789abcdefABCDEF" for c in text)


def _standing_reviews(events: Sequence[Event]) -> list[Event]:
    """Reviews not cancelled by a later undo, oldest first."""
    undone = {e.undoes for e in events if e.undoes is not None}
    return [e for e in events if e.source == "review" and e.undoes is None and e.id not in undone]


def _current(events: Sequence[Event], reused: Event | None = None) -> Current:
    """The standing verdict: the latest standing review, else the latest scan.

    ``reused`` is the scan event a reusing wave presents as its own: it is
    that wave's decision, so it is later than a review made on an earlier
    wave, and shown as a proposal when it disagrees, as a re-decided scan is.
    """
    standing = _standing_reviews(events)
    scans = [e for e in events if e.source == "scan"]
    latest_scan = scans[-1] if scans else None
    if reused is not None and latest_scan is not None and reused.id == latest_scan.id:
        latest_scan = reused
    if not standing:
        return Current(latest_scan)
    review = standing[-1]
    later = latest_scan is not None and (
        latest_scan.id > review.id
        or (latest_scan is reused and review.wave_id is not None and reused.wave_id > review.wave_id)
    )
    proposal = None
    if later and (latest_scan.verdict, latest_scan.justification) != (review.verdict, review.justification):
        proposal = latest_scan
    return Current(review, proposal)
