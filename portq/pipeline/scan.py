"""``portq scan A..B``: the pipeline from an upstream range to a ledger wave.

config → matrix → upstream range (validated) → the in-tree index (the
tree read once, at the start: it decides the whole scan; a file is parsed
only when a question needs it) → one streaming read of every
patch → ownership and enclosing symbols → the classifier (over the whole
range) → ledger transactions of ``RECORD_BATCH`` entries. A cold scan starts
git's log as soon as it knows it reads the whole range (before the in-tree
index and the stores are set up), pairs net-zero commits as the log arrives,
and is handed back the records it wrote rather than reading its wave back.

A rescan reuses. Each recorded entry carries its decision key
(``portq.classifier.decision_keys``: the commit, the classifier version, the matrix rows
and the in-tree files its verdict rests on). When the range already has a
complete wave for this tree, the scan recomputes every key from the ledger
alone (no patch is read) and records a wave that reuses that wave's
decisions by reference, deciding again only the entries whose key changed:
their commits, and the renames of the anchored paths they touch, are read with one
``git log --no-walk`` and classified. With nothing changed the new wave
holds no entry rows at all. ``fresh`` (``portq scan --fresh``) decides
every entry; so does a scan whose earlier wave was recorded without keys.

Mapping takes its definitions from the persistent ``DefinitionCache`` in
``<ledger folder>/cache/definitions.sqlite`` (a second scan parses nothing it
parsed before); the classifier gets its own in-memory ``SymbolTableCache``
with full trees for the few blobs whose signatures it compares.

A complete wave ends with the reviews file applied (``portq.pipeline.reviews``):
the human verdicts kept in the tree stand in the ledger the scan wrote, however
new that ledger is.

Everything a user can get wrong (config, matrix, tree, range, ledger file) is
checked before a wave is begun, so bad input never leaves a wave behind. A
scan interrupted later keeps the entries it recorded, its wave is marked
``interrupted`` (or left ``running`` if the process was killed), and the next
scan of the same range completes that wave instead of starting another.

This module orchestrates; the stages live in their own modules and it prints
nothing (``portq.commands.scan`` does).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from portq.classifier.classify import ClassifierContext, NetZeroPairing, build_classifier
from portq.classifier.decision_keys import NET_ZERO, DecisionKeys, change_pairs, rename_groups
from portq.classifier.mapping import ChangeMapper
from portq.core.config import Config, require_tree
from portq.core.errors import MatrixError, ScanInterrupted
from portq.core.model import EntryChanges, TouchedSymbol
from portq.language.memo import MEMO
from portq.language.symbols import SymbolTableCache, language_for_path
from portq.ledger.store import EntryRecord, Ledger, Wave, open_ledger
from portq.pipeline.reviews import apply_reviews
from portq.tree import reviews_file
from portq.tree.matrix import Matrix
from portq.tree.product_store import ProductStore
from portq.tree.symbol_cache import DefinitionCache, SignatureStore, cache_path as definition_cache_path
from portq.tree.tree_index import TreeIndex, port_roots_of
from portq.upstream.history import Upstream


@dataclass
class ScanResult:
    wave: Wave
    resumed: bool
    entries: list[EntryRecord]
    upstream: str
    redecided: int | None = None  # entries decided again by a rescan that reused the rest; None: all decided


def tree_key(config: Config) -> str:
    """How the ledger names the tree: relative to the config root when inside it."""
    try:
        return config.tree.relative_to(config.root).as_posix() or "."
    except ValueError:
        return config.tree.as_posix()


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


def run_scan(config: Config, range_spec: str, *, progress=None, options: dict[str, Any] | None = None,
             fresh: bool = False) -> ScanResult:
    """Scan ``range_spec`` of the configured upstream into a new (or resumed) wave.

    A rescan of a range whose last complete wave was decided against the same
    inputs reuses its decisions (``portq.classifier.decision_keys``) and decides again only
    the entries whose inputs changed; ``fresh`` decides every entry.
    """
    with _fewer_collections():
        return _run_scan(config, range_spec, progress=progress, options=options, fresh=fresh)


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cyclic garbage collector, told to run less often while a scan allocates: what was
    imported and set up before is frozen out of its passes, and a pass starts after ``GC_THRESHOLD``
    allocations instead of 700. A 30,000-entry scan spent a tenth of its time in full passes over
    a heap that is mostly records it keeps."""
    import gc

    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


GC_THRESHOLD = 10_000


