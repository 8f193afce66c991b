"""What one in-tree file contributes to the index: its record, read from one parse.

``index_file`` reads one file's anchors (for files under a port root), its
definitions (with the signature of each anchored one, following a helper the
file imports from its own package, or a header it includes, so a grid
computed there compares like one written inline) and its call sites and name
bindings (``portq.tree.reachability``). ``FileRecord`` and
``DefinitionRecord`` round-trip through the JSON of the cached index
(``portq.tree.tree_index``, which also counts this module's bytes in the
cache's ``INDEX_RULES``).

It reads only the bytes it is handed: it must not walk the tree, read or
write the cache, or touch the upstream repository, and it decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from portq.language.extraction import signature_of, single_return
from portq.language.signatures import Signature
from portq.language.symbols import language_for_path, symbol_table
from portq.tree.anchors import Anchor, find_anchors
from portq.tree.reachability import CallSite, call_sites, name_bindings


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
    bindings: list[tuple[str, str]] = field(default_factory=list)  # (alias, original) names the file binds

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "anchors": [a.to_json() for a in self.anchors],
            "definitions": [d.to_json() for d in self.definitions],
            "calls": [dict(vars(c)) for c in self.calls],  # flat fields: what asdict gives, many times faster
            "fallback": self.fallback,
            "depends": self.depends,
            "bindings": [list(pair) for pair in self.bindings],
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
            bindings=[(alias, original) for alias, original in data.get("bindings", ())],
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


def imported_helpers(table, path: str, sources: dict[str, bytes] | None):
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


def index_file(source: bytes, path: str, anchors: bool = True, sources: dict[str, bytes] | None = None,
               table=None, found: list[Anchor] | None = None) -> FileRecord:
    """Anchors (when ``anchors``), definitions (with signatures where
    anchored) and call sites of one file; ``sources`` (the tree's files) lets
    a signature follow helpers imported from the same package. ``table`` and
    ``found`` are the file's parse and anchors when they were read already."""
    table = table if table is not None else symbol_table(source, path)
    record = FileRecord(path=path, fallback=table.fallback)
    if table.tree is None:
        return record
    record.anchors = (found if found is not None else find_anchors(table, path)) if anchors else []
    anchored = {(a.definition, a.definition_line) for a in record.anchors if a.definition}
    imported = imported_helpers(table, path, sources) if anchored else None
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
    record.bindings = name_bindings(table)
    return record
