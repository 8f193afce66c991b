"""Standard output and error as git treats them: a closed pipe ends the
command quietly, a narrow encoding gets escapes, a closed stream is named.

``portq scan ... | head -1`` closes the pipe after one line; like git, portq
then stops writing and exits 0 without a word (``quiet_after_broken_pipe``).
Under ``PYTHONIOENCODING=ascii`` or a C locale a title with ``→`` in it is
written as ``\\u2192`` instead of failing (``prepare``). A command started
with its standard output closed (``>&-``) is told so in one line.

This module adjusts the process's streams; it must not format, read or
decide anything else.
"""

from __future__ import annotations

import os
import sys

from portq.core.errors import PortqError


def prepare() -> None:
    """Escape what a narrow stdout/stderr encoding cannot show; refuse a closed stdout."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a detached or closed stream: leave it be
                pass
    if sys.stdout is None or _closed(sys.stdout):
        raise PortqError("standard output is closed: expected an open stdout (redirect it to a file, "
                         "or to /dev/null to discard it)")


def _closed(stream) -> bool:
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return False  # not backed by a descriptor (a test's buffer): nothing to check
    try:
        os.fstat(descriptor)
    except OSError:
        return True
    return False


def quiet_after_broken_pipe() -> None:
    """After EPIPE on stdout: point it at /dev/null so that nothing more (not even
    the interpreter's last flush) fails, as git stops quietly when its reader goes."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
