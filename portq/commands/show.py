"""``portq show N [--range A..B | --wave PORTQ-N] [--json]``: one entry and its history.

Entry N of the newest complete wave of the upstream (or of ``--range``, or
the wave ``--wave`` names): the commit, its rows and touched symbols, the
standing verdict (the latest human review, else the latest scan), a
disagreeing later scan shown as a proposal, and every verdict event.
``--json`` prints the scan's entry shape plus ``wave``, ``wave_status``,
``range``, ``upstream``, ``reason``, ``proposal`` and ``history``.
"""

from __future__ import annotations

import argparse

from portq.commands.selection import add_selector, selected_entry
from portq.reporting import output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selector(parser)


def run(args: argparse.Namespace, workspace) -> int:
    wave, record = selected_entry(workspace, args)
    history = workspace.ledger().history(record.entry_id)
    current = record.current.event
    data = {
        "wave": wave.name,
        "wave_status": wave.status,
        "range": wave.range,
        "upstream": wave.upstream,
        **output.entry_json(record),
        "reason": (current.why or current.reason) if current else None,
        "proposal": output.event_json(record.current.proposal),
        "history": [output.event_json(event) for event in history],
    }
    document = output.Document(data, table=lambda out: output.write_entry(out, wave, record, history))
    output.emit(document, output.output_format(args))
    return 0
