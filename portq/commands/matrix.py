"""``portq matrix [--json]``: every row, what it ports, and what is wrong with it.

The rows, their ports, ``not-carried`` declarations and tests, and the
problems ``portq.tree.matrix_problems`` finds (an upstream with no clone
configured, anchors pointing at nothing or owned by no row, ports without a
test, missing or unclaimed test paths), and the reviews file's (a review
whose row the matrix no longer defines, or whose commit the upstream clone no
longer has), as markdown or ``--json``.

It reads the matrix, the in-tree index and the reviews file, and asks the
upstream clones only whether a reviewed commit exists; from the ledger (when
one exists) it reads the newest wave of each upstream: an anchor whose
upstream definition that wave saw move (rule ``moved-definition``) and that
still names the old place is an ``anchor-lost`` problem ("anchor lost at SHA:
SYMBOL moved to PATH::NAME?"). It never reads upstream history.
"""

from __future__ import annotations

import argparse

from portq.reporting import output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def lost_anchor_problems(workspace) -> list[dict]:
    """``anchor-lost`` problems of the newest wave of each upstream, for in-tree anchors still naming
    what moved; none without a ledger."""
    from portq.commands.scan import lost_anchors

    if not workspace.config.ledger_path.is_file():
        return []
    ledger = workspace.ledger()
    newest = {}
    for wave in ledger.waves():
        newest[wave.upstream] = wave
    standing = {(a.file, a.reference) for a in workspace.tree_index.anchors}
    problems = []
    for wave in newest.values():
        for item in lost_anchors(ledger.wave_entries(wave)):
            for file, line, reference in item["anchors"]:
                if (file, reference) in standing:
                    problems.append({"kind": "anchor-lost", "row": None, "file": file, "line": line,
                                     "subject": reference, "detail": item["message"]})
    return problems


def run(args: argparse.Namespace, workspace) -> int:
    from portq.core.config import relative_label
    from portq.reporting.reports import render
    from portq.tree.matrix_problems import build_matrix_context

    from portq.pipeline.reviews import problems as review_problems

    config = workspace.config
    context = build_matrix_context(workspace.matrix, workspace.tree_index, workspace.tree,
                                   relative_label(config.matrix_path, config.root), config.known_upstream_names())
    context["problems"] = sorted(context["problems"] + review_problems(config, workspace.matrix)
                                 + lost_anchor_problems(workspace),
                                 key=lambda p: (p["kind"], p["row"] or "", p["file"] or "", p["line"] or 0))
    output.emit(output.Document(context, markdown=render("matrix.md.j2", context)),
                output.output_format(args, "markdown"))
    return 0
