"""Delta: one structural change upstream made, placed against one port.

The rules that compare structure (``portq.classifier.rules``: parameters,
launches, program ids, callees) each give ``Delta`` records; the verdict
table (``portq.classifier.verdicts``) decides from their ``Status`` and
records the id of the rule that placed each, never from prose.

This module is the record only: it imports no rule, reads nothing and
decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Status(str, Enum):
    """Where one delta leaves the port."""

    BEHIND = "behind"  # the port still has the old shape
    SYNC = "sync"  # the port already has the new shape
    UNDECIDED = "undecided"  # the comparison cannot place the port
    NOT_CARRIED = "not-carried"  # the delta lies in a surface the tree declares out of scope


@dataclass
class Delta:
    """One structural change upstream made, placed against one port: the
    verdict table (``portq.classifier.verdicts``) decides from these, never from prose."""

    status: Status
    layer: str  # signature | launch: the decided_by of a verdict this delta decides
    message: str
    evidence: list = field(default_factory=list)  # portq.core.evidence.Evidence records, both sides' locations
    geometry: bool = False  # a grid or block delta: what a launch rewrite turns on, so named first
    rule: str = ""  # the id of the rule (``portq.classifier.rules``) that placed it
    absent: tuple[str, ...] = ()  # a sync by absence: the names upstream removed that the port never had

    def __post_init__(self) -> None:
        self.status = Status(self.status)


def _ruled(items: list[Delta], rule: str) -> list[Delta]:
    """``items``, each without a rule id of its own placed by ``rule``."""
    for item in items:
        item.rule = item.rule or rule
    return items
