"""The issue context of one ledger entry: its record, re-read from the upstream clone.

``portq file-issue`` and the demo both render an entry's issue report from
this context. The upstream commit is read again (hunks, sizes, the paths no
row owns); without the clone the context says what it could not include.

This module gathers; wording lives in the template and shaping in
``portq.reports``. It prints nothing.
"""

from __future__ import annotations

import dataclasses

from portq import reports
from portq.config import Config, relative_label
from portq.errors import ConfigError, HistoryError
from portq.model import Commit


def read_commit(config: Config, matrix, wave, record) -> tuple[Commit, list[str], str | None]:
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


def build_issue_context(config: Config, matrix, ledger, wave, record) -> tuple[dict, str | None]:
    """The issue context of one ledger entry, and why the upstream commit was not read (or None)."""
    commit, unowned, missing = read_commit(config, matrix, wave, record)
    row_info = {row.id: {"title": row.title, "line": row.line, "tests": list(row.tests)} for row in matrix.rows}
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
    return context, missing
