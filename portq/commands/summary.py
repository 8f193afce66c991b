"""``portq summary [--range A..B] [--format md|json]``: one wave as a dashboard.

Counts per verdict, REAL_GAP entries grouped by row (a checklist with the
``file-issue`` command beside each), NEEDS_REVIEW and INERT entries,
``not-ported`` coverage holes, and scans that disagree with a human review.
The markdown (``templates/summary.md.j2``) is meant to be pasted into a
tracking issue; ``--format json`` (or ``--json``) prints the same context.

It reads the ledger only; ``portq scan`` prints the same dashboard at its end.
"""

from __future__ import annotations

import argparse
import json
import sys

from portq import reports
from portq.commands.show import find_wave


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--range", metavar="A..B", help="the range scanned (default: the last scanned)")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")


def run(args: argparse.Namespace, config) -> int:
    from portq.ledger import open_ledger

    with open_ledger(config.ledger_path, create=False) as ledger:
        wave = find_wave(ledger, args.range)
        records = ledger.wave_entries(wave)
    if args.json or args.format == "json":
        context = reports.build_summary_context(wave=reports.wave_dict(wave), entries=reports.summary_entries(records))
        print(json.dumps(reports.to_plain(context), indent=2))
        return 0
    sys.stdout.write(reports.wave_summary(wave, records))
    return 0
