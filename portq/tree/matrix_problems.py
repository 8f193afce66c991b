"""What is wrong with a kernel matrix and the tree's anchors, before a scan is trusted.

For each row of the matrix: its upstream paths and symbols, the in-tree
ports (anchors with the definition they sit on, file:line), the
``not-carried`` declarations, its tests, and the problems a maintainer should
fix:

- ``upstream-not-configured``: a row names an upstream with no clone in
  ``portq.toml`` or the flags (a scan refuses such a matrix);
- ``anchor-without-definition``: a ``ports`` anchor that sits on no in-tree
  definition (it points at nothing here);
- ``sidecar-unresolved``: an entry of the sidecar anchors file whose ``tree``
  names a file or definition the tree does not have (cited at its line in the
  sidecar file; the entry would otherwise port nothing);
- ``anchor-unowned``: an anchor naming an upstream path or symbol that no row
  owns (a scan would never look at that upstream code);
- ``port-without-test``: a ported definition that no test reaches, directly or
  through the in-tree code that calls it (a kernel its wrapper launches
  through a private helper is tested when the wrapper is);
- ``tests-missing``: a row's ``tests`` path that does not exist;
- ``unclaimed-test``: a test file that calls a port but is under no row's
  ``tests``, so ``portq verify`` never runs it (benchmarks are not tests and
  are not listed).

It reads the matrix and the in-tree index; it does not read upstream history
or the ledger, and prints nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable


def _row_owns(row, anchor) -> bool:
    """A row owns an anchor's upstream target by path glob or by symbol name."""
    if anchor.upstream != row.upstream:
        return False
    return row.claims_path(anchor.path) or row.claims_symbol([anchor.bare_symbol, anchor.symbol])


def _covered_by(patterns, path: str) -> bool:
    from portq.tree.matrix import path_matches

    return any(path_matches(p, path) or path_matches(p.rstrip("/") + "/", path) or path == p for p in patterns)


PROBLEM_KINDS = ("upstream-not-configured", "anchor-without-definition", "sidecar-unresolved", "anchor-unowned",
                 "port-without-test", "tests-missing", "unclaimed-test",
                 "anchor-lost")  # anchor-lost: added by ``portq matrix`` from the ledger (commands.matrix)


def _problem(kind: str, row: str | None, file: str | None, line: int | None, subject: str, detail: str | None = None) -> dict[str, Any]:
    """One problem: ``subject`` is what is wrong (an anchor, a definition, a path), ``detail`` what it relates to."""
    return {"kind": kind, "row": row, "file": file, "line": line, "subject": subject, "detail": detail}


def build_matrix_context(
    matrix, index, tree_root: Path, matrix_label: str, configured_upstreams: Iterable[str] | None = None
) -> dict[str, Any]:
    """The matrix page: rows with ports, declarations, tests and problems (JSON-able).

    ``configured_upstreams``: the upstream names with a clone configured;
    None skips that check.
    """
    from portq.tree.anchors import NOT_CARRIED, PORTS
    from portq.tree.reachability import is_test_file
    from portq.tree.sidecar import SIDECAR_STYLE, unresolved_entries

    problems: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    port_names: dict[str, list[str]] = {}  # definition name -> rows whose port it is
    untested: set[tuple[str, str]] = set()
    configured = None if configured_upstreams is None else set(configured_upstreams)
    for row in matrix.rows:
        if configured is not None and row.upstream not in configured:
            listed = ", ".join(sorted(configured)) or "none"
            problems.append(_problem("upstream-not-configured", row.id, matrix_label, row.line, row.upstream,
                                     f"configured: {listed}"))
        ports, declarations = [], []
        for anchor in index.anchors:
            if not _row_owns(row, anchor):
                continue
            if anchor.kind == NOT_CARRIED:
                declarations.append(
                    {"anchor": anchor.reference, "file": anchor.file, "line": anchor.line, "param": anchor.param, "reason": anchor.reason}
                )
                continue
            if anchor.kind != PORTS:
                continue
            definition = index.definition_of(anchor)
            entry = {
                "anchor": anchor.reference,
                "file": anchor.file,
                "line": anchor.line,
                "pin": anchor.pin,
                "definition": definition.qualified_name if definition else None,
                "definition_line": definition.start_line if definition else None,
                "test_callers": [],
                "non_test_callers": [],
            }
            if definition is not None:
                callers = index.reachability.callers(definition.name, definition.file, definition.qualified_name)
                entry["test_callers"] = [site.cite for site in callers.test]
                entry["non_test_callers"] = [site.cite for site in callers.non_test]
                port_names.setdefault(definition.name, []).append(row.id)
                reached = [site for site in callers.test if is_test_file(site.file)] or index.reachability.reached_by_tests(
                    definition.name, definition.file, definition.qualified_name
                )
                if not reached and (row.id, definition.cite) not in untested:
                    untested.add((row.id, definition.cite))
                    problems.append(_problem("port-without-test", row.id, definition.file, definition.start_line, definition.qualified_name, anchor.reference))
            ports.append(entry)
        missing_tests = [p for p in row.tests if not (tree_root / p).exists()]
        for path in missing_tests:
            problems.append(_problem("tests-missing", row.id, matrix_label, row.line, path))
        rows.append(
            {
                "id": row.id,
                "title": row.title,
                "upstream": row.upstream,
                "line": row.line,
                "paths": list(row.paths),
                "exclude": list(row.exclude),
                "symbols": list(row.symbols),
                "tree": list(row.tree),
                "tests": list(row.tests),
                "missing_tests": missing_tests,
                "ports": ports,
                "not_carried": declarations,
            }
        )

    sidecar = getattr(index, "sidecar", None)
    if sidecar is not None:
        for entry, missing in unresolved_entries(sidecar, index.definitions_in_file):
            problems.append(_problem("sidecar-unresolved", None, sidecar.label, entry.line, entry.reference,
                                     f"tree = {entry.tree}: {missing}"))
    for anchor in index.anchors:
        if anchor.kind == PORTS and index.definition_of(anchor) is None and anchor.style != SIDECAR_STYLE:
            problems.append(_problem("anchor-without-definition", None, anchor.file, anchor.line, anchor.reference))
        if not any(_row_owns(row, anchor) for row in matrix.rows):
            problems.append(_problem("anchor-unowned", None, anchor.file, anchor.line, anchor.reference))

    all_tests = [p for row in matrix.rows for p in row.tests]
    unclaimed: dict[str, list[str]] = {}
    for name, sites in index.reachability.sites_by_callee.items():
        if name not in port_names:
            continue
        for site in sites:
            if is_test_file(site.file) and not _covered_by(all_tests, site.file):
                unclaimed.setdefault(site.file, [])
                if name not in unclaimed[site.file]:
                    unclaimed[site.file].append(name)
    for file, names in sorted(unclaimed.items()):
        problems.append(_problem("unclaimed-test", None, file, None, file, ", ".join(sorted(names))))
    problems.sort(key=lambda p: (p["kind"], p["row"] or "", p["file"] or "", p["line"] or 0))
    return {"matrix": matrix_label, "tree": str(tree_root), "rows": rows, "problems": problems}
