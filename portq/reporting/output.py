"""The one output path: every command hands ``emit`` a ``Document``.

A document is the command's JSON data plus, for people, a table (written to
a data console: rich on a terminal, one plain record per line in a pipe) or
a markdown page. ``emit(document, fmt)`` prints one of them: ``json`` (the
global ``--json``), ``table`` or ``markdown``. Progress goes to stderr, and
only when stderr is a terminal, so pipes and CI logs get clean output.

Every string from commits, paths or the tree passes through
``portq.core.terminal`` on its way out (markup is never interpreted, control and
bidi characters are shown as escapes). Shapes that scripts depend on (the
scan's JSON entry) are built here once: ``entry_json``.

This module formats; it does not read git, the matrix or the ledger itself.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from functools import cached_property
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any, Callable, Iterator

from portq.core.evidence import Evidence, split_at_places
from portq.core.terminal import cell, console, one_line, visible
from portq.ledger.store import EntryRecord, Event, Wave

SYMBOL_KEYS = ("path", "name", "change")
"""The keys of a symbol in the scan's JSON (the ledger keeps more)."""

FORMATS = ("table", "markdown", "json")


@dataclass
class Document:
    """What a command prints: its JSON ``data`` and the human forms it has.

    ``table`` writes the human form to a data console (``portq.core.terminal.console``);
    ``markdown`` is a page already escaped for markdown.
    """

    data: Any
    table: Callable[[Any], None] | None = None
    markdown: str | None = None


def output_format(args, human: str = "table") -> str:
    """``json`` when ``--json`` was given, else the command's human format."""
    return "json" if getattr(args, "json", False) else human


def emit(document: Document, fmt: str, stream=None) -> None:
    """Print ``document`` to ``stream`` (stdout) as ``fmt``: table, markdown or json."""
    stream = stream or sys.stdout
    if fmt == "json":
        print_json(document.data, stream)
    elif fmt == "markdown" and document.markdown is not None:
        stream.write(visible(document.markdown))
    elif fmt == "table" and document.table is not None:
        document.table(console(stream))
    else:
        raise ValueError(f"this document has no {fmt} form")  # a command asked for a form it never built


class Streamed(Sequence):
    """A list of JSON records made from ``items`` by ``make`` when they are read:
    ``print_json`` writes them one at a time, so a scan's thousands of entries
    are never all held as records and as one string at once."""

    def __init__(self, items: Sequence, make: Callable[[Any], Any], after: Callable[[Any], None] | None = None) -> None:
        self._items = items
        self._make = make
        self._after = after  # told of each item once its record is made (``forget_decoded``)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self._items[index]
        made = self._make(item)
        if self._after is not None:
            self._after(item)
        return made


def forget_decoded(record: EntryRecord) -> None:
    """Drop what the record's events decoded and cached (their evidence and
    detail, read again from their text if asked): once an entry is printed,
    30,000 entries' evidence need not stay in memory as objects."""
    for event in (record.scan, record.current.event, getattr(record.current, "proposal", None)):
        if event is None:
            continue
        for name in _cached_names(type(event)):
            event.__dict__.pop(name, None)


def _cached_names(kind: type, known: dict[type, tuple[str, ...]] = {}) -> tuple[str, ...]:
    """The names of ``kind``'s cached properties (looked up once per type, not once per printed entry)."""
    names = known.get(kind)
    if names is None:
        names = known[kind] = tuple(name for name, attribute in vars(kind).items()
                                    if isinstance(attribute, cached_property))
    return names


def _listed(value: Any) -> Any:
    if isinstance(value, Streamed):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def print_json(document: Any, stream=None) -> None:
    """One JSON document: indented on a terminal, compact (and fast) in a pipe.

    Non-ASCII is escaped, so no control or bidi character from a commit
    reaches a terminal even through ``--json``. In a pipe, a ``Streamed``
    value of a top-level object is written record by record: the same bytes
    ``json.dumps`` gives for the whole document.
    """
    stream = stream or sys.stdout
    indent = 2 if stream.isatty() else None
    if indent is None and isinstance(document, dict) and any(isinstance(v, Streamed) for v in document.values()):
        stream.write("{")
        for number, (key, value) in enumerate(document.items()):
            stream.write((", " if number else "") + json.dumps(key, ensure_ascii=True) + ": ")
            if isinstance(value, Streamed):
                stream.write("[")
                for index, item in enumerate(value):
                    stream.write((", " if index else "") + json.dumps(item, ensure_ascii=True))
                stream.write("]")
            else:
                stream.write(json.dumps(value, ensure_ascii=True, default=_listed))
        stream.write("}")
    else:
        stream.write(json.dumps(document, indent=indent, ensure_ascii=True, default=_listed))
    stream.write("\n")


