"""The ledger: schema, waves, append-only events, reviews, reports, bad files."""
from __future__ import annotations

import json
import socket
import sqlite3
from dataclasses import asdict

import pytest

from portq.core.errors import LedgerError
from portq.core.model import Evidence, SymbolVerdict, Verdict
from portq.ledger.store import SCHEMA_VERSION, open_ledger


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


def stored_detail(ledger):
    """The full verdict JSON of the first scan event, through its content hash."""
    return ledger.db.execute(
        "SELECT dt.text FROM verdict_events ve JOIN texts dt ON dt.hash = ve.detail_ref ORDER BY ve.id LIMIT 1"
    ).fetchone()[0]


def test_scan_event_stores_evidence_and_full_verdict_as_plain_json(ledger):
    verdict = Verdict("NEEDS_REVIEW", None, "fallback", reason="“quoted” é",
                      evidence=[Evidence(kind="hunk", message="m", path="a.cu", line=3)],
                      symbols=[SymbolVerdict(path="a.cu", symbol="f", change="modified", verdict="NEEDS_REVIEW",
                                             justification=None, decided_by="body",
                                             evidence=[Evidence(kind="body", message="b")])],
                      version="9.9")
    wave, _ = begin(ledger)
    record(ledger, wave, 1, "1" * 40, verdict)
    assert stored_detail(ledger) == json.dumps(asdict(verdict))  # the evidence is stored inside it, once
    scan = ledger.entry_at(wave, 1).scan
    assert scan.to_verdict() == verdict and scan.evidence == json.loads(json.dumps(asdict(verdict)["evidence"]))


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


def test_a_rescan_repeating_a_decision_stores_references_not_copies(ledger):
    for tip in ("b" * 40, "c" * 40):
        wave, _ = begin(ledger, tip=tip, count=1)
        record(ledger, wave, 1, "1" * 40)
    texts = ledger.db.execute("SELECT COUNT(*) FROM texts").fetchone()[0]
    refs = ledger.db.execute("SELECT COUNT(DISTINCT detail_ref), COUNT(*) FROM verdict_events").fetchone()
    assert tuple(refs) == (1, 2)
    assert texts == 2  # one verdict (its evidence inside), one symbol list, for both waves


def test_a_reusing_wave_has_its_base_entries_by_reference(ledger):
    base, _ = begin(ledger, count=2)
    record(ledger, base, 1, "1" * 40)
    record(ledger, base, 2, "2" * 40, scan_verdict("NOT_APPLICABLE", "no-row"))
    ledger.finish_wave(base)
    size = ledger.db.execute("SELECT COUNT(*) FROM wave_entries").fetchone()[0]
    again, _ = ledger.begin_wave(range_spec="A..B", upstream="up", base_sha="a" * 40, tip_sha="b" * 40, tree=".",
                                 entry_count=2, matrix_fingerprint="m", tree_fingerprint="t", reuses_wave=base.id)
    again = ledger.finish_wave(again)
    assert ledger.db.execute("SELECT COUNT(*) FROM wave_entries").fetchone()[0] == size
    records = ledger.wave_entries(again)
    assert [(r.position, r.wave_id, r.source_wave, r.scan.wave_id, r.scan.reused_from, r.scan.verdict)
            for r in records] == [(1, again.id, base.id, again.id, base.id, "NEEDS_REVIEW"),
                                  (2, again.id, base.id, again.id, base.id, "NOT_APPLICABLE")]
    assert [e.wave_id for e in ledger.history(records[0].entry_id)] == [base.id]  # one event, referenced
    assert ledger.entry_at(again, 2).scan.justification == "no-row"
    assert again.status == "complete" and ledger.recorded_positions(again) == {1, 2}


def test_an_unfinished_rescan_never_shows_the_stale_decision_it_redecides(ledger):
    base, _ = begin(ledger, count=2)
    record(ledger, base, 1, "1" * 40)
    record(ledger, base, 2, "2" * 40)
    ledger.finish_wave(base)
    again, _ = ledger.begin_wave(range_spec="A..B", upstream="up", base_sha="a" * 40, tip_sha="b" * 40, tree=".",
                                 entry_count=2, matrix_fingerprint="m", tree_fingerprint="t2", reuses_wave=base.id,
                                 redecided=[2])
    assert ledger.recorded_positions(again) == {1}
    with pytest.raises(LedgerError, match="has 1 of 2 entries"):
        ledger.finish_wave(again)
    record(ledger, again, 2, "2" * 40, scan_verdict("REAL_GAP"))
    again = ledger.finish_wave(again)
    assert [(r.source_wave, r.scan.verdict) for r in ledger.wave_entries(again)] == [
        (base.id, "NEEDS_REVIEW"), (again.id, "REAL_GAP")]
    decisions = ledger.decisions(again)
    assert (decisions[1].wave_id, decisions[2].wave_id, decisions[2].sha) == (base.id, again.id, "2" * 40)


