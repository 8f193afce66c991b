"""``portq scan --format sarif``: a wave's flagged entries as SARIF 2.1.0.

Code-scanning views (GitHub's among them) show a SARIF result on the lines it
locates. A portq result is one flagged entry (standing verdict REAL_GAP,
NEEDS_REVIEW or INERT: a human review wins, as everywhere) located at the
port's own lines that the evidence cites (the tree side: the parameter the
port still takes, the launch it still makes, its anchor), so a pull request
that touches those lines shows the gap beside them. The verdict is the rule,
the reason is the message, and the upstream commit, its link (the ``web``
template of ``portq.toml``), the wave and the rows are properties.

Commit titles and reasons are upstream text: they go into JSON strings only
(``portq.reporting.output.print_json`` escapes non-ASCII) and are shown with
control and bidi characters as visible escapes. This module builds the
document from records the ledger returned; it must not read the ledger, git
or the tree itself.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from portq import __version__
from portq.core.model import FLAGGED
from portq.core.terminal import visible
from portq.reporting import output

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"

LEVELS = {"REAL_GAP": "error", "NEEDS_REVIEW": "warning", "INERT": "note"}
"""SARIF level of each flagged verdict."""

RULES = {
    "REAL_GAP": "The port still has the shape upstream changed, and engine code reaches it.",
    "NEEDS_REVIEW": "A ported symbol changed in a way structure cannot settle: a person must read it.",
    "INERT": "The port is behind upstream, but only tests reach it.",
}
"""Each flagged verdict as a rule: what it means for the port."""


def _region(item: Mapping[str, Any]) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": int(item["line"])}
    if item.get("end_line") and int(item["end_line"]) >= region["startLine"]:
        region["endLine"] = int(item["end_line"])
    if item.get("quote"):
        region["snippet"] = {"text": visible(item["quote"])}
    return region


def port_locations(evidence: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tree-side places the evidence cites (path and line), each once, in evidence order."""
    seen: set[tuple[str, int]] = set()
    locations = []
    for item in evidence:
        if item.get("side") != "tree" or not item.get("path") or not item.get("line"):
            continue
        key = (item["path"], int(item["line"]))
        if key in seen:
            continue
        seen.add(key)
        locations.append({
            "physicalLocation": {"artifactLocation": {"uri": item["path"], "uriBaseId": "%SRCROOT%"},
                                 "region": _region(item)},
            "message": {"text": visible(item.get("message") or item.get("kind") or "")},
        })
    return locations


def _result(record, event, wave_name: str, upstream: str, web: str | None) -> dict[str, Any]:
    link = web.replace("{sha}", record.sha) if web else None
    reason = visible(event.why or event.reason or "") or f"{event.verdict} (no reason recorded)"
    title = visible(record.title)
    text = f"{event.verdict}: upstream {upstream} {record.sha[:10]} \"{title}\": {reason}"
    if link:
        text += f" ({link})"
    locations = port_locations(event.evidence)
    result: dict[str, Any] = {
        "ruleId": event.verdict,
        "level": LEVELS[event.verdict],
        "message": {"text": text},
        "partialFingerprints": {"portqEntry/v1": f"{upstream}:{record.sha}:{','.join(record.rows)}"},
        "properties": {
            "upstream": upstream, "commit": record.sha, "commitUrl": link, "title": title, "wave": wave_name,
            "entry": record.position, "rows": list(record.rows), "source": event.source,
            "justification": event.justification,
        },
    }
    if locations:
        result["locations"] = locations[:1]
        if len(locations) > 1:
            result["relatedLocations"] = [dict(location, id=index) for index, location in enumerate(locations[1:], 1)]
    return result


def sarif_document(records, *, wave_name: str | None, upstream: str, web: str | None = None) -> dict[str, Any]:
    """One run of portq: a result per flagged entry of ``records`` (their standing verdicts)."""
    results = []
    for record in records:
        event = output.standing(record)
        if event is not None and event.verdict in FLAGGED:
            results.append(_result(record, event, wave_name or "", upstream, web))
    return {
        "$schema": SCHEMA_URI,
        "version": VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "portq",
                "version": __version__,
                "rules": [{"id": verdict, "name": verdict.title().replace("_", ""),
                           "shortDescription": {"text": RULES[verdict]},
                           "defaultConfiguration": {"level": LEVELS[verdict]}}
                          for verdict in RULES],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the root of the tree portq audits"}}},
            "results": results,
            "properties": {"wave": wave_name, "upstream": upstream},
        }],
    }
