"""The issue report of one entry: its context, built from the verdict's typed evidence.

``build_issue_context`` gives ``issue.md.j2`` everything it prints, from
typed evidence records only (``Kind``, ``Side``, ``subject``): the kind and
title words, the deciding symbols of each half of the commit, upstream's
deltas and the port's old-shape lines, reachability as caller chains, the
size of the port, and what the scan could not determine. Every place it
cites goes through the ``citations.Sources`` it is handed, so the printed
line holds the printed quote; it never prints a record's ``message`` where
a record says the same thing, and never the classifier's reason prose.

It shapes records into JSON-able dicts: it must not read git, the tree or
the ledger (``portq.reporting.issue_context`` gathers those) and must not
decide verdicts; naming and rendering are ``portq.reporting.reports``'.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from portq.core.evidence import Kind, Location, Side, located, split_at_places
from portq.core.model import (FLAGGED, IN_SYNC, INERT, NEEDS_REVIEW, REAL_GAP, SEVERITY, Commit, Evidence,
                              SymbolVerdict, Verdict, most_severe)
from portq.reporting.citations import Sources
from portq.reporting.citations import TREE as TREE_SIDE
from portq.reporting.markdown import one_line
from portq.reporting.reports import commit_url, fingerprint, history_dict, issue_title, slugify
from portq.tree.reachability import is_test_path as reachability_is_test_path
from portq.upstream.hunks import ensure_hunks


def is_test_path(path: str | None) -> bool:
    """Whether a path is test code, by the same rule reachability uses."""
    return bool(path) and reachability_is_test_path(path)


def _all_evidence(verdict: Verdict) -> list[Evidence]:
    seen, out = set(), []
    for ev in [*verdict.evidence, *(e for s in verdict.symbols for e in s.evidence)]:
        key = (ev.kind, ev.message, ev.side, ev.path, ev.line, ev.quote, ev.symbol)
        if key not in seen:
            seen.add(key)
            out.append(ev)
    return out


def bare_symbol(name: str) -> str:
    """A symbol's own name, without namespaces or classes (``vt::<anonymous>::K`` → ``K``)."""
    return re.split(r"::|\.", name or "")[-1] or name


def _deciding(verdict: Verdict) -> list[SymbolVerdict]:
    """The symbols whose verdict is the entry's: the ones a title and a kind speak for."""
    return [s for s in verdict.symbols if s.verdict == verdict.verdict] or list(verdict.symbols)


def _upstream_records(symbols: Iterable[SymbolVerdict], entry: Iterable[Evidence] = ()) -> list[Evidence]:
    """Upstream-side records of ``symbols`` (and the entry's own ``entry`` records)."""
    return [e for e in [*entry, *(e for s in symbols for e in s.evidence)]
            if e.side is not None and e.side != Side.TREE and e.kind != Kind.CALLER]


class GridChange(NamedTuple):
    """Upstream's grid text before and after, and the locals it changed
    through when the text is the same (``Evidence.through``)."""

    before: str
    after: str
    through: tuple[str, ...] = ()
    record: Evidence | None = None  # the upstream-new record, which cites the changed lines


def _grid_change(records: Sequence[Evidence]) -> GridChange | None:
    """Upstream's grid before and after, when a record pair shows it changed:
    its text, or a local it resolves through.

    Records of a scan that named no grid text (older ledgers) count as a
    change, as they were only written for one.
    """
    grids = [e for e in records if e.kind == Kind.LAUNCH_GRID]
    if grids and all(e.subject is None for e in grids):
        return GridChange("", "")
    before = [e for e in grids if e.side == Side.OLD and e.subject is not None]
    after = [e for e in grids if e.side == Side.NEW and e.subject is not None]
    for old, new in zip(before, after):
        if old.subject.replace(" ", "") != new.subject.replace(" ", "") or new.through:
            return GridChange(old.subject, new.subject, new.through, new)
    return None


