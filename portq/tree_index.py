"""The in-tree index: every anchor, the definition it belongs to, that
definition's signature, and every call site, for the whole tree.

Built once per scan (DESIGN §6) and cached under ``cache_dir`` by a content
hash of the tree's source files and of the code that extracts what is
indexed (``INDEX_RULES``: a newer portq or an edited extractor never reads
an index another wrote), so a second scan of an unchanged tree reads one
JSON file instead of parsing the tree again. After an edit, the files whose
content is unchanged are taken from the newest cached index and only the
edited ones are parsed; the ``KEPT_INDEXES`` newest indexes are kept. A
cache that is damaged, foreign or of another format is rebuilt, never
trusted. The index keeps the bytes it read, so a scan decides from the tree
as it was when its index was built, even if the tree is edited meanwhile.

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
* ``reachability`` — callers of a port (``portq.reachability``).

Anchors match an upstream symbol by upstream name, path and symbol name. When
the upstream file was renamed, the classifier passes the rename chain it saw
in the range (``aliases``): an anchor naming the old path still matches the
symbol at the new path, as long as the symbol keeps its name.

This module reads the in-tree files and the cache; it never touches the
upstream repository and decides nothing.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable

from portq.anchors import NOT_CARRIED, PORTS, Anchor, find_anchors
from portq.errors import EnvironmentProblem
from portq.reachability import CallSite, Reachability, call_sites
from portq.signatures import Signature, signature_of, single_return
from portq.symbols import MAX_PARSE_BYTES, language_for_path, symbol_table

INDEX_FORMAT = 10
"""Bump when the cached JSON layout or what goes into it changes."""


def _index_rules() -> str:
    """What a cached index depends on besides the tree: the portq version and
    the code that extracts anchors, definitions, signatures and call sites."""
    from portq import (__version__, anchors, expressions, reachability, signatures, signatures_cpp,
                       signatures_python, symbols)

    digest = hashlib.sha1(__version__.encode())
    for module in (anchors, expressions, reachability, signatures, signatures_cpp, signatures_python, symbols):
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


@dataclass
class DefinitionRecord:
    """An in-tree definition: where it is and, when anchored, its signature."""

    file: str
    name: str
    qualified_name: str
    kind: str
    language: str
    start_line: int
    end_line: int
    signature: Signature | None = None

    @property
    def cite(self) -> str:
        return f"{self.file}:{self.start_line}"

    def to_json(self) -> dict:
        return {
            "file": self.file, "name": self.name, "qualified_name": self.qualified_name,
            "kind": self.kind, "language": self.language, "start_line": self.start_line,
            "end_line": self.end_line,
            "signature": self.signature.to_json() if self.signature else None,
        }

    @classmethod
    def from_json(cls, data: dict) -> "DefinitionRecord":
        data = dict(data)
        data["signature"] = Signature.from_json(data["signature"]) if data.get("signature") else None
        return cls(**data)


@dataclass
class Port:
    """One in-tree definition porting one upstream symbol, through one anchor."""

    anchor: Anchor
    definition: DefinitionRecord


@dataclass
class FileRecord:
    """What one in-tree file contributes to the index."""

    path: str
    anchors: list[Anchor] = field(default_factory=list)
    definitions: list[DefinitionRecord] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    fallback: str | None = None
    depends: list[str] = field(default_factory=list)  # files whose helpers its signatures may follow

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "anchors": [a.to_json() for a in self.anchors],
            "definitions": [d.to_json() for d in self.definitions],
            "calls": [dict(vars(c)) for c in self.calls],  # flat fields: what asdict gives, many times faster
            "fallback": self.fallback,
            "depends": self.depends,
        }

    @classmethod
    def from_json(cls, data: dict) -> "FileRecord":
        return cls(
            path=data["path"],
            anchors=[Anchor.from_json(a) for a in data["anchors"]],
            definitions=[DefinitionRecord.from_json(d) for d in data["definitions"]],
            calls=[CallSite(**c) for c in data["calls"]],
            fallback=data.get("fallback"),
            depends=list(data.get("depends", ())),
        )


class _Included:
    """The headers a C/C++ file includes (``#include "launch.cuh"``, resolved
    next to the file, else by path suffix in the tree): their single-return
    functions, for grids computed there, and their roots, for launch macros."""

    def __init__(self, tables, files) -> None:
        self.tables = tables
        self.files = files
        self.roots = [t.tree.root_node for t in tables if t.tree is not None]

    def __call__(self, name: str):
        for table in self.tables:
            for definition in table.definitions:
                if definition.name == name and definition.node is not None:
                    node = definition.node
                    if node.type == "template_declaration":
                        node = next((c for c in node.named_children if c.type == "function_definition"), None)
                    found = single_return(node)
                    if found is not None:
                        return found
        return None


def _included_headers(table, path: str, sources: dict[str, bytes]) -> _Included | None:
    directory = PurePosixPath(path).parent
    tables, files = [], []
    for node in table.tree.root_node.named_children:
        if node.type != "preproc_include" or node.child_by_field_name("path") is None:
            continue
        target = node.child_by_field_name("path").text.decode(errors="replace").strip('"<>')
        beside = str(directory / target) if str(directory) != "." else target
        found = beside if beside in sources else next(
            (p for p in sources if p == target or p.endswith("/" + target)), None)
        if found is not None and found != path:
            tables.append(symbol_table(sources[found], found))
            files.append(found)
    return _Included(tables, files) if tables else None


def _imported_helpers(table, path: str, sources: dict[str, bytes] | None):
    """name -> ``single_return`` of a function the file imports from another
    module of its package (``from ._page_task import page_task_grid``), or,
    for C/C++, of a header it includes, so a port's grid computed there is
    compared like one written inline."""
    if not sources or table.tree is None:
        return None
    if language_for_path(path) == "cpp":
        return _included_headers(table, path, sources)
    if not path.endswith(".py"):
        return None
    imported: dict[str, tuple[str, str]] = {}  # local name -> (module file, function name)
    package = PurePosixPath(path).parent
    for statement in table.tree.root_node.named_children:
        if statement.type != "import_from_statement":
            continue
        module = statement.child_by_field_name("module_name")
        text = module.text.decode() if module is not None else ""
        dots = len(text) - len(text.lstrip("."))
        parts = [p for p in text.lstrip(".").split(".") if p]
        if dots:
            base = package
            for _ in range(dots - 1):
                base = base.parent
            candidates = [str(base.joinpath(*parts)) + ".py"] if parts else []
        else:
            suffix = "/".join(parts[1:]) + ".py" if len(parts) > 1 else ""
            candidates = [p for p in sources if suffix and (p == suffix or p.endswith("/" + suffix))]
        for name_node in statement.children_by_field_name("name"):
            original = name_node.child_by_field_name("name") if name_node.type == "aliased_import" else name_node
            alias = name_node.child_by_field_name("alias") if name_node.type == "aliased_import" else name_node
            for candidate in candidates[:1]:
                imported[alias.text.decode()] = (candidate, original.text.decode())
    parsed: dict[str, object] = {}

    def lookup(name: str):
        if name not in imported:
            return None
        file, function = imported[name]
        if file not in sources:
            return None
        if file not in parsed:
            parsed[file] = symbol_table(sources[file], file)
        other = parsed[file]
        found = next((d for d in other.definitions if d.qualified_name == function), None)
        return single_return(found.node) if found is not None else None

    lookup.files = sorted({file for file, _ in imported.values() if file in sources})
    return lookup


def index_file(source: bytes, path: str, anchors: bool = True, sources: dict[str, bytes] | None = None) -> FileRecord:
    """Anchors (when ``anchors``), definitions (with signatures where
    anchored) and call sites of one file; ``sources`` (the tree's files) lets
    a signature follow helpers imported from the same package."""
    table = symbol_table(source, path)
    record = FileRecord(path=path, fallback=table.fallback)
    if table.tree is None:
        return record
    record.anchors = find_anchors(table, path) if anchors else []
    anchored = {(a.definition, a.definition_line) for a in record.anchors if a.definition}
    imported = _imported_helpers(table, path, sources) if anchored else None
    record.depends = list(getattr(imported, "files", ()))
    for definition in table.definitions:
        signature = None
        if (definition.qualified_name, definition.start_line) in anchored:
            signature = signature_of(definition, table.source, path, imported)
        record.definitions.append(
            DefinitionRecord(path, definition.name, definition.qualified_name, definition.kind,
                             definition.language, definition.start_line, definition.end_line, signature)
        )
    record.calls = call_sites(table, path)
    return record


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
            if language_for_path(name) is not None:
                yield Path(directory) / name


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

    @property
    def sources(self) -> list[tuple[str, bytes]]:
        """(path, bytes) of every file, in the tree's order."""
        return [(relative, data) for relative, (data, _) in self.held.items()]

    @classmethod
    def take(cls, root: Path, port_roots: Iterable[str] | None) -> "TreeSnapshot":
        root = Path(root)
        roots = PortRoots(root, port_roots)
        held: dict[str, tuple[bytes, str]] = {}
        digest = hashlib.sha1(f"portq-tree-index-{INDEX_FORMAT}-{INDEX_RULES}".encode())
        digest.update(repr(roots.paths).encode())
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
        return cls(root, roots, held, digest.hexdigest())

    def cache_file(self, cache_dir: Path | None) -> Path | None:
        return Path(cache_dir) / f"tree-index-{self.key}.json" if cache_dir else None


def _index_records(snapshot: TreeSnapshot, cache_dir: Path | None) -> list[FileRecord]:
    """The records of every file, in the tree's order; unchanged files are
    taken from the newest cached index."""
    earlier, earlier_digests = _earlier_records(Path(cache_dir)) if cache_dir else ({}, {})
    by_path = dict(snapshot.sources)
    held = snapshot.held
    records = []
    for relative, data in snapshot.sources:
        anchored = relative in snapshot.roots
        record = earlier.get((relative, held[relative][1], anchored))
        if record is not None and any(held.get(d, (None, None))[1] != earlier_digests.get(d)
                                      for d in record.depends):
            record = None  # a helper its signatures follow (an import, an included header) changed
        if record is None:
            record = (index_file(data, relative, anchors=anchored, sources=by_path) if len(data) <= MAX_PARSE_BYTES
                      else FileRecord(relative, fallback="too large"))
        records.append(record)
    return records


def _store(snapshot: TreeSnapshot, cache_dir: Path | None, records: list[FileRecord]) -> None:
    """Cache ``records`` in ``cache_dir`` under the snapshot's key."""
    cache_file = snapshot.cache_file(cache_dir)
    if cache_file is not None:
        _write_cache(cache_file, json.dumps({
            "format": INDEX_FORMAT,
            "rules": INDEX_RULES,
            "files": [r.to_json() for r in records],
            "digests": {relative: [snapshot.held[relative][1], relative in snapshot.roots]
                        for relative, _ in snapshot.sources},
        }))
        _prune_caches(cache_file.parent)


def _index_in_child(snapshot: TreeSnapshot, cache_dir: Path | None, connection) -> None:
    """The forked indexer: the records of every file, or None when indexing
    failed (the caller then indexes them itself)."""
    with contextlib.suppress(OSError):
        os.nice(10)  # yield to git and the mapping, which the scan waits on; this has until mapping ends
    try:
        records = _index_records(snapshot, cache_dir)
    except BaseException:
        records = None
    try:
        connection.send(records)
    finally:
        connection.close()
    if records is not None:  # cached here, while the scan goes on with the records it was sent
        with contextlib.suppress(BaseException):  # stopped (the scan was interrupted): no cache, quietly
            _store(snapshot, cache_dir, records)


def _port_anchors(snapshot: TreeSnapshot) -> list[Anchor]:
    """The anchors of the files under the port roots, in the tree's order:
    what mapping asks of the tree, without the signatures and call sites that
    only the classifier reads."""
    anchors: list[Anchor] = []
    for relative, data in snapshot.sources:
        if relative in snapshot.roots and len(data) <= MAX_PARSE_BYTES:
            table = symbol_table(data, relative)
            if table.tree is not None:
                anchors.extend(find_anchors(table, relative))
    return anchors


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


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


CACHE_WRITE_WAIT_S = 30.0
"""How long a finished scan waits for its indexer to write the index cache."""


class PendingIndex:
    """An in-tree index being built (``TreeIndex.build_in_background``) by a
    forked process. Mapping asks only which upstream paths an anchor names:
    that is answered here from the anchors of the port files alone, read on
    the first question while git and the indexer work."""

    def __init__(self, cls, snapshot: TreeSnapshot, cache_dir: Path | None, index: "TreeIndex | None") -> None:
        self._cls, self._snapshot, self._cache_dir, self._index = cls, snapshot, cache_dir, index
        self._process = self._connection = None
        self._anchors: _AnchorsByPath | None = None if index is None else _AnchorsByPath(index.anchors)
        if index is None:
            import multiprocessing  # only a cold scan forks: a rescan does not pay for importing it

            context = multiprocessing.get_context("fork")
            self._connection, writer = context.Pipe(duplex=False)
            self._process = context.Process(target=_index_in_child, args=(snapshot, cache_dir, writer), daemon=True)
            self._process.start()
            writer.close()

    def anchors_for_path(self, upstream: str, paths: Iterable[str], kind: str = PORTS) -> list[Anchor]:
        """``TreeIndex.anchors_for_path``, answered from the port files' anchors."""
        if self._anchors is None:
            self._anchors = _AnchorsByPath(_port_anchors(self._snapshot))
        return self._anchors.naming(upstream, paths, kind)

    def result(self) -> "TreeIndex":
        """The index. The indexer caches it after sending it; ``close`` waits for that."""
        if self._index is None:
            try:
                records = self._connection.recv()
            except (EOFError, OSError):
                records = None  # the indexer died: index here
            self._connection.close()
            self._connection = None
            if records is None:
                self.close()
                records = _index_records(self._snapshot, self._cache_dir)
                _store(self._snapshot, self._cache_dir, records)
            self._index = self._cls._of(self._snapshot, records)
        return self._index

    def close(self) -> None:
        """Wait for an indexer that sent its index to finish caching it; stop
        one whose index is no longer wanted (an interrupted scan)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._process is not None:
            if self._index is None and self._process.is_alive():
                self._process.terminate()
            self._process.join(timeout=CACHE_WRITE_WAIT_S)
            if self._process.is_alive():  # a stuck cache write: the cache is only an optimisation
                self._process.terminate()
                self._process.join()
            self._process = None


class TreeIndex:
    """The whole in-tree source, indexed for the classifier."""

    def __init__(self, files: list[FileRecord], root: Path | None = None,
                 sources: dict[str, tuple[bytes, str]] | None = None, key: str | None = None) -> None:
        self.root = root
        self.key = key  # the content hash of the indexed tree (None for in-memory sources)
        # the files as read when the index was built, and their SHA-1s
        self._sources = {path: data for path, (data, _) in (sources or {}).items()}
        self.file_digests = {path: digest for path, (_, digest) in (sources or {}).items()}
        self.files = {record.path: record for record in files}
        self.anchors: list[Anchor] = [a for record in files for a in record.anchors]
        self._anchors_by_path: _AnchorsByPath | None = None
        self._definitions = {
            (d.file, d.qualified_name, d.start_line): d for record in files for d in record.definitions
        }
        self.definitions_by_name: dict[str, list[DefinitionRecord]] = {}
        for definition in self._definitions.values():
            self.definitions_by_name.setdefault(definition.name, []).append(definition)
        sites: dict[str, list[CallSite]] = {}
        for record in files:
            for site in record.calls:
                sites.setdefault(site.callee, []).append(site)
        self._port_keys = {(a.file, a.definition) for a in self.anchors if a.kind == PORTS and a.definition}
        self.reachability = Reachability(sites, lambda file, qualified: (file, qualified) in self._port_keys)

    # -- building

    @classmethod
    def build(cls, root: Path, cache_dir: Path | None = None, port_roots: Iterable[str] | None = None) -> "TreeIndex":
        """Index the tree at ``root``, reusing ``cache_dir`` when its content
        hash matches. Anchors are read only under ``port_roots`` (the matrix
        rows' ``tree`` paths, ``port_roots_of(matrix)``); None reads them everywhere."""
        snapshot = TreeSnapshot.take(root, port_roots)
        index = cls._cached(snapshot, cache_dir)
        if index is None:
            records = _index_records(snapshot, cache_dir)
            _store(snapshot, cache_dir, records)
            index = cls._of(snapshot, records)
        return index

    @classmethod
    def build_in_background(cls, root: Path, cache_dir: Path | None = None,
                            port_roots: Iterable[str] | None = None) -> "PendingIndex":
        """``build``, with the parsing done by a forked process while the caller
        goes on (a cold scan maps the upstream patches meanwhile).

        The tree is read and hashed here, before this returns: the index is
        of the tree as it is now, however it is edited before ``result()``.
        A cached index, or a platform without ``fork``, is built right away.
        """
        snapshot = TreeSnapshot.take(root, port_roots)
        index = cls._cached(snapshot, cache_dir)
        if index is None and "fork" not in _start_methods():
            records = _index_records(snapshot, cache_dir)
            _store(snapshot, cache_dir, records)
            index = cls._of(snapshot, records)
        return PendingIndex(cls, snapshot, cache_dir, index)

    @classmethod
    def _cached(cls, snapshot: "TreeSnapshot", cache_dir: Path | None) -> "TreeIndex | None":
        """The index stored for exactly this snapshot, or None."""
        cache_file = snapshot.cache_file(cache_dir)
        if cache_file is None or not cache_file.is_file():
            return None
        payload = _read_cache(cache_file)
        if payload is None:
            return None
        try:
            return cls._of(snapshot, [FileRecord.from_json(f) for f in payload["files"]])
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # a damaged or foreign cache is rebuilt, never trusted

    @classmethod
    def _of(cls, snapshot: "TreeSnapshot", records: list[FileRecord]) -> "TreeIndex":
        return cls(records, snapshot.root, snapshot.held, snapshot.key)

    @classmethod
    def from_sources(cls, sources: dict[str, str | bytes]) -> "TreeIndex":
        """An index of in-memory files (tests and tools)."""
        encoded = {path: data.encode() if isinstance(data, str) else data for path, data in sources.items()}
        return cls([index_file(data, path, sources=encoded) for path, data in encoded.items()])

    # -- queries

    def definition_of(self, anchor: Anchor) -> DefinitionRecord | None:
        """The in-tree definition an anchor belongs to (a prototype's
        definition by name when the anchor sits above a C++ declaration)."""
        if anchor.definition:
            return self._definitions.get((anchor.file, anchor.definition, anchor.definition_line))
        if anchor.declared_name:
            candidates = [d for d in self.definitions_by_name.get(anchor.declared_name, [])]
            return candidates[0] if candidates else None
        return None

    def signature_of(self, definition: DefinitionRecord) -> Signature | None:
        """The signature of any in-tree definition (computed on demand for
        unanchored ones, e.g. a prototype's definition)."""
        if definition.signature is None and self.root is not None:
            source = self._sources.get(definition.file)  # the tree as indexed, even if edited since
            if source is None:
                try:
                    source = (self.root / definition.file).read_bytes()
                except OSError:
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
