"""Records passed between the stages of a scan: history → hunks → symbols →
verdicts → ledger → reports.

Plain dataclasses with no behaviour beyond small derived properties and no
I/O, so every stage can be tested with hand-built values and the ledger can
store them as JSON (``to_json``/``from_json`` round-trip the verdict records).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from portq.core.evidence import Evidence, evidence_list

# --- the closed vocabularies (DESIGN §5) ----------------------------------

REAL_GAP = "REAL_GAP"
NEEDS_REVIEW = "NEEDS_REVIEW"
INERT = "INERT"
IN_SYNC = "IN_SYNC"
NOT_APPLICABLE = "NOT_APPLICABLE"

VERDICTS = (REAL_GAP, NEEDS_REVIEW, INERT, IN_SYNC, NOT_APPLICABLE)
"""Most severe first: an entry takes the most severe verdict over all its symbols."""

SEVERITY = {verdict: rank for rank, verdict in enumerate(reversed(VERDICTS))}
"""Higher is more severe: NOT_APPLICABLE=0 … REAL_GAP=4."""

FLAGGED = frozenset({REAL_GAP, NEEDS_REVIEW, INERT})
"""Verdicts that ask a maintainer to act or look."""

JUSTIFICATIONS = ("no-row", "not-carried", "not-ported", "non-code", "cosmetic", "net-zero")
"""The only justifications a NOT_APPLICABLE verdict may carry."""

DECIDED_BY = ("provenance", "signature", "launch", "body", "path", "fallback")
"""Which layer of the classifier decided a verdict."""

CHANGE_KINDS = ("added", "removed", "modified")


def most_severe(verdicts) -> str:
    """The most severe verdict of an iterable (NOT_APPLICABLE when empty)."""
    return max(verdicts, key=SEVERITY.__getitem__, default=NOT_APPLICABLE)


# --- upstream history -------------------------------------------------------


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` hunk of a file diff. Line numbers are 1-based."""

    header: str  # the full "@@ -a,b +c,d @@ section" line
    old_start: int
    old_length: int
    new_start: int
    new_length: int
    removed_lines: tuple[int, ...] = ()  # old-side numbers of '-' lines
    added_lines: tuple[int, ...] = ()  # new-side numbers of '+' lines
    removed_text: tuple[str, ...] = ()  # the '-' lines, without the marker
    added_text: tuple[str, ...] = ()  # the '+' lines, without the marker


@dataclass
class FileChange:
    """What one commit did to one file (against its first parent)."""

    status: str  # added | deleted | modified | renamed | copied
    old_path: str | None
    new_path: str | None
    old_blob: str | None = None  # blob SHA on the parent side
    new_blob: str | None = None  # blob SHA on the commit side
    content: str = "text"  # text | binary | submodule | mode-only
    hunks: list[Hunk] = field(default_factory=list)
    similarity: int | None = None  # rename/copy similarity index, percent
    patch: str = ""  # the file's unified diff text (text changes only); hunks are parsed from it

    @property
    def path(self) -> str:
        """The path a reader would name: the new one, or the old one if deleted."""
        return self.new_path or self.old_path or ""

    @property
    def parsed(self) -> bool:
        return self.content == "text"

    @property
    def lines_added(self) -> int:
        return sum(len(h.added_lines) for h in self.hunks)

    @property
    def lines_removed(self) -> int:
        return sum(len(h.removed_lines) for h in self.hunks)


@dataclass
class Commit:
    """One entry of a range: a first-parent commit and its changes."""

    sha: str
    parents: tuple[str, ...]
    title: str
    message: str
    author: str
    authored_at: str  # ISO 8601
    pr: int | None = None  # from a trailing "(#1234)" in the title
    changes: list[FileChange] = field(default_factory=list)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def empty(self) -> bool:
        return not self.changes


@dataclass(frozen=True)
class TouchedSymbol:
    """A definition (or a line range, on fallback) that a commit touched.

    ``old_lines``/``new_lines`` are the definition's extent on each side
    (``None`` where it does not exist on that side). ``name`` is
    ``"<toplevel>"`` for hunk lines outside every definition, and
    ``"<lines>"`` when the file could not be parsed (``fallback`` says why).
    """

    path: str
    name: str
    qualified_name: str
    kind: str  # see portq.language.symbols KIND_* plus "toplevel" and "lines"
    language: str | None
    change: str  # added | removed | modified
    rows: tuple[str, ...] = ()  # claiming rows, primary first
    old_path: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    old_lines: tuple[int, int] | None = None
    new_lines: tuple[int, int] | None = None
    hunk_headers: tuple[str, ...] = ()
    fallback: str | None = None


@dataclass
class EntryChanges:
    """The classifier's input for one entry: the commit and what it touched."""

    position: int  # 1-based entry number in the range
    commit: Commit
    rows: tuple[str, ...] = ()  # every row claiming anything, primary first
    owned_changes: list[FileChange] = field(default_factory=list)
    symbols: list[TouchedSymbol] = field(default_factory=list)
    unowned_paths: tuple[str, ...] = ()


# --- verdicts -----------------------------------------------------------------


@dataclass
class SymbolVerdict:
    """The verdict for one touched upstream symbol."""

    path: str
    symbol: str
    change: str
    verdict: str
    justification: str | None
    decided_by: str
    row: str | None = None
    ports: list[str] = field(default_factory=list)  # in-tree "file:line name"
    evidence: list[Evidence] = field(default_factory=list)
    reason: str = ""  # one sentence: why this verdict and not the next one down
    rules: list[str] = field(default_factory=list)  # ids of the classifier rules that decided it


@dataclass
class Verdict:
    """The verdict for one entry: the most severe over all its symbols."""

    verdict: str
    justification: str | None
    decided_by: str
    reason: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    symbols: list[SymbolVerdict] = field(default_factory=list)
    version: str = ""  # portq version that decided
    rules: list[str] = field(default_factory=list)  # ids of the classifier rules that decided it (a review: none)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, not {self.verdict!r}")
        if self.verdict == NOT_APPLICABLE:
            if self.justification not in JUSTIFICATIONS:
                raise ValueError(
                    "a NOT_APPLICABLE verdict needs a justification from "
                    f"{', '.join(JUSTIFICATIONS)}, not {self.justification!r}"
                )
        if self.decided_by not in DECIDED_BY:
            raise ValueError(f"decided_by must be one of {', '.join(DECIDED_BY)}, not {self.decided_by!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Verdict":
        data = dict(data)
        data["evidence"] = evidence_list(data.get("evidence"))
        data["symbols"] = [
            SymbolVerdict(**{**s, "evidence": evidence_list(s.get("evidence"))})
            for s in data.get("symbols", [])
        ]
        return cls(**data)
