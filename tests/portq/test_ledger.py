"""The ledger: schema, waves, append-only events, reviews, reports, bad files."""
from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict

import pytest

from portq.errors import LedgerError
from portq.ledger import SCHEMA_VERSION, open_ledger
from portq.model import Evidence, SymbolVerdict, Verdict


def scan_verdict(verdict="NEEDS_REVIEW", justification=None):
    return Verdict(verdict, justification, "fallback" if verdict != "NOT_APPLICABLE" else "path",
                   reason="because", evidence=[Evidence(kind="hunk", message="m", path="a.cu")])


def begin(ledger, *, tip="b" * 40, count=2, tree="."):
    return ledger.begin_wave(range_spec="A..B", upstream="up", base_sha="a" * 40, tip_sha=tip, tree=tree,
                             entry_count=count, matrix_fingerprint="m", tree_fingerprint="t")


def record(ledger, wave, position, sha, verdict=None):
    return ledger.record_scan_entry(wave, position=position, sha=sha, title=f"commit {position} (#{position})",
                                    pr=position, rows=["ROW"], symbols=[{"path": "a.cu", "name": "f", "change": "modified"}],
                                    verdict=verdict or scan_verdict())


@pytest.fixture
def ledger(tmp_path):
    with open_ledger(tmp_path / "ledger.sqlite") as opened:
        yield opened


def test_new_ledger_has_the_current_schema_and_wal(ledger):
    assert ledger.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    assert ledger.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_waves_are_numbered_portq_n(ledger):
    first, resumed = begin(ledger)
    ledger.finish_wave(first, "interrupted")
    record(ledger, first, 1, "1" * 40)
    second, _ = begin(ledger, tip="c" * 40)
    assert (first.name, second.name, resumed) == ("PORTQ-1", "PORTQ-2", False)


def test_wave_entries_keep_position_rows_symbols_and_scan_verdict(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40)
    record(ledger, wave, 2, "2" * 40, scan_verdict("NOT_APPLICABLE", "no-row"))
    ledger.finish_wave(wave)
    first, second = ledger.wave_entries(wave)
    assert (first.position, first.sha, first.pr, first.rows) == (1, "1" * 40, 1, ["ROW"])
    assert first.symbols == [{"path": "a.cu", "name": "f", "change": "modified"}]
    assert (second.scan.verdict, second.scan.justification, second.scan.source) == ("NOT_APPLICABLE", "no-row", "scan")
    assert second.scan.to_verdict().evidence[0].path == "a.cu"


def test_scan_event_stores_evidence_and_full_verdict_as_plain_json(ledger):
    verdict = Verdict("NEEDS_REVIEW", None, "fallback", reason="“quoted” é",
                      evidence=[Evidence(kind="hunk", message="m", path="a.cu", line=3)],
                      symbols=[SymbolVerdict(path="a.cu", symbol="f", change="modified", verdict="NEEDS_REVIEW",
                                             justification=None, decided_by="body",
                                             evidence=[Evidence(kind="body", message="b")])],
                      version="9.9")
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40, verdict)
    evidence, detail = ledger.db.execute("SELECT evidence, detail FROM verdict_events").fetchone()
    assert detail == json.dumps(asdict(verdict))
    assert evidence == json.dumps(asdict(verdict)["evidence"])
    assert ledger.entry_at(wave, 1).scan.to_verdict() == verdict


def test_reading_a_wave_back_costs_two_queries_however_many_entries(ledger):
    wave, _ = begin(ledger, count=40)
    ledger.record_scan_entries(wave, [dict(position=n, sha=f"{n:040d}", title="t", pr=None, rows=["ROW"], symbols=[],
                                           verdict=scan_verdict()) for n in range(1, 41)])
    other, _ = begin(ledger, tip="c" * 40, count=40)  # a second wave's events on the same entries
    ledger.record_scan_entries(other, [dict(position=n, sha=f"{n:040d}", title="t", pr=None, rows=[], symbols=[],
                                            verdict=scan_verdict("NOT_APPLICABLE", "no-row")) for n in range(1, 41)])
    statements = []
    ledger.db.set_trace_callback(statements.append)
    records = ledger.wave_entries(wave)
    ledger.db.set_trace_callback(None)
    assert len(statements) == 2
    assert [r.position for r in records] == list(range(1, 41))
    assert {(r.scan.wave_id, r.scan.verdict, r.current.event.verdict) for r in records} == \
           {(wave.id, "NEEDS_REVIEW", "NOT_APPLICABLE")}


def test_recording_a_position_twice_is_refused_without_a_second_event(ledger):
    wave, _ = begin(ledger)
    assert record(ledger, wave, 1, "1" * 40) is True
    assert record(ledger, wave, 1, "1" * 40) is False
    assert ledger.db.execute("SELECT COUNT(*) FROM verdict_events").fetchone()[0] == 1


def test_a_wave_with_missing_entries_cannot_complete(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40)
    with pytest.raises(LedgerError, match="has 1 of 2 entries"):
        ledger.finish_wave(wave)


def test_interrupted_wave_is_resumed_by_the_same_scan(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40)
    ledger.finish_wave(wave, "interrupted")
    again, resumed = begin(ledger)
    assert (again.id, resumed, ledger.recorded_positions(again)) == (wave.id, True, {1})


