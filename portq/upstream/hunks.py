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

from portq.core.model import FileChange, Hunk


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


# --- only the changed lines (net-zero fingerprints) -----------------------------------


_HUNK_LENGTHS = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _diff_lines(patch: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]] | None:
    """Each hunk's '-' lines and '+' lines, read straight from git's diff text
    of one file (the values ``parse_hunks`` gives), without building
    hunks: a fingerprint needs the lines, not their numbers.

    None when the text is anything but git's plain form (``---``/``+++``
    right before the first hunk, then only hunk headers, ' ', '-', '+' and
    '\\' lines, each hunk as long as its header says): the caller then
    parses it with unidiff as before.
    """
    first_hunk = patch.find("\n@@ ")
    if first_hunk < 0:
        return [], []  # parse_hunks finds no hunk either
    header = patch[:first_hunk].rsplit("\n", 2)
    if len(header) < 3 or not header[-2].startswith("--- ") or not header[-1].startswith("+++ "):
        return None
    lines = patch[first_hunk + 1:].split("\n")
    if lines[-1] == "":
        lines.pop()
    removed_by_hunk: list[tuple[str, ...]] = []
    added_by_hunk: list[tuple[str, ...]] = []
    removed: list[str] = []
    added: list[str] = []
    old_left = new_left = 0
    in_hunk = False
    for line in lines:
        marker = line[:1]
        if marker == "-":
            removed.append(line[1:].rstrip("\r\n"))
            old_left -= 1
        elif marker == "+":
            added.append(line[1:].rstrip("\r\n"))
            new_left -= 1
        elif marker == " ":
            old_left -= 1
            new_left -= 1
        elif marker == "@":
            header = _HUNK_LENGTHS.match(line)
            if header is None or old_left or new_left:
                return None
            if in_hunk:
                removed_by_hunk.append(tuple(removed))
                added_by_hunk.append(tuple(added))
                removed, added = [], []
            in_hunk = True
            old_length, new_length = header.groups()
            old_left = 1 if old_length is None else int(old_length)
            new_left = 1 if new_length is None else int(new_length)
            continue
        elif marker != "\\":
            return None
        if old_left < 0 or new_left < 0:
            return None
    if old_left or new_left:
        return None
    removed_by_hunk.append(tuple(removed))
    added_by_hunk.append(tuple(added))
    return removed_by_hunk, added_by_hunk


def change_lines(change: FileChange) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """A change's '-' and '+' lines hunk by hunk: from its hunks when they are
    parsed (or hand-built), else from its diff text, parsed with unidiff only
    when that text is not plain git hunks."""
    if not change.hunks and change.parsed and change.patch:
        lines = _diff_lines(change.patch)
        if lines is not None:
            return lines
    try:
        hunks = ensure_hunks(change)
    except ValueError:
        hunks = change.hunks
    return [h.removed_text for h in hunks], [h.added_text for h in hunks]
