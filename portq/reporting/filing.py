"""Filing: from ledger entries to written reports and GitHub issues.

What ``portq file-issue`` does, as library calls the command only wires to
its arguments: refuse entries that need nothing unless forced; write one
entry's report from its context (``portq.reporting.issue_context``), every flagged
entry of a wave (``file_all``), or the ledger's tracking issue
(``file_dashboard``); file them with the ``gh`` CLI, once per fingerprint,
editing the tracking issue in place afterwards.

Idempotent: the same ledger state renders the same bytes, and a fingerprint
is filed once (the ledger's reports table keeps gh's URL). It reads the
ledger and the upstream clone and writes reports; it decides no verdicts.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from portq.core.errors import PortqError
from portq.core.model import FLAGGED
from portq.reporting import reports
from portq.reporting.issue_context import build_issue_context, tree_index
from portq.reporting.markdown import one_line

DASHBOARD_FINGERPRINT = "dashboard"
"""The ledger's reports row that remembers the tracking issue (one per ledger)."""


class RefusedEntry(PortqError):
    """``file-issue N`` on an entry that needs nothing (exit 2)."""


def refuse_unless_actionable(record, force: bool) -> None:
    """An IN_SYNC or NOT_APPLICABLE entry asks nothing of anyone: no report unless forced."""
    verdict = reports.current_verdict(record)
    if verdict.verdict in FLAGGED or force:
        return
    label = verdict.verdict + (f"/{verdict.justification}" if verdict.justification else "")
    raise RefusedEntry(f"entry {record.position} is {label}: nothing to act on, so no report; pass --force to write one anyway")


@dataclass
class Filed:
    """One written report, and where it was filed."""

    entry: int
    path: Path
    written: bool
    context: dict
    filed: dict | None = None


def write_entry(config, matrix, ledger, wave, record, out_dir: Path, *, index=None) -> Filed:
    """Render and write one entry's report (a warning on stderr when the upstream commit was not read)."""
    context, missing = build_issue_context(config, matrix, ledger, wave, record, index=index, out_dir=out_dir)
    if missing:
        print(f"portq: warning: upstream commit not read ({one_line(missing)}); the report has no hunks or sizes",
              file=sys.stderr)
    text = reports.render("issue.md.j2", context)
    path = reports.report_path(out_dir, wave.upstream, wave.short_range, record.position, context["slug"])
    written = reports.write_report(path, text)
    return Filed(record.position, path, written, {**context, "_text": text})


def file_on_github(ledger, filed: Filed, wave, record, repo: str | None, run=subprocess.run) -> dict:
    """File through ``gh`` unless this fingerprint was filed before; record it in the ledger."""
    context = filed.context
    fingerprint = context["fingerprint"]
    earlier = ledger.report(fingerprint)
    if earlier is not None:
        return {"fingerprint": fingerprint, "url": (earlier.data or {}).get("url"), "already_filed": True,
                "filed_at": earlier.created_at}
    for previous in ledger.reports_for(record.entry_id):
        print(
            f"portq: entry {record.position} was filed before with another verdict: "
            f"{(previous.data or {}).get('url') or previous.path}; filing the corrected report",
            file=sys.stderr,
        )
    _, body = reports.split_title(context["_text"])
    url = reports.file_with_gh(context["title"], body, repo=repo, run=run)
    report, created = ledger.record_report(
        fingerprint, str(filed.path), entry_id=record.entry_id, wave_id=wave.id,
        data={"url": url, "title": context["title"], "repo": repo},
    )
    if not created:
        raise PortqError(
            f"another portq process filed fingerprint {fingerprint} at the same time: check {url} for a duplicate", 1
        )
    return {"fingerprint": fingerprint, "url": url, "already_filed": False, "filed_at": report.created_at}