@pytest.mark.parametrize("reviewed_in_wave, proposed", [(True, "NOT_APPLICABLE"), (False, None)],
                         ids=["review-of-the-earlier-wave", "review-of-no-wave"])
def test_a_review_stands_over_a_wave_that_reuses_the_scan_it_overrode(ledger, reviewed_in_wave, proposed):
    base, _ = begin(ledger, count=1)
    record(ledger, base, 1, "1" * 40, scan_verdict("NOT_APPLICABLE", "no-row"))
    ledger.finish_wave(base)
    entry_id = ledger.entry_at(base, 1).entry_id
    ledger.record_review(entry_id, verdict="REAL_GAP", justification=None, why="behind", who="ana",
                         wave_id=base.id if reviewed_in_wave else None)
    again, _ = ledger.begin_wave(range_spec="A..B", upstream="up", base_sha="a" * 40, tip_sha="b" * 40, tree=".",
                                 entry_count=1, matrix_fingerprint="m", tree_fingerprint="t", reuses_wave=base.id)
    entry = ledger.entry_at(ledger.finish_wave(again), 1)
    proposal = entry.current.proposal
    assert (entry.current.event.verdict, entry.current.source) == ("REAL_GAP", "review")
    # as a re-decided rescan would: the later wave's disagreeing scan is a proposal, never applied
    shown = (proposal.verdict, proposal.wave) if proposal is not None else None
    assert shown == ((proposed, again.name) if proposed else None)
    assert entry.scan.verdict == "NOT_APPLICABLE"


def test_a_schema_1_ledger_is_migrated_and_its_waves_read_as_before(tmp_path):
    from portq.ledger.store import APPLICATION_ID, MIGRATIONS

    path = tmp_path / "ledger.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (1)")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    MIGRATIONS[0][2](db)
    db.execute("INSERT INTO waves (range_spec, upstream, base_sha, tip_sha, tree, entry_count, portq_version, "
               "matrix_fingerprint, tree_fingerprint, status, owner, started_at) VALUES "
               "('A..B', 'up', 'a', 'b', '.', 1, '0.1', 'm', 't', 'complete', 'h:1', 'now')")
    db.execute("INSERT INTO entries (upstream, tree, sha, title, pr) VALUES ('up', '.', 's', 'old', NULL)")
    db.execute("INSERT INTO wave_entries VALUES (1, 1, 1, '[\"ROW\"]', '[{\"name\": \"f\"}]')")
    db.execute("INSERT INTO verdict_events (entry_id, wave_id, source, verdict, justification, decided_by, evidence, "
               "version, created_at) VALUES (1, 1, 'scan', 'IN_SYNC', NULL, 'signature', '[{\"kind\": \"pin\"}]', "
               "'0.1', 'now')")
    db.commit()
    db.close()
    with open_ledger(path) as ledger:
        assert ledger._version() == SCHEMA_VERSION
        old = ledger.wave(1)
        entry = ledger.entry_at(old, 1)
        assert (entry.symbols, entry.scan.verdict, entry.scan.evidence) == ([{"name": "f"}], "IN_SYNC",
                                                                             [{"kind": "pin"}])
        assert ledger.decisions(old)[1].key is None  # decided before keys existed: never reused
        wave, _ = begin(ledger, count=1)
        assert ledger.record_scan_entry(wave, position=1, sha="s", title="old", pr=None, rows=[], symbols=[],
                                        verdict=scan_verdict())
        assert [e.source for e in ledger.history(entry.entry_id)] == ["scan", "scan"]


def test_a_reusing_wave_left_by_a_dead_scan_is_resumed_by_the_same_rescan_only(ledger):
    base, _ = begin(ledger, count=2)
    record(ledger, base, 1, "1" * 40)
    record(ledger, base, 2, "2" * 40)
    ledger.finish_wave(base)
    fields = dict(range_spec="A..B", upstream="up", base_sha="a" * 40, tip_sha="b" * 40, tree=".", entry_count=2,
                  matrix_fingerprint="m", tree_fingerprint="t2", reuses_wave=base.id)
    left, _ = ledger.begin_wave(**fields, redecided=[2])
    # its scan was killed: a pid that cannot exist on this host owns it
    ledger.db.execute("UPDATE waves SET owner = ? WHERE id = ?", (f"{socket.gethostname()}:999999999", left.id))
    other, resumed = ledger.begin_wave(**fields, redecided=[1])  # another plan: a new wave
    assert (other.id != left.id, resumed) == (True, False)
    again, resumed = ledger.begin_wave(**fields, redecided=[2])
    assert (again.id, resumed, ledger.recorded_positions(again)) == (left.id, True, {1})