def _run_scan(config: Config, range_spec: str, *, progress=None, options: dict[str, Any] | None = None,
              fresh: bool = False) -> ScanResult:
    from portq.reporting.output import NullProgress

    progress = progress or NullProgress()
    options = dict(options or {})
    matrix, name, path = load_matrix_for(config)
    tree = require_tree(config)
    if config.reviews_path is not None:
        reviews_file.load(config.reviews_path)  # a malformed reviews file is refused before the scan, not after
    with Upstream(path, name) as upstream:
        revisions = upstream.resolve_range(range_spec)
        with open_ledger(config.ledger_path) as ledger, contextlib.ExitStack() as cleanup:
            cache_dir = config.ledger_path.parent / "cache"
            cleanup.enter_context(_products_kept(cache_dir))  # tokens and ast dumps, for the next scan too
            previous = None if fresh else ledger.reusable_wave(
                upstream=name, base_sha=revisions.base, tip_sha=revisions.tip, tree=tree_key(config))
            waiting = _StepsGivenLater()  # what to do while git is slower than mapping, given once it can be made
            log = None
            if previous is None:  # a cold scan reads the whole range: git starts writing it while the rest is set up
                log = upstream.started_commits(revisions, waiting)
                cleanup.callback(log.close)
            # The tree as it is now decides the whole scan, however it is edited meanwhile: its bytes
            # are read here, and a file is parsed when mapping or the classifier first asks about it
            # (mapping: the port files' anchors; a caller query: the files whose bytes hold the name).
            index = TreeIndex.on_demand(tree, cache_dir, port_roots_of(matrix), config.anchors_path)
            cleanup.callback(index.save)  # what was parsed, cached for the next scan of this tree
            # The classifier's tables, with full trees: of the files an anchor names, mapping hands over its parses.
            # Of the other owned Python files (the classifier reads them for launches, imports and
            # module-level names), the latest trees mapping parsed are handed over too, in a room of their own.
            tables = SymbolTableCache(adopts=lambda path: bool(index.anchors_for_path(name, (path,))),
                                      also_adopts=lambda path: language_for_path(path) == "python")
            made: list[DecisionKeys] = []  # the keys, when they are made while git writes the log
            pairing = NetZeroPairing()  # the range's net-zero pairs, found as the log arrives
            if previous is None:
                waiting.steps = _keys_warmed_up(made, matrix, name, index, options)
                entries = _read_entries(upstream, matrix, name, cache_dir, revisions, revisions.shas, progress,
                                        index=index, commits=log, tables=tables, pairing=pairing)
            keys = made[0] if made else DecisionKeys(matrix, name, index, options)
            wave_fields = dict(  # the range as the commits it names now: a moved HEAD~5 or tag cannot change it
                range_spec=f"{revisions.base}..{revisions.tip}", upstream=name, base_sha=revisions.base, tip_sha=revisions.tip,
                tree=tree_key(config), entry_count=len(revisions), matrix_fingerprint=matrix.fingerprint(),
                tree_fingerprint=(index.key or "")[:16],
            )
            signatures = SignatureStore(definition_cache_path(cache_dir), _signature_rules)
            cleanup.callback(signatures.close)  # the signatures computed, for the next scan that decides again
            context = ClassifierContext(
                upstream=name, matrix=matrix, tree_root=tree, read_blob=upstream.read_blob,
                is_ancestor=upstream.is_ancestor, symbol_tables=tables, cache_dir=cache_dir,
                options=options, index=index, signatures=signatures, read_blobs=upstream.read_blobs,
                range_base=revisions.base,
            )
            plan = None if previous is None else plan_rescan(ledger, keys, revisions, previous)
            if plan is not None:
                try:
                    decided = _decide_again(upstream, matrix, name, cache_dir, revisions, plan, keys, context,
                                            progress)
                except KeyboardInterrupt:
                    raise ScanInterrupted(f"rescan of {range_spec} interrupted; nothing was recorded") from None
                if decided is not None:
                    wave, resumed = ledger.begin_wave(**wave_fields, reuses_wave=plan.base, redecided=plan.redecide)
                    try:
                        ledger.record_scan_entries(wave, decided)  # one transaction: all of them or none
                    except BaseException:
                        with contextlib.suppress(Exception):  # resumable, whatever stopped it
                            ledger.finish_wave(wave, "interrupted")
                        raise
                    wave = ledger.finish_wave(wave, "complete")
                    apply_reviews(ledger, config.reviews_path, name)
                    return ScanResult(wave, resumed, ledger.wave_entries(wave), name, len(plan.redecide))
            if previous is not None:  # a reusable wave that could not be reused: read the range now
                entries = _read_entries(upstream, matrix, name, cache_dir, revisions, revisions.shas, progress,
                                        index=index, tables=tables, pairing=pairing)
            wave, resumed = ledger.begin_wave(**wave_fields)
            try:
                # what is recorded, as reading it back would give it (a long wave's records are read back
                # once its mapped history is freed, rather than held beside it)
                kept = ledger.keep_recorded(wave) if wave.entry_count <= KEEP_RECORDED_AT_MOST else None
                _classify_and_record(ledger, wave, entries, progress, context, keys, pairing.pairs)
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
            # the mapped history (the net-zero pairing holds its entries too) and its trees, freed before
            # the wave is read back
            del entries, context, tables, pairing, log
            try:
                wave = ledger.finish_wave(wave, "complete")
            except KeyboardInterrupt:
                ledger.finish_wave(wave, "interrupted")
                raise ScanInterrupted(
                    f"scan interrupted while marking {wave.name} complete: it has {wave.entry_count} of "
                    f"{wave.entry_count} entries; run the same scan again to mark it complete"
                ) from None
            apply_reviews(ledger, config.reviews_path, name)  # the team's decisions in the tree stand
            return ScanResult(wave, resumed, ledger.wave_entries(wave, kept), name)


