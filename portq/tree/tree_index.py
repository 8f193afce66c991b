"""The in-tree index: every anchor, the definition it belongs to, that
definition's signature, and every call site, for the whole tree.

Made once per scan (DESIGN §6) from the tree's bytes, read and hashed at
the start; a file is parsed only when a question needs it (``on_demand``):
the port files for their anchors, and for a question by name (the callers
of a port, the definitions of a name) only the files whose bytes hold that
name. A cold scan of this repository parses 20 of its 165 files. What was
computed is cached under ``cache_dir`` by a content hash of the tree's
source files and of the code that extracts what is indexed
(``INDEX_RULES``: a newer portq or an edited extractor never reads an index
another wrote), so a second scan of an unchanged tree reads one JSON file
instead of parsing again. After an edit, the records of files whose content
is unchanged are taken from the newest cached index and only the edited
ones are parsed; the ``KEPT_INDEXES`` newest indexes are kept. A cache that
is damaged, foreign or of another format is rebuilt, never trusted. The
index keeps the bytes it read, so a scan decides from the tree as it was
when its index was made, even if the tree is edited meanwhile. ``build``
computes every file's record (commands that walk the whole index).

What is indexed where. The matrix says where ports live (each row's
``tree`` paths, relative to the tree root): anchors are read only from files
under those *port roots*, so a tree that is also the tool's own checkout
(``tree = "."``) does not read the anchor examples in portq's docstrings as
ports. Definitions and call sites are read across the whole tree, because a
port's callers live anywhere. Never indexed: tool caches and build output,
``examples/`` (embedded upstream copies), and nested git repositories (an
upstream clone or a ``portq demo --keep`` directory inside the tree), whose
code is not this tree's. With no row naming an existing ``tree`` path the
whole tree is a port root. Queries:

* ``ports_for(upstream, path, name, qualified_name)`` — the in-tree
  definitions that port an upstream symbol (an upstream symbol may have
  several ports; one in-tree definition may port several upstream symbols);
* ``not_carried_for(...)`` — out-of-scope declarations, module-level ones
  included;
* ``ported_paths`` / ``anchored_paths`` — which upstream files any anchor names;
* ``reachability`` — callers of a port (``portq.tree.reachability``).

Anchors come in two forms that every query treats alike: comments in the port
files, and the entries of a sidecar file (``portq.tree.sidecar``, named in
``portq.toml``) for trees whose sources are not edited. The sidecar's bytes
are read with the tree's and count in its content hash.

Anchors match an upstream symbol by upstream name, path and symbol name. When
the upstream file was renamed, the classifier passes the rename chain it saw
in the range (``aliases``): an anchor naming the old path still matches the
symbol at the new path, as long as the symbol keeps its name.

What one file contributes (its anchors, definitions, signatures, call
sites) is read by ``portq.tree.file_records``; this module walks the tree,
keeps the cache and answers the queries. It reads the in-tree files and the
cache; it never touches the upstream repository and decides nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from portq.core.errors import EnvironmentProblem
from portq.language.extraction import signature_of
from portq.language.signatures import Signature
from portq.language.symbols import MAX_PARSE_BYTES, language_for_path, symbol_table
from portq.tree.anchors import NOT_CARRIED, PORTS, Anchor, find_anchors
from portq.tree.file_records import DefinitionRecord, FileRecord, Port, imported_helpers, index_file
from portq.tree.reachability import CallSite, Reachability
from portq.tree.sidecar import SIDECAR_STYLE, Sidecar, parse_sidecar, read_sidecar, resolve_sidecar

INDEX_FORMAT = 12
"""Bump when the cached JSON layout or what goes into it changes."""


def _index_rules() -> str:
    """What a cached index depends on besides the tree: the portq version and
    the code that extracts anchors, definitions, signatures and call sites."""
    from portq import __version__
    from portq.language import expressions, extraction, signatures, signatures_cpp, signatures_python, symbols
    from portq.tree import anchors, file_records, reachability

    digest = hashlib.sha1(__version__.encode())
    for module in (anchors, expressions, reachability, signatures, signatures_cpp, signatures_python, symbols,
                   extraction, file_records):
        try:
            digest.update(Path(module.__file__).read_bytes())
        except OSError:
            digest.update(module.__name__.encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:12]


INDEX_RULES = _index_rules()

SKIPPED_DIRECTORIES = frozenset(
    {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".portq",
     ".mypy_cache", ".pytest_cache", ".tox", "reports", "examples"}
)
"""Never indexed below the tree root: tool caches, build output, and
``examples/``, which holds embedded copies of upstream sources (the demo's
history) that would otherwise read as in-tree ports and callers."""




def _write_cache(cache_file: Path, text: str) -> None:
    """Store the index through a temporary file of its own beside ``cache_file``.

    Caching is an optimisation: an unwritable or full cache folder is not an
    error, and a failed or interrupted write leaves no temporary file. The
    cache folder is made only inside a folder that exists (the ledger's), so
    a command run where no ledger lives writes nothing there.
    """
    try:
        cache_file.parent.mkdir(exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=cache_file.stem + ".", suffix=".tmp", dir=cache_file.parent)
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, cache_file)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if not isinstance(error, OSError):
            raise


def tree_files(root: Path) -> Iterable[Path]:
    """C/C++/CUDA and Python files under ``root``, in a stable order, without
    skipped directories and nested git repositories."""
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories
            if d not in SKIPPED_DIRECTORIES and not d.endswith(".egg-info")
            and not (Path(directory) / d / ".git").exists()
        )
        for name in sorted(files):
            if language_for_path(name) is not None and _regular_file(Path(directory) / name):
                yield Path(directory) / name


def _regular_file(path: Path) -> bool:
    """A FIFO, a device or a socket named like a source file is not read (a FIFO would block the scan)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # a dangling link or a file removed meanwhile: nothing to read


KEPT_INDEXES = 4
"""In-tree indexes kept in a cache folder, newest first: the tree as it is and
as it was a few edits ago (a rescan after reverting an edit finds its index)."""


def _read_cache(path: Path) -> dict | None:
    """A cached index of this format, or None for a damaged, foreign or older one."""
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(payload, dict) or payload.get("format") != INDEX_FORMAT or payload.get("rules") != INDEX_RULES:
        return None
    return payload


def _earlier_records(cache_dir: Path) -> tuple[dict[tuple[str, str, bool], FileRecord], dict[str, str]]:
    """(path, SHA-1, anchors read) -> the record of that file in the newest cached
    index, and that index's SHA-1 of every file: after an edit only the edited
    files (and the ports whose helpers live in them) are indexed again."""
    try:
        cached = _cached_indexes(cache_dir)
    except OSError:
        return {}, {}
    for path in cached:
        payload = _read_cache(path)
        if payload is None or not isinstance(payload.get("digests"), dict):
            continue
        try:
            records = {}
            for data in payload["files"]:
                digest, anchored = payload["digests"][data["path"]]
                records[(data["path"], digest, bool(anchored))] = FileRecord.from_json(data)
            return records, {path: pair[0] for path, pair in payload["digests"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # damaged: try an older one, else index everything
    return {}, {}


def _cached_indexes(cache_dir: Path) -> list[Path]:
    """The cached indexes in ``cache_dir``, newest first (OSError when it cannot be listed)."""
    return sorted(cache_dir.glob("tree-index-*.json"), key=lambda p: p.stat().st_mtime, reverse=True)


def _prune_caches(cache_dir: Path) -> None:
    """Keep the ``KEPT_INDEXES`` newest indexes (a concurrent scan may prune the same ones)."""
    try:
        for path in _cached_indexes(cache_dir)[KEPT_INDEXES:]:
            path.unlink(missing_ok=True)
    except OSError:
        pass  # a cache folder we cannot list or prune only keeps more files


def port_roots_of(matrix) -> list[str]:
    """The ``tree`` paths of every matrix row: where the matrix says ports live."""
    return list(dict.fromkeys(path for row in getattr(matrix, "rows", ()) for path in row.tree))


class PortRoots:
    """Which tree files may hold anchors: those under a row's ``tree`` path
    (a directory prefix, a file, or a glob), or every file when no such path
    exists in the tree."""

    def __init__(self, root: Path | None, paths: Iterable[str] | None) -> None:
        wanted = [p.strip().strip("/") for p in (paths or ()) if p.strip().strip("/") not in ("", ".")]
        if root is not None:
            wanted = [p for p in wanted if _has_glob(p) or (Path(root) / p).exists()]
        self.paths = tuple(wanted)

    @property
    def everywhere(self) -> bool:
        return not self.paths

    def __contains__(self, relative: str) -> bool:
        if self.everywhere:
            return True
        for path in self.paths:
            if relative == path or relative.startswith(path + "/"):
                return True
            if _has_glob(path) and (fnmatch.fnmatch(relative, path) or fnmatch.fnmatch(relative, path + "/*")):
                return True
        return False


def _has_glob(path: str) -> bool:
    return any(char in path for char in "*?[")


@dataclass
class TreeSnapshot:
    """The tree's indexed files as read at one moment, and their content hash."""

    root: Path
    roots: PortRoots
    held: dict[str, tuple[bytes, str]]  # path -> (bytes, SHA-1), in the tree's order
    key: str
    sidecar: Sidecar | None = None

    @property
    def sources(self) -> list[tuple[str, bytes]]:
        """(path, bytes) of every file, in the tree's order."""
        return [(relative, data) for relative, (data, _) in self.held.items()]

    @classmethod
    def take(cls, root: Path, port_roots: Iterable[str] | None, sidecar_path: Path | None = None) -> "TreeSnapshot":
        root = Path(root)
        roots = PortRoots(root, port_roots)
        held: dict[str, tuple[bytes, str]] = {}
        digest = hashlib.sha1(f"portq-tree-index-{INDEX_FORMAT}-{INDEX_RULES}".encode())
        digest.update(repr(roots.paths).encode())
        sidecar = None
        if sidecar_path is not None:
            sidecar, sidecar_bytes = read_sidecar(Path(sidecar_path), root)
            digest.update(b"sidecar\0" + hashlib.sha1(sidecar_bytes).digest())
        for file in tree_files(root):
            try:
                data = file.read_bytes()
            except PermissionError as error:  # skipping it would hide its ports and callers
                raise EnvironmentProblem(
                    f"{file}: cannot read ({error.strerror}): give portq read access to the tree, or pass --tree PATH"
                ) from None
            except OSError:
                continue  # gone since it was listed (an editor's temporary file): not part of the tree
            relative = file.relative_to(root).as_posix()
            file_digest = hashlib.sha1(data)
            digest.update(relative.encode() + b"\0" + file_digest.digest())
            held[relative] = (data, file_digest.hexdigest())
        return cls(root, roots, held, digest.hexdigest(), sidecar)

    def cache_file(self, cache_dir: Path | None) -> Path | None:
        return Path(cache_dir) / f"tree-index-{self.key}.json" if cache_dir else None


def _store(snapshot: TreeSnapshot, cache_dir: Path | None, records: list[FileRecord],
           anchors_read: dict[str, list[Anchor]] | None = None) -> None:
    """Cache ``records`` (those computed so far, in the tree's order) in ``cache_dir`` under the snapshot's key,
    with ``anchors_read``: the anchors of the port files that have no record yet (read for their anchors alone),
    which an index of exactly this snapshot takes instead of parsing those files again."""
    cache_file = snapshot.cache_file(cache_dir)
    if cache_file is not None:
        _write_cache(cache_file, json.dumps({
            "format": INDEX_FORMAT,
            "rules": INDEX_RULES,
            "files": [r.to_json() for r in records],
            "anchors_read": {path: [a.to_json() for a in found] for path, found in (anchors_read or {}).items()},
            "digests": {relative: [snapshot.held[relative][1], relative in snapshot.roots]
                        for relative, _ in snapshot.sources},
        }))
        _prune_caches(cache_file.parent)


class _AnchorsByPath:
    """Anchors by the upstream path they name: mapping asks of every change of
    the range (tens of thousands of questions on a long history)."""

    def __init__(self, anchors: list[Anchor]) -> None:
        self._by_path: dict[str, list[tuple[int, Anchor]]] = {}
        for order, anchor in enumerate(anchors):
            self._by_path.setdefault(anchor.path, []).append((order, anchor))

    def naming(self, upstream: str, paths: Iterable[str], kind: str) -> list[Anchor]:
        """The anchors of ``kind`` that name one of ``paths`` of ``upstream``, in the tree's order."""
        found = [(order, anchor) for path in set(paths) for order, anchor in self._by_path.get(path, ())
                 if anchor.kind == kind and anchor.upstream == upstream]
        return [anchor for _, anchor in sorted(found, key=lambda pair: pair[0])]


_WORD = re.compile(rb"[A-Za-z0-9_]+")


def _needle(name: str) -> bytes | None:
    """The longest identifier run of ``name``: a definition or call site of that name
    is read from the file's own text, so a file without these bytes has none. None
    when the name has no such run (then every file is read)."""
    runs = _WORD.findall(name.encode("utf-8", errors="replace"))
    return max(runs, key=len) if runs else None


class _Records(Mapping):
    """path -> ``FileRecord`` of every indexed file, each computed when first asked for."""

    def __init__(self, index: "TreeIndex") -> None:
        self._index = index

    def __getitem__(self, path: str) -> FileRecord:
        if path not in self._index._order:
            raise KeyError(path)
        return self._index._record(path)

    def __iter__(self):
        return iter(self._index._order)

    def __len__(self) -> int:
        return len(self._index._order)


class _ByName(Mapping):
    """name -> what the tree's files hold of that name (definitions, call sites), in
    the tree's order, read only from the files whose bytes contain the name; every
    file is read only when the whole mapping is walked."""

    def __init__(self, index: "TreeIndex", of_record) -> None:
        self._index, self._of_record = index, of_record
        self._known: dict[str, list] = {}
        self._whole: dict[str, list] | None = None

    def __getitem__(self, name: str) -> list:
        if self._whole is not None:
            return self._whole[name]
        found = self._known.get(name)
        if found is None:
            found = self._known[name] = [item for path in self._index._files_holding(name)
                                         for item in self._of_record(self._index._record(path), name)]
        if not found:
            raise KeyError(name)
        return found

    def _all(self) -> dict[str, list]:
        if self._whole is None:
            whole: dict[str, list] = {}
            for path in self._index._order:
                for name, items in self._of_record(self._index._record(path), None).items():
                    whole.setdefault(name, []).extend(items)
            self._whole = whole
        return self._whole

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _definitions_named(record: FileRecord, name: str | None):
    """A record's definitions (one per file, name and line: the last one read wins, in the
    place of the first) named ``name``, or all of them by name when ``name`` is None."""
    unique = {(d.qualified_name, d.start_line): d for d in record.definitions}
    if name is not None:
        return [d for d in unique.values() if d.name == name]
    by_name: dict[str, list[DefinitionRecord]] = {}
    for definition in unique.values():
        by_name.setdefault(definition.name, []).append(definition)
    return by_name


def _bindings_of(record: FileRecord, name: str | None):
    """The names a record binds to ``name`` (``from m import name as alias``, ``alias = name``),
    or all of them by original name when ``name`` is None."""
    if name is not None:
        return [alias for alias, original in record.bindings if original == name]
    by_name: dict[str, list[str]] = {}
    for alias, original in record.bindings:
        by_name.setdefault(original, []).append(alias)
    return by_name


def _calls_named(record: FileRecord, name: str | None):
    """A record's call sites of ``name``, or all of them by callee when ``name`` is None."""
    if name is not None:
        return [site for site in record.calls if site.callee == name]
    by_name: dict[str, list[CallSite]] = {}
    for site in record.calls:
        by_name.setdefault(site.callee, []).append(site)
    return by_name


class TreeIndex:
    """The whole in-tree source, indexed for the classifier.

    A file's record is computed when a query first needs it (a caller query
    reads only the files whose bytes hold the name asked about), from the
    bytes read when the index was made; ``save`` caches what was computed.
    """

    def __init__(self, files: list[FileRecord], root: Path | None = None,
                 sources: dict[str, tuple[bytes, str]] | None = None, key: str | None = None,
                 roots: PortRoots | None = None, cache_dir: Path | None = None,
                 snapshot: TreeSnapshot | None = None, sidecar: Sidecar | None = None,
                 anchors_read: dict[str, list[Anchor]] | None = None) -> None:
        self.root = root
        self.key = key  # the content hash of the indexed tree (None for in-memory sources)
        # the files as read when the index was built, and their SHA-1s
        self._sources = {path: data for path, (data, _) in (sources or {}).items()}
        self.file_digests = {path: digest for path, (_, digest) in (sources or {}).items()}
        self._records_by_path = {record.path: record for record in files}
        self._order = dict.fromkeys(list(self._sources) or list(self._records_by_path))
        self._roots, self._cache_dir, self._snapshot = roots, cache_dir, snapshot
        self.sidecar = sidecar if sidecar is not None else (snapshot.sidecar if snapshot is not None else None)
        self._sidecar_definitions: dict[tuple[str, str, int], DefinitionRecord] = {}
        self._tables: dict[str, object] = {}  # parses read for anchors, until the file's record is made
        # the anchors of port files that have no record, read from their parses (or, for this snapshot, cached)
        self._anchors_read: dict[str, list[Anchor]] = dict(anchors_read or {})
        self._anchors_computed = False  # anchors read here that the cache does not hold yet
        self._earlier: tuple[dict, dict] | None = None
        self._computed = False  # records made here that the cache does not hold yet
        self.files = _Records(self)
        self._anchors: list[Anchor] | None = None
        self._anchors_by_path: _AnchorsByPath | None = None
        self._port_key_set: set | None = None
        self._keyed_definitions: dict[str, dict] = {}
        self.definitions_by_name = _ByName(self, _definitions_named)
        self.reachability = Reachability(_ByName(self, _calls_named),
                                         lambda file, qualified: (file, qualified) in self._port_keys,
                                         _ByName(self, _bindings_of))

    # -- records, on demand

    def _anchored(self, path: str) -> bool:
        return self._roots is None or path in self._roots

    def _record(self, path: str) -> FileRecord:
        record = self._records_by_path.get(path)
        if record is None:
            record = self._records_by_path[path] = self._make_record(path)
            self._computed = True
        return record

    def _reusable(self, path: str) -> FileRecord | None:
        """The newest cached index's record of the file, when the file and the helpers its
        signatures follow (an import, an included header) are unchanged since."""
        if self._earlier is None:
            self._earlier = _earlier_records(Path(self._cache_dir)) if self._cache_dir else ({}, {})
        earlier, earlier_digests = self._earlier
        record = earlier.get((path, self.file_digests.get(path), self._anchored(path)))
        if record is not None and any(self.file_digests.get(d) != earlier_digests.get(d) for d in record.depends):
            return None
        return record

    def _make_record(self, path: str) -> FileRecord:
        """The file's record: reused (``_reusable``), else read from the bytes held since the start."""
        record = self._reusable(path)
        if record is not None:
            return record
        data = self._sources[path]
        if len(data) > MAX_PARSE_BYTES:
            return FileRecord(path, fallback="too large")
        table, found = self._tables.pop(path, (None, None))
        return index_file(data, path, anchors=self._anchored(path), sources=self._sources, table=table, found=found)

    def _files_holding(self, name: str) -> list[str]:
        """The files, in the tree's order, that may define or call ``name``: those whose bytes
        hold it (the in-memory index of ``from_sources`` reads its records)."""
        needle = _needle(name)
        if needle is None or not self._sources:
            return list(self._order)
        return [path for path in self._order
                if path in self._records_by_path or needle in self._sources[path]]

    @property
    def anchors(self) -> list[Anchor]:
        """Every anchor, in the tree's order (only port files hold them): read from the port
        files' parses, without their signatures and call sites, which wait for a query."""
        if self._anchors is None:
            anchors: list[Anchor] = []
            for path in self._order:
                if not self._anchored(path):
                    continue
                found = self._anchors_read.get(path) if path not in self._records_by_path else None
                if found is None and (path in self._records_by_path or self._reusable(path) is not None
                                      or len(self._sources[path]) > MAX_PARSE_BYTES):
                    found = self._record(path).anchors
                elif found is None:
                    table = symbol_table(self._sources[path], path)
                    found = self._anchors_read[path] = find_anchors(table, path) if table.tree is not None else []
                    self._tables[path] = (table, found)
                    self._anchors_computed = True
                anchors.extend(found)
            if self.sidecar is not None:
                anchors.extend(resolve_sidecar(self.sidecar, self.definitions_in_file, self._source_line))
            self._anchors = anchors
        return self._anchors

    @property
    def _port_keys(self) -> set:
        if self._port_key_set is None:
            self._port_key_set = {(a.file, a.definition) for a in self.anchors if a.kind == PORTS and a.definition}
        return self._port_key_set

    def definitions_in_file(self, path: str) -> list[DefinitionRecord] | None:
        """The definitions of one indexed tree file, or None when the index has no such file."""
        if path not in self._order:
            return None
        return self._record(path).definitions

    def _source_line(self, path: str, line: int) -> str:
        source = self.source(path) or b""
        lines = source.decode("utf-8", errors="replace").splitlines()
        return lines[line - 1].strip() if 1 <= line <= len(lines) else ""

    def complete(self) -> "TreeIndex":
        """Every file's record computed (commands that walk the whole index)."""
        for path in self._order:
            self._record(path)
        return self

    def save(self) -> None:
        """Cache the records computed so far, when some were made since the cache was read."""
        if (self._computed or self._anchors_computed) and self._snapshot is not None:
            _store(self._snapshot, self._cache_dir,
                   [self._records_by_path[p] for p in self._order if p in self._records_by_path],
                   {p: found for p, found in self._anchors_read.items() if p not in self._records_by_path})
            self._computed = self._anchors_computed = False

    # -- building

    @classmethod
    def build(cls, root: Path, cache_dir: Path | None = None, port_roots: Iterable[str] | None = None,
              sidecar: Path | None = None) -> "TreeIndex":
        """Index the tree at ``root``, every file, reusing ``cache_dir`` when its content
        hash matches. Anchors are read only under ``port_roots`` (the matrix
        rows' ``tree`` paths, ``port_roots_of(matrix)``); None reads them everywhere.
        ``sidecar``: the sidecar anchors file, when the configuration names one."""
        index = cls.on_demand(root, cache_dir, port_roots, sidecar).complete()
        index.save()
        return index

    @classmethod
    def on_demand(cls, root: Path, cache_dir: Path | None = None,
                  port_roots: Iterable[str] | None = None, sidecar: Path | None = None) -> "TreeIndex":
        """``build``, with each file's record computed when a query first needs it.

        The tree is read and hashed here, before this returns: the index is
        of the tree as it is now, however it is edited later. What the cache
        holds for this snapshot is taken; ``save`` stores what was added.
        """
        snapshot = TreeSnapshot.take(root, port_roots, sidecar)
        records, anchors_read = cls._cached(snapshot, cache_dir) or ([], {})
        return cls._of(snapshot, records, cache_dir, anchors_read)

    @classmethod
    def _cached(cls, snapshot: "TreeSnapshot", cache_dir: Path | None,
                ) -> tuple[list[FileRecord], dict[str, list[Anchor]]] | None:
        """The records stored for exactly this snapshot, and the anchors of its files read for anchors alone;
        or None."""
        cache_file = snapshot.cache_file(cache_dir)
        if cache_file is None or not cache_file.is_file():
            return None
        payload = _read_cache(cache_file)
        if payload is None:
            return None
        try:
            records = [FileRecord.from_json(f) for f in payload["files"]]
            anchors_read = {path: [Anchor.from_json(a) for a in found]
                            for path, found in payload.get("anchors_read", {}).items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # a damaged or foreign cache is rebuilt, never trusted
        if any(r.path not in snapshot.held for r in records) or any(p not in snapshot.held for p in anchors_read):
            return None
        return records, anchors_read

    @classmethod
    def _of(cls, snapshot: "TreeSnapshot", records: list[FileRecord], cache_dir: Path | None = None,
            anchors_read: dict[str, list[Anchor]] | None = None) -> "TreeIndex":
        return cls(records, snapshot.root, snapshot.held, snapshot.key, snapshot.roots, cache_dir, snapshot,
                   anchors_read=anchors_read)

    @classmethod
    def from_sources(cls, sources: dict[str, str | bytes], sidecar: str | None = None) -> "TreeIndex":
        """An index of in-memory files (tests and tools); ``sidecar``: a sidecar file's text."""
        encoded = {path: data.encode() if isinstance(data, str) else data for path, data in sources.items()}
        parsed = parse_sidecar(sidecar, "portq-anchors.toml") if sidecar is not None else None
        return cls([index_file(data, path, sources=encoded) for path, data in encoded.items()],
                   sources={path: (data, "") for path, data in encoded.items()}, sidecar=parsed)


    # -- queries

    def definition_of(self, anchor: Anchor) -> DefinitionRecord | None:
        """The in-tree definition an anchor belongs to (a prototype's
        definition by name when the anchor sits above a C++ declaration)."""
        if anchor.definition:
            keyed = self._keyed_definitions.get(anchor.file)
            if keyed is None:
                record = self.files.get(anchor.file)
                keyed = {} if record is None else {(d.qualified_name, d.start_line): d for d in record.definitions}
                self._keyed_definitions[anchor.file] = keyed
            found = keyed.get((anchor.definition, anchor.definition_line))
            if found is not None and anchor.style == SIDECAR_STYLE and found.signature is None:
                return self._sidecar_port(found)
            return found
        if anchor.declared_name:
            candidates = [d for d in self.definitions_by_name.get(anchor.declared_name, [])]
            return candidates[0] if candidates else None
        return None

    def _sidecar_port(self, definition: DefinitionRecord) -> DefinitionRecord:
        """A sidecar-anchored definition with the signature a comment anchor would have given it
        (following helpers its file imports), kept apart from the cached records, which hold
        only what the file itself says."""
        key = (definition.file, definition.qualified_name, definition.start_line)
        known = self._sidecar_definitions.get(key)
        if known is None:
            signature = None
            source = self.source(definition.file)
            if source is not None:
                table = symbol_table(source, definition.file)
                match = next((d for d in table.definitions if d.qualified_name == definition.qualified_name
                              and d.start_line == definition.start_line), None)
                if match is not None:
                    imported = imported_helpers(table, definition.file, self._sources)
                    signature = signature_of(match, source, definition.file, imported)
            known = self._sidecar_definitions[key] = dataclasses.replace(definition, signature=signature)
        return known

    def tree_sources(self) -> dict[str, bytes] | None:
        """Path -> bytes of every indexed file, as read when the index was made; None when the index holds
        none (built from records alone), so a question about the whole tree cannot be answered from it."""
        return dict(self._sources) if self._sources else None

    def source(self, path: str) -> bytes | None:
        """An in-tree file's bytes as indexed (even if edited since), else as on disk now; None when
        neither has it."""
        source = self._sources.get(path)
        if source is None and self.root is not None:
            try:
                source = (self.root / path).read_bytes()
            except OSError:
                return None
        return source

    def signature_of(self, definition: DefinitionRecord) -> Signature | None:
        """The signature of any in-tree definition (computed on demand for
        unanchored ones, e.g. a prototype's definition)."""
        if definition.signature is None and self.root is not None:
            source = self.source(definition.file)
            if source is None:
                return None
            table = symbol_table(source, definition.file)
            match = next((d for d in table.definitions if d.qualified_name == definition.qualified_name
                          and d.start_line == definition.start_line), None)
            if match is not None:
                definition.signature = signature_of(match, source, definition.file)
        return definition.signature

    def _matching(self, kind: str, upstream: str, paths: Iterable[str], name: str, qualified_name: str):
        wanted = set(paths)
        for anchor in self.anchors:
            if anchor.kind == kind and anchor.upstream == upstream and anchor.path in wanted \
                    and anchor.matches_name(name, qualified_name):
                yield anchor

    def ports_for(self, upstream: str, paths: Iterable[str], name: str, qualified_name: str) -> list[Port]:
        """In-tree ports of the upstream definition ``qualified_name`` at any of ``paths``."""
        ports: list[Port] = []
        seen = set()
        for anchor in self._matching(PORTS, upstream, paths, name, qualified_name):
            definition = self.definition_of(anchor)
            if definition is None:
                continue
            key = (definition.file, definition.qualified_name, definition.start_line)
            if key in seen:
                continue
            seen.add(key)
            if definition.signature is None:
                self.signature_of(definition)
            ports.append(Port(anchor, definition))
        return ports

    def not_carried_for(self, upstream: str, paths: Iterable[str], name: str, qualified_name: str) -> list[Anchor]:
        """Not-carried declarations for the symbol (whole-symbol and ``[PARAM]`` ones)."""
        return list(self._matching(NOT_CARRIED, upstream, paths, name, qualified_name))

    def not_carried_enclosing(self, upstream: str, paths: Iterable[str], qualified_name: str) -> list[Anchor]:
        """Whole-definition not-carried declarations of a definition that holds
        ``qualified_name`` (a class declared not-carried holds its methods)."""
        wanted = set(paths)
        return [a for a in self.anchors if a.kind == NOT_CARRIED and a.upstream == upstream and a.path in wanted
                and not a.param and a.encloses(qualified_name)]

    def anchors_for_path(self, upstream: str, paths: Iterable[str], kind: str = PORTS) -> list[Anchor]:
        if self._anchors_by_path is None:
            self._anchors_by_path = _AnchorsByPath(self.anchors)
        return self._anchors_by_path.naming(upstream, paths, kind)

    def upstream_symbols_ported_by(self, definition_name: str) -> set[str]:
        """Bare upstream names that in-tree definitions called ``definition_name`` port."""
        names: set[str] = set()
        for anchor in self.anchors:
            if anchor.kind != PORTS:
                continue
            target = self.definition_of(anchor)
            if target is not None and target.name == definition_name:
                names.add(anchor.bare_symbol)
        return names

    def ported_definitions(self) -> list[DefinitionRecord]:
        return [d for a in self.anchors if a.kind == PORTS for d in [self.definition_of(a)] if d is not None]
