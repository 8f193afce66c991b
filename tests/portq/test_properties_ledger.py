"""The ledger under interleaved scans, reviews, undos, torn batches and kills keeps its invariants.

A hypothesis state machine drives one ledger file the way concurrent users
and failures do: scans of two overlapping ranges record batches, a batch
fails half-way (its transaction rolls back), the process "dies" (the ledger
is dropped without finishing its wave and opened again, which resumes the
wave), people review and undo. After every step, read through a connection
of its own:

- the file passes ``PRAGMA integrity_check``;
- every recorded position of a wave is one of its entries, with the commit
  of that position, and exactly one scan verdict event; no scan event lacks
  its wave entry; a complete wave has all its entries;
- at most one unfinished wave per range (an abandoned one is resumed, never
  duplicated);
- an entry's current verdict is its latest standing review, else its latest
  scan: the model kept beside the ledger agrees.

Derandomized and bounded like ``test_properties.py``.
"""
from __future__ import annotations

import sqlite3

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from portq.core.errors import LedgerError
from portq.core.model import NOT_APPLICABLE, VERDICTS, Verdict
from portq.ledger.store import open_ledger
from tests.portq.test_properties import PROPERTIES, _EXPLORE

RANGES = {
    "A..B": ("a" * 40, "b" * 40, [f"{n:040x}" for n in (1, 2, 3, 4)]),
    "C..D": ("c" * 40, "d" * 40, [f"{n:040x}" for n in (3, 4, 5, 6, 7)]),  # shares two commits with A..B
}
verdict_names = st.sampled_from(VERDICTS)


def scan_verdict(name: str) -> Verdict:
    justification = "no-row" if name == NOT_APPLICABLE else None
    return Verdict(name, justification, "path" if name == NOT_APPLICABLE else "fallback", reason="generated")


