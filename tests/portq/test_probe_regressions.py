"""What an independent probe of hostile commits, bad input and wave selection found.

The probe ran every command on a pipe and on a pseudo-terminal against
upstreams whose titles, paths, authors and content carry markup, terminal
escapes and bidi overrides, then a catalogue of bad arguments, then two
upstreams with a complete wave on one and an unfinished wave on the other.
Each test pins one thing it found: an argument that was accepted although
it named nothing, a command that acted beyond the upstream it was given, or
a test file name in the tree that made ``verify`` lose its counts.
"""
from __future__ import annotations

import re
import pytest

from portq.cli import main
from portq.ledger.store import open_ledger
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
    assert re.match(r"Entry 1 of PORTQ-1 [0-9a-f]{40}\.\.[0-9a-f]{40} \(up\)", capsys.readouterr().out)  # by its SHAs


# --- verify: a test file whose name pytest writes raw into its junit report ------------


def test_verify_counts_a_test_file_whose_name_holds_a_control_character(tmp_path):
    from portq.commands.verify import counts_per_file

    junit = tmp_path / "junit.xml"  # as pytest writes it: the file attribute is not escaped
    junit.write_bytes(b'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite tests="2">'
                      b'<testcase classname="" name="t" file="tests/k/test_\x1b[2Jodd.py" />'
                      b'<testcase classname="tests.k.test_k" name="u" file="tests/k/test_k.py"><failure /></testcase>'
                      b'</testsuite></testsuites>')
    counts = {c.file: (c.passed, c.failed) for c in counts_per_file(junit)}
    assert counts == {"tests/k/test_\x1b[2Jodd.py": (1, 0), "tests/k/test_k.py": (0, 1)}


def test_verify_shows_such_a_file_escaped_and_in_its_column(tmp_path, monkeypatch, capsys):
    from tests.portq.test_verify import verify_in

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    (tmp_path / "matrix.toml").write_text('[[row]]\nid = "ROW"\nupstream = "up"\npaths = ["a/**"]\ntests = ["tests/"]\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_\x1b[2Jodd.py").write_text("def test_one():\n    assert True\n")
    (tmp_path / "tests" / "test_plain.py").write_text("def test_two():\n    assert True\n")
    assert verify_in(tmp_path, "ROW") == 0
    out = capsys.readouterr().out
    counts = out[out.index("\nROW on the CPU"):]
    assert "\x1b" not in counts
    odd, plain = (line for line in counts.splitlines() if line.startswith("  tests/"))
    assert odd.startswith("  tests/test_\\x1b[2Jodd.py ") and odd.index(" 1 ") == plain.index(" 1 ")
