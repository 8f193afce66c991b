"""Writing a file a user named (``--html PATH``, ``--output PATH``, a report)
without harming what is already there.

A page or report is written to a temporary file in the target's own folder
and renamed over the target, so a reader never sees half a file and a crash
leaves the old one whole. Only a regular file is ever replaced: a symlink, a
FIFO, a device, a socket or a folder at the path is refused (exit 2) rather
than swapped for a regular file (``/dev/null`` stays a device), and so is an
existing regular file that holds binary data, which portq never wrote. The
path ``-`` means standard output.

This module only writes bytes it is given; it must not render, read the
ledger or decide what goes in a file.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from portq.core.errors import PortqError

STDOUT = "-"
"""The path that means standard output."""

_SNIFF_BYTES = 8192
"""How much of an existing file is read to tell text from binary data."""

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class UnsafeTarget(PortqError):
    """The path names something portq must not replace with a regular file."""


def is_stdout(path: str | os.PathLike) -> bool:
    return str(path) == STDOUT


def _kind(mode: int) -> str | None:
    return next((name for test, name in _KINDS if test(mode)), None)


def _looks_binary(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start < len(head) - 4  # a multi-byte character cut at the sniff boundary is text
    return False


def check_target(path: Path, what: str) -> os.stat_result | None:
    """Refuse ``path`` unless it is absent or a regular text file; its ``lstat`` when it exists."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    kind = _kind(status.st_mode)
    if kind is not None or not stat.S_ISREG(status.st_mode):
        raise UnsafeTarget(f"{what} {path}: is {kind or 'not a regular file'}; expected a regular file or a new path "
                           f"(portq replaces only regular files{'; use - for standard output' if kind != 'a directory' else ''})")
    if _looks_binary(path):
        raise UnsafeTarget(f"{what} {path}: is a binary file that portq did not write; expected a text file or a new "
                           "path (move it aside to replace it)")
    return status


def write_text(path: str | os.PathLike, text: str, *, what: str = "--output", stream=None) -> bool:
    """Write ``text`` to ``path`` (``-``: ``stream``, standard output) safely.

    ``False`` when the file already held exactly ``text`` (nothing written).
    Folders above ``path`` are created. Raises ``UnsafeTarget`` (exit 2) for a
    path that is not a regular text file; ``OSError`` for the file system's own
    failures (the caller names them).
    """
    if is_stdout(path):
        (stream or sys.stdout).write(text)
        return True
    path = Path(path)
    data = text.encode("utf-8")
    status = check_target(path, what)
    if status is not None and status.st_size == len(data) and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        _write_file(handle, data)
        mode = stat.S_IMODE(status.st_mode) if status is not None else 0o666 & ~_umask()
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return True


def _write_file(descriptor: int, data: bytes) -> None:
    """Write ``data`` to the open temporary file and close it (where a full disk shows)."""
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