def print_line(out, text: str = "", style: str | None = None) -> None:
    """One record on the data console ``out``: ``text`` sanitised to one line
    (``portq.core.terminal.cell``), never cropped or folded at the console's width."""
    out.print(cell(text, style), crop=False, overflow="ignore")


def verdict_label(event: Event | None) -> str:
    """``VERDICT`` or ``NOT_APPLICABLE/justification``; ``-`` for none."""
    if event is None:
        return "-"
    return event.verdict + (f"/{event.justification}" if event.justification else "")


def standing(record: EntryRecord) -> Event | None:
    """The verdict that stands for an entry: the latest human review, else the latest scan."""
    return record.current.event or record.scan


def disagreeing_scan(record: EntryRecord) -> Event | None:
    """This wave's scan verdict when a human review stands against it, else None."""
    current, scan = standing(record), record.scan
    if current is None or scan is None or current.id == scan.id:
        return None
    if (current.verdict, current.justification) == (scan.verdict, scan.justification):
        return None
    return scan


def entries_count(count: int) -> str:
    """``1 entry``, ``3 entries``."""
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def wave_label(wave: Wave, recorded: int | None = None) -> str:
    """``PORTQ-3 A..B (vllm)``, with the status when the wave is not complete."""
    label = f"{wave.name} {wave.range} ({wave.upstream})"
    if wave.status != "complete":
        done = f": {recorded} of {wave.entry_count} entries recorded" if recorded is not None else ""
        label += f" [{wave.status}{done}]"
    return label


def entry_json(record: EntryRecord) -> dict[str, Any]:
    """One entry as ``portq scan --json`` prints it: the standing verdict, the scan's when they differ."""
    event = standing(record)
    scan = disagreeing_scan(record)
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
        "rules": event.rules if event else [],
        "reason": entry_reason(event),
        "evidence": list(event.evidence) if event else [],
        "source": event.source if event else None,
        "scan_verdict": {"verdict": scan.verdict, "justification": scan.justification} if scan else None,
    }


def entry_reason(event: Event | None) -> str | None:
    """Why an entry is or is not flagged, on one line: a reviewer's stated
    reason when a review stands, else the classifier's (which names the rule
    that decided it and the verdict it ruled out)."""
    if event is None:
        return None
    text = " ".join(str(event.why or event.reason or "").split())
    return one_line(text) if text else verdict_label(event)


def event_json(event: Event | None) -> dict[str, Any] | None:
    if event is None:
        return None
    return {
        "id": event.id,
        "source": event.source,
        "wave": event.wave,
        "verdict": event.verdict,
        "justification": event.justification,
        "decided_by": event.decided_by,
        "rules": event.rules,
        "reason": event.reason,
        "who": event.who,
        "why": event.why,
        "undoes": event.undoes,
        "undone": event.undone,
        "version": event.version,
        "created_at": event.created_at,
    }


def _verdict_cell_text(record: EntryRecord) -> str:
    text = verdict_label(standing(record))
    scan = disagreeing_scan(record)
    if scan is not None:
        text += f" (review; scan proposes {verdict_label(scan)})"
    return text


_VERDICT_STYLE = {"REAL_GAP": "bold red", "NEEDS_REVIEW": "yellow", "INERT": "magenta", "IN_SYNC": "green"}


