"""What a command works on: the configuration, and the matrix, tree, tree
index and ledger it names, each loaded when a command first asks for it.

Two questions every command used to answer for itself live here:

- **which upstream** a range belongs to (``upstream_for_range``): the one
  named by ``--upstream``, else the only one configured, else the one
  configured upstream whose clone resolves both ends of the range;
- **which wave** a command reads (``select_wave``): ``--wave PORTQ-N`` as
  asked (whatever its status), else the newest *complete* wave of the
  upstream named or resolved (optionally of ``--range``). A running or
  interrupted wave is never picked silently, and waves of two upstreams are
  never mixed: with none named, a ``--range`` that waves of two upstreams
  scanned (complete or not) is an error, not the one that happens to be done.

A workspace is a context manager: it closes the ledger it opened.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from pathlib import Path

from portq.core.config import Config, require_tree
from portq.core.errors import ConfigError, HistoryError, LedgerError

COMPLETE = "complete"


class Workspace:
    """The configuration and, lazily, the matrix, tree, tree index and ledger."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._ledger = None

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        index = self.__dict__.get("tree_index")
        if index is not None:
            index.save()  # the records the command's questions computed, cached for the next
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None

    # --- what the configuration names ----------------------------------------

    @cached_property
    def matrix(self):
        from portq.tree.matrix import Matrix

        return Matrix.load(self.config.matrix_path)

    @cached_property
    def tree(self) -> Path:
        return require_tree(self.config)

    @cached_property
    def tree_index(self):
        from portq.tree.tree_index import TreeIndex, port_roots_of

        # on demand: a file is parsed when a question first reaches it (saved at ``close``)
        return TreeIndex.on_demand(self.tree, self.cache_dir, port_roots_of(self.matrix), self.config.anchors_path)

    @property
    def cache_dir(self) -> Path:
        return self.config.ledger_path.parent / "cache"

    def ledger(self, *, create: bool = False):
        """The ledger, opened once (``create`` for commands that write a wave)."""
        if self._ledger is None:
            from portq.ledger.store import open_ledger

            self._ledger = open_ledger(self.config.ledger_path, create=create)
        return self._ledger

    # --- which upstream -------------------------------------------------------

    @property
    def upstream_named(self) -> bool:
        """Whether the flags name the upstream (``--upstream NAME``, ``NAME=PATH`` or a bare PATH)."""
        return self.config.selected_upstream is not None or self.config.bare_upstream_path is not None

    def named_upstream(self) -> str | None:
        """The upstream the flags name, or None when they name none."""
        if self.config.bare_upstream_path is not None:
            return self.config.resolve_upstream(self.matrix.upstreams())[0]
        return self.config.selected_upstream

    def configured_upstreams(self) -> list[str]:
        """The matrix's upstreams that have a path, in matrix order (then the others configured)."""
        names = [n for n in self.matrix.upstreams() if n in self.config.upstreams]
        return names or list(self.config.upstreams)

    def upstream(self) -> tuple[str, Path]:
        """``(name, path)`` when the flags or the configuration leave one choice."""
        return self.config.resolve_upstream(self.matrix.upstreams())

    def upstream_for_range(self, range_spec: str) -> tuple[str, Path]:
        """The upstream ``range_spec`` belongs to: named, the only one, or the one whose clone resolves it.

        Several configured upstreams and none named: each clone is asked
        for both ends; exactly one must resolve them, or the error names
        every candidate and what it resolved.
        """
        candidates = self.configured_upstreams()
        if self.upstream_named or len(candidates) <= 1:
            return self.upstream()
        findings: list[str] = []
        resolving: list[str] = []
        for name in candidates:
            finding = _resolves(name, self.config.upstreams[name], range_spec)
            findings.append(f"{name}: {finding}")
            if finding == "resolves both ends":
                resolving.append(name)
        if len(resolving) == 1:
            return resolving[0], self.config.upstreams[resolving[0]]
        what = "several configured upstreams resolve" if resolving else "no configured upstream resolves"
        raise ConfigError(
            f"{what} range {range_spec} ({'; '.join(findings)}): pick one with --upstream NAME"
        )

    def config_for(self, upstream: str) -> Config:
        """The configuration with ``upstream`` chosen (what ``portq.pipeline.scan`` reads)."""
        return dataclasses.replace(self.config, selected_upstream=upstream, bare_upstream_path=None,
                                   upstreams={**self.config.upstreams, upstream: self.upstream_path(upstream)})

    def upstream_path(self, upstream: str) -> Path:
        """The clone of ``upstream``: configured, given as NAME=PATH, or the bare ``--upstream PATH``."""
        paths = dict(self.config.upstreams)
        if self.config.bare_upstream_path is not None:
            names = list(dict.fromkeys(self.matrix.upstreams()))
            if len(names) != 1:
                self.upstream()  # raises: a bare path needs a matrix of one upstream
            paths[names[0]] = self.config.bare_upstream_path
        try:
            return paths[upstream]
        except KeyError:
            raise ConfigError(f"upstream {upstream} has no configured clone: pass --upstream {upstream}=PATH") from None

    # --- which wave -----------------------------------------------------------

    def select_wave(self, range_spec: str | None = None, wave_name: str | None = None):
        """The wave a command reads; see the module docstring for the rules."""
        ledger = self.ledger()
        upstream = self.named_upstream()
        if wave_name is not None:
            wave = ledger.wave(wave_name)
            if upstream is not None and wave.upstream != upstream:
                raise LedgerError(f"--wave {wave_name}: {wave.name} is a wave of upstream {wave.upstream}, not {upstream}")
            if range_spec is not None and not range_matches(wave, range_spec):
                resolved = self.resolved_range(range_spec, wave.upstream)
                if not (resolved and range_matches(wave, resolved)):
                    raise LedgerError(f"--wave {wave_name}: {wave.name} scanned {wave.range}, not {range_spec}")
            return wave
        resolved: dict[str, str | None] = {}  # a range with names, as each wave's own upstream clone names it now

        def of_range(wave) -> bool:
            if range_spec is None or range_matches(wave, range_spec):
                return True
            if wave.upstream not in resolved:
                resolved[wave.upstream] = self.resolved_range(range_spec, wave.upstream)
            return bool(resolved[wave.upstream]) and range_matches(wave, resolved[wave.upstream])

        waves = [w for w in ledger.waves() if (upstream is None or w.upstream == upstream) and of_range(w)]
        complete = [w for w in waves if w.status == COMPLETE]
        if upstream is None:
            # A range names its upstream only if one upstream scanned it, finished or not.
            newest = {}
            for wave in waves if range_spec else complete:
                newest[wave.upstream] = wave
            if len(newest) > 1:
                listed = ", ".join(f"{name} ({wave.name}{'' if wave.status == COMPLETE else ', ' + wave.status})"
                                   for name, wave in sorted(newest.items()))
                raise LedgerError(
                    f"the ledger has {'' if range_spec else 'complete '}waves of several upstreams{_of(range_spec)}: "
                    f"{listed}; pick one with --upstream NAME or --wave PORTQ-N"
                )
        if complete:
            return complete[-1]
        if waves:
            unfinished = waves[-1]
            done = len(ledger.recorded_positions(unfinished))
            raise LedgerError(
                f"{unfinished.name} ({unfinished.range}, {unfinished.upstream}) is {unfinished.status} with "
                f"{done} of {unfinished.entry_count} entries and no complete wave{_of(range_spec)} precedes it: "
                f"run portq scan {unfinished.range} to complete it, or pass --wave {unfinished.name} to read it as it is"
            )
        where = f" of upstream {upstream}" if upstream else ""
        if range_spec:
            raise LedgerError(f"no scanned wave of {range_spec}{where} in {ledger.path}: run portq scan {range_spec}")
        raise LedgerError(f"no scanned wave{where} in {ledger.path}: run portq scan A..B first")

    def resolved_range(self, range_spec: str, upstream: str | None = None) -> str | None:
        """``BASE..TIP`` by full SHAs for a range typed with names (``HEAD~5..HEAD``, tags), as the clone of
        ``upstream`` (else the only configured clone that resolves both ends) names them now; None when no
        clone can say. A range of abbreviated SHAs is matched by prefix and needs no clone."""
        from portq.upstream.history import Upstream

        left, sep, right = range_spec.partition("..")
        if not sep or "..." in range_spec or (_is_hex(left) and _is_hex(right)):
            return None
        names = [upstream] if upstream else self.configured_upstreams()
        found: set[str] = set()
        for name in names:
            try:
                path = self.upstream_path(name)
            except ConfigError:
                continue
            if not Path(path).exists():
                continue
            try:
                with Upstream(path, name) as clone:
                    base, tip = clone.resolve(left), clone.resolve(right)
            except HistoryError:
                continue
            if base and tip:
                found.add(f"{base}..{tip}")
        return found.pop() if len(found) == 1 else None

    def newest_complete_wave(self, upstream: str):
        """The newest complete wave of ``upstream``, or None."""
        complete = [w for w in self.ledger().waves() if w.upstream == upstream and w.status == COMPLETE]
        return complete[-1] if complete else None