@contextlib.contextmanager
def _products_kept(cache_dir: Path) -> Iterator[ProductStore]:
    """The per-definition products the classifier computes (``portq.language.memo``), read from and
    written to the definition store's file while the scan classifies."""
    products = ProductStore(definition_cache_path(cache_dir))
    MEMO.backing = products
    try:
        yield products
    finally:
        MEMO.backing = None
        products.close()


def _signature_rules() -> str:
    """The classifier's signature rules, imported only when a scan classifies something."""
    from portq.classifier.verdicts import signature_rules

    return signature_rules()


class _StepsGivenLater:
    """An iterator of steps that are given (``steps``) after it is handed to the log's reader, which asks
    for a step only once the scan reads the log."""

    def __init__(self) -> None:
        self.steps: Iterator[None] = iter(())

    def __iter__(self) -> "_StepsGivenLater":
        return self

    def __next__(self) -> None:
        return next(self.steps)


def _keys_warmed_up(made: list, matrix, name, index, options) -> Iterator[None]:
    """Steps to take while a cold scan waits for git's log: make the decision keys (into
    ``made``), then find ahead what each anchor's key and verdicts will ask of the tree."""
    made.append(DecisionKeys(matrix, name, index, options))
    yield
    yield from made[0].warm_up()


def _read_entries(upstream, matrix, name, cache_dir, revisions, shas, progress,
                  positions: list[int] | None = None, index=None,
                  while_waiting: Iterator[None] | None = None, tables: SymbolTableCache | None = None,
                  pairing: NetZeroPairing | None = None, commits: Iterator | None = None) -> list[EntryChanges]:
    """Map the commits ``shas`` of ``revisions`` (all of them in one stream, or a rescan's few at
    ``positions``). With the in-tree ``index`` (its port files' anchors at least), mapping also owns the
    files no row owns but a port names. ``while_waiting``: steps taken while the whole range's log is
    slower to arrive than it is mapped. ``tables``: the classifier's, handed the trees it will ask for.
    ``pairing``: given each entry as it is mapped (the whole range's, in order). ``commits``: the whole
    range's log, already started (``Upstream.started_commits``)."""
    entries: list[EntryChanges] = []
    anchored = (lambda paths: bool(index.anchors_for_path(name, paths))) if index is not None else None
    with DefinitionCache(definition_cache_path(cache_dir), trees_to=tables) as definitions:
        mapper = ChangeMapper(matrix, name, upstream.read_blob, definitions, upstream.read_blobs, anchored=anchored)
        if commits is None:
            commits = upstream.commits(revisions, while_waiting) if positions is None \
                else upstream.commits_of(shas, revisions.spec)
        try:
            progress.phase(f"reading {revisions.spec}", len(shas))
            for entry in mapper.map_commits(commits):
                if positions is not None:
                    entry.position = positions[len(entries)]
                entries.append(entry)
                if pairing is not None:
                    pairing.add(entry)
                progress.advance()
            entries = mapper.settle_renames(entries)
        except KeyboardInterrupt:
            raise ScanInterrupted(f"scan of {revisions.spec} interrupted while reading; nothing was recorded") from None
    return entries


@dataclass
class RescanPlan:
    """What a rescan reuses and what it decides again."""

    base: int  # the complete wave whose decisions are reused
    redecide: list[int]  # positions whose decision keys changed
    read: list[int]  # positions whose patches are read: those, and the renames of their anchored paths
    groups: dict[str, frozenset[str]]  # the range's rename groups


