"""Which entry a command is about: ``N``, ``--range A..B`` and ``--wave PORTQ-N``.

Declared once here for show, file-issue, review and summary, with their
validation: an entry number from 1 that SQLite can hold (or ``WAVE#N``, the
label ``status`` and ``scan --fail-on`` print, which selects that wave), a
range on one line, a wave name. The wave itself is chosen by ``Workspace.select_wave``;
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


class EntryNumber(int):
    """An entry number; ``wave`` is set when it was given as ``WAVE#N`` (``PORTQ-1#222``, as status prints it)."""

    wave: str | None = None


def resume_command(upstream: str, wave) -> str:
    """The scan that completes an unfinished ``wave``: its range by SHAs, which a moved branch or tag cannot change
    (the ledger resumes a wave of the same range, tree and matrix)."""
    return f"portq scan {wave_range(wave)} --upstream {upstream}"


def wave_range(wave) -> str:
    """``BASE12..TIP12``: the wave's range by its SHAs, the form a resume names."""
    return f"{wave.base_sha[:12]}..{wave.tip_sha[:12]}"


def entry_number(text: str) -> int:
    """``N`` (a decimal entry number from 1), or ``WAVE#N``: entry N of that wave."""
    if "#" in text:
        wave, _, number = text.partition("#")
        if not _WAVE_NAME.match(wave) or not (number.isascii() and number.isdigit()) or int(number) < 1 \
                or int(number) > MAX_ENTRY:
            raise argparse.ArgumentTypeError(f"expected N or WAVE#N (PORTQ-3#12), not {_quoted(text)}")
        entry = EntryNumber(int(number))
        entry.wave = wave.upper() if wave.upper().startswith("PORTQ-") else f"PORTQ-{wave}"
        return entry
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
        parser.add_argument("entry", metavar="N", type=entry_number,
                            help="entry number in the range (from 1), or WAVE#N as status prints it (PORTQ-3#12)")
    parser.add_argument("--range", metavar="A..B", type=range_text,
                        help="the range scanned (default: the newest complete wave of the upstream)")
    parser.add_argument("--wave", metavar="PORTQ-N", type=wave_name,
                        help="this wave, even if it is still running or was interrupted")


def wave_of_entry(args: argparse.Namespace) -> str | None:
    """The wave ``--wave`` or an entry's ``WAVE#`` names (they must agree), or None."""
    from portq.core.errors import PortqError

    labelled = getattr(getattr(args, "entry", None), "wave", None)
    if labelled is None:
        return args.wave
    named = args.wave
    if named is not None and int(re.sub(r"\D", "", named)) != int(labelled.split("-", 1)[1]):
        raise PortqError(f"{labelled}#{args.entry}: names wave {labelled}, but --wave {named} names another; give one")
    return labelled


def selected_wave(workspace, args: argparse.Namespace):
    """The wave ``args`` select, announced on stderr when it is not complete."""
    from portq.core.terminal import one_line
    from portq.reporting.output import wave_label

    wave = workspace.select_wave(args.range, wave_of_entry(args))
    if wave.status != "complete":
        recorded = len(workspace.ledger().recorded_positions(wave))
        print(f"portq: note: reading {one_line(wave_label(wave, recorded))}", file=sys.stderr)
    return wave


def selected_entry(workspace, args: argparse.Namespace):
    """``(wave, record)`` of entry ``N`` of the selected wave."""
    wave = selected_wave(workspace, args)
    return wave, workspace.ledger().entry_at(wave, args.entry)
