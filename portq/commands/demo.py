"""``portq demo [--keep DIR] [--check] [--json]``: portq on an embedded default.

Builds the example upstream histories of ``examples/upstream/`` (fixed dates,
so the SHAs printed are the same on every machine), scans each whole range
against ``examples/stale-tree`` and against this repository's ``kernels/``,
prints the two verdict columns side by side with what each commit was
written to get, files the issue report of the seed-000-shaped entry, and
says where everything went. No network, no GPU.

Without ``--keep`` everything is built in a temporary directory and removed
afterwards, except the report and the two wave summaries, which are copied to
``reports/demo/``.
``--check`` exits 1 when any verdict differs from the series' expectation.
The pipeline is ``portq.pipeline.demo``; this module parses and prints.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from portq.core.model import VERDICTS
from portq.core.terminal import cell
from portq.pipeline.demo import TARGETS, DemoResult, run_demo
from portq.reporting import output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep", metavar="DIR",
                        help="build into DIR (must be empty or absent) and keep the repos, ledgers and reports")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if any verdict differs from what the series says it must be")


def run(args: argparse.Namespace, workspace) -> int:
    config = workspace.config
    keep = Path(args.keep).resolve() if args.keep else None
    workdir = keep or Path(tempfile.mkdtemp(prefix="portq-demo-"))
    say = (lambda line: None) if args.json else (lambda line: print(f"  {line}", file=sys.stderr))
    try:
        result = run_demo(workdir, progress=say)
        report = result.report
        if keep is None:
            destination = config.root / "reports" / "demo"
            if report is not None:
                report = _keep_report(report, destination)
            for target, summary in list(result.summaries.items()):
                if summary is not None and Path(summary).exists():
                    result.summaries[target] = _keep_report(Path(summary), destination, f"{target}-summary.md")
        document = output.Document(_as_json(result, report), table=lambda out: _print_text(out, result, report, keep))
        output.emit(document, output.output_format(args))
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 1 if args.check and result.mismatches else 0


def _keep_report(report: Path, destination: Path, name: str | None = None) -> Path:
    destination.mkdir(parents=True, exist_ok=True)
    kept = destination / (name or report.name)
    shutil.copyfile(report, kept)
    return kept


def _cell(outcome) -> str:
    text = outcome.verdict + (f"/{outcome.justification}" if outcome.justification else "")
    if outcome.as_expected:
        return text
    wanted = outcome.expected.verdict + (f"/{outcome.expected.justification}" if outcome.expected.justification else "")
    return f"{text} (want {wanted})"


def _print_text(out, result: DemoResult, report: Path | None, keep: Path | None) -> None:
    from rich.table import Table

    if not out.is_terminal:
        out.width = 132
    output.print_line(out, "Upstream histories (built with fixed dates: the same SHAs everywhere)", "bold")
    for name, built in result.upstreams.items():
        output.print_line(out, f"  {name}: {built.range}  ({len(built.series.entries)} entries)")
    for name in result.upstreams:
        table = Table(title=cell(f"{name}: verdicts against each tree"), title_justify="left")
        table.add_column("#", justify="right", min_width=2)
        table.add_column("sha", no_wrap=True, min_width=10)
        table.add_column("title", max_width=52, no_wrap=True)
        for target in TARGETS:
            table.add_column(target, no_wrap=True, min_width=25)
        for commit in result.upstreams[name].series.entries:
            cells = [result.outcome(target, name, commit.number) for target in TARGETS]
            table.add_row(str(commit.number), cells[0].sha[:10], cell(commit.title), *(_styled(c) for c in cells))
        out.print(table)
    counts = {target: Counter(o.verdict for o in result.outcomes if o.target == target) for target in TARGETS}
    summary = Table(title="Summary", title_justify="left")
    summary.add_column("verdict")
    for target in TARGETS:
        summary.add_column(target, justify="right")
    for verdict in VERDICTS:
        summary.add_row(verdict, *(str(counts[target][verdict]) for target in TARGETS))
    out.print(summary)
    mismatches = result.mismatches
    if mismatches:
        output.print_line(out, f"{len(mismatches)} verdict(s) differ from what the series was written to get "
                               "(marked 'want' above); see each commit.toml under examples/upstream/", "yellow")
    else:
        output.print_line(out, "Every verdict is the one the series was written to get.")
    output.print_line(out, "Where everything went", "bold")
    where = "kept in" if keep else "built in a temporary directory (removed; pass --keep DIR to keep it):"
    output.print_line(out, f"  work directory {where} {result.workdir}")
    for target, ledger in result.ledgers.items():
        waves = ", ".join(f"{name} {wave}" for (t, name), wave in result.waves.items() if t == target)
        where_ledger = f"ledger {ledger} ({waves}); " if keep else f"waves {waves}; "
        output.print_line(out, f"  {target}: {where_ledger}summary {result.summaries[target]}")
    if report is not None:
        output.print_line(out, f"  issue report for the seed-000-shaped entry: {report}")
    elif result.report_note:
        output.print_line(out, f"  no issue report: {result.report_note}")


def _styled(outcome):
    if not outcome.as_expected:
        return cell(_cell(outcome), "yellow")
    return cell(_cell(outcome), "bold red" if outcome.verdict == "REAL_GAP" else None)


def _as_json(result: DemoResult, report: Path | None) -> dict:
    return {
        "upstreams": {name: {"path": str(b.path), "base": b.shas[0], "shas": list(b.shas[1:])}
                      for name, b in result.upstreams.items()},
        "entries": [
            {"upstream": o.series, "entry": o.position, "sha": o.sha, "title": o.title, "tree": o.target,
             "verdict": o.verdict, "justification": o.justification,
             "expected": {"verdict": o.expected.verdict, "justification": o.expected.justification},
             "as_expected": o.as_expected}
            for o in result.outcomes
        ],
        "ledgers": {target: str(path) for target, path in result.ledgers.items()},
        "waves": {f"{target}:{name}": wave for (target, name), wave in result.waves.items()},
        "summaries": {target: str(path) for target, path in result.summaries.items()},
        "report": str(report) if report else None,
        "mismatches": len(result.mismatches),
    }
