"""``portq summary [--range A..B | --wave PORTQ-N] [--json] [--html FILE]``: one wave as a dashboard.

Counts per verdict, REAL_GAP entries grouped by row (a checklist with the
``file-issue`` command beside each), NEEDS_REVIEW and INERT entries,
``not-ported`` coverage holes, and scans that disagree with a human review;
then what the upstream's earlier waves left open (flagged entries and
coverage holes this wave does not list), by ``WAVE#N`` label: an incremental
scan of three new commits does not hide the gap found last month.
The markdown (``templates/summary.md.j2``) is meant to be pasted into a
tracking issue; ``--json`` prints the same context.

``--html FILE`` writes the whole ledger instead as one self-contained page
(``portq.reporting.html_page``) and prints its path.

It reads the ledger only.
"""

from __future__ import annotations

import argparse

from portq.reporting import output

from portq.commands.selection import add_selector, selected_wave
from portq.commands.standing import earlier_standing, entry_label
from portq.core.errors import PortqError
from portq.reporting import reports
from portq.reporting.summary import build_summary_context, summary_entries


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selector(parser, entry=False)
    parser.add_argument("--html", metavar="FILE", help="write the whole ledger as one self-contained HTML page to FILE (- for standard output)")


def summary_document(wave, records, earlier=()) -> output.Document:
    """The wave's dashboard: its JSON context and its markdown page (``earlier``: ``standing.Standing`` items of
    the upstream's earlier waves that are still open there, shown with their ``WAVE#N`` labels)."""
    earlier_entries = [{**entry, "label": entry_label(item)}
                       for item in earlier for entry in summary_entries([item.record])]
    context = build_summary_context(wave=reports.wave_dict(wave), entries=summary_entries(records),
                                            earlier=earlier_entries)
    return output.Document(reports.to_plain(context), markdown=reports.render("summary.md.j2", context))


def run(args: argparse.Namespace, workspace) -> int:
    if args.html is not None and not args.html.strip():
        raise PortqError("--html: expected a file to write the page to, got an empty value")
    if args.html is not None:  # the whole ledger: no wave to select
        from pathlib import Path

        from portq.core import safe_output
        from portq.reporting import html_page

        config = workspace.config
        html_page.write_page(workspace.ledger(), Path(args.html), config.root / "reports", config.upstream_web)
        if safe_output.is_stdout(args.html):
            return 0
        document = output.Document({"html": args.html}, table=lambda out: output.print_line(out, args.html))
        output.emit(document, output.output_format(args))
        return 0
    wave = selected_wave(workspace, args)
    ledger = workspace.ledger()
    records = ledger.wave_entries(wave)
    output.emit(summary_document(wave, records, earlier_standing(ledger, wave)), output.output_format(args, "markdown"))
    return 0
