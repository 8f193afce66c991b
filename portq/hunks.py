"""Unified-diff text of one file change → ``model.Hunk`` records (unidiff).

The history reader keeps each text file's diff as text; the mapper asks for
its hunks only when a matrix row may own the file, so the many unowned files
of a range are never parsed.

This module parses; it does not read git or decide ownership.
"""

from __future__ import annotations

import re

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from portq.model import FileChange, Hunk


_HUNK_HEADER = re.compile(r"^@@ -\d.*$", re.MULTILINE)


def parse_hunks(patch: str) -> list[Hunk]:
    """The hunks of one file's diff text (empty for renames, modes, binaries)."""
    if "\n@@ " not in patch:
        return []
    try:
        patched_files = PatchSet(patch)
    except UnidiffParseError as error:
        raise ValueError(f"unparseable diff: {error}") from None
    # git's own header lines, as a reader of the upstream diff sees them
    # (content lines start with ' ', '+' or '-', so none can match).
    headers = iter(_HUNK_HEADER.findall(patch))
    hunks: list[Hunk] = []
    for patched_file in patched_files:
        for hunk in patched_file:
            removed = [line for line in hunk if line.is_removed]
            added = [line for line in hunk if line.is_added]
            hunks.append(
                Hunk(
                    header=next(headers).rstrip("\r"),
                    old_start=hunk.source_start,
                    old_length=hunk.source_length,
                    new_start=hunk.target_start,
                    new_length=hunk.target_length,
                    removed_lines=tuple(line.source_line_no for line in removed),
                    added_lines=tuple(line.target_line_no for line in added),
                    removed_text=tuple(line.value.rstrip("\r\n") for line in removed),
                    added_text=tuple(line.value.rstrip("\r\n") for line in added),
                )
            )
    return hunks


def ensure_hunks(change: FileChange) -> list[Hunk]:
    """Parse ``change.patch`` into ``change.hunks`` once; return the hunks."""
    if not change.hunks and change.parsed and change.patch:
        change.hunks = parse_hunks(change.patch)
    return change.hunks