def complete_wave(ledger, range_spec: str | None):
    """The newest complete wave (of ``range_spec``), or an error saying there is none."""
    candidates = [w for w in ledger.waves() if w.status == "complete"]
    if range_spec:
        wanted = ledger.latest_wave(range_spec)
        candidates = [w for w in candidates if wanted is not None and w.range == wanted.range]
    if not candidates:
        where = f" of {range_spec}" if range_spec else ""
        raise PortqError(f"no complete wave{where} in {ledger.path}: run portq scan A..B to the end first")
    return candidates[-1]


def file_all(config, matrix, ledger, wave, out_dir: Path, *, gh: bool = False, repo: str | None = None,
             run: Callable = subprocess.run) -> list[Filed]:
    """Write (and with ``gh`` file) a report for every flagged entry of ``wave``.

    Reports list their siblings of the same row; after filing, the reports
    are written again so the siblings carry the issue URLs gh returned, and
    the issues filed in this run are edited to match.
    """
    index = tree_index(config, matrix) if config.tree.is_dir() else None
    records = [r for r in ledger.wave_entries(wave)
               if reports.has_verdict(r) and reports.current_verdict(r).verdict in FLAGGED]
    done = [write_entry(config, matrix, ledger, wave, r, out_dir, index=index) for r in records]
    if not gh:
        return done
    for filed, record in zip(done, records):
        filed.filed = file_on_github(ledger, filed, wave, record, repo, run)
    fresh = {f.entry for f in done if f.filed and not f.filed["already_filed"]}
    for position, (filed, record) in enumerate(zip(done, records)):
        again = write_entry(config, matrix, ledger, wave, record, out_dir, index=index)
        again.filed = filed.filed
        done[position] = again
        if record.position in fresh and again.written and filed.filed["url"]:
            _, body = reports.split_title(again.context["_text"])
            gh_edit(filed.filed["url"], body, repo, run)
    return done


# --- gh -------------------------------------------------------------------------------


def _gh() -> str:
    gh = shutil.which("gh")
    if gh is None:
        raise reports.ReportError("--gh needs the GitHub CLI `gh` on PATH (https://cli.github.com); the report was written, file it by hand")
    return gh


def gh_edit(url: str, body: str, repo: str | None, run: Callable = subprocess.run) -> None:
    """Replace an issue's body in place (``gh issue edit URL --body BODY``, no shell)."""
    if len(body) > reports.MAX_GH_BODY_CHARS:
        raise reports.ReportError(f"body is {len(body)} characters; GitHub accepts at most {reports.MAX_GH_BODY_CHARS}")
    argv = [_gh(), "issue", "edit", url, "--body", body]
    if repo:
        argv += ["--repo", repo]
    try:
        done = run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise reports.ReportError(f"cannot run gh: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise reports.ReportError(f"gh issue edit failed (exit {done.returncode}): {one_line(done.stderr or done.stdout or '', 300)}")


def file_dashboard(ledger, text: str, path: Path, *, repo: str | None = None, run: Callable = subprocess.run) -> dict:
    """Create the tracking issue once, then edit it in place; the ledger remembers its URL.

    The written file is what gh last accepted: it is written after gh
    succeeds, so an unchanged file means the issue already shows this text,
    and a failed edit is retried on the next run.
    """
    title, body = reports.split_title(text)
    earlier = ledger.report(DASHBOARD_FINGERPRINT)
    if earlier is not None and (earlier.data or {}).get("url"):
        url = earlier.data["url"]
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return {"url": url, "action": "unchanged"}
        gh_edit(url, body, repo or earlier.data.get("repo"), run)
        reports.write_report(path, text)
        return {"url": url, "action": "edited"}
    url = reports.file_with_gh(title, body, repo=repo, run=run)
    _, created = ledger.record_report(DASHBOARD_FINGERPRINT, str(path), data={"url": url, "repo": repo})
    if not created:
        raise PortqError(f"another portq process created the tracking issue at the same time: check {url} for a duplicate", 1)
    reports.write_report(path, text)
    return {"url": url, "action": "created"}
