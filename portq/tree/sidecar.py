"""Sidecar anchors: the ``portq: ports`` / ``not-carried`` anchors kept in a TOML file
beside a tree whose sources should not be edited (vendored third-party code).

The file is named in ``portq.toml`` (``anchors = "portq-anchors.toml"``) and says
what a comment anchor says, entry by entry::

    [[anchor]]
    tree  = "engine/third_party/norms/rms_norm.py::rms_norm_forward"
    ports = "kernlib:src/kernlib/ops/rms_norm.py::rms_norm_forward"
    at    = "1a2b3c4d5e"          # the upstream commit the port reflects, when known

    [[not-carried]]
    ports = "kernlib:src/kernlib/ops/rms_norm.py::rms_norm_backward"
    why   = "forward only"
    tree  = "engine/third_party/norms/rms_norm.py::rms_norm_forward"   # optional

``tree`` is ``FILE::QUALIFIED_NAME`` (relative to the tree root); ``ports`` is the
``UPSTREAM:PATH::SYMBOL[PARAM]`` reference a comment anchor writes. Each entry
becomes the same ``Anchor`` record a comment gives, with ``style = "sidecar"``,
attached to the definition it names and cited at that definition's first line,
so the mapping, the classifier, reachability and reports cannot tell the two
forms apart. An entry whose ``tree`` names no definition keeps no definition
(``Anchor.definition`` is None) and is cited at its line in the sidecar file;
``portq matrix`` reports it (``sidecar-unresolved``) instead of ignoring it.

This module parses and writes the sidecar file and resolves its entries against
definitions it is handed. It does not walk the tree (``portq.tree.tree_index``
does) and decides nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from portq.core.errors import ConfigError
from portq.tree.anchors import NOT_CARRIED, PORTS, Anchor, parse_reference

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

SIDECAR_STYLE = "sidecar"
_SECTIONS = {"anchor": PORTS, "not-carried": NOT_CARRIED}
_KEYS = {PORTS: ("tree", "ports", "at"), NOT_CARRIED: ("ports", "why", "tree")}
_PIN = re.compile(r"^[0-9a-fA-F]{4,40}$")
_HEADER = re.compile(r"^\s*\[\[\s*(anchor|not-carried)\s*\]\]")


@dataclass(frozen=True)
class SidecarEntry:
    """One ``[[anchor]]`` or ``[[not-carried]]`` table of a sidecar file."""

    kind: str  # ports | not-carried
    upstream: str
    path: str
    symbol: str
    line: int  # of the entry's header in the sidecar file
    tree_file: str | None = None
    tree_definition: str | None = None  # qualified name in tree_file
    param: str | None = None
    pin: str | None = None
    reason: str | None = None

    @property
    def reference(self) -> str:
        text = f"{self.upstream}:{self.path}::{self.symbol}"
        return text + (f"[{self.param}]" if self.param else "")

    @property
    def tree(self) -> str | None:
        return f"{self.tree_file}::{self.tree_definition}" if self.tree_file else None


@dataclass(frozen=True)
class Sidecar:
    """A parsed sidecar file: its entries and how reports cite it (``label``)."""

    label: str  # the file as cited: relative to the tree root when inside it
    entries: tuple[SidecarEntry, ...]


def split_tree_reference(text: str, where: str) -> tuple[str, str]:
    """``FILE::QUALIFIED_NAME`` → ``(file, qualified name)``, or a ConfigError."""
    file, sep, name = text.partition("::")
    file = file.strip()
    if file.startswith("./"):
        file = file[2:]
    if not sep or not file or not name.strip() or file.startswith("/") or ".." in Path(file).parts:
        raise ConfigError(f"{where}: tree = {text!r}: expected FILE::NAME with FILE relative to the tree root")
    return file, name.strip()


def parse_sidecar(text: str, label: str) -> Sidecar:
    """The entries of a sidecar file's text; any malformed entry is a ConfigError naming its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{label}: invalid TOML: {error}") from None
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise ConfigError(f"{label}: unknown table '{unknown[0]}' (expected [[anchor]] or [[not-carried]])")
    header_lines: dict[str, list[int]] = {section: [] for section in _SECTIONS}
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _HEADER.match(raw)
        if match:
            header_lines[match.group(1)].append(number)
    entries: list[SidecarEntry] = []
    for section, kind in _SECTIONS.items():
        tables = data.get(section, [])
        if not isinstance(tables, list):
            raise ConfigError(f"{label}: '{section}' must be an array of tables ([[{section}]])")
        for position, table in enumerate(tables):
            lines = header_lines[section]
            line = lines[position] if position < len(lines) else 0
            entries.append(_entry(table, kind, section, f"{label}:{line}", line))
    entries.sort(key=lambda entry: entry.line)
    return Sidecar(label, tuple(entries))


