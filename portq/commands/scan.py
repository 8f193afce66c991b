"""``portq scan [A..B | --to REV] [--all] [--fail-on V,...] [--fresh] [--json | --format F] [--output FILE]``: audit upstream commits into a wave.

With a range, the upstream is the one ``--upstream`` names, the only one
configured, or the one whose clone resolves both ends. Without a range, the
scan continues from the tip of the newest complete wave of that upstream to
its ``HEAD`` (or ``--to REV``), so a team never has to remember where it
stopped.

What it prints puts attention first: the flagged entries (standing
verdicts: a human review wins, the scan's own shown beside it when they
differ), the counts per verdict and the coverage holes; ``--all`` prints
one line per entry instead. In a pipe nothing is wrapped, cut or coloured.
``--json`` prints one object::

    {"wave": "PORTQ-N", "status": "complete", "range": "A..B", "upstream": NAME,
     "entries": [{"entry": 1, "sha": ..., "title": ..., "pr": N | null,
                  "rows": [PRIMARY, CO_OWNERS...],
                  "symbols": [{"path": ..., "name": ..., "change": ...}],
                  "verdict": ..., "justification": ... | null,
                  "decided_by": ..., "rules": [RULE_ID...], "evidence": [...],
                  "source": "scan" | "review",
                  "scan_verdict": {"verdict": ..., "justification": ...} | null}]}

``--format sarif`` prints SARIF 2.1.0 instead (``portq.reporting.sarif``: one
result per flagged entry, at the port's cited lines); ``--output FILE`` writes
any format to FILE (``portq.core.safe_output``) instead of standard output.

``--fail-on REAL_GAP[,NEEDS_REVIEW...]`` is a CI gate: it judges the standing
verdict of every entry of the upstream's ledger (``portq.commands.standing``:
what ``portq status`` calls open), not only the new wave, so a known gap
keeps failing it until a review settles it, even on a day with nothing new.
It exits 3 and names each entry that trips it on stderr.

A rescan of a range reuses the decisions whose inputs are unchanged
(``portq.classifier.decision_keys``) and says on stderr how many it decided again;
``--fresh`` decides every entry. The pipeline itself is ``portq.pipeline.scan``;
this module picks the range, and prints.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from portq.commands.selection import range_text, resume_command, revision_text, wave_range
from portq.core.errors import ConfigError, HistoryError, LedgerError, PortqError
from portq.core.model import FLAGGED, NOT_APPLICABLE, VERDICTS
from portq.reporting import output

EXIT_FAIL_ON = 3
"""A ``--fail-on`` verdict stands on an entry of the upstream's ledger."""