REREAD_SHARE = 0.5
"""Above this share of entries to decide again, one stream of the whole range
is cheaper than picking commits out of it."""


def plan_rescan(ledger: Ledger, keys: DecisionKeys, revisions, previous: Wave) -> RescanPlan | None:
    """How to rescan a range whose last complete wave for this tree is ``previous``,
    or None to decide every entry: when that wave has entries recorded without
    a key (an older ledger) or not matching the range, or when most keys changed.
    """
    decisions = ledger.decisions(previous)
    for position, sha in enumerate(revisions.shas, 1):
        decision = decisions.get(position)
        if decision is None or decision.sha != sha or decision.key is None or decision.changes is None:
            return None
    groups = rename_groups(d.changes for d in decisions.values())
    redecide = [
        position for position, d in sorted(decisions.items())
        if keys.entry_key(d.sha, d.rows, d.changes, d.justification, groups) != d.key
    ]
    if len(redecide) > REREAD_SHARE * len(decisions):
        return None
    # Renames matter to the classifier only where a group of names holds a path an anchor names.
    names = {name for position in redecide for pair in decisions[position].changes for path in pair if path
             for name in groups.get(path, ()) if not keys.anchored_paths.isdisjoint(groups[path])}
    renames = {position for position, d in decisions.items()
               if any(old and new and old != new and (old in names or new in names) for old, new in d.changes)}
    base = previous.id
    if previous.reuses_wave is not None and previous.redecided == "[]":
        base = previous.reuses_wave  # it decided nothing itself: reuse what it reused
    return RescanPlan(base, redecide, sorted(set(redecide) | renames), groups)


def _decide_again(upstream, matrix, name, cache_dir, revisions, plan: RescanPlan, keys, context,
                  progress) -> list[dict[str, Any]] | None:
    """The entries ``plan`` decides again, ready to record; None when the range must be decided whole.

    Only the planned commits are read and classified. The classifier sees the
    range facts of those commits alone: the renames that link their paths to
    an anchored path are among them by construction, and an entry re-decided here was not net-zero in its
    range; should one read as net-zero among the few, the range is decided whole.
    """
    if not plan.redecide:
        return []
    entries = _read_entries(upstream, matrix, name, cache_dir, revisions,
                            [revisions.shas[p - 1] for p in plan.read], progress, positions=plan.read,
                            index=context.index, tables=context.symbol_tables)
    wanted = set(plan.redecide)
    decided = []
    progress.phase("classifying", len(entries))
    for entry, verdict in build_classifier(context).classify_range(entries):
        progress.advance()
        if entry.position in wanted:
            if verdict.justification == NET_ZERO:
                return None
            decided.append(_entry_to_record(entry, verdict, keys, plan.groups))
    return decided


def _entry_to_record(entry: EntryChanges, verdict, keys: DecisionKeys, groups) -> dict[str, Any]:
    commit = entry.commit
    changes = change_pairs(commit.changes or entry.owned_changes)
    return dict(
        position=entry.position,
        sha=commit.sha,
        title=commit.title,
        pr=commit.pr,
        rows=entry.rows,
        symbols=[symbol_record(s) for s in entry.symbols],
        verdict=verdict,
        changes=changes,
        decision_key=keys.entry_key(commit.sha, entry.rows, changes, verdict.justification, groups),
    )


KEEP_RECORDED_AT_MOST = 10_000
"""The longest wave whose records a cold scan keeps as it writes them instead of reading them back: a
longer one would hold its records and its mapped history at once (30,000 entries: 341 MiB instead of 274)."""

RECORD_BATCH = 64
"""Entries per ledger transaction: whole batches survive a kill, and a scan
of thousands of entries does not pay a commit per entry."""


def _classify_and_record(ledger: Ledger, wave: Wave, entries: list[EntryChanges], progress, context,
                         keys: DecisionKeys, pairs: dict[int, tuple[int, str]] | None = None) -> None:
    done = ledger.recorded_positions(wave)
    progress.phase("classifying", len(entries))
    groups = rename_groups(change_pairs(e.commit.changes or e.owned_changes) for e in entries)
    classifier = build_classifier(context)
    batch: list[dict[str, Any]] = []
    try:
        for entry, verdict in classifier.classify_range(entries, pairs):
            if entry.position not in done:
                batch.append(_entry_to_record(entry, verdict, keys, groups))
            if len(batch) >= RECORD_BATCH:
                ledger.record_scan_entries(wave, batch)
                batch = []
            progress.advance()
    finally:
        if batch:  # what was classified before an interruption is kept too
            ledger.record_scan_entries(wave, batch)
