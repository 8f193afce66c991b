"""``portq scan A..B``: the pipeline from an upstream range to a ledger wave.

config → matrix → upstream range (validated) → one streaming read of every
patch → ownership and enclosing symbols → the classifier (over the whole
range) → ledger transactions of ``RECORD_BATCH`` entries.

Mapping takes its definitions from the persistent ``DefinitionCache`` in
``<ledger folder>/cache/definitions.sqlite`` (a second scan parses nothing it
parsed before); the classifier gets its own in-memory ``SymbolTableCache``
with full trees for the few blobs whose signatures it compares.

Everything a user can get wrong (config, matrix, tree, range, ledger file) is
checked before a wave is begun, so bad input never leaves a wave behind. A
scan interrupted later keeps the entries it recorded, its wave is marked
``interrupted`` (or left ``running`` if the process was killed), and the next
scan of the same range completes that wave instead of starting another.

This module orchestrates; the stages live in their own modules and it prints
nothing (``portq.commands.scan`` does).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portq.classify import ClassifierContext, build_classifier
from portq.config import Config, require_tree
from portq.errors import MatrixError, ScanInterrupted
from portq.history import Upstream
from portq.ledger import EntryRecord, Ledger, Wave, open_ledger
from portq.mapping import ChangeMapper
from portq.matrix import Matrix
from portq.model import EntryChanges, TouchedSymbol
from portq.symbol_cache import DefinitionCache, cache_path as definition_cache_path
from portq.symbols import CPP_SUFFIXES, PYTHON_SUFFIXES, SymbolTableCache

_SKIPPED_DIRECTORIES = {"__pycache__", "node_modules", "build", "dist"}


@dataclass
class ScanResult:
    wave: Wave
    resumed: bool
    entries: list[EntryRecord]
    upstream: str


def tree_key(config: Config) -> str:
    """How the ledger names the tree: relative to the config root when inside it."""
    try:
        return config.tree.relative_to(config.root).as_posix() or "."
    except ValueError:
        return config.tree.as_posix()


def tree_fingerprint(tree: Path) -> str:
    """A cheap digest of the tree's source files (path, size, mtime).

    It only decides whether an unfinished wave may be completed by a new
    scan: a tree edited in between starts a new wave instead.
    """
    digest = hashlib.sha256()
    suffixes = CPP_SUFFIXES | PYTHON_SUFFIXES
    for directory, subdirectories, files in os.walk(tree):
        subdirectories[:] = sorted(
            d for d in subdirectories if not d.startswith(".") and d not in _SKIPPED_DIRECTORIES
        )
        for name in sorted(files):
            if os.path.splitext(name)[1].lower() in suffixes:
                path = os.path.join(directory, name)
                stat = os.stat(path)
                digest.update(f"{os.path.relpath(path, tree)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def symbol_record(symbol: TouchedSymbol) -> dict[str, Any]:
    """What the ledger keeps of a touched symbol (the JSON shows path/name/change).

    Its fields, less the empty ones; the ledger's JSON encoder turns tuples
    into lists (and would encode a nested record), so no deep copy is made.
    """
    return {key: value for key, value in vars(symbol).items() if value not in (None, (), [])}


def load_matrix_for(config: Config) -> tuple[Matrix, str, Path]:
    """The matrix, and the upstream (name, path) this scan reads; validated."""
    matrix = Matrix.load(config.matrix_path)
    name, path = config.resolve_upstream(matrix.upstreams())
    if config.declared_upstreams:
        matrix.check_upstreams(config.known_upstream_names() | {name})
    if not matrix.rows_for(name):
        raise MatrixError(
            f"{config.matrix_path}: no row names upstream '{name}' (rows name: {', '.join(matrix.upstreams())})"
        )
    return matrix, name, path


def run_scan(config: Config, range_spec: str, *, progress=None, options: dict[str, Any] | None = None) -> ScanResult:
    """Scan ``range_spec`` of the configured upstream into a new (or resumed) wave."""
    from portq.output import NullProgress

    progress = progress or NullProgress()
    matrix, name, path = load_matrix_for(config)
    tree = require_tree(config)
    with Upstream(path, name) as upstream:
        revisions = upstream.resolve_range(range_spec)
        with open_ledger(config.ledger_path) as ledger:
            cache_dir = config.ledger_path.parent / "cache"
            entries: list[EntryChanges] = []
            with DefinitionCache(definition_cache_path(cache_dir)) as definitions:
                mapper = ChangeMapper(matrix, name, upstream.read_blob, definitions, upstream.read_blobs)
                try:
                    progress.phase(f"reading {range_spec}", len(revisions))
                    for entry in mapper.map_commits(upstream.commits(revisions)):
                        entries.append(entry)
                        progress.advance()
                except KeyboardInterrupt:
                    raise ScanInterrupted(
                        f"scan of {range_spec} interrupted while reading; nothing was recorded"
                    ) from None
            wave, resumed = ledger.begin_wave(
                range_spec=range_spec,
                upstream=name,
                base_sha=revisions.base,
                tip_sha=revisions.tip,
                tree=tree_key(config),
                entry_count=len(revisions),
                matrix_fingerprint=matrix.fingerprint(),
                tree_fingerprint=tree_fingerprint(tree),
            )
            try:
                _classify_and_record(ledger, wave, entries, progress, ClassifierContext(
                    upstream=name,
                    matrix=matrix,
                    tree_root=tree,
                    read_blob=upstream.read_blob,
                    is_ancestor=upstream.is_ancestor,
                    symbol_tables=SymbolTableCache(),
                    cache_dir=cache_dir,
                    options=dict(options or {}),
                ))
            except KeyboardInterrupt:
                wave = ledger.finish_wave(wave, "interrupted")
                done = len(ledger.recorded_positions(wave))
                raise ScanInterrupted(
                    f"scan interrupted: {wave.name} has {done} of {wave.entry_count} entries; "
                    f"run the same scan again to complete it"
                ) from None
            except Exception:
                # A batch that failed must not leave the wave looking live: marked
                # interrupted, the next scan of the range resumes it. The failure is
                # what is reported, even when the mark cannot be written (a full disk).
                try:
                    ledger.finish_wave(wave, "interrupted")
                except Exception:
                    pass
                raise
            try:
                wave = ledger.finish_wave(wave, "complete")
            except KeyboardInterrupt:
                ledger.finish_wave(wave, "interrupted")
                raise ScanInterrupted(
                    f"scan interrupted while marking {wave.name} complete: it has {wave.entry_count} of "
                    f"{wave.entry_count} entries; run the same scan again to mark it complete"
                ) from None
            return ScanResult(wave, resumed, ledger.wave_entries(wave), name)


RECORD_BATCH = 64
"""Entries per ledger transaction: whole batches survive a kill, and a scan
of thousands of entries does not pay a commit per entry."""


def _classify_and_record(ledger: Ledger, wave: Wave, entries: list[EntryChanges], progress, context) -> None:
    done = ledger.recorded_positions(wave)
    progress.phase("classifying", len(entries))
    classifier = build_classifier(context)
    batch: list[dict[str, Any]] = []
    try:
        for entry, verdict in classifier.classify_range(entries):
            if entry.position not in done:
                commit = entry.commit
                batch.append(dict(
                    position=entry.position,
                    sha=commit.sha,
                    title=commit.title,
                    pr=commit.pr,
                    rows=entry.rows,
                    symbols=[symbol_record(s) for s in entry.symbols],
                    verdict=verdict,
                ))
            if len(batch) >= RECORD_BATCH:
                ledger.record_scan_entries(wave, batch)
                batch = []
            progress.advance()
    finally:
        if batch:  # what was classified before an interruption is kept too
            ledger.record_scan_entries(wave, batch)
