"""Typed evidence: the closed vocabulary of facts a verdict rests on.

A verdict is only worth what a reviewer can check, so every fact behind it
is a record: what kind of fact (``Kind``), on which side (upstream before,
upstream after, the in-tree port), where (path, line, end line), the quoted
line, the symbol it concerns, and for callers whether the caller is a test.
Deltas carry both locations (``before``/``after``), derivations name the
values an upstream argument is computed from, parse failures and not-carried
declarations are records of their own. The ledger stores these records as
JSON and reports render them; nothing downstream parses ``message``, which is
a one-line reading aid only.

This module must not decide anything and must not import the rest of portq:
it sits at the start of the data flow so that every stage can build records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any


class Kind(str, Enum):
    """What a record states. Closed: a record of any other kind is rejected."""

    # where the change is
    HUNK = "hunk"  # an upstream hunk header of the touched symbol
    SYMBOL = "symbol"  # another touched symbol of the same entry, with its verdict
    TOPLEVEL = "toplevel"  # a changed line outside every definition
    PATH = "path"  # a changed path no row owns
    NET_ZERO = "net-zero"  # the change and its revert inside the range
    BODY = "body"  # a body-only change on a ported symbol
    COSMETIC = "cosmetic"  # the change is proven a no-op on the token/AST level
    PARSE_FAILURE = "parse-failure"  # a tree with errors in or around the changed lines
    # upstream deltas
    PARAM_ADDED = "param-added"
    PARAM_REMOVED = "param-removed"
    PARAM_DEAD = "param-dead"  # kept in the signature, referenced nowhere
    PARAM_USE_REMOVED = "param-use-removed"
    PARAM_NOT_CARRIED = "param-not-carried"
    DEFAULT_CHANGED = "default-changed"
    OUT_PARAM = "out-param"  # written through an out-parameter, returned by the port
    DERIVATION = "derivation"  # an added argument computed from what the kernel already receives
    LAUNCH_KERNEL = "launch-kernel"
    LAUNCH_GRID = "launch-grid"
    LAUNCH_BLOCK = "launch-block"  # threads per block / num_warps / num_stages, both sides' launch lines
    LAUNCH_ARGUMENT = "launch-argument"  # the launch whose arguments changed, both sides' launch lines
    PROGRAM_ID = "program-id"
    EARLY_EXIT = "early-exit"
    UNRESOLVED = "unresolved"  # an expression whose names could not be resolved (subject: what)
    CALLEE_PATH = "callee-path"  # a path through a helper a ported symbol calls, selected by its argument (subject)
    # the tree
    ANCHOR = "anchor"
    ANCHOR_LOST = "anchor-lost"  # the anchored upstream definition moved away (subject: where to)
    PIN = "pin"
    NOT_CARRIED = "not-carried"  # a declaration that puts a surface out of scope
    COVERAGE_HOLE = "coverage-hole"
    TREE_DEFINITION = "tree-definition"
    TREE_SIGNATURE = "tree-signature"
    TREE_PARAM = "tree-param"
    TREE_USE = "tree-use"
    TREE_LAUNCH = "tree-launch"
    TREE_PATH = "tree-path"  # what the port does for the argument value a callee path is selected by
    CALLER = "caller"


class Side(str, Enum):
    """Which source a location is in."""

    OLD = "upstream-old"
    NEW = "upstream-new"
    TREE = "tree"


@dataclass(frozen=True)
class Location:
    """A place a reader can open: side, path, line (and end line for a range), the quoted line."""

    side: Side
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    quote: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "side", Side(self.side))

    def to_dict(self) -> dict[str, Any]:
        return {"side": self.side.value, "path": self.path, "line": self.line,
                "end_line": self.end_line, "quote": self.quote}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Location":
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class Evidence:
    """One checkable fact behind a verdict.

    ``side``/``path``/``line``/``end_line``/``quote`` cite the place;
    ``subject`` is the name the fact is about (a parameter as written, a
    grid expression, a launch attribute; for a caller, the definition that
    encloses the call);
    ``before``/``after`` are a delta's two locations: the lines that changed
    (for a launch whose grid or block changed only in a local it resolves
    through, that local's lines, named in ``through``, while the record's
    own location is the launch, as context); ``derived_from`` lists
    what a derived value is computed from; ``test`` is set on callers;
    ``records``, on an also-touched symbol, are that symbol's own records
    that cite a place, so a reader of the entry checks its reason there.
    """

    kind: Kind
    message: str = ""
    side: Side | None = None
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    quote: str | None = None
    symbol: str | None = None
    row: str | None = None
    hunk_header: str | None = None
    subject: str | None = None
    test: bool | None = None
    before: Location | None = None
    after: Location | None = None
    derived_from: tuple[str, ...] = ()
    through: tuple[str, ...] = ()
    records: tuple["Evidence", ...] = ()

    def __post_init__(self) -> None:
        # Fields given as the types they are stored as (most records: the classifier builds them so)
        # are kept as they are; anything else is converted, and checked by the conversion.
        if type(self.kind) is not Kind:
            object.__setattr__(self, "kind", Kind(self.kind))
        if self.side is not None and type(self.side) is not Side:
            object.__setattr__(self, "side", Side(self.side))
        if type(self.derived_from) is not tuple:
            object.__setattr__(self, "derived_from", tuple(self.derived_from))
        if type(self.through) is not tuple:
            object.__setattr__(self, "through", tuple(self.through or ()))
        if type(self.records) is not tuple or not all(type(r) is Evidence for r in self.records):
            object.__setattr__(self, "records", tuple(evidence_list(self.records)))

    def with_row(self, row: str | None) -> "Evidence":
        """This record attributed to ``row``: a copy (records are frozen) that
        keeps every other field as it is, already converted and checked."""
        copy = object.__new__(Evidence)
        copy.__dict__.update(self.__dict__, row=row)
        return copy

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Enum):
                value = value.value
            elif isinstance(value, Location):
                value = value.to_dict()
            elif f.name == "records":
                value = [record.to_dict() for record in value]
            elif isinstance(value, tuple):
                value = list(value)
            data[f.name] = value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Evidence":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("before", "after"):
            if isinstance(values.get(key), dict):
                values[key] = Location.from_dict(values[key])
        return cls(**values)

    @property
    def location(self) -> Location | None:
        if self.side is None:
            return None
        return Location(self.side, self.path, self.line, self.end_line, self.quote)

    @property
    def place(self) -> str | None:
        """``path:line`` (``path:line-end``) when the record cites a line, else None."""
        if self.side is None or not self.path or not self.line:
            return None
        return f"{self.path}:{self.line}" + (f"-{self.end_line}" if self.end_line and self.end_line != self.line else "")


def evidence_list(items) -> list[Evidence]:
    """Records from ledger JSON (dicts) or records, in order."""
    return [item if isinstance(item, Evidence) else Evidence.from_dict(item) for item in items or ()]


def located(records) -> list[Evidence]:
    """The records that cite a line, in order, each place once."""
    seen: set[tuple] = set()
    out = []
    for record in evidence_list(records):
        key = (record.side, record.place, record.quote)
        if record.place and key not in seen:
            seen.add(key)
            out.append(record)
    return out


def split_at_places(text: str, records) -> list[str | Evidence]:
    """``text`` cut where it names the place of one of ``records``: prose
    pieces and, at each such place, the record that cites it, so a renderer
    prints the place as a citation with its quote rather than bare."""
    by_place: dict[str, Evidence] = {}
    for record in located(records):
        by_place.setdefault(record.place, record)
    if not by_place or not text:
        return [text] if text else []
    places = "|".join(re.escape(place) for place in sorted(by_place, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w./-])(?:{places})(?![\d-])")
    parts: list[str | Evidence] = []
    end = 0
    for match in pattern.finditer(text):
        if match.start() > end:
            parts.append(text[end:match.start()])
        parts.append(by_place[match.group(0)])
        end = match.end()
    if end < len(text):
        parts.append(text[end:])
    return parts