MAX_HOLES_SHOWN = 12
"""Coverage holes listed after a scan; ``portq summary`` lists them all."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("range", metavar="A..B", nargs="?", type=range_text,
                        help="upstream range: revisions, tags, branches or (abbreviated) SHAs "
                        "(default: from the newest complete wave's tip to --to)")
    parser.add_argument("--to", metavar="REV", type=revision_text,
                        help="without a range: scan up to REV instead of the upstream's HEAD")
    parser.add_argument("--all", action="store_true", help="one line per entry instead of the flagged ones")
    parser.add_argument("--fail-on", metavar="VERDICT[,VERDICT...]", type=verdict_set,
                        help="a CI gate: exit 3 when the standing verdict of any entry of the upstream's ledger "
                        "(every complete wave, human reviews included; not only this scan's wave) is one of "
                        "these, naming each such entry on stderr; also when nothing is new")
    parser.add_argument("--fresh", action="store_true",
                        help="decide every entry again instead of reusing the decisions of an earlier scan of the range")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="table (default), json (as --json) or sarif (SARIF 2.1.0: one result per flagged entry, "
                        "at the port's cited lines, for code-scanning views)")
    parser.add_argument("--output", metavar="FILE",
                        help="write what would be printed to FILE instead (any format; - is standard output); "
                        "only a regular file is ever replaced")


FORMATS = ("table", "json", "sarif")
"""What ``--format`` takes; ``--json`` is ``--format json``."""


def scan_format(args) -> str:
    if args.json and args.format not in (None, "json"):
        raise PortqError(f"--json and --format {args.format}: expected one of them")
    return args.format or ("json" if args.json else "table")


def emit_to(document: output.Document, fmt: str, destination: str | None) -> None:
    """Print ``document`` as ``fmt`` (sarif is JSON), or write it to ``destination`` (``--output``)."""
    from portq.core import safe_output

    fmt = "json" if fmt == "sarif" else fmt
    if destination is None or safe_output.is_stdout(destination):
        output.emit(document, fmt)
        return
    import io

    buffer = io.StringIO()
    output.emit(document, fmt, buffer)
    safe_output.write_text(destination, buffer.getvalue(), what="--output")


def verdict_set(text: str) -> frozenset[str]:
    names = [part.strip().upper().replace("-", "_") for part in text.split(",")]
    unknown = [name for name in names if name not in VERDICTS]
    if not text.strip() or unknown:
        shown = output.one_line(unknown[0] if unknown and unknown[0] else text)
        raise argparse.ArgumentTypeError(f"unknown verdict {shown!r}: expected one or more of {', '.join(VERDICTS)}, "
                                         "separated by commas")
    return frozenset(names)


def continuation_range(workspace, to: str | None) -> tuple[str, str] | tuple[str, None]:
    """``(upstream, A..B)`` from the newest complete wave's tip to ``to`` (HEAD); B is None when nothing is new.
    With no complete wave, an unfinished first wave's own range (rerunning the command finishes it)."""
    from portq.upstream.history import Upstream

    if not workspace.config.ledger_path.exists():
        raise LedgerError(f"no earlier wave in {workspace.config.ledger_path} to continue from: "
                          "start with portq scan A..B (the first range to audit)")
    ledger = workspace.ledger()
    names = [workspace.named_upstream()] if workspace.upstream_named else workspace.configured_upstreams()
    waves = {name: wave for name in names if (wave := workspace.newest_complete_wave(name)) is not None}
    if not waves:
        which = f" of upstream {names[0]}" if workspace.upstream_named else ""
        unfinished = [wave for wave in ledger.waves() if wave.upstream in names and wave.status != "complete"]
        if unfinished:  # a first wave that never finished: completing it is the way on, not a new range
            wave = unfinished[-1]
            if to is None:  # the same command again (a CI job rerun) finishes it
                recorded = len(ledger.recorded_positions(wave))
                print(output.one_line(f"Resuming {wave.name} ({wave_range(wave)}), {wave.status} "
                                      f"with {recorded} of {wave.entry_count} entries recorded."), file=sys.stderr)
                return wave.upstream, wave_range(wave)
            raise LedgerError(f"no complete wave{which} in {ledger.path} to continue from; {wave.name} of upstream "
                              f"{wave.upstream} is {wave.status}: resume it with {resume_command(wave.upstream, wave)}")
        raise LedgerError(f"no complete wave{which} in {ledger.path} to continue from: start with portq scan A..B")
    if len(waves) > 1:
        listed = ", ".join(f"{name} ({wave.name})" for name, wave in waves.items())
        raise ConfigError(f"complete waves of several upstreams to continue from: {listed}; pick one with --upstream NAME")
    [(name, wave)] = waves.items()
    target = to or "HEAD"
    with Upstream(workspace.upstream_path(name), name) as upstream:
        tip = upstream.resolve(target)
        if tip is None:
            raise HistoryError(f"--to {target}: unknown revision in upstream {name} ({upstream.path})")
        if upstream.is_ancestor(wave.tip_sha, tip) is not True:
            raise HistoryError(f"--to {target}: {tip[:12]} does not descend from {wave.tip_sha[:12]}, where {wave.name} "
                               f"({wave.range}) ended; scan a range A..B instead")
    if tip == wave.tip_sha:
        return name, None
    return name, f"{wave.tip_sha[:12]}..{tip[:12]}"


def scan_json(result) -> dict:
    return {
        "wave": result.wave.name,
        "status": result.wave.status,
        "range": result.wave.range,
        "upstream": result.upstream,
        "entries": output.Streamed(result.entries, output.entry_json, output.forget_decoded),  # made as printed
    }


def nothing_new_json(upstream: str, wave) -> dict:
    """``scan --json``'s document when the upstream has nothing beyond ``wave``: no wave, no entries."""
    return {"wave": None, "status": "nothing-new", "range": None, "upstream": upstream,
            "since": {"wave": wave.name, "tip": wave.tip_sha}, "entries": []}


