"""``portq file-issue N [--range A..B | --wave PORTQ-N] [--out DIR] [--json] [--gh [--gh-repo R]]``: entry N as an issue report.

Renders ``templates/issue.md.j2`` for entry N of the newest complete wave of
the upstream (or of ``--range``, or the wave ``--wave`` names) into ``DIR/<upstream>/<range>/<N>-<slug>.md``
(``DIR`` defaults to ``reports/`` beside ``portq.toml``) and prints the path.
The report carries the standing verdict (a human review wins over scans), the
scan's evidence, and the entry's whole verdict history. The upstream commit is
read again from the clone for its hunks and sizes; without the clone the
report says what it could not include.

Idempotent: the same ledger state renders the same bytes, and ``--gh`` files
a fingerprint once (the ledger's reports table remembers it, with the URL
``gh`` printed). A review that changes the verdict changes the fingerprint,
so the corrected report can be filed. ``--gh`` runs ``gh issue create`` with
the title and body as arguments, never through a shell.

This module writes files; the context is ``portq.issue_context``, wording
lives in the template and shaping in ``portq.reports``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from portq import output, reports
from portq.commands.selection import add_selector, selected_entry
from portq.errors import PortqError
from portq.terminal import cell, one_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selector(parser)
    parser.add_argument("--out", metavar="DIR", help="where reports go (default: reports/ beside portq.toml)")
    parser.add_argument("--gh", action="store_true", help="also file it with the GitHub CLI (once per fingerprint)")
    parser.add_argument("--gh-repo", metavar="OWNER/NAME", help="with --gh: the repository gh files into (default: gh's own choice)")


def _validate(args: argparse.Namespace) -> None:
    if args.gh_repo is not None and not args.gh:
        raise PortqError(f"--gh-repo {args.gh_repo}: only means something with --gh (file the issue with gh)")
    if args.gh_repo is not None and (args.gh_repo.count("/") != 1 or not all(args.gh_repo.split("/"))
                                     or not args.gh_repo.isprintable() or args.gh_repo.startswith("-")):
        raise PortqError(f"--gh-repo {args.gh_repo!r}: expected OWNER/NAME")
    if args.out is not None and not args.out.strip():
        raise PortqError("--out: expected a directory, got an empty value")


def run(args: argparse.Namespace, workspace) -> int:
    from portq.issue_context import build_issue_context

    _validate(args)
    config = workspace.config
    wave, record = selected_entry(workspace, args)
    ledger = workspace.ledger()
    context, missing = build_issue_context(config, workspace.matrix, ledger, wave, record)
    if missing:
        print(f"portq: warning: upstream commit not read ({one_line(missing)}); the report has no hunks or sizes",
              file=sys.stderr)
    text = reports.render("issue.md.j2", context)
    out_dir = Path(args.out) if args.out else config.root / "reports"
    path = reports.report_path(out_dir, wave.upstream, wave.range_spec, record.position, context["slug"])
    written = reports.write_report(path, text)
    filed = file_on_github(ledger, args, context, text, path, wave, record) if args.gh else None

    def table(out) -> None:
        out.print(cell(str(path)), crop=False, overflow="ignore")
        if filed:
            label = "already filed" if filed["already_filed"] else "filed"
            print(f"{label}: {one_line(filed['url'] or '(gh printed no URL)')}", file=sys.stderr)

    data = {**context, "path": str(path), "written": written, "filed": filed}
    output.emit(output.Document(data, table=table), output.output_format(args))
    return 0


def file_on_github(ledger, args, context, text, path, wave, record) -> dict:
    """File through ``gh`` unless this fingerprint was filed before; record it in the ledger."""
    fingerprint = context["fingerprint"]
    earlier = ledger.report(fingerprint)
    if earlier is not None:
        return {"fingerprint": fingerprint, "url": (earlier.data or {}).get("url"), "already_filed": True, "filed_at": earlier.created_at}
    for previous in ledger.reports_for(record.entry_id):
        print(
            f"portq: entry {record.position} was filed before with another verdict: "
            f"{one_line((previous.data or {}).get('url') or previous.path)}; filing the corrected report",
            file=sys.stderr,
        )
    _, body = reports.split_title(text)
    url = reports.file_with_gh(context["title"], body, repo=args.gh_repo)
    report, created = ledger.record_report(
        fingerprint,
        str(path),
        entry_id=record.entry_id,
        wave_id=wave.id,
        data={"url": url, "title": context["title"], "repo": args.gh_repo},
    )
    if not created:
        raise PortqError(
            f"another portq process filed fingerprint {fingerprint} at the same time: check {url} for a duplicate", 1
        )
    return {"fingerprint": fingerprint, "url": url, "already_filed": False, "filed_at": report.created_at}
