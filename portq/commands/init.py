"""``portq init --upstream NAME=PATH [--tree DIR] [PORT_PATH ...]``: set portq up on a port that records no provenance.

For every function, method and kernel of the port files (``PORT_PATH``: files or
directories of the tree; default the whole tree, tests left out) it proposes the
upstream definition it ports, each port file's base commit, and matrix rows, then
writes ``portq.toml``, the matrix and the anchors, as a sidecar file
(``portq-anchors.toml``) or, with ``--write-comments``, as comment anchors in the
sources. It prints a review table: each definition, its proposed upstream symbol,
the confidence and what the proposal rests on, and the definitions left unmatched
(below ``portq.tree.definition_match.CONFIDENCE_THRESHOLD``: never forced onto a guess).

Nothing is written over an existing file without ``--force``; ``--dry-run`` prints
what would be written. On a tree that already has a ``portq.toml``, only what is
missing (definitions no anchor covers, upstream files no row owns) is proposed, as a
diff of the anchors file and the matrix; ``--force`` applies it.

The matching and the bases are ``portq.tree.provenance``'s; this module checks the
arguments, lays out the files and prints. It never scans or touches a ledger.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from portq.core.errors import ConfigError, PortqError
from portq.core.terminal import visible
from portq.reporting import output

ANCHORS_FILE = "portq-anchors.toml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("port_paths", nargs="*", metavar="PORT_PATH",
                        help="files or directories of the tree that hold the port (default: the whole tree)")
    parser.add_argument("--at", metavar="REV", default="HEAD",
                        help="the upstream revision whose files are searched (default: HEAD); bases are found "
                        "among its first-parent ancestors")
    parser.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    parser.add_argument("--force", action="store_true", help="write over existing files")
    parser.add_argument("--write-comments", action="store_true",
                        help="put comment anchors in the sources instead of a sidecar anchors file")


@dataclass
class _Row:
    id: str
    title: str
    paths: list[str]
    tree: list[str]


def run(args: argparse.Namespace, workspace) -> int:
    from portq.core.config import require_tree
    from portq.tree.provenance import NothingToMatch, port_files, survey
    from portq.upstream.history import Upstream

    config = workspace.config
    name, clone = _upstream(config)
    tree = require_tree(config)
    wanted = [_port_path(value, tree) for value in args.port_paths]
    files = port_files(tree, wanted)
    if not files:
        where = ", ".join(wanted) if wanted else str(tree)
        raise ConfigError(f"portq init: no C/C++/CUDA or Python source files under {where}: "
                          "expected PORT_PATH to name the files that hold the port")
    with Upstream(clone, name) as upstream:
        if upstream.resolve(args.at) is None:
            raise ConfigError(f"portq init: --at {args.at}: no such revision in upstream {name} ({clone})")
        try:
            found = survey(upstream, upstream.resolve(args.at), tree, files)
        except NothingToMatch as error:
            raise ConfigError(f"portq init: {error} (upstream {name} at {args.at}, tree {tree})") from None
    if not found.proposals:
        raise ConfigError(f"portq init: no upstream definition of {name} at {args.at} resembles a port definition "
                          f"above the confidence threshold ({len(found.port_definitions)} definitions compared)")

    plan = _Plan(config, workspace, name, clone, tree, found, args)
    data = plan.data()
    if getattr(args, "json", False):
        output.print_json(data, sys.stdout)
    else:
        for line in plan.review():
            print(visible(line))
    plan.carry_out()
    return 0


def _upstream(config) -> tuple[str, Path]:
    """The one upstream the port was taken from (``--upstream NAME=PATH``)."""
    if not config.upstreams:
        raise ConfigError("portq init: --upstream NAME=PATH: expected the upstream clone the port was taken from")
    if config.selected_upstream and config.selected_upstream in config.upstreams:
        return config.selected_upstream, config.upstreams[config.selected_upstream]
    if len(config.upstreams) == 1:
        [(name, path)] = config.upstreams.items()
        return name, path
    raise ConfigError(f"portq init: several upstreams are configured ({', '.join(sorted(config.upstreams))}): "
                      "name the one the port was taken from with --upstream NAME")


def _port_path(value: str, tree: Path) -> str:
    """A PORT_PATH as a path relative to the tree root (given relative to the working
    directory, to the tree, or absolute); outside the tree it is an error."""
    for base in (Path.cwd(), tree):
        candidate = (base / value).resolve()
        if candidate.exists():
            try:
                relative = candidate.relative_to(tree.resolve()).as_posix()
            except ValueError:
                raise ConfigError(f"portq init: PORT_PATH {value} is outside the tree {tree}: "
                                  "expected files or directories of the tree (--tree DIR)") from None
            return "" if relative == "." else relative
    raise ConfigError(f"portq init: PORT_PATH {value} does not exist in the tree {tree}")


def _relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


class _Plan:
    """What init will write, from the survey: portq.toml, the matrix rows, the anchors."""

    def __init__(self, config, workspace, name, clone, tree, found, args) -> None:
        self.config, self.workspace, self.name, self.clone, self.tree = config, workspace, name, clone, tree
        self.found, self.args = found, args
        self.root = config.root
        self.existing = config.config_path is not None
        self.matrix_path = config.matrix_path
        self.anchors_path = config.anchors_path or (self.root / ANCHORS_FILE)
        self.already = self._already_anchored() if self.existing else set()
        self.proposals = [p for p in found.proposals if (p.port.file, p.port.qualified_name) not in self.already]
        # proposed with the anchors of their port definitions: a rerun on a configured tree adds none twice
        self.left_out = [left for left in found.left_out if (left.port.file, left.port.qualified_name) not in self.already]
        self.rows = self._rows()

    # --- what exists already (a tree with a configuration)

    def _already_anchored(self) -> set[tuple[str, str]]:
        try:
            index = self.workspace.tree_index
        except PortqError:
            return set()
        return {(a.file, a.definition) for a in index.anchors if a.definition}

    def _owned(self, path: str) -> bool:
        if not self.existing or not self.matrix_path.exists():
            return False
        matrix = self.workspace.matrix
        return any(row.upstream == self.name and row.claims_path(path) for row in matrix.rows)

    # --- rows

    def _rows(self) -> list[_Row]:
        """One row per group of upstream files the port draws from: files drawn on by the
        same port file, or sharing a file name, go together."""
        groups: list[tuple[set[str], set[str]]] = []  # (upstream paths, port files)
        for proposal in self.proposals:
            # the file at the base, and the one the definition has moved to since (scanned from the base)
            drawn = {path for path in (proposal.path, proposal.path_now) if path and not self._owned(path)}
            if not drawn:
                continue
            stem = PurePosixPath(proposal.path).stem.lstrip("_")
            joined = [g for g in groups if proposal.port.file in g[1]
                      or any(PurePosixPath(p).stem.lstrip("_") == stem for p in g[0])]
            merged = (set().union(*(g[0] for g in joined), drawn),
                      set().union(*(g[1] for g in joined), {proposal.port.file}))
            groups = [g for g in groups if g not in joined] + [merged]
        rows, used = [], set()
        at_base = {proposal.path for proposal in self.proposals}
        for paths, ports in sorted(groups, key=lambda g: sorted(g[0])):
            # named after the files the anchors name (at the base), not those code moved to since
            stems = [PurePosixPath(p).stem.lstrip("_") for p in sorted(paths & at_base or paths)]
            # the commonest file name, of equally common ones the first in order (never a set's order)
            base = re.sub(r"[^A-Za-z0-9]+", "-", max(sorted(set(stems)), key=stems.count)).strip("-").upper() or "PORT"
            row_id, number = base, 2
            while row_id in used or (self.existing and self.matrix_path.exists()
                                     and row_id in {r.id for r in self.workspace.matrix.rows}):
                row_id, number = f"{base}-{number}", number + 1
            used.add(row_id)
            rows.append(_Row(row_id, f"{self.name}: {', '.join(sorted(set(stems)))}", sorted(paths), sorted(ports)))
        return rows

    # --- texts

    def config_text(self) -> str:
        tree = _relative(self.tree, self.root)
        lines = [
            "# Written by portq init: where the port, the matrix and its anchors are.",
            f"tree    = \"{tree}\"",
            f"matrix  = \"{_relative(self.matrix_path, self.root)}\"",
        ]
        if not self.args.write_comments:
            lines.append(f"anchors = \"{_relative(self.anchors_path, self.root)}\"")
        lines += ["", f"[upstream.{self.name}]", f"path = \"{_relative(self.clone, self.root)}\"", ""]
        return "\n".join(lines)

    def matrix_text(self, rows: list[_Row], header: bool) -> str:
        lines = ["# Kernel matrix proposed by portq init: one row per group of upstream files the port",
                 "# draws from. Review the rows, add each row's tests, and narrow paths to what is ported."] \
            if header else []
        for row in rows:
            lines += ["", "[[row]]", f"id       = \"{row.id}\"", f"title    = \"{row.title}\"",
                      f"upstream = \"{self.name}\"", "paths    = ["]
            lines += [f"    \"{path}\"," for path in row.paths]
            lines += ["]", "tree     = [" + ", ".join(f"\"{p}\"" for p in row.tree) + "]", "tests    = []"]
        return "\n".join(lines).lstrip("\n") + "\n"

    def anchors_text(self, header: bool) -> str:
        from portq.tree.anchors import NOT_CARRIED, PORTS
        from portq.tree.sidecar import SidecarEntry, render_sidecar

        entries = [SidecarEntry(PORTS, self.name, p.path, p.symbol, 0, p.port.file, p.port.qualified_name,
                                pin=p.pin[:10] or None) for p in self.proposals]
        entries += [SidecarEntry(NOT_CARRIED, self.name, left.path, left.symbol, 0, left.port.file,
                                 left.port.qualified_name, reason=left.why) for left in self.left_out]
        note = ("Anchors proposed by portq init: each in-tree definition (tree) and the upstream\n"
                "definition it ports (ports), as at commit `at`. Review them; portq matrix lists problems.") \
            if header else ""
        return render_sidecar(entries, header=note)

    # --- what is printed

    def data(self) -> dict:
        found = self.found
        guesses = {id(m.port): m for m in found.guesses}
        return {
            "upstream": self.name,
            "revision": found.revision,
            "base": _base_json(found.base),
            "files": [_base_json(base) for base in found.file_bases.values()],
            "proposals": [{"file": p.port.file, "line": p.port.start_line, "definition": p.port.qualified_name,
                           "upstream_path": p.path, "upstream_symbol": p.symbol, "at": p.pin,
                           "confidence": round(p.confidence, 3), "by": p.how} for p in self.proposals],
            "unmatched": [_unmatched_json(d, guesses.get(id(d))) for d in found.unmatched
                          if (d.file, d.qualified_name) not in self.already],
            "not_carried": [{"file": left.port.file, "definition": left.port.qualified_name,
                             "upstream_path": left.path, "upstream_symbol": left.symbol, "why": left.why}
                            for left in self.left_out],
            "rows": [vars(row) for row in self.rows],
            "notes": found.notes,
            "commits_compared": found.commits_compared,
            "seconds": {key: round(value, 3) for key, value in found.seconds.items()},
        }

    def review(self) -> list[str]:
        from portq.tree.definition_match import CONFIDENCE_THRESHOLD

        found = self.found
        lines = [f"portq init: {len(found.port_definitions)} definitions in the port, upstream {self.name} "
                 f"at {found.revision[:10]}"]
        if found.base is not None:
            same = "scores near the best" if found.base.undetermined else "the same score"
            lines.append(f"base: {found.base.commit[:10]} (score {found.base.score:.2f}; {same} from "
                         f"{found.base.run_start[:10]} to {found.base.run_end[:10]}"
                         f"{'; undetermined, see the notes' if found.base.undetermined else ''}), "
                         f"{found.commits_compared} commits compared in {found.seconds['bases']:.1f} s")
        lines.append("")
        width = max([len(f"{p.port.file}:{p.port.start_line} {p.port.qualified_name}") for p in self.proposals] + [10])
        lines.append(f"{'DEFINITION'.ljust(width)}  CONF  BY               PROPOSED UPSTREAM SYMBOL")
        for p in sorted(self.proposals, key=lambda p: (p.port.file, p.port.start_line)):
            where = f"{p.port.file}:{p.port.start_line} {p.port.qualified_name}".ljust(width)
            lines.append(f"{where}  {p.confidence:.2f}  {p.how.ljust(15)}  {p.path}::{p.symbol}{' @' + p.pin[:10] if p.pin else ''}")
        if self.left_out:
            lines += ["", "proposed not carried (upstream methods the port's class does not define; review them):"]
            lines += [f"  {left.path}::{left.symbol} -- {left.why}" for left in self.left_out]
        unmatched = [d for d in found.unmatched if (d.file, d.qualified_name) not in self.already]
        if unmatched:
            lines += ["", f"unmatched (no upstream definition at or above confidence {CONFIDENCE_THRESHOLD:.2f}):"]
            lines += [f"  {d.file}:{d.start_line} {d.qualified_name}" for d in unmatched]
        if found.notes:
            lines += ["", "notes:"] + [f"  {note}" for note in found.notes]
        if self.rows:
            lines += ["", "rows:"] + [f"  {row.id}: {', '.join(row.paths)} <- {', '.join(row.tree)}" for row in self.rows]
        return lines

    # --- what is written

    def carry_out(self) -> None:
        say = (lambda text: print(text, file=sys.stderr)) if getattr(self.args, "json", False) else print
        if self.existing:
            self._propose_missing(say)
            return
        files = {self.root / "portq.toml": self.config_text(),
                 self.matrix_path: self.matrix_text(self.rows, header=True)}
        if not self.args.write_comments:
            files[self.anchors_path] = self.anchors_text(header=True)
        if self.args.dry_run:
            for path, text in files.items():
                say(f"\n--- {_relative(path, self.root)} (not written: --dry-run)\n{text}")
            return
        present = [path for path in files if path.exists()]
        if present and not self.args.force:
            raise ConfigError(f"portq init: {present[0]} exists: pass --force to write over it, or --dry-run to see "
                              "what would be written")
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        written = [_relative(path, Path.cwd()) for path in files]
        if self.args.write_comments:
            written += write_comment_anchors(self.tree, self.name, self.proposals)
        say("\nwrote: " + ", ".join(written))
        if self.found.base is not None:
            say(f"next: portq scan {self.found.base.commit[:10]}..{self.found.revision[:10]}")

    def _propose_missing(self, say) -> None:
        """The anchors and rows a configured tree lacks, as a diff; written with --force."""
        changes: dict[Path, tuple[str, str]] = {}
        if self.proposals and not self.args.write_comments:
            before = self.anchors_path.read_text() if self.anchors_path.exists() else ""
            added = self.anchors_text(header=not before)
            changes[self.anchors_path] = (before, before + ("\n" if before and not before.endswith("\n\n") else "") + added)
        if self.rows:
            before = self.matrix_path.read_text() if self.matrix_path.exists() else ""
            changes[self.matrix_path] = (before, before + ("\n" if before else "") + self.matrix_text(self.rows, header=not before))
        if self.config.anchors_path is None and self.proposals and not self.args.write_comments:
            before = self.config.config_path.read_text()
            line = f"anchors = \"{_relative(self.anchors_path, self.root)}\"\n"
            position = before.find("\n[")
            after = before + line if position < 0 else before[:position + 1] + line + before[position + 1:]
            changes[self.config.config_path] = (before, after)
        if not changes:
            say("\nnothing missing: every port definition with a proposal is anchored and every upstream file is owned")
            return
        for path, (before, after) in changes.items():
            label = _relative(path, self.root)
            say("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                             f"a/{label}", f"b/{label}")).rstrip("\n"))
        if self.args.force and not self.args.dry_run:
            for path, (_, after) in changes.items():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(after)
            say("wrote: " + ", ".join(_relative(path, Path.cwd()) for path in changes))
        else:
            say("(not written: pass --force to apply this diff)")


def _unmatched_json(definition, guess) -> dict:
    """An unmatched definition, with its best candidate below the threshold (``nearest``) if any."""
    entry = {"file": definition.file, "line": definition.start_line, "definition": definition.qualified_name}
    if guess is not None:
        entry["nearest"] = {"upstream_path": guess.upstream.file, "upstream_symbol": guess.upstream.name,
                            "confidence": round(guess.confidence, 3), "by": guess.how}
    return entry


def _base_json(base) -> dict | None:
    if base is None:
        return None
    return {"file": base.port_file, "commit": base.commit, "score": round(base.score, 4),
            "run_start": base.run_start, "run_end": base.run_end, "undetermined": base.undetermined}


def write_comment_anchors(tree: Path, upstream: str, proposals) -> list[str]:
    """Insert a ``portq: ports`` comment above each proposed definition (above its decorators
    and template line), bottom-up so earlier line numbers stay valid. Returns the files edited."""
    by_file: dict[str, list] = {}
    for proposal in proposals:
        by_file.setdefault(proposal.port.file, []).append(proposal)
    for file, items in by_file.items():
        path = tree / file
        lines = path.read_text().splitlines(True)
        marker = "//" if file.rsplit(".", 1)[-1] in ("c", "cc", "cpp", "cxx", "cu", "cuh", "h", "hh", "hpp", "hxx", "inl") else "#"
        for proposal in sorted(items, key=lambda p: -p.port.start_line):
            at = proposal.port.start_line - 1
            indent = re.match(r"\s*", lines[at] if at < len(lines) else "").group(0)
            pin = f" @{proposal.pin[:10]}" if proposal.pin else ""
            lines.insert(at, f"{indent}{marker} portq: ports {upstream}:{proposal.path}::{proposal.symbol}{pin}\n")
        path.write_text("".join(lines))
    return sorted(by_file)