_FEAT_KINDS = frozenset({Kind.PARAM_ADDED, Kind.DEFAULT_CHANGED, Kind.CALLEE_PATH})
_PERF_KINDS = frozenset({Kind.LAUNCH_BLOCK, Kind.PROGRAM_ID})
_FIX_KINDS = frozenset({Kind.BODY, Kind.EARLY_EXIT})


def infer_kind(verdict: Verdict) -> str:
    """``feat``, ``perf``, ``fix`` or ``refactor``, from the deciding symbols' records.

    ``feat``: a new input a caller supplies (an added parameter, a changed
    default) or a new flagged definition (a sibling code path). ``perf``:
    launch geometry with the same interface (the grid expression changed,
    the block or warps, the program-id decomposition). ``fix``: a body-only
    change (bounds, masks, offsets, numerics) or a new early exit.
    ``refactor``: the rest (a parameter that died, a renamed kernel). Never
    from the commit message.
    """
    deciding = _deciding(verdict)
    records = _upstream_records(deciding, verdict.evidence)
    kinds = {e.kind for e in records}
    if kinds & _FEAT_KINDS or any(s.change == "added" and s.verdict in FLAGGED for s in deciding):
        return "feat"
    if _grid_change(records) is not None or kinds & _PERF_KINDS:
        return "perf"
    if kinds & _FIX_KINDS or verdict.decided_by == "body":
        return "fix"
    return "refactor"


def _port_subject(verdict: Verdict) -> str:
    """The in-tree name a title leads with: the port of the deciding symbol.

    A port whose name is the upstream symbol's own name (the host wrapper a
    caller sees) wins over a helper kernel; without ports, the upstream name.
    """
    candidates: list[tuple[int, int, str]] = []
    for order, sym in enumerate(_deciding(verdict)):
        bare = bare_symbol(sym.symbol)
        for port in sym.ports:
            name = bare_symbol(port.split()[-1])
            candidates.append((0 if name == bare else 1, order, name))
        if not sym.ports:
            candidates.append((2, order, bare))
    return min(candidates)[2] if candidates else "the port"


def _behind_phrases(verdict: Verdict, full: bool = False) -> list[str]:
    """What the port still does, in a maintainer's words, most telling first (``full``: with upstream's new grid)."""
    records = _upstream_records(_deciding(verdict), verdict.evidence)
    kinds = {e.kind for e in records}
    phrases: list[str] = []
    grid = _grid_change(records)
    if grid is not None:
        if not (grid.before and grid.after):
            phrases.append("launches upstream's old grid")
        elif grid.through:
            names = ", ".join(grid.through)
            phrases.append(f"launches grid {grid.before} with the old {names}"
                           + (f", which upstream changed while the grid's own line stayed the same" if full else ""))
        else:
            phrases.append(f"launches grid {grid.before}" + (f" where upstream now launches {grid.after}" if full else ""))
    for kind, words in ((Kind.PARAM_DEAD, "takes {}, which upstream no longer uses"),
                        (Kind.PARAM_REMOVED, "takes {}, which upstream removed"),
                        (Kind.PARAM_ADDED, "lacks upstream's new parameter {}"),
                        (Kind.DEFAULT_CHANGED, "keeps the old default of {}")):
        names = list(dict.fromkeys(e.subject for e in records if e.kind == kind and e.subject))
        if names:
            phrases.append(words.format(", ".join(names[:3])))
        elif kind in kinds:
            phrases.append(words.format("a parameter"))
    if Kind.CALLEE_PATH in kinds:
        names = list(dict.fromkeys(e.subject for e in records if e.kind == Kind.CALLEE_PATH and e.subject))
        phrases.append(f"raises where upstream now launches for a value of {', '.join(names[:2]) or 'an argument'}")
    if Kind.LAUNCH_BLOCK in kinds:
        phrases.append("keeps the old " + "/".join(dict.fromkeys(e.subject or "block" for e in records if e.kind == Kind.LAUNCH_BLOCK)))
    if Kind.PROGRAM_ID in kinds:
        phrases.append("keeps the old program-id decomposition")
    if Kind.EARLY_EXIT in kinds:
        phrases.append("lacks upstream's new early exit")
    if not phrases and Kind.LAUNCH_KERNEL in kinds:
        phrases.append("launches the kernel upstream replaced")
    if not phrases and any(s.change == "removed" for s in _deciding(verdict)):
        phrases.append("carries a definition upstream removed or renamed")
    return phrases


