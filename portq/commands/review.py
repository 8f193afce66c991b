"""``portq review N --verdict V --because TEXT [--justification J] [--range A..B | --wave PORTQ-N]``
and ``portq review N --undo``: a human decision about entry N.

The decision is appended to the entry's history in the ledger and stands
until another review or an undo: a later scan that disagrees is recorded as
a proposal (``portq show``, ``portq summary``, the issue report) and never
replaces it. ``--because`` is required, so the record says why. A
NOT_APPLICABLE review takes a justification from the closed vocabulary; when
it is left out and the scan also said NOT_APPLICABLE, the scan's
justification is kept. ``--undo`` cancels the standing review and restores
what stood before it (an earlier review, else the scan's verdict).

When ``portq.toml`` names a reviews file (``reviews = "portq-reviews.toml"``),
the decision is also written there, one entry per upstream commit and row
(``portq.tree.reviews_file``), so that it lives in the tree and every scan,
on any clone, applies it; an undo takes it out (or puts back the earlier
review that stands again).

This module validates and records; the ledger keeps the rules of what stands.
"""

from __future__ import annotations

import argparse
import getpass
import os

from portq.commands.selection import add_selector, selected_entry
from portq.core.errors import PortqError
from portq.core.model import JUSTIFICATIONS, NOT_APPLICABLE, VERDICTS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selector(parser)
    parser.add_argument("--verdict", metavar="V", help=f"one of {', '.join(VERDICTS)}")
    parser.add_argument("--because", metavar="TEXT", help="why: recorded in the entry's history (required)")
    parser.add_argument("--justification", metavar="J", help=f"for NOT_APPLICABLE: one of {', '.join(JUSTIFICATIONS)}")
    parser.add_argument("--who", metavar="NAME", help="who decides (default: $PORTQ_USER, else the login name)")
    parser.add_argument("--undo", action="store_true", help="cancel the standing review and restore what stood before")


def _verdict_name(text: str) -> str:
    name = text.strip().upper().replace("-", "_")
    if name not in VERDICTS:
        raise PortqError(f"--verdict {text}: expected one of {', '.join(VERDICTS)}")
    return name


def _who(args: argparse.Namespace) -> str:
    if args.who:
        return args.who
    try:
        return os.environ.get("PORTQ_USER") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _validate(args: argparse.Namespace, scan_event) -> tuple[str, str | None]:
    if args.undo:
        if args.verdict or args.justification:
            raise PortqError("review --undo takes no --verdict or --justification")
        return "", None
    if not args.verdict:
        raise PortqError("review: --verdict V is required (or --undo)")
    if not args.because or not args.because.strip():
        raise PortqError('review: --because "..." is required: the history must say why')
    verdict = _verdict_name(args.verdict)
    justification = args.justification
    if verdict != NOT_APPLICABLE:
        if justification:
            raise PortqError(f"--justification applies to NOT_APPLICABLE only, not {verdict}")
        return verdict, None
    if justification is None and scan_event is not None and scan_event.verdict == NOT_APPLICABLE:
        justification = scan_event.justification
    if justification not in JUSTIFICATIONS:
        given = f"--justification {justification}: " if justification else ""
        raise PortqError(f"{given}a NOT_APPLICABLE review needs --justification, one of {', '.join(JUSTIFICATIONS)}")
    return verdict, justification


def run(args: argparse.Namespace, workspace) -> int:
    from portq.reporting import output

    wave, record = selected_entry(workspace, args)
    ledger = workspace.ledger()
    before = record.current.event
    verdict, justification = _validate(args, record.scan)
    if workspace.config.reviews_path is not None:  # a reviews file that cannot be read or written fails before the ledger changes
        from portq.core import safe_output
        from portq.tree import reviews_file

        reviews_file.load(workspace.config.reviews_path)
        safe_output.check_target(workspace.config.reviews_path, "the reviews file")
    if args.undo:
        event = ledger.undo_review(record.entry_id, who=_who(args), why=args.because or "undo", wave_id=wave.id)
    else:
        event = ledger.record_review(
            record.entry_id, verdict=verdict, justification=justification, why=args.because, who=_who(args), wave_id=wave.id
        )
    after = ledger.current(record.entry_id)
    from portq.pipeline.reviews import file_review

    reviews = [e for e in ledger.history(record.entry_id) if e.source == "review" and not e.undone and not e.undoes]
    file_review(workspace.config.reviews_path, wave.upstream, record, reviews[-1] if reviews else None)
    data = {
        "wave": wave.name,
        "wave_status": wave.status,
        "range": wave.range,
        "entry": record.position,
        "sha": record.sha,
        "event": output.event_json(event),
        "previous": output.event_json(before),
        "current": output.event_json(after.event),
    }

    def table(out) -> None:
        action = "undone" if args.undo else "recorded"
        output.print_line(out, f"{wave.name} entry {record.position} {record.sha[:10]}: review {action} by {event.who}")
        was = f"{output.verdict_label(before)} ({before.source if before else 'nothing'})"
        output.print_line(out, f"  was {was}, now {output.verdict_label(after.event)} ({after.event.source})")

    output.emit(output.Document(data, table=table), output.output_format(args))
    return 0
