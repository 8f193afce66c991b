"""The command layer: one entry selector, wave selection per upstream, one output path, flags checked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portq.core.model import Verdict
from portq.ledger.store import open_ledger
from tests.portq.golden.reports.scenario import scanned


@pytest.fixture
def scenario(tmp_path):
    return scanned(tmp_path)


def one_line_error(result, *needles: str) -> None:
    assert result.code == 2, (result.out, result.err)
    assert result.err.count("\n") == 1 and result.err.startswith("portq: error: "), result.err
    assert "Traceback" not in result.err
    for needle in needles:
        assert needle in result.err, result.err


@pytest.mark.parametrize("command", [["show"], ["file-issue"], ["review", "--verdict", "INERT", "--because", "x"]])
@pytest.mark.parametrize("number", [str(2**63), str(2**64 + 5), "0", "-1", "1e3", "١"])
def test_entry_numbers_out_of_range_are_one_line_errors(scenario, command, number):
    result = scenario.portq(command[0], number, *command[1:]) if number[0] != "-" else \
        scenario.portq(command[0], *command[1:], "--", number)
    assert result.code == 2 and result.err.count("\n") == 1 and "Traceback" not in result.err


def test_the_largest_entry_number_sqlite_holds_is_a_missing_entry_not_a_crash(scenario):
    one_line_error(scenario.portq("show", str(2**63 - 1)), f"has no entry {2**63 - 1}")


@pytest.mark.parametrize("command", ["show 1", "summary", "review 1 --verdict INERT --because x", "file-issue 1"])
def test_a_range_with_a_newline_is_one_line(scenario, command):
    one_line_error(scenario.portq(*command.split(), "--range", "a..b\nforged: line"), "expected A..B on one line")


def test_scan_range_with_a_newline_or_escape_is_one_line(scenario):
    one_line_error(scenario.portq("scan", "a..b\n\x1b[2Jforged"), "expected A..B on one line", "\\x1b")


def test_json_and_a_format_flag_together_are_refused(scenario):
    one_line_error(scenario.portq("matrix", "--json", "--format", "md"), "unrecognized arguments")


def test_gh_repo_without_gh_is_an_error(scenario):
    one_line_error(scenario.portq("file-issue", "1", "--gh-repo", "me/x"), "--gh-repo me/x: only means something with --gh")


def test_an_empty_out_directory_is_an_error(scenario):
    one_line_error(scenario.portq("file-issue", "1", "--out", ""), "--out: expected a directory")
    assert not (scenario.root / "reports").exists()


def test_an_unknown_wave_name_is_an_error(scenario):
    one_line_error(scenario.portq("show", "1", "--wave", "PORTQ-x"), "expected a wave name PORTQ-N")
    one_line_error(scenario.portq("show", "1", "--wave", "PORTQ-9"), "no wave PORTQ-9")


def test_wave_picks_that_wave(scenario):
    assert scenario.portq("scan", scenario.range, "--json").code == 0
    assert scenario.portq("show", "1", "--json").json()["wave"] == "PORTQ-2"
    assert scenario.portq("show", "1", "--json", "--wave", "PORTQ-1").json()["wave"] == "PORTQ-1"
    assert scenario.portq("summary", "--json", "--wave", "1").json()["wave"]["id"] == "PORTQ-1"


def _start_other_upstream_wave(scenario, upstream="aiter", status=None):
    """A wave of another upstream left running (or interrupted): what a scan in progress looks like."""
    with open_ledger(scenario.root / "ledger.sqlite") as ledger:
        wave, _ = ledger.begin_wave(range_spec="x..y", upstream=upstream, base_sha="a" * 40, tip_sha="b" * 40,
                                    tree="tree", entry_count=3, matrix_fingerprint="m", tree_fingerprint="t")
        ledger.record_scan_entries(wave, [dict(position=1, sha="c" * 40, title="other upstream's entry 1", pr=None,
                                               rows=[], symbols=[], verdict=Verdict("NOT_APPLICABLE", "no-row", "path"))])
        if status:
            ledger.finish_wave(wave, status)
        return wave


def test_a_running_wave_of_another_upstream_is_never_read_or_written(scenario):
    _start_other_upstream_wave(scenario)
    shown = scenario.portq("show", "1", "--json").json()
    assert (shown["wave"], shown["upstream"], shown["sha"]) == ("PORTQ-1", "vllm", scenario.shas[1])
    reviewed = scenario.portq("review", "1", "--verdict", "INERT", "--because", "tests only", "--json")
    assert reviewed.code == 0 and reviewed.json()["wave"] == "PORTQ-1" and reviewed.json()["sha"] == scenario.shas[1]
    assert scenario.portq("summary", "--json").json()["wave"]["id"] == "PORTQ-1"


def test_an_unfinished_wave_is_read_only_when_asked_and_labelled(scenario):
    wave = _start_other_upstream_wave(scenario, status="interrupted")
    aiter = ["--upstream", "aiter=" + str(scenario.root / "upstream")]
    refused = scenario.portq("show", "1", *aiter)
    shas = f"{'a' * 40}..{'b' * 40}"  # shown and suggested by its SHAs, whatever the scan was typed as
    one_line_error(refused, f"{wave.name} ({shas}, aiter) is interrupted with 1 of 3 entries", f"--wave {wave.name}")
    one_line_error(scenario.portq("show", "1", "--wave", wave.name), f"{wave.name} is a wave of upstream aiter, not vllm")
    asked = scenario.portq("show", "1", "--wave", wave.name, *aiter)
    assert asked.code == 0 and "[interrupted: 1 of 3 entries recorded]" in asked.err
    assert f"{wave.name} {shas} (aiter) [interrupted]" in asked.out.splitlines()[0]
    assert scenario.portq("show", "1", "--wave", wave.name, "--json", *aiter).json()["wave_status"] == "interrupted"
    page = scenario.portq("summary", "--wave", wave.name, *aiter)
    assert page.code == 0 and f"**This wave is interrupted: 1 of 3 entries recorded.** Run `portq scan {shas}`" in page.out
    assert "This wave is" not in scenario.portq("summary").out


def test_complete_waves_of_two_upstreams_need_a_choice(scenario):
    wave = _start_other_upstream_wave(scenario)
    with open_ledger(scenario.root / "ledger.sqlite") as ledger:
        ledger.record_scan_entries(wave, [dict(position=n, sha=f"{n}" * 40, title="t", pr=None, rows=[], symbols=[],
                                               verdict=Verdict("NOT_APPLICABLE", "no-row", "path")) for n in (2, 3)])
        ledger.finish_wave(wave, "complete")
    result = run_without_upstream_flag(scenario, "show", "1")
    one_line_error(result, "complete waves of several upstreams: aiter (PORTQ-2), vllm (PORTQ-1)", "--upstream NAME")


def run_without_upstream_flag(scenario, *argv):
    """``scenario.portq`` less its ``--upstream PATH`` (which names the one upstream)."""
    flags = scenario.flags()
    del flags[flags.index("--upstream"):flags.index("--upstream") + 2]
    scenario_flags = scenario.flags
    scenario.flags = lambda: flags
    try:
        return scenario.portq(*argv)
    finally:
        scenario.flags = scenario_flags


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_the_selector_parsers_accept_or_refuse_in_one_line(text):
    import argparse

    from portq.commands.selection import MAX_ENTRY, entry_number, range_text, revision_text, wave_name

    for parse in (entry_number, range_text, revision_text, wave_name):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as error:
            assert "\n" not in str(error) and "\x1b" not in str(error)
        else:
            assert parse is not entry_number or 1 <= value <= MAX_ENTRY
            assert parse is entry_number or (value == text and text.isprintable())