class LedgerUnderLoad(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        import tempfile
        from pathlib import Path

        self.folder = tempfile.TemporaryDirectory(prefix="portq-ledger-properties-")
        self.path = Path(self.folder.name) / "ledger.sqlite"
        self.ledger = open_ledger(self.path)
        self.scans: dict[str, str] = {}  # sha → the verdict of its latest scan event
        self.reviews: dict[str, list[str]] = {}  # sha → standing reviews, oldest first

    def teardown(self) -> None:
        self.ledger.close()
        self.folder.cleanup()

    def _wave(self, spec: str):
        base, tip, shas = RANGES[spec]
        wave, _ = self.ledger.begin_wave(range_spec=spec, upstream="up", base_sha=base, tip_sha=tip, tree=".",
                                         entry_count=len(shas), matrix_fingerprint="m", tree_fingerprint="t")
        return wave, shas

    def _entries(self, shas, positions, verdicts):
        return [dict(position=p, sha=shas[p - 1], title=f"commit {p} (#{p})", pr=p, rows=["ROW"], symbols=[],
                     verdict=scan_verdict(v)) for p, v in zip(positions, verdicts)]

    @rule(spec=st.sampled_from(sorted(RANGES)), picks=st.lists(st.integers(1, 5), min_size=1, max_size=5, unique=True),
          verdicts=st.lists(verdict_names, min_size=5, max_size=5), finish=st.sampled_from(["no", "interrupted", "try"]))
    def scan_a_batch(self, spec, picks, verdicts, finish):
        wave, shas = self._wave(spec)
        done = self.ledger.recorded_positions(wave)
        positions = [p for p in picks if p <= len(shas) and p not in done]
        entries = self._entries(shas, positions, verdicts)
        self.ledger.record_scan_entries(wave, entries)
        for entry in entries:
            self.scans[entry["sha"]] = entry["verdict"].verdict
        if finish == "interrupted":
            self.ledger.finish_wave(wave, "interrupted")
        elif finish == "try" and len(self.ledger.recorded_positions(wave)) == len(shas):
            self.ledger.finish_wave(wave, "complete")

    @rule(spec=st.sampled_from(sorted(RANGES)), verdicts=st.lists(verdict_names, min_size=5, max_size=5))
    def a_batch_fails_half_way(self, spec, verdicts):
        wave, shas = self._wave(spec)
        done = self.ledger.recorded_positions(wave)
        positions = [p for p in range(1, len(shas) + 1) if p not in done]
        entries = self._entries(shas, positions, verdicts) + [dict(position=99, sha="f" * 40, title="t", pr=None,
                                                                   rows=[], symbols=[], verdict=None)]
        with pytest.raises(AttributeError):  # the broken last entry fails inside the transaction
            self.ledger.record_scan_entries(wave, entries)

    @rule()
    def the_process_dies(self):
        self.ledger.close()  # its wave stays as it was; the next scan resumes it
        self.ledger = open_ledger(self.path)

    @precondition(lambda self: self.scans)
    @rule(data=st.data(), verdict=verdict_names)
    def a_person_reviews(self, data, verdict):
        sha = data.draw(st.sampled_from(sorted(self.scans)))
        justification = "not-carried" if verdict == NOT_APPLICABLE else None
        self.ledger.record_review(self._entry_id(sha), verdict=verdict, justification=justification,
                                  why="read it", who="tester")
        self.reviews.setdefault(sha, []).append(verdict)

    @precondition(lambda self: self.scans)
    @rule(data=st.data())
    def a_person_undoes(self, data):
        sha = data.draw(st.sampled_from(sorted(self.scans)))
        if self.reviews.get(sha):
            self.ledger.undo_review(self._entry_id(sha), who="tester")
            self.reviews[sha].pop()
        else:
            with pytest.raises(LedgerError, match="no review to undo"):
                self.ledger.undo_review(self._entry_id(sha), who="tester")

    def _entry_id(self, sha: str) -> int:
        return self.ledger.db.execute("SELECT id FROM entries WHERE sha = ?", (sha,)).fetchone()[0]

    # --- invariants, read through a connection of their own ------------------------------

    def _read(self, query, *arguments):
        db = sqlite3.connect(self.path)
        try:
            return db.execute(query, arguments).fetchall()
        finally:
            db.close()

    @invariant()
    def the_file_is_intact(self):
        assert self._read("PRAGMA integrity_check") == [("ok",)]

    @invariant()
    def waves_hold_whole_entries_of_their_own_range(self):
        for wave_id, spec, count, status in self._read("SELECT id, range_spec, entry_count, status FROM waves"):
            shas = RANGES[spec][2]
            rows = self._read(
                "SELECT w.position, e.sha, (SELECT COUNT(*) FROM verdict_events v WHERE v.wave_id = w.wave_id "
                "AND v.entry_id = w.entry_id AND v.source = 'scan') FROM wave_entries w JOIN entries e "
                "ON e.id = w.entry_id WHERE w.wave_id = ?", wave_id)
            assert all(1 <= position <= count and sha == shas[position - 1] and events == 1
                       for position, sha, events in rows), rows
            assert status != "complete" or len(rows) == count
        orphans = self._read("SELECT COUNT(*) FROM verdict_events v WHERE v.source = 'scan' AND NOT EXISTS "
                             "(SELECT 1 FROM wave_entries w WHERE w.wave_id = v.wave_id AND w.entry_id = v.entry_id)")
        assert orphans == [(0,)]

    @invariant()
    def an_abandoned_wave_is_resumed_never_duplicated(self):
        unfinished = self._read("SELECT range_spec, COUNT(*) FROM waves WHERE status != 'complete' GROUP BY range_spec")
        assert all(count == 1 for _, count in unfinished), unfinished

    @invariant()
    def the_current_verdict_is_the_latest_standing_review_else_the_latest_scan(self):
        for sha, scanned in self.scans.items():
            current = self.ledger.current(self._entry_id(sha)).event
            standing = self.reviews.get(sha)
            assert (current.verdict, current.source) == ((standing[-1], "review") if standing else (scanned, "scan"))


LedgerUnderLoad.TestCase.settings = settings(PROPERTIES, max_examples=_EXPLORE or 25, stateful_step_count=25)
test_the_ledger_keeps_its_invariants_under_interleaved_scans_reviews_and_kills = LedgerUnderLoad.TestCase