def write_scan(out, result, show_all: bool) -> None:
    """Attention first: the flagged entries, the counts per verdict, the coverage holes."""
    records = result.entries
    if show_all:
        output.write_entries(out, records)
        return

    output.print_line(out, f"{output.wave_label(result.wave)}: {output.entries_count(len(records))}, {result.wave.status}")
    flagged = [r for r in records if (output.standing(r) is not None and output.standing(r).verdict in FLAGGED)]
    if flagged:
        output.write_entries(out, flagged, title=f"Flagged entries: {len(flagged)} (standing verdicts)")
    else:
        output.print_line(out, "No flagged entries.")
    counts = Counter(output.standing(r).verdict for r in records if output.standing(r) is not None)
    reasons = Counter(output.standing(r).justification for r in records
                      if output.standing(r) is not None and output.standing(r).verdict == NOT_APPLICABLE)
    why = ", ".join(f"{name} {count}" for name, count in reasons.most_common())
    output.print_line(out, "Verdicts: " + ", ".join(f"{name} {counts[name]}" for name in VERDICTS)
                      + (f" ({why})" if why else ""))
    reviewed = [r for r in records if output.standing(r) is not None and output.standing(r).source == "review"]
    disagreeing = [r for r in records if output.disagreeing_scan(r) is not None]
    if reviewed:
        output.print_line(out, f"Human reviews stand on {len(reviewed)} entries; "
                               f"this scan disagrees with {len(disagreeing)} of them.")
    holes = coverage_holes(result.wave, records)
    output.print_line(out, f"Coverage holes (not-ported): {len(holes) or 'none'}")
    for row, symbol, entries in holes[:MAX_HOLES_SHOWN]:
        output.print_line(out, f"  {row}  {symbol}  entries {', '.join(map(str, entries))}")
    if len(holes) > MAX_HOLES_SHOWN:
        output.print_line(out, f"  … {len(holes) - MAX_HOLES_SHOWN} more: portq summary --wave {result.wave.name}")
    lost = lost_anchors(records)
    if lost:
        output.print_line(out, f"Anchors lost: {len(lost)} (upstream moved what they name; update them)")
        for item in lost[:MAX_HOLES_SHOWN]:
            output.print_line(out, f"  entry {item['entry']}  {item['message']}")
    output.print_line(out, "Next: portq show N, portq file-issue N, portq summary; "
                           f"every entry: portq scan {result.wave.range} --all")


def lost_anchors(records) -> list[dict]:
    """Every move of an anchored upstream definition a scan saw (rule ``moved-definition``):
    ``entry``, ``message`` ("anchor lost at SHA: SYMBOL moved to PATH::NAME?") and the in-tree
    ``anchors`` (file, line, reference) that still name the old place."""
    found = []
    for record in records:
        event = record.scan
        if event is None or "anchor-lost" not in (event.detail_json or ""):
            continue
        verdict = event.to_verdict()
        for symbol in verdict.symbols or [verdict]:
            anchors = [(e.path, e.line, e.subject) for e in symbol.evidence if e.kind == "anchor"]
            found += [{"entry": record.position, "message": e.message, "anchors": anchors}
                      for e in symbol.evidence if e.kind == "anchor-lost"]
    return found


def coverage_holes(wave, records) -> list[tuple[str, str, list[int]]]:
    """``(row, path::symbol, entries)`` for every upstream symbol a row owns and nothing here ports."""
    from portq.reporting import reports
    from portq.reporting.summary import build_summary_context, summary_entries

    # Only entries whose recorded verdict names a not-ported symbol can hold a hole:
    # decoding every entry's full verdict would cost more than the rest of the output.
    candidates = [r for r in records if any(event.justification == "not-ported" or "not-ported" in (event.detail_json or "")
                                            for event in (r.scan, r.current.event) if event is not None)]
    context = build_summary_context(wave=reports.wave_dict(wave), entries=summary_entries(candidates))
    return [(hole["row"] or "?", f"{hole['path']}::{hole['symbol']}" if hole["path"] else "(whole entry)",
             hole["entries"]) for hole in context["coverage_holes"]]


