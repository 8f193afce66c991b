"""Decision keys: what an entry's verdict rests on, so a rescan reuses it only while that is unchanged.

A scan's verdict for one entry is a function of

* the commit (its SHA: upstream history does not change under a SHA);
* the classifier: ``verdicts.CLASSIFIER_VERSION``, the portq version and the
  scan's classifier options;
* the matrix: the claims of every row of the upstream (they decide which rows
  own the commit) and the owning rows themselves;
* the range's renames of the entry's paths (an anchor naming an old name
  still matches);
* the in-tree files its decision can read: the files under each owning row's
  ``tree`` paths; the files of every anchor naming one of the entry's
  upstream paths (or one of their names through renames), the callers of
  those ports (through wrapper ports, as ``portq.tree.reachability`` follows
  them) and the definitions of the kernels those ports launch; and the files
  holding ``not-carried ...[PARAM]`` declarations, which narrow any launch
  comparison. Each file counts by content (its SHA-1 as indexed).

``DecisionKeys.entry_key`` hashes these into one key per entry; a change to
any of them is a different key, and the entry is decided again. An entry
that has no row and whose paths no anchor names rests on no tree file at
all, and a ``net-zero`` entry is decided by its range alone (the commit and
the commit that undoes it), so editing a ported file re-decides neither.

The keys are computed from the in-tree index built at the start of a scan,
the same index the classifier then reads, so a tree edited while a scan runs
is decided, keyed and recorded as it was when the scan began.

This module reads no git and no ledger; it only turns a scan's inputs into keys.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from portq import __version__
from portq.language.signatures import bare_name
from portq.tree.anchors import NOT_CARRIED, PORTS
from portq.tree.tree_index import INDEX_RULES, PortRoots, TreeIndex, port_roots_of

NET_ZERO = "net-zero"


def _decision_rules() -> str:
    """A digest of the modules whose code decides a verdict, from the hunks to the verdicts.

    The extractors (anchors, signatures, symbols, reachability, the tree index)
    count through ``INDEX_RULES``, which already hashed their code at import."""
    import importlib

    digest = hashlib.sha256(INDEX_RULES.encode())
    rules = sorted(f"classifier.rules.{p.stem}" for p in (Path(__file__).parent / "rules").glob("*.py"))
    for name in ("classifier.classify", "classifier.deltas", "core.evidence", "upstream.history", "upstream.hunks",
                 "classifier.mapping", "tree.matrix", "core.model", "core.paths", "classifier.verdicts",
                 "classifier.delta", "classifier.reading", "classifier.callees", "classifier.moves",
                 "classifier.module_surface", *rules):
        module = importlib.import_module(f"portq.{name}")
        try:
            digest.update(Path(module.__file__).read_bytes())
        except OSError:
            digest.update(module.__name__.encode())
    return digest.hexdigest()[:16]


def __getattr__(name: str) -> Any:
    """``CLASSIFIER_VERSION`` and ``DECISION_RULES`` (the digest of ``_decision_rules``), when first asked
    for: both import every rule, which a cold scan does while git writes the log, not before it starts git."""
    if name == "CLASSIFIER_VERSION":
        from portq.classifier.verdicts import CLASSIFIER_VERSION as value
    elif name == "DECISION_RULES":
        value = _decision_rules()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _classifier_part() -> tuple[int, str]:
    """The classifier's version and the digest of its code."""
    return tuple(globals()[name] if name in globals() else __getattr__(name)
                 for name in ("CLASSIFIER_VERSION", "DECISION_RULES"))


Changes = Sequence[tuple[str, str]]
"""A commit's file changes as ``(old path, new path)`` pairs ("" for none)."""


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=list).encode()).hexdigest()[:32]


def change_pairs(changes) -> list[list[str]]:
    """``[old path, new path]`` of each ``model.FileChange`` ("" where a side has none)."""
    return [[change.old_path or "", change.new_path or ""] for change in changes]


def rename_groups(all_changes: Iterable[Changes]) -> dict[str, frozenset[str]]:
    """path -> every name it has through the range's renames and copies (itself included)."""
    groups: dict[str, frozenset[str]] = {}
    for changes in all_changes:
        for old, new in changes:
            if old and new and old != new:
                group = groups.get(old, frozenset({old})) | groups.get(new, frozenset({new}))
                for path in group:
                    groups[path] = group
    return groups