def _summary_line(verdict: Verdict, commit: Commit, full: bool = False) -> str:
    """What is wrong, in words, not classifier layers: the title's summary, or (``full``) the report's first sentence."""
    subject = _port_subject(verdict)
    short = commit.sha[:10]
    if verdict.verdict in (REAL_GAP, INERT):
        phrases = _behind_phrases(verdict, full)
        what = " and ".join(phrases[:2]) if phrases else f"has the shape upstream {short} changed"
        return f"{subject} still {what}" + (" (only tests reach it)" if verdict.verdict == INERT else "")
    if verdict.verdict == NEEDS_REVIEW:
        kinds = {e.kind for e in _upstream_records(_deciding(verdict))} | {
            e.kind for s in _deciding(verdict) for e in s.evidence}
        records = _upstream_records(_deciding(verdict), verdict.evidence)
        added = [e.subject for e in records if e.kind == Kind.PARAM_ADDED and e.subject]
        why = ("a body-only change" if Kind.BODY in kinds else
               "a new parameter derived from what the kernel receives" if Kind.DERIVATION in kinds else
               "a file that did not parse" if Kind.PARSE_FAILURE in kinds else
               "upstream changed its launch grid" if _grid_change(records) is not None else
               f"upstream added {', '.join(added[:3])}" if added else "a change structure cannot settle")
        return f"review {subject} against upstream {short}: {why}"
    if verdict.verdict == IN_SYNC:
        return f"{subject} already matches upstream {short}"
    return f"upstream {short} does not apply here ({verdict.justification}): {one_line(commit.title, 80)}"


def _dedupe(evidence: Iterable[Evidence]) -> list[Evidence]:
    seen, out = set(), []
    for ev in evidence:
        key = (ev.kind, ev.side, ev.path, ev.line, ev.subject, ev.quote)
        if key not in seen:
            seen.add(key)
            out.append(ev)
    return out


_UPSTREAM_WORDS = {
    Kind.PARAM_DEAD: "{subject} is no longer used",
    Kind.PARAM_USE_REMOVED: "the use of {subject} that went away",
    Kind.PARAM_ADDED: "new parameter {subject}",
    Kind.PARAM_REMOVED: "removed parameter {subject}",
    Kind.DEFAULT_CHANGED: "{subject} changed its default",
    Kind.LAUNCH_BLOCK: "the launch's {subject} changed",
    Kind.DERIVATION: "{subject} is computed from {derived}",
}
"""How the report words an upstream record of each kind (its subject filled in)."""


def _upstream_fact(ev: Evidence) -> str:
    words = _UPSTREAM_WORDS.get(ev.kind)
    if words is not None and (ev.subject or "{subject}" not in words):
        return words.format(subject=ev.subject, derived=", ".join(ev.derived_from[:4]) or "what it receives")
    if ev.kind == Kind.LAUNCH_KERNEL:
        return "the launch upstream removed" if ev.side == Side.OLD else "the launch upstream added"
    if ev.kind == Kind.PARSE_FAILURE:  # its message names the place, which the item cites
        return f"parse failed in {ev.subject}" if ev.subject else "parse failed"
    return ev.message or ev.kind.value


def _cite(sources: Sources, ev: Evidence | None, name: str | None = None) -> dict[str, Any] | None:
    if ev is None:
        return None
    citation = sources.cite(ev.side.value if ev.side else None, ev.path, ev.line, ev.quote, name=name)
    return citation.to_dict() if citation else None


