"""``portq file-issue N [--range A..B] [--out DIR] [--json] [--gh]``: entry N as an issue report.

Renders ``templates/issue.md.j2`` for entry N of the last scanned wave (or the
last wave of ``--range``) into ``DIR/<upstream>/<range>/<N>-<slug>.md``
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

This module gathers records and writes files; wording lives in the template
and shaping in ``portq.reports``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from portq import reports
from portq.commands.show import _positive, find_wave
from portq.config import relative_label
from portq.errors import ConfigError, HistoryError, PortqError
from portq.model import Commit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry", metavar="N", type=_positive, help="entry number in the range (from 1)")
    parser.add_argument("--range", metavar="A..B", help="the range scanned (default: the last scanned)")
    parser.add_argument("--out", metavar="DIR", help="where reports go (default: reports/ beside portq.toml)")
    parser.add_argument("--gh", action="store_true", help="also file it with the GitHub CLI (once per fingerprint)")
    parser.add_argument("--gh-repo", metavar="OWNER/NAME", help="the repository gh files into (default: gh's own choice)")


def read_commit(config, matrix, wave, record) -> tuple[Commit, list[str], str | None]:
    """The entry's commit with its changes, its unowned paths, and why not (when the clone is missing)."""
    from portq.history import Range, Upstream
    from portq.hunks import ensure_hunks
    from portq.mapping import ChangeMapper

    bare = Commit(sha=record.sha, parents=(), title=record.title, message="", author="", authored_at="", pr=record.pr)
    try:
        _, path = dataclasses.replace(config, selected_upstream=wave.upstream).resolve_upstream(matrix.upstreams())
        with Upstream(path, wave.upstream) as upstream:
            parent = upstream.resolve(f"{record.sha}^")
            if parent is None:
                return bare, [], f"{record.sha[:12]} has no parent in {path}"
            [commit] = list(upstream.commits(Range(f"{parent}..{record.sha}", parent, record.sha, (record.sha,))))
            for change in commit.changes:
                ensure_hunks(change)
            entry = ChangeMapper(matrix, wave.upstream, upstream.read_blob).map_commit(record.position, commit)
            return commit, list(entry.unowned_paths), None
    except (ConfigError, HistoryError) as error:
        return bare, [], str(error)


def build_context(config, ledger, wave, record) -> dict:
    """The issue context of one ledger entry (``--json`` prints it)."""
    from portq.matrix import Matrix

    matrix = Matrix.load(config.matrix_path)
    commit, unowned, missing = read_commit(config, matrix, wave, record)
    if missing:
        print(f"portq: warning: upstream commit not read ({missing}); the report has no hunks or sizes", file=sys.stderr)
    row_info = {
        row.id: {"title": row.title, "line": row.line, "tests": list(row.tests)} for row in matrix.rows
    }
    context = reports.build_issue_context(
        upstream=wave.upstream,
        range_text=wave.range_spec,
        wave=wave.name,
        position=record.position,
        commit=commit,
        verdict=reports.current_verdict(record),
        history=ledger.history(record.entry_id),
        proposal=record.current.proposal,
        current=record.current.event,
        rows=record.rows,
        row_info=row_info,
        unowned_paths=unowned,
        matrix_path=relative_label(config.matrix_path, config.root, config.tree),
    )
    context["not_determined"]["upstream_unread"] = missing
    return context


def run(args: argparse.Namespace, config) -> int:
    from portq.ledger import open_ledger

    with open_ledger(config.ledger_path, create=False) as ledger:
        wave = find_wave(ledger, args.range)
        record = ledger.entry_at(wave, args.entry)
        context = build_context(config, ledger, wave, record)
        text = reports.render("issue.md.j2", context)
        out_dir = Path(args.out) if args.out else config.root / "reports"
        path = reports.report_path(out_dir, wave.upstream, wave.range_spec, record.position, context["slug"])
        written = reports.write_report(path, text)
        filed = file_on_github(ledger, args, context, text, path, wave, record) if args.gh else None

    if args.json:
        print(json.dumps({**context, "path": str(path), "written": written, "filed": filed}, indent=2))
        return 0
    print(path)
    if filed:
        label = "already filed" if filed["already_filed"] else "filed"
        print(f"{label}: {filed['url'] or '(gh printed no URL)'}", file=sys.stderr)
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
            f"{(previous.data or {}).get('url') or previous.path}; filing the corrected report",
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
