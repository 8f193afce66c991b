"""The seam between the scan pipeline and the classifier.

``portq.scan`` builds a ``ClassifierContext`` once per scan and calls
``build_classifier(context)``; the classifier it returns turns the entries of a
range into verdicts. Range-level facts (a commit and its revert inside the same
range are ``net-zero``) need every entry, so ``classify_range`` sees the whole
list; the scan still writes verdicts to the ledger entry by entry.

This module must not touch git or the ledger itself: everything it needs comes
through the context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from portq import __version__
from portq.model import NEEDS_REVIEW, NOT_APPLICABLE, EntryChanges, Evidence, Verdict


@dataclass
class ClassifierContext:
    """What a classifier may consult, built once per scan."""

    upstream: str  # the upstream's name in the matrix, e.g. "vllm"
    matrix: Any  # portq.matrix.Matrix
    tree_root: Path
    read_blob: Callable[[str], bytes]  # blob SHA -> bytes (git cat-file --batch)
    is_ancestor: Callable[[str, str], bool | None]  # (a, b): a is an ancestor of b; None if unknown
    symbol_tables: Any  # portq.symbols.SymbolTableCache
    cache_dir: Path | None = None  # where the in-tree index may cache by content hash
    options: dict[str, Any] = field(default_factory=dict)


class ProvisionalClassifier:
    """The rule of the scan foundation, before structural classification:
    an entry no row claims is NOT_APPLICABLE/no-row, anything else NEEDS_REVIEW."""

    def __init__(self, context: ClassifierContext) -> None:
        self.context = context

    def classify_range(self, entries: list[EntryChanges]) -> Iterator[tuple[EntryChanges, Verdict]]:
        for entry in entries:
            yield entry, self.classify(entry)

    def classify(self, entry: EntryChanges) -> Verdict:
        if not entry.rows:
            return Verdict(
                NOT_APPLICABLE,
                "no-row",
                "path",
                reason="no matrix row owns any path or symbol this commit touches",
                version=__version__,
            )
        return Verdict(
            NEEDS_REVIEW,
            None,
            "fallback",
            reason="rows are touched; structural classification is not enabled",
            evidence=[
                Evidence(kind="symbol", message=f"{s.change} {s.name}", path=s.path, symbol=s.name)
                for s in entry.symbols
            ],
            version=__version__,
        )


def build_classifier(context: ClassifierContext):
    """The classifier a scan uses."""
    return ProvisionalClassifier(context)
