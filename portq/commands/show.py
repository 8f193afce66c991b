"""``portq show N [--range A..B] [--json]``: one entry and its history.

Entry N of the last scanned wave (or of the last wave of ``--range``): the
commit, its rows and touched symbols, the standing verdict (the latest human
review, else the latest scan), a disagreeing later scan shown as a proposal,
and every verdict event. ``--json`` prints the scan's entry shape plus
``wave``, ``range``, ``upstream``, ``source``, ``reason``, ``proposal`` and
``history``.
"""

from __future__ import annotations

import argparse

from portq import output
from portq.errors import LedgerError
from portq.ledger import open_ledger


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry", metavar="N", type=_positive, help="entry number in the range (from 1)")
    parser.add_argument("--range", metavar="A..B", help="the range scanned (default: the last scanned)")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an entry number from 1, not {text!r}")
    return int(text)


def find_wave(ledger, range_spec: str | None):
    """The wave ``show``/``file-issue`` read: the latest, or the latest of a range."""
    wave = ledger.latest_wave(range_spec)
    if wave is None:
        if range_spec:
            raise LedgerError(f"no scanned wave of {range_spec} in {ledger.path}: run portq scan {range_spec}")
        raise LedgerError(f"no scanned wave in {ledger.path}: run portq scan A..B first")
    return wave


def run(args: argparse.Namespace, config) -> int:
    with open_ledger(config.ledger_path, create=False) as ledger:
        wave = find_wave(ledger, args.range)
        record = ledger.entry_at(wave, args.entry)
        history = ledger.history(record.entry_id)
    if args.json:
        current = record.current.event
        document = {
            "wave": wave.name,
            "range": wave.range_spec,
            "upstream": wave.upstream,
            **output.entry_json(record, current),
            "source": current.source if current else None,
            "reason": (current.why or current.reason) if current else None,
            "proposal": output.event_json(record.current.proposal) if record.current.proposal else None,
            "history": [output.event_json(event) for event in history],
        }
        output.print_json(document)
    else:
        output.print_entry(wave, record, history)
    return 0
