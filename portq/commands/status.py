"""``portq status [--json]``: where each upstream's audit stands.

Per upstream with waves in the ledger: the last scanned commit (the tip of
its newest complete wave) and that wave, how many first-parent commits the
clone has beyond it (what ``portq scan`` with no range would audit), and
the entries still flagged (standing verdicts, a human review winning) per
row, across every complete wave of that upstream (``portq.commands.standing``,
the same entries ``scan --fail-on`` judges). A running or interrupted wave is
named, never counted, with the scan that resumes it: the same range by its
SHAs (``portq.ledger.store`` resumes a wave of the same range, tree and matrix).

It reads the ledger and asks each clone one question; it writes nothing.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from portq.commands.selection import resume_command
from portq.commands.standing import entry_label, standing_entries
from portq.core.errors import HistoryError, LedgerError
from portq.core.model import FLAGGED, VERDICTS
from portq.reporting import output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def commits_beyond(workspace, upstream: str, tip: str) -> tuple[int | None, str | None, str | None]:
    """``(count, HEAD sha, why not)``: first-parent commits of the clone's HEAD that ``tip`` lacks."""
    from portq.upstream.history import Upstream

    path = workspace.config.upstreams.get(upstream)
    if upstream == workspace.named_upstream():
        path = workspace.upstream_path(upstream)
    if path is None:
        return None, None, "no clone configured"
    try:
        with Upstream(path, upstream) as clone:
            head = clone.resolve("HEAD")
            if head is None:
                return None, None, f"{path} has no HEAD"
            if clone.is_ancestor(tip, head) is not True:
                return None, head, f"HEAD {head[:12]} does not descend from the last scanned commit"
            count = clone.git("rev-list", "--first-parent", "--count", f"{tip}..{head}").stdout.strip()
            return int(count), head, None
    except HistoryError as error:
        return None, None, str(error)


def open_flagged(ledger, waves) -> dict[str, dict[str, list[str]]]:
    """Row → verdict → entries (``PORTQ-N#M``, in the newest wave that lists them) still flagged."""
    rows: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for item in standing_entries(ledger, waves):
        if item.event.verdict in FLAGGED:
            rows[(item.record.rows or ["no-row"])[0]][item.event.verdict].append(entry_label(item))
    return {row: {v: by_verdict[v] for v in VERDICTS if v in by_verdict} for row, by_verdict in sorted(rows.items())}


def unfinished_note(ledger, upstream: str, wave) -> str:
    """``PORTQ-N is interrupted with K of M entries recorded: resume it with portq scan ...``."""
    recorded = len(ledger.recorded_positions(wave))
    state = f"{wave.name} is {wave.status} with {recorded} of {wave.entry_count} entries recorded"
    if wave.status == "interrupted":
        return f"{state}: resume it with {resume_command(upstream, wave)}"
    return f"{state} (a scan in progress, or one that was killed: then {resume_command(upstream, wave)} resumes it)"


def upstream_status(workspace, upstream: str, waves) -> dict:
    ledger = workspace.ledger()
    complete = [w for w in waves if w.status == "complete"]
    unfinished = [w for w in waves if w.status != "complete"]
    newest_unfinished = unfinished[-1] if unfinished else None
    resume = ({"wave": newest_unfinished.name, "command": resume_command(upstream, newest_unfinished),
               "note": unfinished_note(ledger, upstream, newest_unfinished)} if newest_unfinished else None)
    unfinished_names = [w.name + f" ({w.status})" for w in unfinished]
    if not complete:
        return {"upstream": upstream, "wave": None, "range": None, "last_commit": None, "head": None,
                "beyond": None, "note": "no complete wave", "unfinished": unfinished_names, "resume": resume,
                "open_flagged": {}}
    last = complete[-1]
    beyond, head, note = commits_beyond(workspace, upstream, last.tip_sha)
    return {"upstream": upstream, "wave": last.name, "range": last.range, "last_commit": last.tip_sha,
            "head": head, "beyond": beyond, "note": note, "unfinished": unfinished_names, "resume": resume,
            "open_flagged": open_flagged(ledger, complete)}


def write_status(out, report: dict) -> None:
    for item in report["upstreams"]:
        if item["wave"] is None:
            output.print_line(out, f"{item['upstream']}: no complete wave yet; {item['resume']['note']}")
            continue
        if item["beyond"] is None:
            ahead = f"commits beyond it unknown ({item['note']})"
        elif item["beyond"] == 0:
            ahead = "the clone has nothing beyond it"
        else:
            ahead = f"the clone has {item['beyond']} first-parent commits beyond it (portq scan audits them)"
        output.print_line(out, f"{item['upstream']}: last scanned {item['last_commit'][:12]} "
                               f"({item['wave']}, {item['range']}); {ahead}")
        if item["unfinished"]:
            output.print_line(out, f"  not complete: {', '.join(item['unfinished'])}")
            output.print_line(out, f"  {item['resume']['note']}")
        if not item["open_flagged"]:
            output.print_line(out, "  no open flagged entries")
        for row, verdicts in item["open_flagged"].items():
            listed = "; ".join(f"{verdict} {len(entries)} ({', '.join(entries)})" for verdict, entries in verdicts.items())
            output.print_line(out, f"  {row}: {listed}")


def run(args: argparse.Namespace, workspace) -> int:
    try:
        ledger = workspace.ledger()
    except LedgerError as error:
        raise LedgerError(f"{error}; status needs a ledger with at least one wave") from None
    by_upstream: dict[str, list] = defaultdict(list)
    for wave in ledger.waves():
        by_upstream[wave.upstream].append(wave)
    if not by_upstream:
        raise LedgerError(f"no waves in {ledger.path}: start with portq scan A..B")
    named = workspace.named_upstream()
    names = [named] if named else list(by_upstream)
    if named and named not in by_upstream:
        raise LedgerError(f"no waves of upstream {named} in {ledger.path}: start with portq scan A..B --upstream {named}")
    report = {"ledger": str(ledger.path), "upstreams": [upstream_status(workspace, n, by_upstream[n]) for n in names]}
    output.emit(output.Document(report, table=lambda out: write_status(out, report)), output.output_format(args))
    return 0