def range_matches(wave, range_spec: str) -> bool:
    """A wave of ``range_spec``: the same text, or both ends matching its resolved SHAs by prefix."""
    if wave.range_spec == range_spec:
        return True
    left, sep, right = range_spec.partition("..")
    return bool(sep) and _is_hex(left) and _is_hex(right) and wave.base_sha.startswith(left.lower()) \
        and wave.tip_sha.startswith(right.lower())


def _is_hex(text: str) -> bool:
    return 4 <= len(text) <= 40 and all(c in "0123456789abcdefABCDEF" for c in text)


def _of(range_spec: str | None) -> str:
    return f" of {range_spec}" if range_spec else ""


def _resolves(name: str, path: Path, range_spec: str) -> str:
    """What the clone of ``name`` makes of the two ends of ``range_spec``, in a few words."""
    from portq.upstream.history import Upstream

    left, sep, right = range_spec.partition("..")
    if not sep or "..." in range_spec:
        raise HistoryError(f"range '{range_spec}': expected A..B (two revisions separated by '..')")
    try:
        with Upstream(path, name) as upstream:
            found = [end for end in (left, right) if upstream.resolve(end)]
    except HistoryError:
        return f"no clone at {path}" if not path.exists() else f"{path} is not a readable git clone"
    if len(found) == 2:
        return "resolves both ends"
    if not found:
        return "resolves neither end"
    return f"resolves {found[0]} only"