def _entry(table: object, kind: str, section: str, where: str, line: int) -> SidecarEntry:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [[{section}]] must be a table")
    unknown = sorted(set(table) - set(_KEYS[kind]))
    if unknown:
        raise ConfigError(f"{where}: [[{section}]] has unknown key '{unknown[0]}' (expected: {', '.join(_KEYS[kind])})")
    for key, value in table.items():
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: [[{section}]] {key} must be a non-empty string, not {value!r}")
    if "ports" not in table:
        raise ConfigError(f"{where}: [[{section}]] needs ports = \"UPSTREAM:PATH::SYMBOL\"")
    reference = parse_reference(table["ports"])
    if reference is None:
        raise ConfigError(f"{where}: ports = {table['ports']!r}: expected UPSTREAM:PATH::SYMBOL")
    upstream, path, symbol, param = reference
    if kind == PORTS and param:
        raise ConfigError(f"{where}: ports = {table['ports']!r}: a [PARAM] belongs in a [[not-carried]] entry")
    if kind == PORTS and "tree" not in table:
        raise ConfigError(f"{where}: [[anchor]] needs tree = \"FILE::NAME\" (the in-tree definition that ports it)")
    pin = table.get("at")
    if pin is not None and not _PIN.match(pin.strip()):
        raise ConfigError(f"{where}: at = {pin!r}: expected a commit SHA (4 to 40 hex digits)")
    tree_file = tree_definition = None
    if "tree" in table:
        tree_file, tree_definition = split_tree_reference(table["tree"], where)
    return SidecarEntry(kind, upstream, path, symbol, line, tree_file, tree_definition, param,
                        pin.strip() if pin else None, (table.get("why") or "").strip() or None)


def read_sidecar(path: Path, tree_root: Path | None = None) -> tuple[Sidecar, bytes]:
    """Parse the sidecar file at ``path`` (and return its bytes, which key the tree's index)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"anchors file {path} does not exist: write it, or remove 'anchors' from portq.toml") from None
    except OSError as error:
        raise ConfigError(f"anchors file {path}: cannot read: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"anchors file {path}: not UTF-8: save it as UTF-8") from None
    label = str(path)
    if tree_root is not None:
        try:
            label = Path(path).resolve().relative_to(Path(tree_root).resolve()).as_posix()
        except ValueError:
            label = Path(path).name
    return parse_sidecar(text, label), data


def resolve_sidecar(sidecar: Sidecar, definitions_of: Callable[[str], Iterable | None],
                    source_line: Callable[[str, int], str]) -> list[Anchor]:
    """The entries as ``Anchor`` records. ``definitions_of(file)`` lists a tree file's
    definitions (None when the tree has no such file); ``source_line(file, n)`` quotes a line."""
    anchors: list[Anchor] = []
    for entry in sidecar.entries:
        definition = None
        if entry.tree_file is not None:
            found = definitions_of(entry.tree_file)
            if found is not None:
                named = [d for d in found if d.qualified_name == entry.tree_definition]
                definition = min(named, key=lambda d: d.start_line) if named else None
        if definition is not None:
            file, line, quote = entry.tree_file, definition.start_line, source_line(entry.tree_file, definition.start_line)
        else:
            file, line, quote = sidecar.label, entry.line, f"[[{'anchor' if entry.kind == PORTS else 'not-carried'}]]"
        anchors.append(Anchor(
            kind=entry.kind, upstream=entry.upstream, path=entry.path, symbol=entry.symbol,
            file=file, line=line, quote=quote, style=SIDECAR_STYLE, param=entry.param, pin=entry.pin,
            reason=entry.reason,
            definition=definition.qualified_name if definition is not None else None,
            definition_line=definition.start_line if definition is not None else None,
        ))
    return anchors


def unresolved_entries(sidecar: Sidecar, definitions_of: Callable[[str], Iterable | None]) -> list[tuple[SidecarEntry, str]]:
    """The entries whose ``tree`` names a file or definition the tree lacks, with what is missing."""
    problems: list[tuple[SidecarEntry, str]] = []
    for entry in sidecar.entries:
        if entry.tree_file is None:
            continue
        found = definitions_of(entry.tree_file)
        if found is None:
            problems.append((entry, f"no file {entry.tree_file} in the tree"))
        elif not any(d.qualified_name == entry.tree_definition for d in found):
            problems.append((entry, f"no definition {entry.tree_definition} in {entry.tree_file}"))
    return problems


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_sidecar(entries: Iterable[SidecarEntry], header: str = "") -> str:
    """A sidecar file holding ``entries`` (ports first, in the order given), ``header`` as comments on top."""
    lines = [f"# {text}".rstrip() for text in header.splitlines()]
    for entry in entries:
        if lines:
            lines.append("")
        if entry.kind == PORTS:
            lines.append("[[anchor]]")
            lines.append(f"tree  = {_quoted(entry.tree or '')}")
            lines.append(f"ports = {_quoted(entry.reference)}")
            if entry.pin:
                lines.append(f"at    = {_quoted(entry.pin)}")
        else:
            lines.append("[[not-carried]]")
            lines.append(f"ports = {_quoted(entry.reference)}")
            lines.append(f"why   = {_quoted(entry.reason or '')}")
            if entry.tree:
                lines.append(f"tree  = {_quoted(entry.tree)}")
    return "\n".join(lines) + "\n"