def _changes(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """Upstream's side of one symbol: each delta once, the grid as one before → after item."""
    records = _dedupe(e for e in sym.evidence if e.side in (Side.OLD, Side.NEW)
                      and e.kind not in (Kind.HUNK, Kind.SYMBOL, Kind.CALLER))
    items: list[dict[str, Any]] = []
    grid = _grid_change(records)
    if grid is not None and grid.through:
        # Only a local the grid resolves through changed: its two lines are
        # the change, the launch (whose lines read the same) is context.
        new = grid.record
        items.append({
            "fact": f"grid {grid.before} changed through {', '.join(grid.through)}",
            "geometry": True,
            "before": _cite_location(sources, new.before),
            "after": _cite_location(sources, new.after),
            "context": {"words": "launch at", "citation": _geometry_or_line(sources, new)},
        })
    elif grid is not None:
        old = next(e for e in records if e.kind == Kind.LAUNCH_GRID and e.side == Side.OLD)
        new = next(e for e in records if e.kind == Kind.LAUNCH_GRID and e.side == Side.NEW)
        items.append({
            "fact": f"grid {grid.before} → {grid.after}" if grid.before and grid.after else "the launch grid changed",
            "geometry": True,
            "before": _geometry_or_line(sources, old),
            "after": _geometry_or_line(sources, new),
        })
    kernels = [e for e in records if e.kind == Kind.LAUNCH_KERNEL]
    if kernels and grid is None:
        items.append({"fact": "the launched kernel changed", "geometry": False,
                      "before": _cite(sources, next((e for e in kernels if e.side == Side.OLD), None)),
                      "after": _cite(sources, next((e for e in kernels if e.side == Side.NEW), None))})
    for ev in records:
        if ev.kind in (Kind.LAUNCH_GRID, Kind.LAUNCH_KERNEL):
            continue
        if ev.kind == Kind.PARAM_USE_REMOVED and any(e.kind == Kind.PARAM_DEAD and e.subject == ev.subject for e in records):
            continue  # shown with the dead parameter
        if ev.through:  # changed only in a local the launch names: that local's lines, the launch as context
            if ev.side == Side.NEW:
                items.append({"fact": f"{_upstream_fact(ev)} through {', '.join(ev.through)}", "geometry": False,
                              "before": _cite_location(sources, ev.before), "after": _cite_location(sources, ev.after),
                              "context": {"words": "launch at", "citation": _cite(sources, ev)}})
            continue
        item = {"fact": _upstream_fact(ev), "geometry": False, "before": None, "after": None}
        item["before" if ev.side == Side.OLD else "after"] = _cite(sources, ev)
        if ev.kind == Kind.PARAM_DEAD:
            use = next((e for e in records if e.kind == Kind.PARAM_USE_REMOVED and e.subject == ev.subject), None)
            item["before"] = _cite(sources, use)
        items.append(item)
    return items


def _cite_location(sources: Sources, at: Location | None) -> dict[str, Any] | None:
    if at is None:
        return None
    citation = sources.cite(at.side.value, at.path, at.line, at.quote)
    return citation.to_dict() if citation else None


def _geometry_or_line(sources: Sources, ev: Evidence) -> dict[str, Any] | None:
    """The grid/block declarations and the launch line of a launch record, else the launch line alone."""
    if ev.side is not None and ev.path and ev.line:
        found = sources.launch_geometry(ev.side.value, ev.path, ev.line)
        if found is not None:
            return found.to_dict()
    return _cite(sources, ev)


_TREE_WORDS = {
    Kind.TREE_PARAM: "still takes {subject}",
    Kind.TREE_USE: "still reads {subject}",
    Kind.TREE_DEFINITION: "still defines {symbol}",
}
"""How the report words an in-tree record of each kind; other kinds show their message."""


def _tree_lines(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """The port's side of one flagged symbol: each in-tree line once, the launch with its grid lines."""
    records = _dedupe(e for e in sym.evidence if e.side == Side.TREE and e.kind not in (Kind.CALLER, Kind.PIN, Kind.ANCHOR))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ev in records:
        if ev.kind == Kind.TREE_LAUNCH:
            citation = sources.launch_geometry("tree", ev.path, ev.line) if ev.path and ev.line else None
            cited = citation.to_dict() if citation else _cite(sources, ev)
            fact = "its launch and grid" if citation else "its launch"
        else:
            words = _TREE_WORDS.get(ev.kind)
            fact = words.format(subject=ev.subject or "a parameter upstream changed", symbol=bare_symbol(ev.symbol or "")) if words else (ev.message or ev.kind.value)
            cited = _cite(sources, ev, name=bare_symbol(ev.symbol or "") if ev.kind == Kind.TREE_DEFINITION else None)
        if cited is None or cited["place"] in seen:
            continue
        seen.add(cited["place"])
        out.append({"fact": fact, "kind": ev.kind.value, "citation": cited})
    return sorted(out, key=lambda t: (t["citation"]["path"], t["citation"]["line"]))


def _ports(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """Each port of a symbol cited at its declaring line, with the anchor that says so."""
    found = []
    anchors = [e for e in sym.evidence if e.kind == Kind.ANCHOR and e.side == Side.TREE]
    for port in sym.ports:
        place, _, name = port.partition(" ")
        file, _, line = place.rpartition(":")
        if not file or not line.isdigit():
            continue
        cited = sources.cite(TREE_SIDE, file, int(line), None, name=bare_symbol(name))
        anchor = next((a for a in anchors if a.path == file and a.line and a.line <= int(line)
                       and bare_symbol(a.symbol or "") == bare_symbol(name)), None)
        pin = next((p for p in sym.evidence if p.kind == Kind.PIN and anchor and p.path == anchor.path
                    and p.line == anchor.line), None)
        found.append({"name": name, "citation": cited.to_dict() if cited else None, "facts": [],
                      "anchor": _cite(sources, anchor), "pin": pin.message if pin else None})
    return found


def _declarations(sym: SymbolVerdict, sources: Sources) -> list[dict[str, Any]]:
    """The not-carried declaration (or coverage hole) a symbol that needs nothing rests on."""
    found = []
    for ev in _dedupe(e for e in sym.evidence if e.kind in (Kind.NOT_CARRIED, Kind.COVERAGE_HOLE, Kind.ANCHOR, Kind.PIN)):
        cited = _cite(sources, ev)
        if cited is not None and all(cited["place"] != d["citation"]["place"] for d in found):
            found.append({"kind": ev.kind.value, "citation": cited})
    return found


def _symbol_dict(sym: SymbolVerdict, sources: Sources, detailed: bool) -> dict[str, Any]:
    item = {
        "name": sym.symbol,
        "bare": bare_symbol(sym.symbol),
        "change": sym.change,
        "verdict": sym.verdict,
        "justification": sym.justification,
        "decided_by": sym.decided_by,
        "row": sym.row,
        "flagged": sym.verdict in FLAGGED,
        "ports": _ports(sym, sources) if detailed and sym.verdict in FLAGGED else [],
        "changes": _changes(sym, sources) if detailed else [],
        "tree": [],
        "declarations": [] if sym.verdict in FLAGGED else _declarations(sym, sources),
    }
    if detailed and sym.verdict in FLAGGED:
        ports = {p["citation"]["place"]: p for p in item["ports"] if p["citation"]}
        for line in _tree_lines(sym, sources):
            port = ports.get(line["citation"]["place"])
            if port is None:
                item["tree"].append(line)
            elif line["kind"] != Kind.TREE_DEFINITION.value:
                port["facts"].append(line["fact"])  # a one-line signature: the fact joins the port's line
    return item


def _halves(verdict: Verdict, commit: Commit, sources: Sources) -> list[dict[str, Any]]:
    """The commit half by half (one half per upstream file a row owns).

    ``deciding`` holds the symbols whose verdict is the half's (what the
    reader must act on or check); ``others`` the rest of the touched
    symbols (coverage holes, cosmetic lines), which the report folds away.
    """
    hunks_by_path = {change.path: [h.header for h in change.hunks] for change in commit.changes}
    by_path: dict[str, list[SymbolVerdict]] = {}
    for sym in verdict.symbols:
        by_path.setdefault(sym.path, []).append(sym)
    halves = []
    for path, symbols in by_path.items():
        worst = most_severe(s.verdict for s in symbols)
        deciding = [s for s in symbols if s.verdict == worst]
        halves.append({
            "path": path,
            "verdict": worst,
            "flagged": worst in FLAGGED,
            "hunk_headers": hunks_by_path.get(path) or list(dict.fromkeys(
                e.hunk_header for s in symbols for e in s.evidence if e.hunk_header)),
            "deciding": [_symbol_dict(s, sources, detailed=True) for s in deciding],
            "others": [_symbol_dict(s, sources, detailed=False) for s in symbols if s.verdict != worst],
        })
    return sorted(halves, key=lambda h: (-SEVERITY[h["verdict"]], h["path"]))


def _hop(site: Any) -> dict[str, Any]:
    return {"place": site.cite, "path": site.file, "line": site.line, "quote": site.quote,
            "callee": site.callee, "enclosing": site.caller}


def reachability_context(chains: Sequence[Any], tests: Sequence[Any], sources: Sources,
                         truncated: bool = False) -> dict[str, Any]:
    """Call chains (hops from the port outwards) grouped by entry point, test call sites counted.

    ``chains`` are ``CallSite`` sequences from ``Reachability.caller_chains``;
    a chain that is the tail of a longer one (the wrapper's own chain, when
    the kernel's goes through the wrapper) is dropped.
    """
    keyed = [tuple((s.file, s.line) for s in chain) for chain in chains]
    kept = []
    for chain, key in zip(chains, keyed):
        if any(len(other) > len(key) and other[-len(key):] == key for other in keyed):
            continue
        if key not in [k for _, k in kept]:
            kept.append((chain, key))
    groups: dict[tuple[str, str | None], dict[str, Any]] = {}
    for chain, _ in kept:
        last = chain[-1]
        group = groups.setdefault((last.file, last.caller), {
            "entry_point": last.caller, "file": last.file, "chains": []})
        hops = []
        for site in chain:
            citation = sources.cite("tree", site.file, site.line, site.quote)
            hops.append({**_hop(site), "citation": citation.to_dict() if citation else None})
        group["chains"].append(hops)
    test_files = sorted({s.file for s in tests})
    return {
        "entry_points": sorted(groups.values(), key=lambda g: (g["file"], g["entry_point"] or "")),
        "chain_count": len(kept),
        "test_sites": len(tests),
        "test_files": test_files,
        "truncated": truncated,
        "from_records": False,
    }


def _reachability_from_records(verdict: Verdict, sources: Sources) -> dict[str, Any]:
    """Reachability as the scan recorded it (one caller), when the tree was not indexed again."""
    callers = _dedupe(e for e in _all_evidence(verdict) if e.kind == Kind.CALLER and e.path and e.quote)
    groups: dict[tuple[str, str | None], dict[str, Any]] = {}
    tests = []
    for ev in callers:
        if ev.test or (ev.test is None and is_test_path(ev.path)):
            tests.append(ev)
            continue
        citation = _cite(sources, ev)
        group = groups.setdefault((ev.path, ev.subject), {"entry_point": ev.subject, "file": ev.path, "chains": []})
        group["chains"].append([{"place": f"{ev.path}:{ev.line}", "path": ev.path, "line": ev.line, "quote": ev.quote,
                                 "callee": ev.symbol, "enclosing": ev.subject, "citation": citation}])
    return {
        "entry_points": list(groups.values()),
        "chain_count": sum(len(g["chains"]) for g in groups.values()),
        "test_sites": len(tests),
        "test_files": sorted({e.path for e in tests if e.path}),
        "truncated": False,
        "from_records": True,
    }


def _to_port(verdict: Verdict) -> list[str]:
    """What porting the entry takes, from the records: new definitions, the launch, parameters."""
    flagged_paths = {s.path for s in verdict.symbols if s.verdict in FLAGGED}
    added = [bare_symbol(s.symbol) for s in verdict.symbols
             if s.path in flagged_paths and s.change == "added" and s.justification == "not-ported"
             and not s.symbol.startswith("<")]
    steps = [f"upstream's new {', '.join(added)}"] if added else []
    subject = _port_subject(verdict)
    records = _upstream_records(_deciding(verdict), verdict.evidence)
    if _grid_change(records) is not None:
        steps.append(f"upstream's grid for the launch in {subject}")
    for kind, words in ((Kind.PARAM_DEAD, "dropping {} from {} where nothing else reads it"),
                        (Kind.PARAM_REMOVED, "dropping {} from {}"), (Kind.PARAM_ADDED, "adding {} to {}")):
        names = list(dict.fromkeys(e.subject for e in records if e.kind == kind and e.subject))
        if names:
            steps.append(words.format(", ".join(names), subject))
    return steps


def _size(verdict: Verdict, commit: Commit, row_tests: Sequence[str]) -> dict[str, Any]:
    upstream_files = [
        {"path": c.path, "added": c.lines_added, "removed": c.lines_removed, "status": c.status, "content": c.content}
        for c in commit.changes
    ]
    tree_files: list[str] = []
    for sym in verdict.symbols:
        if sym.verdict not in FLAGGED:
            continue
        for port in sym.ports:
            path = port.split(":", 1)[0]
            if path and path not in tree_files:
                tree_files.append(path)
        for ev in sym.evidence:
            if ev.side == Side.TREE and ev.path and ev.kind != Kind.CALLER and not is_test_path(ev.path) and ev.path not in tree_files:
                tree_files.append(ev.path)
    return {
        "upstream_files": upstream_files,
        "upstream_lines_added": sum(f["added"] for f in upstream_files),
        "upstream_lines_removed": sum(f["removed"] for f in upstream_files),
        "tree_files": tree_files,
        "upstream_tests": [f["path"] for f in upstream_files if is_test_path(f["path"])],
        "row_tests": list(row_tests),
        "to_port": _to_port(verdict) if verdict.verdict in FLAGGED else [],
    }


def _reason_parts(reason: str, records: Iterable[Evidence], sources: Sources) -> list[dict[str, Any]]:
    """A reason as prose pieces and citations: each place it names that one
    of its records cites is printed as that record's checked citation."""
    parts: list[dict[str, Any]] = []
    for piece in split_at_places(reason, records):
        citation = _cite(sources, piece) if isinstance(piece, Evidence) else None
        if citation is not None:
            parts.append({"citation": citation})
        elif piece:
            parts.append({"text": piece if isinstance(piece, str) else piece.place})
    return parts


def _not_determined(verdict: Verdict, commit: Commit, kind: str, unowned_paths: Sequence[str],
                    sources: Sources) -> dict[str, Any]:
    fallbacks = [
        {"path": s.path, "symbol": s.symbol, "reason": s.reason,
         "parts": _reason_parts(s.reason, located(s.evidence), sources)}
        for s in verdict.symbols
        if s.decided_by == "fallback"
    ]
    if verdict.decided_by == "fallback" and not fallbacks:
        fallbacks.append({"path": None, "symbol": None, "reason": verdict.reason,
                          "parts": _reason_parts(verdict.reason, located(verdict.evidence), sources)})
    message = f"{commit.title}\n{commit.message}".lower()
    return {
        "executed": False,
        "speed_claim": kind == "perf" or bool(re.search(r"speed|faster|optimi[sz]|perf|latency|throughput", message)),
        "fallbacks": fallbacks,
        "unowned_paths": list(unowned_paths),
        "binary_files": [c.path for c in commit.changes if c.content != "text"],
        "upstream_unread": None,  # why the upstream commit could not be read again, if it could not
        "unchecked_citations": 0,
    }


def build_issue_context(
    *,
    upstream: str,
    range_text: str,
    wave: str | None,
    position: int,
    commit: Commit,
    verdict: Verdict,
    history: Iterable[Any] = (),
    proposal: Any = None,
    current: Any = None,
    rows: Sequence[str] = (),
    row_info: Mapping[str, Mapping[str, Any]] | None = None,
    unowned_paths: Sequence[str] = (),
    matrix_path: str | None = None,
    sources: Sources | None = None,
    reachability: Mapping[str, Any] | None = None,
    siblings: Sequence[Mapping[str, Any]] = (),
    web: str | None = None,
) -> dict[str, Any]:
    """Everything ``issue.md.j2`` needs, as JSON-able values.

    ``verdict`` is the entry's current verdict (a human review wins over
    scans); ``history`` the entry's verdict events, oldest first; ``proposal``
    a later scan verdict that disagrees with a human review; ``current`` the
    event that produced ``verdict``; ``rows`` the claiming rows, primary
    first; ``row_info`` per row id: ``title``, ``line``, ``tests``.
    ``sources`` reads the cited files so every citation is exact (without
    it, citations are the records' own, marked unchecked);
    ``reachability`` is ``reachability_context(...)`` of the flagged ports
    (without it, the caller the scan recorded); ``siblings`` the wave's other
    flagged entries of the same row (``entry``, ``title``, ``path``,
    ``issue``); ``web`` the upstream's commit URL template.
    """
    sources = sources or Sources(lambda side, path: None)
    row_info = row_info or {}
    rows = list(rows) or sorted({s.row for s in verdict.symbols if s.row})
    primary = rows[0] if rows else None
    kind = infer_kind(verdict)
    summary = _summary_line(verdict, commit)
    events = [history_dict(e) for e in history]
    current_event = history_dict(current) if current is not None else (events[-1] if events else None)
    earlier = [e for e in events if current_event is None or e["id"] != current_event["id"] or e["id"] is None and e != current_event]
    for change in commit.changes:
        ensure_hunks(change)
    row_tests: list[str] = []
    for row in rows:
        for test in row_info.get(row, {}).get("tests", []) or []:
            if test not in row_tests:
                row_tests.append(test)
    halves = _halves(verdict, commit, sources)
    reach = dict(reachability) if reachability is not None else _reachability_from_records(verdict, sources)
    not_determined = _not_determined(verdict, commit, kind, unowned_paths, sources)
    not_determined["unchecked_citations"] = sum(1 for c in sources.made if not c.checked)
    return {
        "title": issue_title(kind, primary, summary),
        "kind": kind,
        "summary": summary,
        "what_is_wrong": _summary_line(verdict, commit, full=True),
        "slug": slugify(commit.title),
        "fingerprint": fingerprint(upstream, commit.sha, verdict.verdict, verdict.justification, rows),
        "row": primary,
        "co_owners": rows[1:],
        "rows": [
            {
                "id": row,
                "title": row_info.get(row, {}).get("title"),
                "line": row_info.get(row, {}).get("line"),
                "tests": list(row_info.get(row, {}).get("tests", []) or []),
            }
            for row in rows
        ],
        "matrix_path": matrix_path,
        "upstream": upstream,
        "range": range_text,
        "wave": wave,
        "entry": position,
        "commit": {
            "sha": commit.sha,
            "short": commit.sha[:10],
            "title": commit.title,
            "message": commit.message,
            "author": commit.author,
            "authored_at": commit.authored_at,
            "pr": commit.pr,
            "is_merge": commit.is_merge,
            "url": commit_url(web, commit.sha),
        },
        "verdict": {
            "verdict": verdict.verdict,
            "justification": verdict.justification,
            "decided_by": verdict.decided_by,
            "reason": verdict.reason,
            "version": verdict.version,
            "flagged": verdict.verdict in FLAGGED,
            "source": (current_event or {}).get("source", "scan"),
            "who": (current_event or {}).get("who"),
            "why": (current_event or {}).get("why"),
        },
        "history": earlier,
        "proposal": history_dict(proposal) if proposal is not None else None,
        "halves": halves,
        "flagged_halves": sum(1 for h in halves if h["flagged"]),
        "reachability": reach,
        "siblings": [dict(s) for s in siblings],
        "size": _size(verdict, commit, row_tests),
        "not_determined": not_determined,
        "verify_rows": [r for r in rows if row_info.get(r, {}).get("tests")] or rows,
        "citations": [c.to_dict() for c in sources.made],
    }
