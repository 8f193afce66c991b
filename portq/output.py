"""Terminal and machine output: rich tables, a progress bar, JSON.

Commands print results to stdout (a rich table, or one JSON document with
``--json``) and progress to stderr, only when stderr is a terminal, so pipes
and CI logs get clean output. Shapes that scripts depend on (the scan's JSON
entry) are built here once: ``entry_json``.

This module formats; it does not read git, the matrix or the ledger itself.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from portq.ledger import EntryRecord, Event, Wave

SYMBOL_KEYS = ("path", "name", "change")
"""The keys of a symbol in the scan's JSON (the ledger keeps more)."""


def print_json(document: Any, stream=None) -> None:
    """One JSON document: indented on a terminal, compact (and fast) in a pipe."""
    stream = stream or sys.stdout
    indent = 2 if stream.isatty() else None
    stream.write(json.dumps(document, indent=indent, ensure_ascii=False))
    stream.write("\n")


def _console(stream=None):
    from rich.console import Console

    return Console(file=stream or sys.stdout, highlight=False, soft_wrap=False)


def entry_json(record: EntryRecord, event: Event | None) -> dict[str, Any]:
    """One entry as ``portq scan --json`` prints it (the issue's exact shape)."""
    return {
        "entry": record.position,
        "sha": record.sha,
        "title": record.title,
        "pr": record.pr,
        "rows": list(record.rows),
        "symbols": [{key: symbol.get(key) for key in SYMBOL_KEYS} for symbol in record.symbols],
        "verdict": event.verdict if event else None,
        "justification": event.justification if event else None,
        "decided_by": event.decided_by if event else None,
        "evidence": list(event.evidence) if event else [],
    }


def event_json(event: Event) -> dict[str, Any]:
    return {
        "id": event.id,
        "source": event.source,
        "wave": event.wave,
        "verdict": event.verdict,
        "justification": event.justification,
        "decided_by": event.decided_by,
        "reason": event.reason,
        "who": event.who,
        "why": event.why,
        "undoes": event.undoes,
        "undone": event.undone,
        "version": event.version,
        "created_at": event.created_at,
    }


def _verdict_label(event: Event | None) -> str:
    if event is None:
        return "-"
    return event.verdict


def _justification_label(event: Event | None, width: int = 60) -> str:
    if event is None:
        return ""
    text = event.justification or event.reason or ""
    return text if len(text) <= width else text[: width - 1] + "…"


def print_wave_table(wave: Wave, records: list[EntryRecord], stream=None) -> None:
    """The scan's table: entry, short SHA, title, rows, verdict, justification."""
    from rich.table import Table

    table = Table(title=f"{wave.name}  {wave.range_spec}  ({wave.upstream}, {len(records)} entries, {wave.status})")
    for column, style in (("#", "bold"), ("sha", "dim"), ("title", None), ("rows", None), ("verdict", "bold"),
                          ("justification", None)):
        table.add_column(column, style=style, no_wrap=column in ("#", "sha", "verdict"))
    for record in records:
        event = record.scan
        table.add_row(
            str(record.position),
            record.sha[:10],
            record.title,
            ", ".join(record.rows) or "-",
            _verdict_label(event),
            _justification_label(event),
        )
    _console(stream).print(table)


def print_entry(wave: Wave, record: EntryRecord, history: list[Event], stream=None) -> None:
    """``portq show``: one entry, its standing verdict, and its history."""
    console = _console(stream)
    current = record.current.event
    console.print(f"[bold]Entry {record.position}[/] of {wave.range_spec} ({wave.name}, upstream {wave.upstream})")
    console.print(f"  commit   {record.sha}")
    console.print(f"  title    {record.title}", markup=False)
    if record.pr is not None:
        console.print(f"  PR       #{record.pr}")
    console.print(f"  rows     {', '.join(record.rows) or '-'}")
    for symbol in record.symbols:
        console.print(f"  symbol   {symbol.get('change')} {symbol.get('path')}::{symbol.get('name')}", markup=False)
    if current is not None:
        label = current.verdict + (f"/{current.justification}" if current.justification else "")
        console.print(f"  verdict  [bold]{label}[/] ({current.source}, decided by {current.decided_by})")
        if current.reason or current.why:
            console.print(f"  why      {current.why or current.reason}", markup=False)
        for item in current.evidence:
            place = f"{item.get('path')}:{item.get('line')}" if item.get("line") else item.get("path") or ""
            console.print(f"  evidence {item.get('kind')}: {item.get('message')} {place}".rstrip(), markup=False)
    proposal = record.current.proposal
    if proposal is not None:
        label = proposal.verdict + (f"/{proposal.justification}" if proposal.justification else "")
        console.print(f"  proposal {label} from scan {proposal.wave} (a human review stands; not applied)")
    console.print("  history")
    for event in history:
        label = event.verdict + (f"/{event.justification}" if event.justification else "")
        who = f" by {event.who}" if event.who else ""
        kind = "undo of review #%d" % event.undoes if event.undoes else event.source
        note = event.why or event.reason
        flag = " (undone)" if event.undone else ""
        console.print(
            f"    #{event.id} {event.created_at} {kind}{who} {event.wave or ''}: {label}{flag}"
            + (f" — {note}" if note else ""),
            markup=False,
        )


class NullProgress:
    def advance(self, steps: int = 1) -> None:
        pass

    def phase(self, description: str, total: int) -> None:
        pass


class _RichProgress:
    def __init__(self, progress) -> None:
        self.progress = progress
        self.task = None

    def phase(self, description: str, total: int) -> None:
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.task = self.progress.add_task(description, total=total)

    def advance(self, steps: int = 1) -> None:
        if self.task is not None:
            self.progress.advance(self.task, steps)


@contextmanager
def progress(enabled: bool | None = None) -> Iterator[Any]:
    """A progress reporter with ``phase(description, total)`` and ``advance()``.

    A rich progress bar on stderr when it is a terminal; silent otherwise.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield NullProgress()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    ) as bar:
        yield _RichProgress(bar)
