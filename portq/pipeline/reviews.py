"""The reviews file and the ledger kept in step: what ``portq review`` writes and every scan applies.

``apply_reviews`` records, for each review of the file that the ledger does
not already stand at, a human review on the entry of the same upstream
commit (when the entry's rows include the review's row), with the file's
reason, reviewer and time. Applying twice records nothing the second time,
so a fresh clone with an empty ledger reaches every standing verdict after
its first scan, and a warm ledger pays nothing. ``file_review`` is the
reviews file's side of ``portq review``.

It reads the reviews file and writes the ledger's review events; it decides
no verdict and prints nothing.
"""

from __future__ import annotations

from pathlib import Path

from portq.tree import reviews_file


def _standing_records(ledger, upstream: str) -> list:
    """Every entry of the upstream's complete waves once, as the newest wave that lists it records it."""
    newest: dict[int, tuple[object, object]] = {}
    for wave in ledger.waves():
        if wave.upstream == upstream and wave.status == "complete":
            for record in ledger.wave_entries(wave):
                newest[record.entry_id] = (wave, record)
    return list(newest.values())


def _applies(review: reviews_file.Review, record) -> bool:
    return review.commit == record.sha and (review.row is None and not record.rows or review.row in record.rows)


def _stands(review: reviews_file.Review, event) -> bool:
    return (event is not None and event.source == "review"
            and (event.verdict, event.justification, event.why, event.who) ==
            (review.verdict, review.justification, review.because, review.who))


def apply_reviews(ledger, path: Path | None, upstream: str) -> int:
    """Record the file's reviews of ``upstream`` that the ledger does not stand at; how many were recorded."""
    if path is None:
        return 0
    reviews = [r for r in reviews_file.load(path) if r.upstream == upstream]
    if not reviews:
        return 0
    applied = 0
    for wave, record in _standing_records(ledger, upstream):
        for review in reviews:
            if _applies(review, record) and not _stands(review, ledger.current(record.entry_id).event):
                ledger.record_review(record.entry_id, verdict=review.verdict, justification=review.justification,
                                     why=review.because, who=review.who, wave_id=wave.id, when=review.when)
                applied += 1
                break
    return applied


def file_review(path: Path | None, upstream: str, record, event) -> None:
    """Write the entry's standing human review into the reviews file (or take it out when none stands)."""
    if path is None:
        return
    row = record.rows[0] if record.rows else None
    reviews = reviews_file.without(reviews_file.load(path), (upstream, record.sha, row or ""))
    if event is not None and event.source == "review" and not event.undoes:
        reviews = reviews_file.with_review(reviews, reviews_file.Review(
            upstream, record.sha, row, event.verdict, event.justification, event.why or "", event.who or "unknown",
            event.created_at))
    reviews_file.save(path, reviews)


def problems(config, matrix, upstreams: list[str] | None = None) -> list[dict]:
    """The reviews file's problems (``reviews_file.review_problems``): rows the matrix lacks, commits the clones
    lack; ``upstreams`` limits the commits asked about to those upstreams."""
    from portq.core.config import relative_label
    from portq.core.errors import HistoryError
    from portq.upstream.history import Upstream

    if config.reviews_path is None:
        return []
    reviews = reviews_file.load(config.reviews_path)
    clones: dict[str, object] = {}

    def has_commit(upstream: str, sha: str) -> bool | None:
        if upstreams is not None and upstream not in upstreams:
            return None
        path = config.upstreams.get(upstream)
        if path is None or not Path(path).exists():
            return None
        try:
            if upstream not in clones:
                clones[upstream] = Upstream(path, upstream)
            return clones[upstream].resolve(sha) == sha
        except HistoryError:
            return None

    try:
        return reviews_file.review_problems(reviews, relative_label(config.reviews_path, config.root),
                                            {row.id for row in matrix.rows}, has_commit)
    finally:
        for clone in clones.values():
            clone.close()
