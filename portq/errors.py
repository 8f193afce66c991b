"""Errors a user can act on.

Every failure caused by input (a flag, a config file, a matrix, a range, a
ledger file) is raised as a ``PortqError`` whose message is one line naming
what was wrong, where, and what was expected. ``portq.cli`` prints the message
and exits with ``exit_code`` (2 for usage/input errors); anything else that
escapes is an internal error (exit 1).

This module only defines the types: it must not print, log or exit.
"""

from __future__ import annotations

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