class DecisionKeys:
    """The keys of one scan's entries: built once from the matrix and the in-tree index."""

    def __init__(self, matrix, upstream: str, index: TreeIndex, options: dict[str, Any] | None = None) -> None:
        self.index = index
        self.upstream = upstream
        rows = matrix.rows_for(upstream)
        self._rows = {row.id: row for row in rows}
        self.scan_part = _digest(
            "portq-decision", __version__, *_classifier_part(), sorted((options or {}).items()),
            upstream,
            [[row.id, row.paths, row.exclude, row.symbols] for row in rows], port_roots_of(matrix),
        )
        self._row_parts: dict[str, str] = {}
        self._by_path: dict[str, list] = {}
        for anchor in index.anchors:
            if anchor.upstream == upstream:
                self._by_path.setdefault(anchor.path, []).append(anchor)
        self.anchored_paths = frozenset(self._by_path)  # upstream paths some anchor names
        self._param_files = sorted({a.file for a in index.anchors if a.kind == NOT_CARRIED and a.param})
        self._anchor_files: dict[int, frozenset[str]] = {}
        self._tree_parts: dict[frozenset[str], str] = {}  # by the entry's upstream paths
        self._files_parts: dict[frozenset[str], str] = {}  # by the in-tree files they come to

    # --- parts -------------------------------------------------------------------

    def _files_digest(self, files: Iterable[str]) -> list[list[str]]:
        digests = self.index.file_digests
        return [[file, digests.get(file, "")] for file in sorted(set(files))]

    def _row_part(self, row_id: str) -> str:
        """The row as the matrix writes it, and every file under its ``tree`` paths."""
        if row_id not in self._row_parts:
            row = self._rows.get(row_id)
            if row is None:
                self._row_parts[row_id] = _digest("no such row", row_id)
            else:
                roots = PortRoots(None, row.tree)
                files = [f for f in self.index.file_digests if row.tree and f in roots]
                self._row_parts[row_id] = _digest(
                    [getattr(row, key) for key in ("id", "title", "upstream", "paths", "exclude", "symbols",
                                                   "tree", "tests")],
                    self._files_digest(files),
                )
        return self._row_parts[row_id]

    def _files_of_anchor(self, anchor) -> frozenset[str]:
        """The anchor's file, its port's callers and the definitions of the kernels the port launches."""
        known = self._anchor_files.get(id(anchor))
        if known is not None:
            return known
        files = {anchor.file}
        definition = self.index.definition_of(anchor) if anchor.kind == PORTS else None
        if definition is not None:
            files.add(definition.file)
            callers = self.index.reachability.callers(definition.name, definition.file, definition.qualified_name)
            files.update(site.file for site in (*callers.non_test, *callers.test))
            files.update(step.split(":", 1)[0] for step in callers.through)
            signature = self.index.signature_of(definition)
            for launch in getattr(signature, "launches", ()) or ():
                for launched in self.index.definitions_by_name.get(bare_name(launch.kernel), ()):
                    files.add(launched.file)
        known = self._anchor_files[id(anchor)] = frozenset(files)
        return known

    def warm_up(self) -> Iterator[None]:
        """Find each anchor's files ahead, one anchor a step (the in-tree records, callers and
        signatures the keys and the classifier ask for): a cold scan takes these steps while
        it waits for git's log, time it would otherwise spend idle."""
        for anchors in self._by_path.values():
            for anchor in anchors:
                self._files_of_anchor(anchor)
                yield

    def _tree_part(self, paths: frozenset[str], owned: bool) -> str:
        key = paths | {"\0owned"} if owned else paths
        part = self._tree_parts.get(key)
        if part is None:
            anchors = [a for path in paths for a in self._by_path.get(path, ())]
            files: set[str] = set()
            for anchor in anchors:
                files |= self._files_of_anchor(anchor)
            if anchors or owned:
                files.update(self._param_files)
            by_files = frozenset(files)  # most entries' paths differ, but few sets of files do (none: the most)
            part = self._files_parts.get(by_files)
            if part is None:
                part = self._files_parts[by_files] = _digest(self._files_digest(files))
            self._tree_parts[key] = part
        return part

    # --- keys --------------------------------------------------------------------

    def entry_key(self, sha: str, rows: Sequence[str], changes: Changes, justification: str | None,
                  groups: dict[str, frozenset[str]]) -> str:
        """The key of one entry's decision (``groups``: ``rename_groups`` of the whole range)."""
        if justification == NET_ZERO:
            parts = (self.scan_part, sha, NET_ZERO)
        else:
            paths = {path for pair in changes for path in pair if path}
            for path in list(paths):
                paths |= groups.get(path, frozenset())
            parts = (self.scan_part, sha, *[self._row_part(row) for row in rows],
                     self._tree_part(frozenset(paths), bool(rows)))
        # every part is a hex digest or a SHA, so joining them is unambiguous (and cheap per entry)
        return hashlib.sha256(" ".join(parts).encode()).hexdigest()[:32]
