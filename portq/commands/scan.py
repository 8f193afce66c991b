"""``portq scan A..B [--json]``: audit an upstream range into a ledger wave.

Prints a table (entry, short SHA, title, rows, verdict, justification) with a
progress bar on a terminal, or with ``--json`` one object::

    {"wave": "PORTQ-N", "range": "A..B", "upstream": NAME,
     "entries": [{"entry": 1, "sha": ..., "title": ..., "pr": N | null,
                  "rows": [PRIMARY, CO_OWNERS...],
                  "symbols": [{"path": ..., "name": ..., "change": ...}],
                  "verdict": ..., "justification": ... | null,
                  "decided_by": ..., "evidence": [...]}]}

The pipeline itself is ``portq.scan``; this module parses and prints.
"""

from __future__ import annotations

import argparse
import sys

from portq import output
from portq.scan import run_scan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("range", metavar="A..B", help="upstream range: revisions, tags, branches or (abbreviated) SHAs")


def scan_json(result) -> dict:
    return {
        "wave": result.wave.name,
        "range": result.wave.range_spec,
        "upstream": result.upstream,
        "entries": [output.entry_json(record, record.scan) for record in result.entries],
    }


def run(args: argparse.Namespace, config) -> int:
    with output.progress() as reporter:
        result = run_scan(config, args.range, progress=reporter)
    if args.json:
        output.print_json(scan_json(result))
    else:
        from portq.reports import wave_summary  # jinja2: loaded only when the table is printed

        output.print_wave_table(result.wave, result.entries)
        sys.stdout.write("\n" + wave_summary(result.wave, result.entries))
        if result.resumed:
            print(f"{result.wave.name} was unfinished and is now complete.", file=sys.stderr)
    return 0
