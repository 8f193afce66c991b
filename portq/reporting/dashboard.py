"""The ledger as one tracking issue and one page: what is open, since when, and who decided what.

``ledger_overview`` walks every complete wave of the ledger and keeps, per
upstream commit, its standing verdict in the newest wave that saw it, the
wave that first flagged it and how many of that upstream's waves have passed
since (its age), the report or issue it was filed as, and the human decisions
on it; the coverage holes are those that stand for each upstream, whichever
wave found them (each listed as ``WAVE#N``). The tracking
issue (``templates/dashboard.md.j2``, ``portq file-issue --dashboard``) and
the HTML page (``portq.reporting.html_page``) render this one record, modelled on
Renovate's dependency dashboard: one issue a team keeps open and portq edits
in place.

It reads the ledger and renders; it never writes the ledger or decides verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from portq.core.model import FLAGGED, SEVERITY, VERDICTS
from portq.reporting import reports
from portq.reporting.issue_report import infer_kind
from portq.reporting.summary import build_summary_context, summary_entries


def ledger_overview(ledger, out_dir: Path, web: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Open entries per row, human decisions, coverage holes and flagged counts per wave."""
    web = web or {}
    waves = [w for w in ledger.waves() if w.status == "complete"]
    order: dict[str, list[int]] = {}
    for wave in waves:
        order.setdefault(wave.upstream, []).append(wave.id)
    items: dict[tuple[str, str], dict[str, Any]] = {}
    per_wave: list[dict[str, Any]] = []
    newest: dict[str, tuple[Any, list]] = {}
    latest: dict[tuple[str, str], tuple[Any, Any]] = {}  # per upstream commit: the newest wave that lists it
    for wave in waves:
        records = [r for r in ledger.wave_entries(wave) if reports.has_verdict(r)]
        newest[wave.upstream] = (wave, records)
        counts = {name: 0 for name in VERDICTS}
        index = order[wave.upstream].index(wave.id)
        for record in records:
            verdict = reports.current_verdict(record)
            counts[verdict.verdict] += 1
            key = (wave.upstream, record.sha)
            item = items.setdefault(key, {"upstream": wave.upstream, "sha": record.sha, "short": record.sha[:10],
                                          "first_seen": None, "first_index": None})
            if verdict.verdict in FLAGGED and item["first_seen"] is None:
                item["first_seen"], item["first_index"] = wave.name, index
            item.update(_standing(wave, record, verdict, out_dir, ledger, web))
            latest[key] = (wave, record)
            item["age"] = None if item["first_index"] is None else len(order[wave.upstream]) - 1 - item["first_index"]
        per_wave.append({"wave": wave.name, "upstream": wave.upstream, "range": wave.range,
                         "finished_at": wave.finished_at, "flagged": sum(counts[v] for v in FLAGGED),
                         "counts": counts})
    open_items = [i for i in items.values() if i["verdict"] in FLAGGED]
    by_row: dict[str, list[dict[str, Any]]] = {}
    for item in open_items:
        by_row.setdefault(item["row"] or "no-row", []).append(item)
    for entries in by_row.values():
        entries.sort(key=lambda i: (-SEVERITY[i["verdict"]], i["upstream"], i["entry"]))
    holes = []
    for upstream, (wave, _records) in sorted(newest.items()):
        # what stands for the upstream, whichever wave found it: a later scan of new commits hides no hole
        standing = [{**entry, "label": f"{seen.name}#{record.position}"}
                    for (name, _sha), (seen, record) in latest.items() if name == upstream
                    for entry in summary_entries([record])]
        summary = build_summary_context(wave=reports.wave_dict(wave), entries=[], earlier=standing)
        holes += [{**hole, "upstream": upstream, "wave": wave.name} for hole in summary["standing_holes"]]
    counts_by_row: dict[str, dict[str, int]] = {}
    for item in items.values():
        row = counts_by_row.setdefault(item["row"] or "no-row", {name: 0 for name in VERDICTS})
        row[item["verdict"]] += 1
    return {
        "waves": per_wave,
        "latest": [{"upstream": u, "wave": w.name, "range": w.range} for u, (w, _) in sorted(newest.items())],
        "open_by_row": [{"row": row, "entries": entries} for row, entries in sorted(by_row.items())],
        "open": len(open_items),
        "decisions": sorted((i for i in items.values() if i["source"] == "review"),
                            key=lambda i: (i["upstream"], i["entry"])),
        "coverage_holes": holes,
        "counts_by_row": [{"row": row, "counts": counts} for row, counts in sorted(counts_by_row.items())],
    }


def _standing(wave, record, verdict, out_dir: Path, ledger, web: Mapping[str, str]) -> dict[str, Any]:
    """One entry as the newest wave that saw it stands: verdict, row, report, issue, decision."""
    event = record.current.event
    path = reports.report_path(out_dir, wave.upstream, wave.short_range, record.position, reports.slugify(record.title))
    return {
        "wave": wave.name,
        "range": wave.range,
        "entry": record.position,
        "title": record.title,
        "row": record.rows[0] if record.rows else None,
        "verdict": verdict.verdict,
        "justification": verdict.justification,
        "kind": infer_kind(verdict) if verdict.verdict in FLAGGED else None,
        "report": path.relative_to(out_dir).as_posix() if path.is_file() else None,
        "report_path": str(path) if path.is_file() else None,
        "issue": reports.filed_url(ledger, record.entry_id),
        "commit_url": reports.commit_url(web.get(wave.upstream), record.sha),
        "source": event.source if event is not None else "scan",
        "who": event.who if event is not None else None,
        "why": event.why if event is not None else None,
    }


def render_dashboard(ledger, out_dir: Path, web: Mapping[str, str] | None = None) -> str:
    """The tracking issue's markdown (its first line is the issue title)."""
    return reports.render("dashboard.md.j2", ledger_overview(ledger, out_dir, web))
