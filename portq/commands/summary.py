"""``portq summary [--range A..B | --wave PORTQ-N] [--json]``: one wave as a dashboard.

Counts per verdict, REAL_GAP entries grouped by row (a checklist with the
``file-issue`` command beside each), NEEDS_REVIEW and INERT entries,
``not-ported`` coverage holes, and scans that disagree with a human review.
The markdown (``templates/summary.md.j2``) is meant to be pasted into a
tracking issue; ``--json`` prints the same context.

It reads the ledger only.
"""

from __future__ import annotations

import argparse

from portq import output, reports
from portq.commands.selection import add_selector, selected_wave


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selector(parser, entry=False)


def summary_document(wave, records) -> output.Document:
    """The wave's dashboard: its JSON context and its markdown page."""
    context = reports.build_summary_context(wave=reports.wave_dict(wave), entries=reports.summary_entries(records))
    return output.Document(reports.to_plain(context), markdown=reports.render("summary.md.j2", context))


def run(args: argparse.Namespace, workspace) -> int:
    wave = selected_wave(workspace, args)
    records = workspace.ledger().wave_entries(wave)
    output.emit(summary_document(wave, records), output.output_format(args, "markdown"))
    return 0
