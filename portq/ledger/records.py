"""What the ledger gives back: waves, verdict events, an entry's current verdict, decisions and reports.

Frozen records built from rows by ``portq.ledger.store``; an event's
evidence and full verdict are decoded from their JSON only when asked for.
This module must not query SQLite or decide anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from portq.core.errors import LedgerError
from portq.core.model import VERDICTS, Evidence, Verdict


def stored_json(text: str, what: str) -> Any:
    """JSON the ledger stored; damage (a text that no longer parses) is a ``LedgerError``, not a crash."""
    try:
        return json.loads(text)
    except (ValueError, TypeError) as error:
        raise LedgerError(f"the ledger is damaged: {what} is not readable JSON ({error}); restore it from a backup "
                          "(or move it aside and scan again)") from None


REVIEW_DECIDED_BY = "review"
"""``decided_by`` of human events (the classifier layers are in model.DECIDED_BY)."""


@dataclass(frozen=True)
class Wave:
    id: int
    range_spec: str
    upstream: str
    base_sha: str
    tip_sha: str
    tree: str
    entry_count: int
    portq_version: str
    matrix_fingerprint: str
    tree_fingerprint: str
    status: str
    started_at: str
    finished_at: str | None
    reuses_wave: int | None = None  # the complete wave whose other decisions this one reuses
    redecided: str | None = None  # JSON list of the positions a reusing wave decides itself

    @property
    def name(self) -> str:
        return f"PORTQ-{self.id}"

    @property
    def range(self) -> str:
        """``BASE..TIP`` by full SHAs: what every output shows and suggests (a ledger written before
        ranges were recorded by SHAs may hold the text as typed in ``range_spec``)."""
        return f"{self.base_sha}..{self.tip_sha}"

    @property
    def short_range(self) -> str:
        """``BASE12..TIP12``: the range by abbreviated SHAs, as report folders are named."""
        return f"{self.base_sha[:12]}..{self.tip_sha[:12]}"


@dataclass(frozen=True)
class Event:
    """One verdict event. ``undone`` is filled in by ``history``."""

    id: int
    entry_id: int
    wave_id: int | None
    source: str
    verdict: str
    justification: str | None
    decided_by: str
    reason: str
    who: str | None
    why: str | None
    evidence_json: str = field(repr=False)
    detail_json: str | None = field(repr=False)
    undoes: int | None
    version: str
    created_at: str
    rules_json: str | None = field(default=None, repr=False)
    undone: bool = False
    reused_from: int | None = None  # set when a reusing wave presents an earlier wave's scan event as its own

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise LedgerError(f"the ledger is damaged: event {self.id} records the verdict {self.verdict!r}, not one "
                              f"of {', '.join(VERDICTS)}; restore the ledger from a backup (or move it aside and scan again)")

    @cached_property
    def evidence(self) -> list[dict[str, Any]]:
        """The event's evidence items (decoded when first asked for); a scan
        event keeps them once, inside its full verdict."""
        if not self.evidence_json:
            return list((self.detail or {}).get("evidence", []))
        return stored_json(self.evidence_json, "an event's evidence")

    @property
    def rules(self) -> list[str]:
        """The ids of the classifier rules that decided a scan event (none for a review, or one recorded before
        rules were stored)."""
        return stored_json(self.rules_json, "an event's rule ids") if self.rules_json else []

    @cached_property
    def detail(self) -> dict[str, Any] | None:
        """The full ``model.Verdict`` of a scan event, as JSON data (decoded when first asked for)."""
        return stored_json(self.detail_json, "an event's verdict") if self.detail_json else None

    @property
    def wave(self) -> str | None:
        return f"PORTQ-{self.wave_id}" if self.wave_id else None

    @property
    def is_undo(self) -> bool:
        return self.undoes is not None

    def reused_by(self, wave_id: int) -> "Event":
        """This scan event as the reusing wave ``wave_id`` presents it (``reused_from`` naming where it was
        recorded): ``dataclasses.replace`` without running the checks again, for thousands of entries."""
        copy = object.__new__(Event)
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(wave_id=wave_id, reused_from=self.wave_id)
        return copy

    def to_verdict(self) -> Verdict:
        """The event as a ``model.Verdict`` (full detail for scan events)."""
        if self.detail:
            return Verdict.from_json(self.detail)
        decided_by = self.decided_by if self.decided_by != REVIEW_DECIDED_BY else "provenance"
        return Verdict(
            self.verdict,
            self.justification,
            decided_by,
            reason=self.why or self.reason,
            evidence=[Evidence.from_dict(e) for e in self.evidence],
            version=self.version,
        )


@dataclass(frozen=True)
class Current:
    """What stands for an entry now, and a disagreeing later scan if any."""

    event: Event | None
    proposal: Event | None = None

    @property
    def source(self) -> str | None:
        return self.event.source if self.event else None


@dataclass(frozen=True)
class EntryRecord:
    """An entry as one wave saw it, with its standing verdict."""

    entry_id: int
    wave_id: int
    position: int
    upstream: str
    tree: str
    sha: str
    title: str
    pr: int | None
    rows: list[str]
    symbols: list[dict[str, Any]]
    scan: Event | None  # the scan event that decided this entry in this wave (an earlier wave's when reused)
    current: Current = field(default_factory=lambda: Current(None))
    source_wave: int | None = None  # the wave whose decision this is (``wave_id`` unless reused)


@dataclass(frozen=True)
class Decision:
    """What a rescan compares of an earlier decision: the commit, its rows and
    file changes, the key it was decided under, and its justification."""

    sha: str
    rows: tuple[str, ...]
    changes: tuple[tuple[str, str], ...] | None  # None: recorded before schema 2, never reused
    key: str | None
    justification: str | None
    wave_id: int


@dataclass(frozen=True)
class Report:
    fingerprint: str
    path: str
    entry_id: int | None
    wave_id: int | None
    data: dict[str, Any] | None
    created_at: str


# --- the ledger ---------------------------------------------------------------
