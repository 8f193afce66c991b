"""portq scan end to end: numbering, rows, ledger waves, bad input, interruption, concurrency."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from portq.cli import main
from portq.ledger.store import open_ledger
from tests.portq.fixtures import SAMPLE_ENTRY_ORDER, SAMPLE_MATRIX, build_sample_upstream

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    path = tmp_path_factory.mktemp("scan") / "up"
    return path, build_sample_upstream(path)


@pytest.fixture
def workspace(tmp_path, upstream, monkeypatch):
    """A user's own port: a tree, a matrix and a portq.toml naming the upstream."""
    path, _ = upstream
    (tmp_path / "port").mkdir()
    (tmp_path / "matrix.toml").write_text(SAMPLE_MATRIX)
    (tmp_path / "portq.toml").write_text(
        f'tree = "port"\nmatrix = "matrix.toml"\nledger = "ledger.sqlite"\n[upstream.up]\npath = "{path}"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan_json(capsys, *arguments):
    code = main(["scan", *arguments, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def waves_in(ledger_path):
    with open_ledger(ledger_path, create=False) as ledger:
        return [(w.name, w.status, len(ledger.recorded_positions(w))) for w in ledger.waves()]


def test_scan_json_has_the_documented_shape(workspace, capsys, upstream):
    _, shas = upstream
    document = scan_json(capsys, "base..tip")
    tip = subprocess.run(["git", "rev-parse", "tip"], cwd=upstream[0], capture_output=True, text=True).stdout.strip()
    # the range as the commits its names meant when it was scanned
    assert (document["wave"], document["range"], document["upstream"]) == ("PORTQ-1", f"{shas['base']}..{tip}", "up")
    first = document["entries"][0]
    assert list(first) == ["entry", "sha", "title", "pr", "rows", "symbols", "verdict", "justification",
                           "decided_by", "rules", "reason", "evidence", "source", "scan_verdict"]
    assert (first["entry"], first["sha"], first["pr"]) == (1, shas["two-rows"], 101)
    assert first["symbols"][0] == {"path": "csrc/cache_kernels.cu", "name": "gather_cache_kernel", "change": "modified"}


def test_entries_are_numbered_in_range_order(workspace, capsys, upstream):
    _, shas = upstream
    document = scan_json(capsys, "base..tip")
    assert [(e["entry"], e["sha"]) for e in document["entries"]] == [
        (n, shas[label]) for n, label in enumerate(SAMPLE_ENTRY_ORDER, 1)
    ]


def test_rows_are_mapped_primary_first(workspace, capsys):
    entries = {e["entry"]: e for e in scan_json(capsys, "base..tip")["entries"]}
    position = {label: n for n, label in enumerate(SAMPLE_ENTRY_ORDER, 1)}
    assert entries[position["both-owners"]]["rows"] == ["SPARSE", "CACHE"]
    assert entries[position["excluded"]]["rows"] == []
    assert entries[position["binary"]]["rows"] == ["CACHE"]


def test_entries_no_row_owns_are_not_applicable_no_row(workspace, capsys):
    entries = scan_json(capsys, "base..tip")["entries"]
    unowned = [e for e in entries if not e["rows"]]
    assert {(e["verdict"], e["justification"]) for e in unowned} == {("NOT_APPLICABLE", "no-row")}
    assert all(e["verdict"] in ("REAL_GAP", "NEEDS_REVIEW", "INERT", "IN_SYNC", "NOT_APPLICABLE") for e in entries)


def test_scan_records_a_complete_wave_and_show_reads_it(workspace, capsys):
    scan_json(capsys, "base..tip")
    assert waves_in(workspace / "ledger.sqlite") == [("PORTQ-1", "complete", len(SAMPLE_ENTRY_ORDER))]
    assert main(["show", "8", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["entry"], shown["wave"], shown["rows"], shown["source"]) == (8, "PORTQ-1", ["SPARSE", "CACHE"], "scan")
    assert [event["source"] for event in shown["history"]] == ["scan"]


def test_a_second_scan_is_a_second_wave(workspace, capsys):
    scan_json(capsys, "base..tip")
    assert scan_json(capsys, "base..tip")["wave"] == "PORTQ-2"


def test_scan_table_names_the_wave_and_entries(workspace, capsys):
    assert main(["scan", "base..tip"]) == 0
    out = capsys.readouterr().out
    assert "PORTQ-1" in out and "NOT_APPLICABLE" in out and "no-row" in out


def test_any_repository_tree_and_matrix_work_through_flags(tmp_path, upstream, capsys, monkeypatch):
    path, _ = upstream
    (tmp_path / "m.toml").write_text(SAMPLE_MATRIX)
    monkeypatch.chdir(tmp_path)
    document = scan_json(capsys, "base~0..tip~10", "--upstream", str(path), "--tree", ".", "--matrix", "m.toml",
                         "--ledger", "l.sqlite")
    assert len(document["entries"]) == 2 and (tmp_path / "l.sqlite").exists()


# --- bad input: one line, non-zero, no wave ---------------------------------------------


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["nope..tip"], "unknown revision 'nope'"),
        (["tip..tip"], "is empty"),
        (["tip..base"], "did you mean base..tip"),
        (["base"], "expected A..B"),
        (["base..tip", "--tree", "missing"], "tree .*missing does not exist"),
        (["base..tip", "--upstream", "up=elsewhere"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_leaves_no_wave(workspace, capsys, arguments, expected):
    import re

    assert main(["scan", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(expected, err), err
    assert not (workspace / "ledger.sqlite").exists() or waves_in(workspace / "ledger.sqlite") == []


def test_not_a_git_repository_is_exit_2(workspace, capsys, tmp_path):
    (tmp_path / "plain").mkdir()
    assert main(["scan", "a..b", "--upstream", f"up={tmp_path / 'plain'}"]) == 2
    assert "is not a git repository" in capsys.readouterr().err


def test_matrix_that_does_not_parse_is_exit_2_with_its_line(workspace, capsys):
    (workspace / "matrix.toml").write_text('[[row]]\nid = "A"\nupstream = "up"\npaths = [1]\n')
    assert main(["scan", "base..tip"]) == 2
    assert "matrix.toml:4: row A: 'paths' must be a list" in capsys.readouterr().err


def test_matrix_naming_an_unknown_upstream_is_exit_2(workspace, capsys):
    (workspace / "matrix.toml").write_text(SAMPLE_MATRIX.replace('upstream = "up"', 'upstream = "vlm"', 1))
    assert main(["scan", "base..tip", "--upstream", "up"]) == 2
    assert "matrix.toml:1: row CACHE names upstream 'vlm', which is not configured" in capsys.readouterr().err


def test_ledger_that_is_not_a_portq_ledger_is_exit_2_and_untouched(workspace, capsys):
    (workspace / "ledger.sqlite").write_text("my notes\n")
    assert main(["scan", "base..tip"]) == 2
    assert "is not a portq ledger" in capsys.readouterr().err
    assert (workspace / "ledger.sqlite").read_text() == "my notes\n"


def test_ledger_from_a_newer_schema_is_exit_2(workspace, capsys):
    import sqlite3

    from portq.ledger.store import SCHEMA_VERSION

    open_ledger(workspace / "ledger.sqlite").close()
    db = sqlite3.connect(workspace / "ledger.sqlite")
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 5,))
    db.commit()
    db.close()
    assert main(["scan", "base..tip"]) == 2
    assert "newer than this portq" in capsys.readouterr().err


# --- interruption and concurrency ---------------------------------------------------------


def interrupt_after(patch, count, action):
    """Make the classifier call ``action()`` when it is about to yield entry count + 1."""
    import portq.pipeline.scan

    original = portq.pipeline.scan.build_classifier

    class Interrupting:
        def __init__(self, context):
            self.inner = original(context)

        def classify_range(self, entries, *facts):
            for yielded, item in enumerate(self.inner.classify_range(entries, *facts)):
                if yielded == count:
                    action()
                yield item

    patch.setattr(portq.pipeline.scan, "build_classifier", Interrupting)


def raise_keyboard_interrupt():
    raise KeyboardInterrupt


def test_ctrl_c_keeps_finished_entries_and_a_rerun_completes_the_wave(workspace, capsys, monkeypatch):
    with monkeypatch.context() as patch:
        interrupt_after(patch, 3, raise_keyboard_interrupt)
        assert main(["scan", "base..tip"]) == 130
    assert "PORTQ-1 has 3 of 12 entries; run the same scan again" in capsys.readouterr().err
    assert waves_in(workspace / "ledger.sqlite") == [("PORTQ-1", "interrupted", 3)]
    document = scan_json(capsys, "base..tip")
    assert document["wave"] == "PORTQ-1" and len(document["entries"]) == len(SAMPLE_ENTRY_ORDER)
    assert waves_in(workspace / "ledger.sqlite") == [("PORTQ-1", "complete", len(SAMPLE_ENTRY_ORDER))]
    with open_ledger(workspace / "ledger.sqlite") as ledger:
        assert ledger.db.execute("SELECT COUNT(*) FROM verdict_events").fetchone()[0] == len(SAMPLE_ENTRY_ORDER)


def run_portq(workspace, code: str, **options) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=workspace, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)


def next_line(process: subprocess.Popen, timeout: float) -> str:
    """The next line ``process`` prints, or "" if it exits or stays silent for ``timeout`` seconds."""
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline() if ready else ""


SCAN_THAT_STOPS_AFTER_FIVE_ENTRIES = """
    import sys
    import pytest
    from portq.cli import main
    import portq.pipeline.scan
    from tests.portq.test_scan import interrupt_after

    def wait_for_the_kill():
        print("5 entries recorded", flush=True)  # each in its own committed transaction
        sys.stdin.read()  # the test kills this process before it closes our stdin
        raise SystemExit("stdin closed: the test did not kill the scan")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(portq.pipeline.scan, "RECORD_BATCH", 1)
        interrupt_after(patch, 5, wait_for_the_kill)
        main(["scan", "base..tip"])
"""


def test_sigkill_mid_scan_tears_nothing_and_a_rerun_completes(workspace, capsys):
    # The scan says when it is mid-wave (five entries committed, the sixth not begun); only then
    # is it killed, from outside as a user or the OOM killer would, and reaped before the rerun.
    scan = run_portq(workspace, SCAN_THAT_STOPS_AFTER_FIVE_ENTRIES, stdin=subprocess.PIPE)
    try:
        said = next_line(scan, timeout=120)
        assert said == "5 entries recorded\n", f"the scan did not stop where expected: {said!r}"
        assert scan.poll() is None
        scan.send_signal(signal.SIGKILL)
        _, errors = scan.communicate(timeout=60)  # reaped: its pid no longer owns the wave
    finally:
        if scan.poll() is None:
            scan.kill()
            scan.communicate()
    assert scan.returncode == -signal.SIGKILL, errors
    assert waves_in(workspace / "ledger.sqlite") == [("PORTQ-1", "running", 5)]
    document = scan_json(capsys, "base..tip")
    assert document["wave"] == "PORTQ-1"
    assert waves_in(workspace / "ledger.sqlite") == [("PORTQ-1", "complete", len(SAMPLE_ENTRY_ORDER))]
    with open_ledger(workspace / "ledger.sqlite") as ledger:  # no event lost or written twice
        events = ledger.db.execute("SELECT entry_id FROM verdict_events WHERE source = 'scan'").fetchall()
    assert sorted(e[0] for e in events) == sorted({e[0] for e in events}) and len(events) == len(SAMPLE_ENTRY_ORDER)


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "reusing"])
def test_two_scans_at_once_record_two_whole_waves(workspace, fresh):
    # Reusing, the second may reuse the first's decisions if it starts after the first completes:
    # either way both waves are whole and no event is lost or written twice.
    arguments = ["scan", "base..tip", "--json"] + (["--fresh"] if fresh else [])
    scans = [run_portq(workspace, f"from portq.cli import main; raise SystemExit(main({arguments!r}))")
             for _ in range(2)]
    results = [scan.communicate(timeout=120) for scan in scans]
    assert [scan.returncode for scan in scans] == [0, 0], results
    assert sorted(json.loads(out)["wave"] for out, _ in results) == ["PORTQ-1", "PORTQ-2"]
    n = len(SAMPLE_ENTRY_ORDER)
    assert waves_in(workspace / "ledger.sqlite") == [("PORTQ-1", "complete", n), ("PORTQ-2", "complete", n)]
    with open_ledger(workspace / "ledger.sqlite") as ledger:
        events = ledger.db.execute("SELECT wave_id, entry_id FROM verdict_events").fetchall()
        waves = [[(r.sha, r.scan.verdict, r.scan.justification) for r in ledger.wave_entries(w)] for w in ledger.waves()]
    assert len({tuple(e) for e in events}) == len(events) and len(events) in ((2 * n,) if fresh else (n, 2 * n))
    assert waves[0] == waves[1]


def test_show_cites_each_upstream_hunk_by_its_header_and_names_its_file_once(workspace, capsys):
    scan_json(capsys, "base..tip")
    assert main(["show", "8"]) == 0
    hunks = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("evidence hunk:")]
    assert hunks, "entry 8 touches owned code, so show lists its upstream hunks"
    for line in hunks:
        path = line.split("upstream hunk in ", 1)[1].split(" ", 1)[0]
        assert "@@" in line and line.count(path) == 1, line
