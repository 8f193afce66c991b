"""What an independent probe of hostile commits, bad input and wave selection found.

The probe ran every command on a pipe and on a pseudo-terminal against
upstreams whose titles, paths, authors and content carry markup, terminal
escapes and bidi overrides, then a catalogue of bad arguments, then two
upstreams with a complete wave on one and an unfinished wave on the other.
Each test pins one thing it found: an argument that was accepted although
it named nothing, or a command that acted beyond the upstream it was given.
"""
from __future__ import annotations

import pytest

from portq.cli import main
from portq.ledger import open_ledger
from tests.portq.fixtures import CommitSpec, build_repository
from tests.portq.test_reliability import one_line_error

MATRIX = """\
[[row]]
id       = "UP"
title    = "up kernels"
upstream = "up"
paths    = ["src/**"]

[[row]]
id       = "OTHER"
title    = "other kernels"
upstream = "other"
paths    = ["src/**"]
"""


@pytest.fixture
def two_upstreams(tmp_path, monkeypatch):
    """``up`` with a complete wave (PORTQ-1) and ``other`` whose wave (PORTQ-2) is still running."""
    for name in ("up", "other"):
        build_repository(tmp_path / name, [
            CommitSpec(f"{name} base", files={"src/k.py": "def k():\n    return 0\n"}, tag="base"),
            CommitSpec(f"{name} change (#1)", files={"src/k.py": "def k():\n    return 1\n"}, tag="tip"),
        ])
    (tmp_path / "port").mkdir()
    (tmp_path / "matrix.toml").write_text(MATRIX)
    (tmp_path / "portq.toml").write_text('tree = "port"\nmatrix = "matrix.toml"\nledger = "ledger.sqlite"\n'
                                         '[upstream.up]\npath = "up"\n[upstream.other]\npath = "other"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "base..tip", "--upstream", "up"]) == 0
    assert main(["scan", "base..tip", "--upstream", "other"]) == 0
    with open_ledger(tmp_path / "ledger.sqlite", create=False) as ledger:  # as a scan still writing it sees it
        ledger.db.execute("UPDATE waves SET status = 'running', finished_at = NULL WHERE upstream = 'other'")
    return tmp_path


# --- the dashboard: the upstream, range or wave asked for must be there ----------------


def test_dashboard_for_an_upstream_without_a_complete_wave_is_refused(two_upstreams, capsys):
    capsys.readouterr()
    code = main(["file-issue", "--dashboard", "--upstream", "other", "--out", str(two_upstreams / "r")])
    assert code == 2
    assert "PORTQ-2" in one_line_error(capsys)
    assert not (two_upstreams / "r" / "dashboard.md").exists()


def test_dashboard_for_an_unfinished_wave_is_refused(two_upstreams, capsys):
    capsys.readouterr()
    code = main(["file-issue", "--dashboard", "--wave", "PORTQ-2", "--out", str(two_upstreams / "r")])
    assert code == 2
    assert "PORTQ-2 is running" in one_line_error(capsys)


def test_dashboard_for_an_upstream_with_a_complete_wave_is_written(two_upstreams, capsys):
    capsys.readouterr()
    assert main(["file-issue", "--dashboard", "--upstream", "up", "--out", str(two_upstreams / "r")]) == 0
    assert "`up` `PORTQ-1`" in (two_upstreams / "r" / "dashboard.md").read_text()


# --- arguments that named nothing and were accepted ------------------------------------


def test_summary_html_with_an_empty_file_name_is_refused(two_upstreams, capsys):
    capsys.readouterr()
    assert main(["summary", "--upstream", "up", "--html", ""]) == 2
    assert "--html" in one_line_error(capsys)


def test_demo_keep_into_a_directory_that_holds_files_is_refused(tmp_path, capsys):
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("not the demo's\n")
    assert main(["demo", "--keep", str(keep)]) == 2
    assert "not empty" in one_line_error(capsys)
    assert sorted(p.name for p in keep.iterdir()) == ["notes.txt"]


# --- a range both upstreams scanned: without --upstream it names no one wave ------------


def test_a_range_scanned_in_two_upstreams_needs_the_upstream_named(two_upstreams, capsys):
    capsys.readouterr()
    assert main(["show", "1", "--range", "base..tip"]) == 2
    err = one_line_error(capsys)
    assert "other (PORTQ-2, running)" in err and "up (PORTQ-1)" in err and "--upstream NAME" in err
    assert main(["review", "1", "--range", "base..tip", "--verdict", "INERT", "--because", "probe"]) == 2
    one_line_error(capsys)
    with open_ledger(two_upstreams / "ledger.sqlite", create=False) as ledger:
        assert all(record.current.source == "scan" for wave in ledger.waves() for record in ledger.wave_entries(wave))
    assert main(["show", "1", "--range", "base..tip", "--upstream", "up"]) == 0
    assert capsys.readouterr().out.startswith("Entry 1 of PORTQ-1 base..tip (up)")
