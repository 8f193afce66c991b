"""Typed evidence records: a closed vocabulary, a JSON round trip, and the
ledger storing records that come back as records (never as prose)."""
from __future__ import annotations

import json

import pytest

from portq.core.evidence import Evidence, Kind, Location, Side, evidence_list, split_at_places
from tests.portq.fixtures import CommitSpec
from tests.portq.golden import seed000
from tests.portq.golden.pipeline import classify_history


def test_a_delta_record_round_trips_through_json_with_both_locations():
    record = Evidence(Kind.LAUNCH_GRID, "grid changed", side="upstream-new", path="csrc/a.cu", line=12,
                      quote="dim3 grid(n);", symbol="gather", subject="grid", derived_from=("n", "block"),
                      before=Location(Side.OLD, "csrc/a.cu", 10, quote="dim3 grid(m);"),
                      after=Location(Side.NEW, "csrc/a.cu", 12, quote="dim3 grid(n);"))
    text = json.dumps(record.to_dict())
    back = Evidence.from_dict(json.loads(text))
    assert back == record
    assert back.kind is Kind.LAUNCH_GRID and back.side is Side.NEW
    assert back.before.line == 10 and back.after.quote == "dim3 grid(n);"
    assert back.derived_from == ("n", "block")


def test_an_also_touched_record_round_trips_with_the_records_it_carries():
    failure = Evidence(Kind.PARSE_FAILURE, "parse failed at csrc/a.cu:7", side="upstream-new", path="csrc/a.cu",
                       line=7, quote="KERNEL<<<grid, 256>>>(x);", subject="LAUNCH_ROWS")
    record = Evidence(Kind.SYMBOL, "also touched: csrc/a.cu::rows", side="upstream-new", path="csrc/a.cu",
                      symbol="rows", records=(failure,))
    back = Evidence.from_dict(json.loads(json.dumps(record.to_dict())))
    assert back == record and back.records[0].kind is Kind.PARSE_FAILURE and back.records[0].side is Side.NEW


def test_a_reason_is_cut_only_at_the_exact_places_its_records_cite():
    at7 = Evidence(Kind.PARSE_FAILURE, side="upstream-new", path="csrc/a.cu", line=7, quote="x;")
    span = Evidence(Kind.TREE_LAUNCH, side="tree", path="k/a.py", line=3, end_line=4, quote="g = (n,)")
    text = "parse failed at csrc/a.cu:7 (not csrc/a.cu:70, nor src/csrc/a.cu:7), launch at k/a.py:3-4."
    assert split_at_places(text, [at7, span]) == [
        "parse failed at ", at7, " (not csrc/a.cu:70, nor src/csrc/a.cu:7), launch at ", span, "."]
    assert split_at_places(text, [Evidence(Kind.HUNK, "no place")]) == [text]


def test_the_vocabulary_is_closed():
    with pytest.raises(ValueError):
        Evidence("a-kind-nobody-declared", "x")
    with pytest.raises(ValueError):
        Evidence(Kind.HUNK, "x", side="somewhere")


def test_records_are_frozen():
    record = Evidence(Kind.HUNK, "x")
    with pytest.raises(AttributeError):
        record.line = 3  # type: ignore[misc]


def test_evidence_list_reads_ledger_dicts_and_keeps_records():
    record = Evidence(Kind.CALLER, "c", side="tree", path="kernels/x.py", line=4, test=False)
    assert evidence_list([record.to_dict(), record]) == [record, record]


def test_scan_stores_typed_records_in_the_ledger(tmp_path):
    verdicts, _ = classify_history(
        tmp_path,
        [CommitSpec("base", files={"csrc/cache_kernels.cu": seed000.BASE}),
         CommitSpec(seed000.TITLE, files={"csrc/cache_kernels.cu": seed000.AFTER})],
        seed000.STALE_TREE,
    )
    symbols = verdicts[1].symbols
    records = [e for s in symbols for e in s.evidence]
    assert records and all(isinstance(e, Evidence) and isinstance(e.kind, Kind) for e in records)
    callers = [e for e in records if e.kind is Kind.CALLER and e.quote]
    assert callers and {e.test for e in callers} <= {True, False} and any(e.test is False for e in callers)
    grids = [e for e in records if e.kind is Kind.LAUNCH_GRID and e.after is not None]
    assert grids and grids[0].before.side is Side.OLD and grids[0].after.side is Side.NEW
    assert grids[0].before.line and grids[0].after.line


def test_a_record_attributed_to_a_row_equals_the_one_dataclasses_replace_builds():
    from dataclasses import replace

    inner = Evidence(Kind.HUNK, "hunk", side="upstream-new", path="a.py", hunk_header="@@ -1 +1 @@")
    record = Evidence("param-added", "x", side="upstream-new", path="a.py", line=3, derived_from=["n"],
                      records=[inner.to_dict()])
    attributed = record.with_row("ROW-1")
    assert attributed == replace(record, row="ROW-1") and attributed.to_dict() == replace(record, row="ROW-1").to_dict()
    assert record.row is None and attributed.kind is Kind.PARAM_ADDED and attributed.records == (inner,)
