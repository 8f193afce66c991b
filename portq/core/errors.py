"""Errors a user can act on, and which failures are theirs to act on.

Every failure caused by input (a flag, a config file, a matrix, a range, a
ledger file) is raised as a ``PortqError`` whose message is one line naming
what was wrong, where, and what was expected. ``portq.cli`` prints the message
and exits with ``exit_code`` (2 for usage/input errors); anything else that
escapes is an internal error (exit 1).

The environment fails too: a permission, a full disk, a lock held past the
busy timeout, a damaged ledger. ``environment_error`` turns such an
``OSError`` or SQLite error into a ``PortqError`` (exit 2) naming the path and
what to do, so exit 1 is left for portq's own bugs.

This module only defines the types and that translation: it must not print,
log or exit.
"""

from __future__ import annotations

import errno
from pathlib import Path

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class PortqError(Exception):
    """An error caused by input, reported as one line and a non-zero exit."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class ConfigError(PortqError):
    """portq.toml or a config flag is wrong."""


class MatrixError(PortqError):
    """The kernel matrix does not parse or names something unknown."""


class HistoryError(PortqError):
    """The upstream repository or the range cannot be read as asked."""


class LedgerError(PortqError):
    """The ledger file is not a portq ledger, is too new, or is unusable."""


class ScanInterrupted(PortqError):
    """The user stopped a scan; what was finished is kept in the ledger."""

    exit_code = EXIT_INTERRUPTED


class EnvironmentProblem(PortqError):
    """A file, permission, disk or lock problem: nothing portq can fix, all of it the user can."""


SQLITE_PROBLEMS = {
    3: "permission",  # SQLITE_PERM
    5: "locked",  # SQLITE_BUSY
    6: "locked",  # SQLITE_LOCKED
    8: "read-only",  # SQLITE_READONLY
    10: "io",  # SQLITE_IOERR
    11: "damaged",  # SQLITE_CORRUPT
    13: "full",  # SQLITE_FULL
    14: "cannot-open",  # SQLITE_CANTOPEN
    23: "permission",  # SQLITE_AUTH
    26: "not-sqlite",  # SQLITE_NOTADB
}
"""SQLite primary result codes that mean the file or the machine, not portq, is at fault."""

_SQLITE_MESSAGES = (
    ("database is locked", "locked"),
    ("database table is locked", "locked"),
    ("readonly database", "read-only"),
    ("malformed", "damaged"),
    ("disk is full", "full"),
    ("unable to open", "cannot-open"),
    ("disk i/o error", "io"),
    ("file is not a database", "not-sqlite"),
    ("no such table", "damaged"),  # a ledger of the current schema lost a table
    ("no such column", "damaged"),
    ("could not decode to utf-8", "damaged"),  # a text column overwritten with other bytes
)


def sqlite_problem(error: BaseException) -> str | None:
    """The kind of environment problem an SQLite error reports (``SQLITE_PROBLEMS``), or None."""
    if type(error).__module__ != "sqlite3":
        return None
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in SQLITE_PROBLEMS:
        return SQLITE_PROBLEMS[code & 0xFF]
    message = str(error).lower()
    return next((kind for text, kind in _SQLITE_MESSAGES if text in message), None)


def sqlite_message(kind: str, path: Path | str, detail: str = "") -> str:
    """One line for SQLite problem ``kind`` on the file at ``path``: what happened, what to do."""
    because = f" ({detail})" if detail else ""
    return {
        "permission": f"{path}: permission denied{because}: give portq access to it, or pass --ledger PATH",
        "locked": f"{path} is locked by another portq process (or another SQLite user) for longer than "
                  "the busy timeout: run the command again when it has finished",
        "read-only": f"{path} is read-only{because}: this command writes to it; make it and its folder "
                     "writable, or pass --ledger PATH",
        "io": f"disk I/O error on {path}{because}: check that its disk has space and works, "
              "then run the command again",
        "damaged": f"{path} is damaged{because}: restore it from a backup (or move it aside and scan again); "
                   "portq does not write to a damaged ledger",
        "full": f"no space left on the device for {path}: free some space, then run the command again "
                "(what was recorded is kept)",
        "cannot-open": f"cannot open {path}{because}: check that it and its folder exist and are readable",
        "not-sqlite": f"{path} is not a portq ledger (not an SQLite database)",
    }[kind]


_OS_ADVICE = {
    errno.ENOSPC: "no space left on the device: free some space, then run the command again",
    errno.EDQUOT: "disk quota exceeded: free some space, then run the command again",
    errno.EACCES: "permission denied: give portq access to it, or pass another path",
    errno.EPERM: "operation not permitted (immutable or protected): give portq access to it, or pass another path",
    errno.EROFS: "on a read-only file system: pass a path on a writable one",
    errno.ENOTDIR: "a path component is a file, not a directory: pass a directory path",
    errno.EISDIR: "is a directory: expected a file path",
    errno.EEXIST: "already exists: pass a path that does not",
    errno.ENOENT: "does not exist: check the path",
}


def environment_error(error: BaseException, *, ledger: Path | str | None = None) -> PortqError | None:
    """The ``PortqError`` for an OS or SQLite failure, or None when ``error`` is a bug.

    ``ledger`` names the SQLite file a command had open: SQLite's errors do
    not say which file they are about.
    """
    if isinstance(error, OSError):
        advice = _OS_ADVICE.get(error.errno) or (error.strerror or str(error))
        return EnvironmentProblem(f"{error.filename}: {advice}" if error.filename is not None else advice)
    if isinstance(error, RuntimeError) and str(error).startswith("Symlink loop from "):  # pathlib's resolve()
        looped = str(error)[len("Symlink loop from "):]
        return EnvironmentProblem(f"{looped}: a symbolic link loop (it never reaches a file or directory): "
                                  "point it at a real path")
    kind = sqlite_problem(error)
    if kind is None:
        return None
    return EnvironmentProblem(sqlite_message(kind, ledger if ledger is not None else "the ledger", str(error)))
