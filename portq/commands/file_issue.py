"""``portq file-issue N | --all | --dashboard [--range A..B | --wave PORTQ-N] [--force] [--out DIR] [--json] [--gh]``.

``N`` renders entry N of the newest complete wave of the upstream (or of
``--range``, or the wave ``--wave`` names) into
``DIR/<upstream>/<range>/<N>-<slug>.md`` (``DIR`` defaults to ``reports/``
beside ``portq.toml``) and prints the path; an IN_SYNC or NOT_APPLICABLE
entry is refused (exit 2) unless ``--force``. ``--all`` writes every flagged
entry of that wave; ``--dashboard`` writes the ledger's tracking issue to
``DIR/dashboard.md``. ``--gh`` files through the GitHub CLI with the title
and body as arguments, never through a shell: a fingerprint once (the
ledger's reports table remembers it, with the URL ``gh`` printed), the
tracking issue created once and edited in place afterwards.

This module wires arguments to ``portq.reporting.filing`` and prints; the context is
``portq.reporting.issue_context``, wording lives in the templates and shaping in
``portq.reporting.issue_report``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from portq.reporting import output

from portq.commands.selection import add_selector, entry_number, selected_entry, selected_wave
from portq.core.errors import PortqError
from portq.core.terminal import one_line
from portq.reporting import reports


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry", metavar="N", type=entry_number, nargs="?",
                        help="entry number in the range (from 1), or WAVE#N as status prints it (PORTQ-3#12)")
    add_selector(parser, entry=False)
    parser.add_argument("--all", action="store_true", help="every flagged entry of the wave")
    parser.add_argument("--dashboard", action="store_true",
                        help="the ledger's tracking issue: open gaps per row, decisions, coverage holes")
    parser.add_argument("--force", action="store_true", help="write a report even for an IN_SYNC or NOT_APPLICABLE entry")
    parser.add_argument("--out", metavar="DIR", help="where reports go (default: reports/ beside portq.toml)")
    parser.add_argument("--gh", action="store_true", help="also file it with the GitHub CLI (once per fingerprint)")
    parser.add_argument("--gh-repo", metavar="OWNER/NAME", help="with --gh: the repository gh files into (default: gh's own choice)")


def _validate(args: argparse.Namespace) -> None:
    chosen = [name for name, given in (("N", args.entry is not None), ("--all", args.all), ("--dashboard", args.dashboard))
              if given]
    if len(chosen) != 1:
        raise PortqError(f"file-issue: expected one of N, --all or --dashboard, got {' and '.join(chosen) or 'none'}")
    if args.gh_repo is not None and not args.gh:
        raise PortqError(f"--gh-repo {args.gh_repo}: only means something with --gh (file the issue with gh)")
    if args.gh_repo is not None and (args.gh_repo.count("/") != 1 or not all(args.gh_repo.split("/"))
                                     or not args.gh_repo.isprintable() or args.gh_repo.startswith("-")):
        raise PortqError(f"--gh-repo {args.gh_repo!r}: expected OWNER/NAME")
    if args.out is not None and not args.out.strip():
        raise PortqError("--out: expected a directory, got an empty value")


def run(args: argparse.Namespace, workspace) -> int:
    from portq.reporting import filing

    _validate(args)
    config = workspace.config
    ledger = workspace.ledger()
    out_dir = Path(args.out) if args.out else config.root / "reports"
    if args.dashboard:
        from portq.reporting import dashboard

        _dashboard_waves_exist(workspace, args)
        text = dashboard.render_dashboard(ledger, out_dir, web=config.upstream_web)
        path = out_dir / "dashboard.md"
        filed = filing.file_dashboard(ledger, text, path, repo=args.gh_repo) if args.gh else None
        written = reports.write_report(path, text) if not args.gh else filed["action"] != "unchanged"
        return _emit(args, [{"path": str(path), "written": written, "filed": filed}])
    if args.all:
        wave = selected_wave(workspace, args)
        done = filing.file_all(config, workspace.matrix, ledger, wave, out_dir, gh=args.gh, repo=args.gh_repo)
        return _emit(args, [{"entry": f.entry, "path": str(f.path), "written": f.written, "filed": f.filed} for f in done])
    wave, record = selected_entry(workspace, args)
    filing.refuse_unless_actionable(record, args.force)
    done = filing.write_entry(config, workspace.matrix, ledger, wave, record, out_dir)
    if args.gh:
        done.filed = filing.file_on_github(ledger, done, wave, record, args.gh_repo)
    context = {k: v for k, v in done.context.items() if not k.startswith("_")}
    data = {**context, "path": str(done.path), "written": done.written, "filed": done.filed}
    output.emit(output.Document(data, table=_table([data])), output.output_format(args))
    return 0


def _dashboard_waves_exist(workspace, args: argparse.Namespace) -> None:
    """The dashboard covers every upstream's complete waves; what the flags name must be one of them."""
    from portq.reporting import filing

    if not (workspace.upstream_named or args.range or args.wave):
        filing.complete_wave(workspace.ledger(), None)
        return
    wave = workspace.select_wave(args.range, args.wave)
    if wave.status != "complete":
        raise PortqError(f"--dashboard: {wave.name} is {wave.status}; the dashboard reads complete waves only")


def _emit(args, results: list[dict]) -> int:
    output.emit(output.Document({"reports": results}, table=_table(results)), output.output_format(args))
    return 0


def _table(results: list[dict]):
    def table(out) -> None:
        for result in results:
            output.print_line(out, result["path"])
            filed = result.get("filed")
            if filed:
                label = "already filed" if filed.get("already_filed") else filed.get("action", "filed")
                print(f"{label}: {one_line(filed.get('url') or '(gh printed no URL)')}", file=sys.stderr)

    return table
