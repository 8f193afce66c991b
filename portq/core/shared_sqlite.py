"""Opening an SQLite file that several portq processes may create at once.

The ledger and the definition cache are shared by concurrent scans. SQLite's
busy timeout makes ordinary reads and writes wait for each other, but a few
steps of a first open answer BUSY at once, without calling the busy handler:
switching a new file to the WAL journal needs an exclusive lock, and a
connection that finds another one creating the schema or recovering the WAL
can be told "database is locked" straight away. Two scans started together on
a new ledger then saw one of them refuse the file as "not a portq ledger", or
set its definition cache aside and parse everything again.

``retry_while_busy`` repeats such a step until it succeeds or the busy
timeout is spent, so BUSY is only ever reported as what it is (another
process holds the file for longer than the timeout), never as a corrupt or
foreign file. This module knows nothing of either file's schema.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")

_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (the primary code of every extended one)
_FIRST_PAUSE_S = 0.002
_LONGEST_PAUSE_S = 0.05


def is_busy(error: sqlite3.Error) -> bool:
    """Whether ``error`` means another connection holds a lock, not that the file is bad."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    message = str(error).lower()
    return "database is locked" in message or "database is busy" in message


def retry_while_busy(step: Callable[[], T], timeout_s: float) -> T:
    """Run ``step``; while it fails with BUSY, run it again until ``timeout_s`` has passed.

    Any other error, and BUSY once the time is spent, propagates unchanged.
    """
    deadline = time.monotonic() + timeout_s
    pause = _FIRST_PAUSE_S
    while True:
        try:
            return step()
        except sqlite3.OperationalError as error:
            if not is_busy(error) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)  # back off: the holder is usually done within milliseconds
        pause = min(pause * 2, _LONGEST_PAUSE_S)


def use_wal(db: sqlite3.Connection, timeout_s: float) -> None:
    """Give ``db`` the busy timeout, the WAL journal and NORMAL sync that concurrent scans rely on.

    Raises ``sqlite3.Error`` (BUSY only after ``timeout_s``); the caller says
    what the file is and what the user can do.
    """
    db.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
    retry_while_busy(lambda: db.execute("PRAGMA journal_mode = WAL").fetchone(), timeout_s)
    db.execute("PRAGMA synchronous = NORMAL")
