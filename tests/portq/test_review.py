"""portq review: human decisions stick across rescans; disagreeing scans become proposals."""

from __future__ import annotations

import pytest

from tests.portq.golden.reports.scenario import scanned


@pytest.fixture
def scenario(tmp_path):
    return scanned(tmp_path)


def review(scenario, *argv):
    return scenario.portq("review", "1", *argv)


def test_review_becomes_the_current_verdict(scenario):
    assert review(scenario, "--verdict", "INERT", "--because", "the chunked path is disabled", "--who", "alice").code == 0
    shown = scenario.portq("show", "1", "--json").json()
    assert (shown["verdict"], shown["source"]) == ("INERT", "review")


def test_review_survives_a_rescan_that_disagrees_as_a_proposal(scenario):
    review(scenario, "--verdict", "INERT", "--because", "the chunked path is disabled")
    assert scenario.portq("scan", scenario.range, "--json").code == 0
    shown = scenario.portq("show", "1", "--json").json()
    assert shown["verdict"] == "INERT" and shown["proposal"]["verdict"] == "REAL_GAP"
    summary = scenario.portq("summary", "--json").json()
    assert summary["counts"]["INERT"] == 1 and summary["proposals"][0]["proposed"] == "REAL_GAP"


def test_summary_markdown_shows_the_proposal(scenario):
    review(scenario, "--verdict", "INERT", "--because", "the chunked path is disabled")
    scenario.portq("scan", scenario.range, "--json")
    page = scenario.portq("summary").out
    assert "reviewed `INERT`, scan `PORTQ-2` proposes `REAL_GAP`" in page


def test_report_carries_the_correction_history(scenario):
    review(scenario, "--verdict", "INERT", "--because", "the chunked path is disabled", "--who", "alice")
    text = scenario.portq("file-issue", "1", "--json").json()
    assert [e["verdict"] for e in text["history"]] == ["REAL_GAP"]
    assert text["verdict"]["who"] == "alice" and text["verdict"]["why"] == "the chunked path is disabled"


def test_undo_restores_the_scan_verdict(scenario):
    review(scenario, "--verdict", "INERT", "--because", "the chunked path is disabled")
    result = review(scenario, "--undo", "--json")
    assert result.code == 0 and result.json()["current"]["verdict"] == "REAL_GAP"
    assert result.json()["current"]["source"] == "scan"


def test_undo_without_a_review_is_an_error(scenario):
    result = review(scenario, "--undo")
    assert result.code == 2 and "no review to undo" in result.err


def test_because_is_required(scenario):
    result = review(scenario, "--verdict", "INERT")
    assert result.code == 2 and "--because" in result.err


def test_verdict_outside_the_vocabulary_is_an_error(scenario):
    result = review(scenario, "--verdict", "MAYBE", "--because", "x")
    assert result.code == 2 and "expected one of REAL_GAP, NEEDS_REVIEW" in result.err


def test_not_applicable_needs_a_justification_from_the_vocabulary(scenario):
    result = review(scenario, "--verdict", "NOT_APPLICABLE", "--because", "x", "--justification", "because")
    assert result.code == 2 and "one of no-row, not-carried" in result.err


def test_human_not_applicable_with_a_justification_is_recorded(scenario):
    result = review(scenario, "--verdict", "not_applicable", "--justification", "not-carried", "--because", "dropped", "--json")
    assert result.code == 0 and result.json()["current"]["justification"] == "not-carried"


def test_justification_on_another_verdict_is_refused(scenario):
    result = review(scenario, "--verdict", "INERT", "--justification", "no-row", "--because", "x")
    assert result.code == 2 and "NOT_APPLICABLE only" in result.err


def test_review_of_an_unknown_entry_is_an_error(scenario):
    result = scenario.portq("review", "5", "--verdict", "INERT", "--because", "x")
    assert result.code == 2 and "has no entry 5" in result.err
