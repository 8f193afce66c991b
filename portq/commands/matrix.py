"""``portq matrix [--json]``: every row, what it ports, and what is wrong with it.

The rows, their ports, ``not-carried`` declarations and tests, and the
problems ``portq.tree.matrix_problems`` finds (an upstream with no clone
configured, anchors pointing at nothing or owned by no row, ports without a
test, missing or unclaimed test paths), and the reviews file's (a review
whose row the matrix no longer defines, or whose commit the upstream clone no
longer has), as markdown or ``--json``.

It reads the matrix, the in-tree index and the reviews file, and asks the
upstream clones only whether a reviewed commit exists; it does not read the
ledger.
"""

from __future__ import annotations

import argparse

from portq.reporting import output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace, workspace) -> int:
    from portq.core.config import relative_label
    from portq.reporting.reports import render
    from portq.tree.matrix_problems import build_matrix_context

    from portq.pipeline.reviews import problems as review_problems

    config = workspace.config
    context = build_matrix_context(workspace.matrix, workspace.tree_index, workspace.tree,
                                   relative_label(config.matrix_path, config.root), config.known_upstream_names())
    context["problems"] += review_problems(config, workspace.matrix)
    output.emit(output.Document(context, markdown=render("matrix.md.j2", context)),
                output.output_format(args, "markdown"))
    return 0
