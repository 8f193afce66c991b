"""``portq-reviews.toml``: the human verdicts a team keeps in its tree, reviewed in pull requests.

The ledger is a cache a CI runner can lose; a human decision must not be.
``portq review`` writes each decision here as well as into the ledger, and
every scan applies the file, so a fresh clone with an empty ledger stands
at the same verdicts. Like a linter's baseline file, it is meant to be read
in diffs: one ``[[review]]`` per upstream commit and row, sorted by upstream,
commit and row, with its fields always in the same order::

    [[review]]
    upstream      = "vllm"
    commit        = "9d1fd517436c85cecb6808730291fc864da1abf5"
    row           = "KERNEL-KV-CACHE"
    verdict       = "NOT_APPLICABLE"
    justification = "not-carried"
    because       = "the fp8 path is out of scope here"
    who           = "alice"
    when          = "2025-03-01T12:00:00+00:00"

``row`` is the entry's primary row (absent for an entry no row owns);
``justification`` is present for NOT_APPLICABLE only. A review whose
commit the upstream clone no longer has, or whose row the matrix no longer
defines, is a problem ``portq matrix`` lists (``review_problems``).

This module reads, checks and writes the file; it does not open the ledger
or git, and decides no verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from portq.core import safe_output, toml_input
from portq.core.errors import ConfigError
from portq.core.model import JUSTIFICATIONS, NOT_APPLICABLE, VERDICTS

FIELDS = ("upstream", "commit", "row", "verdict", "justification", "because", "who", "when")
_SHA = re.compile(r"^[0-9a-f]{40}$")
HEADER = (
    "# Human verdicts on upstream commits, applied by every portq scan (written by portq review).\n"
    "# One [[review]] per upstream commit and row; reviewed in pull requests like any code change.\n"
)


@dataclass(frozen=True)
class Review:
    upstream: str
    commit: str
    row: str | None
    verdict: str
    justification: str | None
    because: str
    who: str
    when: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.upstream, self.commit, self.row or "")


def load(path: Path) -> list[Review]:
    """The reviews of ``path`` (none when it does not exist); a malformed file is a ``ConfigError`` naming the line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the reviews file: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8: save it as UTF-8") from None
    try:
        document = toml_input.loads(text)
    except toml_input.tomllib.TOMLDecodeError as error:
        line = re.search(r"\(at line (\d+)", str(error))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise ConfigError(f"{path}:{line.group(1) if line else '?'}: invalid TOML: {message}") from None
    unknown = sorted(set(document) - {"review"})
    if unknown:
        raise ConfigError(f"{path}: unknown key '{unknown[0]}' (expected [[review]] tables only)")
    items = document.get("review", [])
    if not isinstance(items, list):
        raise ConfigError(f"{path}: 'review' must be [[review]] tables")
    reviews: dict[tuple[str, str, str], Review] = {}
    for number, item in enumerate(items, 1):
        review = _review(path, number, item)
        if review.key in reviews:
            raise ConfigError(f"{path}: review {number} repeats upstream {review.upstream} commit {review.commit[:12]} "
                              f"row {review.row or '(none)'}: expected one review per commit and row")
        reviews[review.key] = review
    return sorted(reviews.values(), key=lambda r: r.key)


def _review(path: Path, number: int, item) -> Review:
    where = f"{path}: review {number}"
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: expected a [[review]] table")
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}' (expected: {', '.join(FIELDS)})")
    for key, value in item.items():
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {key} must be a string")
    for key in ("upstream", "commit", "verdict", "because", "who", "when"):
        if not item.get(key, "").strip():
            raise ConfigError(f"{where}: needs {key} = \"...\"")
    if not _SHA.match(item["commit"]):
        raise ConfigError(f"{where}: commit {item['commit'][:60]!r}: expected a full 40-character SHA")
    if item["verdict"] not in VERDICTS:
        raise ConfigError(f"{where}: verdict {item['verdict'][:40]!r}: expected one of {', '.join(VERDICTS)}")
    justification = item.get("justification")
    if item["verdict"] == NOT_APPLICABLE and justification not in JUSTIFICATIONS:
        raise ConfigError(f"{where}: a NOT_APPLICABLE review needs justification, one of {', '.join(JUSTIFICATIONS)}")
    if item["verdict"] != NOT_APPLICABLE and justification is not None:
        raise ConfigError(f"{where}: justification applies to NOT_APPLICABLE only, not {item['verdict']}")
    return Review(item["upstream"], item["commit"], item.get("row") or None, item["verdict"], justification,
                  item["because"], item["who"], item["when"])


def _string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, controls as \\uXXXX)."""
    return json.dumps(value, ensure_ascii=False)


def dumps(reviews: Iterable[Review]) -> str:
    """The file's text: sorted, one field per line, always in ``FIELDS`` order."""
    blocks = []
    for review in sorted(reviews, key=lambda r: r.key):
        lines = ["[[review]]"]
        for name in FIELDS:
            value = getattr(review, name)
            if value is not None:
                lines.append(f"{name:<13} = {_string(value)}")
        blocks.append("\n".join(lines) + "\n")
    return HEADER + "".join("\n" + block for block in blocks)


def save(path: Path, reviews: Iterable[Review]) -> None:
    """Write the file through a temporary file beside it (a regular file only is replaced)."""
    safe_output.write_text(path, dumps(reviews), what="the reviews file")


def with_review(reviews: Iterable[Review], review: Review) -> list[Review]:
    """``reviews`` with ``review`` replacing any of the same commit and row."""
    return sorted({**{r.key: r for r in reviews}, review.key: review}.values(), key=lambda r: r.key)


def without(reviews: Iterable[Review], key: tuple[str, str, str]) -> list[Review]:
    return [r for r in reviews if r.key != key]


def review_problems(reviews: Iterable[Review], label: str, row_ids: set[str],
                    has_commit: Callable[[str, str], bool | None]) -> list[dict]:
    """A review whose row the matrix no longer defines, or whose commit the upstream clone no longer has.

    ``has_commit(upstream, sha)`` is None when no clone of that upstream can be asked (nothing is said then).
    """
    problems = []
    for number, review in enumerate(reviews, 1):
        subject = f"{review.upstream}@{review.commit[:12]}"
        if review.row is not None and review.row not in row_ids:
            problems.append({"kind": "review-row-missing", "row": review.row, "file": label, "line": None,
                             "subject": subject, "detail": review.row})
        if has_commit(review.upstream, review.commit) is False:
            problems.append({"kind": "review-commit-missing", "row": review.row, "file": label, "line": None,
                             "subject": subject, "detail": review.upstream})
    return problems
