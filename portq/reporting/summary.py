"""The wave summary: what a scan ends with and ``portq summary`` prints.

``build_summary_context`` counts a wave's entries by verdict, groups its
gaps by row, lists what needs review, the coverage holes (upstream symbols
no port carries), the scans that disagree with a person's review, and what
the upstream's earlier waves leave open; ``wave_summary`` renders it with
``summary.md.j2``.

It shapes ledger records; it must not read git or the tree, write the
ledger, or decide verdicts.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from portq.core.model import FLAGGED, INERT, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP, VERDICTS, SymbolVerdict, Verdict
from portq.reporting.issue_report import infer_kind
from portq.reporting.reports import current_verdict, has_verdict, history_dict, render, to_plain, wave_dict


def summary_entries(records: Iterable[Any]) -> list[dict[str, Any]]:
    """Ledger entry records as ``build_summary_context`` takes them."""
    return [
        {
            "position": r.position,
            "sha": r.sha,
            "title": r.title,
            "pr": r.pr,
            "rows": list(r.rows),
            "verdict": current_verdict(r),
            "source": r.current.source,
            "proposal": r.current.proposal,
        }
        for r in records
        if has_verdict(r)
    ]


def wave_summary(wave: Any, records: Iterable[Any]) -> str:
    """The dashboard markdown of a wave: what ``portq scan`` ends with and ``portq summary`` prints."""
    return render("summary.md.j2", build_summary_context(wave=wave_dict(wave), entries=summary_entries(records)))


def _entry_brief(entry: Mapping[str, Any]) -> dict[str, Any]:
    verdict: Verdict = entry["verdict"]
    sha = entry.get("sha") or ""
    return {
        "entry": entry["position"],
        "sha": sha,
        "short": sha[:10],
        "title": entry.get("title") or "",
        "pr": entry.get("pr"),
        "rows": list(entry.get("rows") or ()),
        "verdict": verdict.verdict,
        "justification": verdict.justification,
        "decided_by": verdict.decided_by,
        "source": entry.get("source") or "scan",
        "kind": infer_kind(verdict) if verdict.verdict in FLAGGED else None,
    }


def build_summary_context(*, wave: Mapping[str, Any], entries: Sequence[Mapping[str, Any]],
                          earlier: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Everything ``summary.md.j2`` (and ``portq summary --json``) shows for one wave.

    ``wave``: ``id``, ``range``, ``upstream`` and whatever else the ledger
    keeps (times, status, version). ``entries``: per entry ``position``,
    ``sha``, ``title``, ``pr``, ``rows``, ``verdict`` (the current
    ``model.Verdict``), ``source`` (``scan``/``review``) and ``proposal``
    (a disagreeing scan's verdict event, or ``None``). ``earlier``: entries
    of the upstream's earlier waves that this wave does not list, each also
    with its ``label`` (``PORTQ-1#222``): what they leave open stands here too
    (``standing_open``, ``standing_holes``).
    """
    context = _wave_summary_context(wave, entries)
    # numbered in order here: two earlier waves may each have an entry 1
    before = _wave_summary_context(wave, [{**e, "position": n} for n, e in enumerate(earlier, 1)])
    labels = {n: e["label"] for n, e in enumerate(earlier, 1)}
    for brief, entry in zip(before["entries"], earlier):
        brief["entry"], brief["label"], brief["wave"] = entry["position"], entry["label"], entry["label"].split("#")[0]
    context["standing_open"] = [b for b in before["entries"] if b["verdict"] in FLAGGED]
    context["standing_holes"] = [{**hole, "entries": [labels[n] for n in hole["entries"]]}
                                 for hole in before["coverage_holes"]]
    return context


def _wave_summary_context(wave: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    briefs = [_entry_brief(e) for e in entries]
    counts = {name: 0 for name in VERDICTS}
    for brief in briefs:
        counts[brief["verdict"]] += 1
    gaps_by_row: dict[str, list[dict[str, Any]]] = {}
    for brief in briefs:
        if brief["verdict"] == REAL_GAP:
            gaps_by_row.setdefault(brief["rows"][0] if brief["rows"] else "no-row", []).append(brief)
    holes: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry, brief in zip(entries, briefs):
        verdict: Verdict = entry["verdict"]
        symbols = [s for s in verdict.symbols if s.justification == "not-ported"]
        if not symbols and verdict.justification == "not-ported":
            symbols = [SymbolVerdict("", "", "modified", NOT_APPLICABLE, "not-ported", verdict.decided_by, row=(brief["rows"] or [None])[0])]
        for sym in symbols:
            key = (sym.row or "", sym.path, sym.symbol)
            hole = holes.setdefault(key, {"row": sym.row, "path": sym.path, "symbol": sym.symbol, "entries": []})
            if brief["entry"] not in hole["entries"]:
                hole["entries"].append(brief["entry"])
    proposals = []
    for entry, brief in zip(entries, briefs):
        proposal = entry.get("proposal")
        if proposal is not None:
            event = history_dict(proposal)
            proposals.append({**brief, "proposed": event["verdict"], "proposed_justification": event["justification"], "proposed_wave": event["wave"]})
    return {
        "wave": to_plain(dict(wave)),
        "total": len(briefs),
        "counts": counts,
        "flagged": [b for b in briefs if b["verdict"] in FLAGGED],
        "real_gaps_by_row": [{"row": row, "entries": items} for row, items in sorted(gaps_by_row.items())],
        "needs_review": [b for b in briefs if b["verdict"] == NEEDS_REVIEW],
        "inert": [b for b in briefs if b["verdict"] == INERT],
        "coverage_holes": sorted(holes.values(), key=lambda h: (h["row"] or "", h["path"], h["symbol"])),
        "proposals": proposals,
        "reviewed": sum(1 for b in briefs if b["source"] == "review"),
        "entries": briefs,
    }