def test_unfinished_wave_of_a_different_tree_is_not_resumed(ledger):
    wave, _ = begin(ledger)
    ledger.finish_wave(wave, "interrupted")
    other, resumed = begin(ledger, tree="stale")
    assert (other.id != wave.id, resumed) == (True, False)


def test_verdict_events_are_append_only(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        ledger.db.execute("UPDATE verdict_events SET verdict = 'IN_SYNC'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        ledger.db.execute("DELETE FROM verdict_events")


def test_latest_human_review_wins_over_the_scan(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40, scan_verdict("NOT_APPLICABLE", "no-row"))
    entry = ledger.entry_at(wave, 1)
    ledger.record_review(entry.entry_id, verdict="REAL_GAP", justification=None, why="the port is behind", who="ana")
    current = ledger.current(entry.entry_id)
    assert (current.event.verdict, current.source, current.event.who, current.proposal) == ("REAL_GAP", "review", "ana", None)


def test_later_disagreeing_scan_is_a_proposal_not_applied(ledger):
    wave, _ = begin(ledger, count=1)
    record(ledger, wave, 1, "1" * 40)
    entry_id = ledger.entry_at(wave, 1).entry_id
    ledger.record_review(entry_id, verdict="REAL_GAP", justification=None, why="behind", who="ana")
    ledger.finish_wave(wave)
    rescan, _ = begin(ledger, count=1)  # a new wave of the same range
    record(ledger, rescan, 1, "1" * 40, scan_verdict("NOT_APPLICABLE", "no-row"))
    current = ledger.current(entry_id)
    assert current.event.verdict == "REAL_GAP"
    assert (current.proposal.verdict, current.proposal.wave) == ("NOT_APPLICABLE", rescan.name)


def test_undo_review_restores_the_scan_verdict_and_keeps_history(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40, scan_verdict("NOT_APPLICABLE", "no-row"))
    entry_id = ledger.entry_at(wave, 1).entry_id
    review = ledger.record_review(entry_id, verdict="REAL_GAP", justification=None, why="behind", who="ana")
    undo = ledger.undo_review(entry_id, who="bo", why="misread")
    assert (undo.undoes, undo.verdict, undo.justification) == (review.id, "NOT_APPLICABLE", "no-row")
    assert ledger.current(entry_id).event.source == "scan"
    history = ledger.history(entry_id)
    assert [(e.source, e.undone) for e in history] == [("scan", False), ("review", True), ("review", False)]


def test_undo_with_no_review_is_an_error(ledger):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40)
    with pytest.raises(LedgerError, match="no review to undo"):
        ledger.undo_review(ledger.entry_at(wave, 1).entry_id, who="bo")


@pytest.mark.parametrize(
    "verdict, justification, why, expected",
    [
        ("WRONG", None, "x", "expected one of REAL_GAP"),
        ("NOT_APPLICABLE", None, "x", "needs --justification"),
        ("REAL_GAP", None, "  ", "needs a reason"),
    ],
)
def test_bad_review_is_refused(ledger, verdict, justification, why, expected):
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40)
    with pytest.raises(LedgerError, match=expected):
        ledger.record_review(ledger.entry_at(wave, 1).entry_id, verdict=verdict, justification=justification,
                             why=why, who="ana")


def test_reports_are_recorded_once_per_fingerprint(ledger):
    first, created = ledger.record_report("fp1", "reports/a.md", data={"title": "t"})
    again, created_again = ledger.record_report("fp1", "reports/b.md")
    assert (created, created_again, again.path, again.data) == (True, False, "reports/a.md", {"title": "t"})
    assert ledger.report("missing") is None


def test_latest_wave_matches_range_text_or_sha_prefixes(ledger):
    wave, _ = begin(ledger)
    assert ledger.latest_wave("A..B").id == wave.id
    assert ledger.latest_wave("aaaaaaa..bbbbbbb").id == wave.id
    assert ledger.latest_wave("X..Y") is None


def test_entry_beyond_the_wave_is_an_error(ledger):
    wave, _ = begin(ledger)
    with pytest.raises(LedgerError, match=r"PORTQ-1 \(A\.\.B\) has no entry 5: it has entries 1\.\.2"):
        ledger.entry_at(wave, 5)


# --- files that are not (our) ledgers ---------------------------------------------------


def test_text_file_is_not_a_ledger(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("hello\n")
    with pytest.raises(LedgerError, match=r"notes\.sqlite is not a portq ledger \(not an SQLite database\)"):
        open_ledger(path)
    assert path.read_text() == "hello\n"


def test_foreign_sqlite_database_is_not_a_ledger(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE things (x)")
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match="is not a portq ledger"):
        open_ledger(path)


def test_ledger_from_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "ledger.sqlite"
    open_ledger(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match=f"schema {SCHEMA_VERSION + 1}, newer than this portq"):
        open_ledger(path)


def test_missing_ledger_without_create_is_an_error(tmp_path):
    with pytest.raises(LedgerError, match="no ledger at .*run portq scan first"):
        open_ledger(tmp_path / "none.sqlite", create=False)
