"""Which entry a command is about: ``N``, ``--range A..B`` and ``--wave PORTQ-N``.

Declared once here for show, file-issue, review and summary, with their
validation: an entry number from 1 that SQLite can hold, a range on one
line, a wave name. The wave itself is chosen by ``Workspace.select_wave``;
a wave that is not complete (only ever read when ``--wave`` names it) is
announced on stderr, so no output passes it off as finished, and
``resume_command`` is the one wording of the scan that completes it.
"""

from __future__ import annotations

import argparse
import re
import sys

MAX_ENTRY = 2**63 - 1
"""The largest entry number the ledger can store (SQLite's INTEGER)."""

_WAVE_NAME = re.compile(r"^(?:PORTQ-)?\d{1,18}$", re.I)


def resume_command(upstream: str, wave) -> str:
    """The scan that completes an unfinished ``wave``: its range by SHAs, which a moved branch or tag cannot change
    (the ledger resumes a wave of the same range, tree and matrix)."""
    return f"portq scan {wave_range(wave)} --upstream {upstream}"


def wave_range(wave) -> str:
    """``BASE12..TIP12``: the wave's range by its SHAs, the form a resume names."""
    return f"{wave.base_sha[:12]}..{wave.tip_sha[:12]}"


def entry_number(text: str) -> int:
    """``N``: a decimal entry number from 1."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an entry number from 1, not {_quoted(text)}")
    number = int(text)
    if number > MAX_ENTRY:
        raise argparse.ArgumentTypeError(f"expected an entry number from 1 to {MAX_ENTRY}, not {_quoted(text)}")
    return number


def range_text(text: str) -> str:
    """``A..B`` as given, on one line (resolution is the upstream's business)."""
    if not text or not text.isprintable() or text != text.strip():
        raise argparse.ArgumentTypeError(f"expected A..B on one line without control characters, not {_quoted(text)}")
    return text


def revision_text(text: str) -> str:
    """One revision (a SHA, tag or branch), on one line."""
    if not text or not text.isprintable() or text != text.strip() or text.startswith("-") or ".." in text:
        raise argparse.ArgumentTypeError(f"expected one revision on one line, not {_quoted(text)}")
    return text


def wave_name(text: str) -> str:
    if not _WAVE_NAME.match(text):
        raise argparse.ArgumentTypeError(f"expected a wave name PORTQ-N, not {_quoted(text)}")
    return text


def _quoted(text: str) -> str:
    from portq.core.terminal import one_line

    return repr(one_line(text[:80]) + ("…" if len(text) > 80 else ""))


def add_selector(parser: argparse.ArgumentParser, *, entry: bool = True) -> None:
    """``N`` (when the command is about one entry), ``--range`` and ``--wave``."""
    if entry:
        parser.add_argument("entry", metavar="N", type=entry_number, help="entry number in the range (from 1)")
    parser.add_argument("--range", metavar="A..B", type=range_text,
                        help="the range scanned (default: the newest complete wave of the upstream)")
    parser.add_argument("--wave", metavar="PORTQ-N", type=wave_name,
                        help="this wave, even if it is still running or was interrupted")


def selected_wave(workspace, args: argparse.Namespace):
    """The wave ``args`` select, announced on stderr when it is not complete."""
    from portq.core.terminal import one_line
    from portq.reporting.output import wave_label

    wave = workspace.select_wave(args.range, args.wave)
    if wave.status != "complete":
        recorded = len(workspace.ledger().recorded_positions(wave))
        print(f"portq: note: reading {one_line(wave_label(wave, recorded))}", file=sys.stderr)
    return wave


def selected_entry(workspace, args: argparse.Namespace):
    """``(wave, record)`` of entry ``N`` of the selected wave."""
    wave = selected_wave(workspace, args)
    return wave, workspace.ledger().entry_at(wave, args.entry)
