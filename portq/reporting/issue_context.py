"""The issue context of one ledger entry: its record, re-read from the upstream clone and the tree.

``portq file-issue`` and the demo both render an entry's issue report from
this context. The upstream commit is read again (hunks, sizes, the paths no
row owns, both sides of every changed file) and the tree is indexed (cached)
so that every citation is checked against the files (``portq.reporting.citations``)
and reachability is told as whole caller chains; the wave's other flagged
entries of the row are listed as siblings. Without the clone the context
says what it could not include.

This module gathers; wording lives in the template and shaping in
``portq.reporting.issue_report``. It prints nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portq.core.config import Config, relative_label
from portq.core.errors import ConfigError, HistoryError
from portq.core.model import FLAGGED, Commit
from portq.reporting import issue_report, reports
from portq.reporting.citations import NEW, OLD, TREE, Sources


@dataclass
class UpstreamReading:
    """An entry's commit as read again from the clone, with its blobs by side and path."""

    commit: Commit
    unowned_paths: list[str] = field(default_factory=list)
    missing: str | None = None  # why the clone could not be read
    texts: dict[tuple[str, str], str] = field(default_factory=dict)


def read_commit(config: Config, matrix, wave, record) -> UpstreamReading:
    """The entry's commit, changes and both sides of every changed text file."""
    from portq.classifier.mapping import ChangeMapper
    from portq.upstream.history import Range, Upstream
    from portq.upstream.hunks import ensure_hunks

    bare = Commit(sha=record.sha, parents=(), title=record.title, message="", author="", authored_at="", pr=record.pr)
    try:
        _, path = dataclasses.replace(config, selected_upstream=wave.upstream).resolve_upstream(matrix.upstreams())
        with Upstream(path, wave.upstream) as upstream:
            parent = upstream.resolve(f"{record.sha}^")
            if parent is None:
                return UpstreamReading(bare, missing=f"{record.sha[:12]} has no parent in {path}")
            [commit] = list(upstream.commits(Range(f"{parent}..{record.sha}", parent, record.sha, (record.sha,))))
            for change in commit.changes:
                ensure_hunks(change)
            entry = ChangeMapper(matrix, wave.upstream, upstream.read_blob).map_commit(record.position, commit)
            wanted = {}
            for change in commit.changes:
                if change.content != "text":
                    continue
                if change.old_blob and change.old_path:
                    wanted[(OLD, change.old_path)] = change.old_blob
                if change.new_blob and change.new_path:
                    wanted[(NEW, change.new_path)] = change.new_blob
            blobs = upstream.read_blobs(sorted(set(wanted.values()))) if wanted else {}
            texts = {key: blobs[sha].decode("utf-8", errors="replace") for key, sha in wanted.items() if sha in blobs}
            return UpstreamReading(commit, list(entry.unowned_paths), None, texts)
    except (ConfigError, HistoryError) as error:
        return UpstreamReading(bare, missing=str(error))


def sources_for(tree: Path, reading: UpstreamReading) -> Sources:
    """Readers for every file a report of this entry may cite."""
    root = Path(tree).resolve()

    def read(side: str, path: str) -> str | None:
        if side == TREE:
            target = (root / path).resolve()
            if not target.is_relative_to(root) or not target.is_file():
                return None
            try:
                return target.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
        return reading.texts.get((side, path))

    def paths(side: str) -> list[str]:
        return sorted(path for known, path in reading.texts if known == side)

    return Sources(read, paths)


def tree_index(config, matrix):
    """The tree's index on demand: a report asks about its flagged ports' callers by name, so only
    the files holding those names are parsed (``reachability_of`` caches what it computed)."""
    from portq.tree.tree_index import TreeIndex, port_roots_of

    return TreeIndex.on_demand(config.tree, config.ledger_path.parent / "cache", port_roots_of(matrix),
                               config.anchors_path)


def flagged_ports(verdict) -> list[tuple[str, int, str]]:
    """``(file, line, name)`` of every port of a flagged symbol, once."""
    found: list[tuple[str, int, str]] = []
    for sym in verdict.symbols:
        if sym.verdict not in FLAGGED:
            continue
        for port in sym.ports:
            place, _, name = port.partition(" ")
            file, _, line = place.rpartition(":")
            if file and line.isdigit() and (file, int(line), name) not in found:
                found.append((file, int(line), name))
    return found


def reachability_of(index, verdict, sources: Sources) -> dict[str, Any] | None:
    """Caller chains of the entry's flagged ports, grouped by entry point; None when it has none."""
    ports = flagged_ports(verdict)
    if not ports:
        return None
    chains, tests, truncated = [], [], False
    for file, line, name in ports:
        record = index.files.get(file)
        definition = next((d for d in (record.definitions if record else ()) if d.start_line == line), None)
        qualified = definition.qualified_name if definition else name
        found = index.reachability.caller_chains(issue_report.bare_symbol(name), file, qualified)
        chains += found.chains
        tests += [s for s in found.test if (s.file, s.line) not in {(t.file, t.line) for t in tests}]
        truncated |= found.truncated
    index.save()  # what these questions parsed, for the next report of this tree
    return issue_report.reachability_context(chains, tests, sources, truncated)


def siblings_of(ledger, wave, record, out_dir: Path) -> list[dict[str, Any]]:
    """The wave's other flagged entries of the same primary row, with their issue URL or report file.

    Reports of one wave share a folder, so the file name is the path a reader needs.
    """
    row = record.rows[0] if record.rows else None
    found = []
    for other in ledger.wave_entries(wave):
        if other.position == record.position or not other.rows or other.rows[0] != row:
            continue
        if not reports.has_verdict(other):
            continue
        verdict = reports.current_verdict(other)
        if verdict.verdict not in FLAGGED:
            continue
        slug = reports.slugify(other.title)
        path = reports.report_path(out_dir, wave.upstream, wave.short_range, other.position, slug)
        found.append({"entry": other.position, "title": other.title, "verdict": verdict.verdict,
                      "path": path.name, "issue": reports.filed_url(ledger, other.entry_id)})
    return found


def build_issue_context(config: Config, matrix, ledger, wave, record, *, index=None,
                        out_dir: Path | None = None) -> tuple[dict, str | None]:
    """The issue context of one ledger entry, and why the upstream commit was not read (or None).

    ``index`` is the tree's ``TreeIndex`` when the caller has one (built,
    cached, when a flagged entry needs its callers); ``out_dir`` is where the
    wave's reports go, for the sibling list.
    """
    reading = read_commit(config, matrix, wave, record)
    row_info = {row.id: {"title": row.title, "line": row.line, "tests": list(row.tests)} for row in matrix.rows}
    verdict = reports.current_verdict(record)
    sources = sources_for(config.tree, reading)
    reach = None
    if verdict.verdict in FLAGGED and config.tree.is_dir():
        index = index or tree_index(config, matrix)
        reach = reachability_of(index, verdict, sources)
    context = issue_report.build_issue_context(
        upstream=wave.upstream,
        range_text=wave.range,
        wave=wave.name,
        position=record.position,
        commit=reading.commit,
        verdict=verdict,
        history=ledger.history(record.entry_id),
        proposal=record.current.proposal,
        current=record.current.event,
        rows=record.rows,
        row_info=row_info,
        unowned_paths=reading.unowned_paths,
        matrix_path=relative_label(config.matrix_path, config.root, config.tree),
        sources=sources,
        reachability=reach,
        siblings=siblings_of(ledger, wave, record, out_dir or config.root / "reports"),
        web=config.upstream_web.get(wave.upstream),
    )
    context["not_determined"]["upstream_unread"] = reading.missing
    return context, reading.missing