def write_entries(out, records: list[EntryRecord], *, title: str | None = None) -> None:
    """Entries with their standing verdicts: a rich table on a terminal, one line each in a pipe.

    A pipe line is ``N  SHA10  VERDICT  ROWS  TITLE`` (title last, whole,
    on one line) so ``grep`` and ``cut`` work on it.
    """
    if not out.is_terminal:
        if title:
            print_line(out, title)
        for record in records:
            print_line(out, f"{record.position}  {record.sha[:10]}  {_verdict_cell_text(record)}  "
                            f"{','.join(record.rows) or '-'}  {record.title}")
        return
    from rich.table import Table

    table = Table(title=cell(title) if title else None, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("sha", style="dim", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("rows")
    table.add_column("title", overflow="fold")
    for record in records:
        event = standing(record)
        style = _VERDICT_STYLE.get(event.verdict) if event else None
        table.add_row(str(record.position), record.sha[:10], cell(_verdict_cell_text(record), style),
                      cell(", ".join(record.rows) or "-"), cell(record.title))
    out.print(table)


def evidence_place(item: dict) -> str:
    """Where an evidence record points: ``path:line``, else an upstream hunk's
    header, else its path unless the message already names it."""
    path, line, header = item.get("path") or "", item.get("line"), item.get("hunk_header")
    if line:
        return f"{path}:{line}"
    if header:
        return header
    return "" if path and path in (item.get("message") or "") else path

def evidence_message(item: dict) -> str:
    """A record's message, each place of its nested records (another touched
    symbol's reason) printed with the quote that record cites there."""
    def cited(piece: str | Evidence) -> str:
        if isinstance(piece, str):
            return piece
        return f"{piece.place}: `{piece.quote}`" if piece.quote else piece.place

    return "".join(cited(p) for p in split_at_places(item.get("message") or "", item.get("records") or ()))


def write_entry(out, wave: Wave, record: EntryRecord, history: list[Event]) -> None:
    """``portq show``: one entry, its standing verdict, and its history."""
    current = record.current.event
    print_line(out, f"Entry {record.position} of {wave_label(wave)}", "bold")
    print_line(out, f"  commit   {record.sha}")
    print_line(out, f"  title    {record.title}")
    if record.pr is not None:
        print_line(out, f"  PR       #{record.pr}")
    print_line(out, f"  rows     {', '.join(record.rows) or '-'}")
    for symbol in record.symbols:
        print_line(out, f"  symbol   {symbol.get('change')} {symbol.get('path')}::{symbol.get('name')}")
    if current is not None:
        print_line(out, f"  verdict  {verdict_label(current)} ({current.source}, decided by {current.decided_by})",
                   "bold")
        if current.reason or current.why:
            print_line(out, f"  why      {current.why or current.reason}")
        for item in current.evidence:
            place = evidence_place(item)
            print_line(out, f"  evidence {item.get('kind')}: {evidence_message(item)} {place}".rstrip())
    proposal = record.current.proposal
    if proposal is not None:
        print_line(out, f"  proposal {verdict_label(proposal)} from scan {proposal.wave} "
                        "(a human review stands; not applied)")
    print_line(out, "  history")
    for event in history:
        who = f" by {event.who}" if event.who else ""
        kind = "undo of review #%d" % event.undoes if event.undoes else event.source
        note = event.why or event.reason
        flag = " (undone)" if event.undone else ""
        print_line(out, f"    #{event.id} {event.created_at} {kind}{who} {event.wave or ''}: "
                        f"{verdict_label(event)}{flag}" + (f" — {note}" if note else ""))


class NullProgress:
    def advance(self, steps: int = 1) -> None:
        pass

    def phase(self, description: str, total: int) -> None:
        pass


PROGRESS_DELAY_S = 0.5
"""A progress bar appears only once a scan has taken this long: quick scans print none."""


class _RichProgress:
    def __init__(self, progress, delay_s: float) -> None:
        self.progress = progress
        self.task = None
        self.shown = False
        self.show_at = time.monotonic() + delay_s

    def _show_when_slow(self) -> None:
        if not self.shown and time.monotonic() >= self.show_at:
            self.progress.start()
            self.shown = True

    def phase(self, description: str, total: int) -> None:
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.task = self.progress.add_task(one_line(description), total=total)
        self._show_when_slow()

    def advance(self, steps: int = 1) -> None:
        if self.task is not None:
            self.progress.advance(self.task, steps)
        self._show_when_slow()

    def close(self) -> None:
        if self.shown:
            self.progress.stop()


@contextmanager
def progress(enabled: bool | None = None, *, stream=None, delay_s: float = PROGRESS_DELAY_S) -> Iterator[Any]:
    """A progress reporter with ``phase(description, total)`` and ``advance()``.

    A rich progress bar on stderr (or ``stream``) when it is a terminal,
    once the work has taken ``delay_s``; silent otherwise.
    """
    stream = stream or sys.stderr
    if enabled is None:
        enabled = stream.isatty()
    if not enabled:
        yield NullProgress()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=stream, markup=False, highlight=False, force_terminal=True),
        transient=True,
    )
    reporter = _RichProgress(bar, delay_s)
    try:
        yield reporter
    finally:
        reporter.close()