def _batch(positions, title="t", verdict=None):
    return [dict(position=n, sha=f"{n:040d}", title=title, pr=None, rows=["ROW"], symbols=[{"path": f"{n}.cu"}],
                 changes=[[f"{n}.cu", f"{n}.cu"]], verdict=verdict or scan_verdict()) for n in positions]


def test_a_batch_skips_the_positions_the_wave_already_has_and_keeps_their_first_verdict(ledger):
    wave, _ = begin(ledger, count=6)
    assert ledger.record_scan_entries(wave, _batch([1, 2, 3])) == 3
    again = _batch([2, 3, 4, 4], title="renamed", verdict=scan_verdict("NOT_APPLICABLE", "no-row"))
    assert ledger.record_scan_entries(wave, again) == 1  # 2 and 3 recorded before; 4 once
    records = {r.position: r for r in ledger.wave_entries(wave)}
    assert sorted(records) == [1, 2, 3, 4]
    assert [records[p].scan.verdict for p in (1, 2, 3, 4)] == ["NEEDS_REVIEW"] * 3 + ["NOT_APPLICABLE"]
    assert {records[p].title for p in (2, 3, 4)} == {"renamed"}  # an entry's title follows its latest scan
    assert ledger.db.execute("SELECT COUNT(*) FROM verdict_events").fetchone()[0] == 4
    # the same commit at another position of the same wave is refused like the unique column would
    assert ledger.record_scan_entries(wave, [dict(_batch([1])[0], position=5)]) == 0


def test_a_batch_costs_the_same_statements_however_many_entries(ledger):
    counts = []
    for size in (4, 400):
        wave, _ = begin(ledger, tip=f"{size:040d}", count=size)
        statements = []
        ledger.db.set_trace_callback(statements.append)
        assert ledger.record_scan_entries(wave, _batch(range(1, size + 1))) == size
        ledger.db.set_trace_callback(None)
        counts.append(len([s for s in statements if not s.startswith(("INSERT INTO entries", "INSERT OR IGNORE INTO texts",
                                                                      "INSERT INTO wave_entries", "INSERT INTO verdict_events"))]))
    assert counts[0] == counts[1]


def test_a_batch_that_fails_records_nothing_of_it(ledger):
    wave, _ = begin(ledger, count=3)
    broken = _batch([1, 2, 3])
    broken[2]["verdict"] = None  # fails after the first two entries' rows were written
    with pytest.raises(AttributeError):
        ledger.record_scan_entries(wave, broken)
    assert ledger.wave_entries(wave) == []
    assert ledger.db.execute("SELECT COUNT(*) FROM texts").fetchone()[0] == 0


def _entry(position, sha, verdict=None, rows=("ROW",)):
    return dict(position=position, sha=sha, title=f"commit {position} (#{position})", pr=position, rows=list(rows),
                symbols=[{"path": "a.cu", "name": "f", "change": "modified", "lines": (1, 2)}],
                verdict=verdict or scan_verdict(), changes=[["a.cu", "a.cu"]], decision_key=f"k{position}")


def test_the_records_kept_while_recording_are_what_reading_the_wave_back_gives(ledger):
    earlier, _ = begin(ledger, tip="c" * 40, count=1)  # another wave's scan of one of the commits, before
    ledger.record_scan_entries(earlier, [_entry(1, "2" * 40, scan_verdict("IN_SYNC"))])
    wave, _ = begin(ledger, count=3)
    kept = ledger.keep_recorded(wave)
    ledger.record_scan_entries(wave, [_entry(1, "1" * 40), _entry(2, "2" * 40, scan_verdict("NOT_APPLICABLE", "no-row"), ())])
    ledger.record_scan_entries(wave, [_entry(3, "3" * 40)])
    wave = ledger.finish_wave(wave)
    read_back = ledger.wave_entries(wave)
    assert kept == read_back and [r.scan.id for r in kept] == [2, 3, 4]
    statements = []
    ledger.db.set_trace_callback(statements.append)
    assert ledger.wave_entries(wave, kept) == read_back
    assert len(statements) == 1  # whether a review names one of them: nothing is read back


def test_kept_records_give_way_to_the_ledger_when_a_review_names_an_entry(ledger):
    wave, _ = begin(ledger, count=2)
    kept = ledger.keep_recorded(wave)
    ledger.record_scan_entries(wave, [_entry(1, "1" * 40), _entry(2, "2" * 40)])
    wave = ledger.finish_wave(wave)
    ledger.record_review(kept[1].entry_id, verdict="IN_SYNC", justification=None, why="ported by hand", who="me")
    assert ledger.wave_entries(wave, kept) == ledger.wave_entries(wave) != kept
    assert ledger.wave_entries(wave, kept)[1].current.event.source == "review"