def run(args: argparse.Namespace, workspace) -> int:
    from portq.pipeline.scan import run_scan

    if args.range is not None and args.to is not None:
        raise PortqError(f"--to {args.to}: goes with a scan without a range (the range {args.range} names its own end)")
    if args.range is not None:
        upstream, _ = workspace.upstream_for_range(args.range)
        range_spec = args.range
    else:
        upstream, range_spec = continuation_range(workspace, args.to)
        if range_spec is None:
            from portq.pipeline.reviews import apply_reviews

            apply_reviews(workspace.ledger(), workspace.config.reviews_path, upstream)  # an edited file stands now
            wave = workspace.newest_complete_wave(upstream)
            print(output.one_line(f"Nothing new in {upstream} since {wave.name} ({wave.range}) ended at "
                                  f"{wave.tip_sha[:12]}."), file=sys.stderr)
            fmt = scan_format(args)
            if fmt == "sarif":
                from portq.reporting.sarif import sarif_document

                emit_to(output.Document(sarif_document([], wave_name=None, upstream=upstream)), fmt, args.output)
            elif fmt == "json":  # a script reads a document every time
                emit_to(output.Document(nothing_new_json(upstream, wave)), fmt, args.output)
            return gate(workspace, upstream, args.fail_on)
    fmt = scan_format(args)
    if args.output is not None and not args.output.strip():
        raise PortqError("--output: expected a file to write to (or - for standard output), got an empty value")
    if args.output is not None:
        from pathlib import Path

        from portq.core import safe_output

        if not safe_output.is_stdout(args.output):
            safe_output.check_target(Path(args.output), "--output")  # refuse before a long scan, not after
    workspace.close()  # the scan opens the ledger to write
    with output.progress() as reporter:
        result = run_scan(workspace.config_for(upstream), range_spec, progress=reporter, fresh=args.fresh)
    if fmt == "sarif":
        from portq.reporting.sarif import sarif_document

        web = workspace.config.upstream_web.get(upstream)
        document = output.Document(sarif_document(result.entries, wave_name=result.wave.name, upstream=upstream, web=web))
    else:
        document = output.Document(scan_json(result), table=lambda out: write_scan(out, result, args.all))
    emit_to(document, fmt, args.output)
    _warn_about_reviews(workspace, upstream)
    if result.resumed:
        print(f"{result.wave.name} was unfinished and is now complete.", file=sys.stderr)
    if result.redecided is not None:
        print(f"{result.wave.name} reuses PORTQ-{result.wave.reuses_wave}: {result.redecided} of "
              f"{result.wave.entry_count} entries decided again (--fresh decides all)", file=sys.stderr)
    return gate(workspace, upstream, args.fail_on)


def gate(workspace, upstream: str, verdicts: frozenset[str] | None) -> int:
    """``--fail-on``: exit 3 when an entry of ``upstream``'s ledger stands at one of ``verdicts``, naming each."""
    if not verdicts:
        return 0
    from portq.commands.standing import complete_waves, entry_label, standing_entries

    ledger = workspace.ledger()
    failing = [item for item in standing_entries(ledger, complete_waves(ledger, upstream))
               if item.event.verdict in verdicts]
    if not failing:
        return 0
    failing.sort(key=lambda item: (item.wave.id, item.record.position))
    print(f"portq: --fail-on {','.join(sorted(verdicts))}: {output.entries_count(len(failing))} of upstream "
          f"{output.one_line(upstream)} {'stands' if len(failing) == 1 else 'stand'} at those verdicts:", file=sys.stderr)
    for item in failing:
        print(output.one_line(f"  {entry_label(item)}  {item.record.sha[:12]}  {','.join(item.record.rows) or '-'}  "
                              f"{output.verdict_label(item.event)}"), file=sys.stderr)
    return EXIT_FAIL_ON


def _warn_about_reviews(workspace, upstream: str) -> None:
    """The reviews file's problems for this upstream, one warning line each (``portq matrix`` lists them too)."""
    from portq.pipeline.reviews import problems

    for problem in problems(workspace.config, workspace.matrix, [upstream]):
        what = ("names a row the matrix no longer defines" if problem["kind"] == "review-row-missing"
                else "names a commit the clone does not have")
        print(output.one_line(f"portq: warning: {problem['file']}: the review of {problem['subject']} "
                              f"({problem['row'] or 'no row'}) {what}: run portq matrix"), file=sys.stderr)
