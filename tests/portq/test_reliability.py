"""Hostile commits and bad input: no range that can never be scanned, one-line exit-2 errors.

Each test here pins a failure a probe found (a PR number past SQLite's
integer range, a range across unrelated histories, an unfinished wave that
read as complete, a path with a newline dropped by a glob, globs that were
accepted or crashed) or a property that already held and must keep holding.
"""
from __future__ import annotations

import json

import git
import pytest

from portq.cli import main
from portq.core.errors import MatrixError
from portq.ledger.store import open_ledger
from portq.tree.matrix import Matrix, glob_regex, path_matches
from portq.upstream.history import Upstream, pr_number
from tests.portq.fixtures import SAMPLE_MATRIX, CommitSpec, build_repository

HUGE_PR_TITLE = "[Kernel] huge pr (#99999999999999999999999999)"


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("portq: error: "), err
    return err


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """An upstream whose second entry carries a PR number no database integer can hold."""
    shas = build_repository(tmp_path / "up", [
        CommitSpec("base", files={"csrc/cache_kernels.cu": "void f() {}\n"}, tag="base"),
        CommitSpec("[Kernel] ordinary (#12)", files={"csrc/cache_kernels.cu": "void f() { int a; }\n"}),
        CommitSpec(HUGE_PR_TITLE, files={"csrc/cache_kernels.cu": "void f() { int b; }\n"}),
        CommitSpec("[Kernel] last (#13)", files={"csrc/cache_kernels.cu": "void f() { int c; }\n"}, tag="tip"),
    ])
    (tmp_path / "port").mkdir()
    (tmp_path / "matrix.toml").write_text(SAMPLE_MATRIX)
    (tmp_path / "portq.toml").write_text(
        f'tree = "port"\nmatrix = "matrix.toml"\nledger = "ledger.sqlite"\n[upstream.up]\npath = "up"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path, shas


def waves_in(ledger_path):
    with open_ledger(ledger_path, create=False) as ledger:
        return [(w.name, w.status, len(ledger.recorded_positions(w))) for w in ledger.waves()]


# --- defect 1: a PR number past the database's integers --------------------------------


@pytest.mark.parametrize("title", [HUGE_PR_TITLE, "x (#9223372036854775808)", "x (#0)", "x (#00)"])
def test_pr_numbers_no_pull_request_can_have_are_no_pr_number(title):
    assert pr_number(title) is None


def test_the_largest_storable_pr_number_is_kept():
    assert pr_number("x (#9223372036854775807)") == 2**63 - 1


def test_a_range_with_an_overflowing_pr_number_scans_completely(workspace, capsys):
    root, _ = workspace
    assert main(["scan", "base..tip", "--json"]) == 0, capsys.readouterr().err
    document = json.loads(capsys.readouterr().out)
    assert [e["pr"] for e in document["entries"]] == [12, None, 13]
    assert document["entries"][1]["title"] == HUGE_PR_TITLE
    assert waves_in(root / "ledger.sqlite") == [("PORTQ-1", "complete", 3)]


def test_a_batch_that_fails_to_record_leaves_an_interrupted_wave_a_rerun_completes(workspace, capsys, monkeypatch):
    import portq.ledger.store

    root, _ = workspace
    original = portq.ledger.store.Ledger.record_scan_entries
    calls = []

    def fail_once(self, wave, entries):
        calls.append(len(entries))
        if len(calls) == 1:
            raise OverflowError("simulated failure while recording a batch")
        return original(self, wave, entries)

    monkeypatch.setattr(portq.ledger.store.Ledger, "record_scan_entries", fail_once)
    assert main(["scan", "base..tip"]) == 1
    capsys.readouterr()
    assert waves_in(root / "ledger.sqlite") == [("PORTQ-1", "interrupted", 0)]
    assert main(["scan", "base..tip", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wave"] == "PORTQ-1"
    assert waves_in(root / "ledger.sqlite") == [("PORTQ-1", "complete", 3)]


# --- defect 5: a range across unrelated histories ---------------------------------------


def add_unrelated_root(root) -> None:
    """Tag ``other-root``: a commit of the upstream clone that shares no history with ``main``."""
    repo = git.Repo(root / "up")
    repo.git.checkout("-q", "--orphan", "other")
    repo.git.commit("-q", "--allow-empty", "-m", "an unrelated root")
    repo.git.tag("other-root")
    repo.git.checkout("-q", "main")
    repo.close()


def test_a_range_across_unrelated_histories_is_rejected(workspace, capsys):
    root, _ = workspace
    add_unrelated_root(root)
    for spec in ("other-root..tip", "tip..other-root"):
        assert main(["scan", spec]) == 2
        err = one_line_error(capsys)
        assert f"range {spec}" in err and "no common ancestor" in err, err
    assert not (root / "ledger.sqlite").exists() or waves_in(root / "ledger.sqlite") == []


def test_unrelated_histories_are_a_history_error_before_anything_is_written(workspace):
    from portq.core.errors import HistoryError

    root, _ = workspace
    other = build_repository(root / "other", [CommitSpec("elsewhere")])
    repo = git.Repo(root / "up")
    repo.git.fetch("-q", str(root / "other"), "main:other")
    repo.close()
    with Upstream(root / "up") as upstream, pytest.raises(HistoryError, match="no common ancestor"):
        upstream.resolve_range(f"{other[0]}..tip")


# --- defect 6: an unfinished wave in the markdown summary -------------------------------


def summary_of_first_wave(root) -> str:
    from portq.reporting.summary import wave_summary

    with open_ledger(root / "ledger.sqlite", create=False) as ledger:
        wave = ledger.waves()[0]
        return wave_summary(wave, ledger.wave_entries(wave))


def test_an_interrupted_wave_is_labelled_so_in_the_markdown_summary(workspace, capsys, monkeypatch):
    from tests.portq.test_scan import interrupt_after, raise_keyboard_interrupt

    root, _ = workspace
    with monkeypatch.context() as patch:
        interrupt_after(patch, 1, raise_keyboard_interrupt)
        assert main(["scan", "base..tip"]) == 130
    capsys.readouterr()
    summary = summary_of_first_wave(root)
    assert "**This wave is interrupted: 1 of 3 entries recorded.**" in summary, summary


def test_a_running_wave_is_labelled_so_in_the_markdown_summary(workspace, capsys):
    root, _ = workspace
    assert main(["scan", "base..tip"]) == 0
    with open_ledger(root / "ledger.sqlite", create=False) as ledger:  # as a scan still writing it sees it
        ledger.db.execute("UPDATE waves SET status = 'running', finished_at = NULL")
    assert "**This wave is running: 3 of 3 entries recorded.**" in summary_of_first_wave(root)


def test_a_complete_wave_carries_no_unfinished_label(workspace, capsys):
    root, _ = workspace
    assert main(["scan", "base..tip"]) == 0
    summary = summary_of_first_wave(root)
    assert "3 entries." in summary and "This wave is" not in summary


# --- defect 7 and the rest of 8: globs -----------------------------------------------------


@pytest.mark.parametrize(
    "pattern, path",
    [
        ("csrc/**", "csrc/a\nb.cu"),
        ("csrc/", "csrc/x\ny/z.cu"),
        ("csrc/**/*.cu", "csrc/dir\nname/k.cu"),
        ("csrc/*.cu", "csrc/new\nline.cu"),
        ("csrc/?.cu", "csrc/\n.cu"),
    ],
)
def test_globs_match_paths_that_contain_a_newline(pattern, path):
    assert path_matches(pattern, path)


def test_a_trailing_newline_does_not_sneak_past_the_end_of_a_glob():
    assert not path_matches("csrc/a.cu", "csrc/a.cu\n")


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("csrc/[z-a].cu", "bad character range"),
        ("x[!", "unclosed '['"),
        ("csrc/[abc", "unclosed '['"),
        ("***", "'***'"),
        ("csrc/***/x.cu", "'***'"),
        ("../outside/x.cu", "'..'"),
        ("csrc/../../x.cu", "'..'"),
        ("./csrc/x.cu", "'.'"),
        ("csrc//x.cu", "empty path component"),
    ],
)
@pytest.mark.parametrize("key", ["paths", "exclude"])
def test_bad_globs_are_rejected_with_file_line_and_what_is_wrong(key, pattern, expected):
    text = f'[[row]]\nid = "A"\nupstream = "up"\npaths = ["ok.cu"]\n{key} = [{json.dumps(pattern)}]\n'
    if key == "paths":
        text = f'[[row]]\nid = "A"\nupstream = "up"\npaths = [{json.dumps(pattern)}]\n'
    with pytest.raises(MatrixError) as raised:
        Matrix.parse(text, "m.toml")
    message = str(raised.value)
    line = 5 if key == "exclude" else 4
    assert message.startswith(f"m.toml:{line}: row A: glob ") and expected in message, message
    assert "\n" not in message


def test_glob_regex_raises_the_tools_error_for_a_bad_character_range():
    with pytest.raises(MatrixError, match="bad character range"):
        glob_regex("csrc/[z-a].cu")


def test_a_bad_glob_in_the_matrix_is_exit_2_on_scan(workspace, capsys):
    root, _ = workspace
    (root / "matrix.toml").write_text(SAMPLE_MATRIX.replace('exclude  = ["csrc/**/test_*"]', 'exclude = ["csrc/[z-a].cu"]'))
    assert main(["scan", "base..tip"]) == 2
    assert "matrix.toml:6: row CACHE: glob 'csrc/[z-a].cu'" in one_line_error(capsys)


# --- kill -9 at every phase of a scan: the file stays intact, a rerun completes the wave ------

SCAN_KILLED_AT = """
import sys
from portq.cli import main
import portq.ledger.store, portq.pipeline.scan, portq.upstream.history

phase = sys.argv[1]
portq.pipeline.scan.RECORD_BATCH = 1

def stop_here():
    print("stopped", flush=True)
    sys.stdin.read()  # the test kills this process before it closes our stdin
    raise SystemExit("stdin closed: the test did not kill the scan")

def after(owner, name, when):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if when(args, kwargs):
            stop_here()
        return original(*args, **kwargs)
    setattr(owner, name, wrapper)

if phase == "reading":
    original_commits = portq.upstream.history.Upstream.commits
    def commits(self, revisions, *more):
        for index, commit in enumerate(original_commits(self, revisions, *more)):
            if index == 1:
                stop_here()
            yield commit
    portq.upstream.history.Upstream.commits = commits
elif phase == "begun":
    after(portq.pipeline.scan, "_classify_and_record", lambda a, k: True)
elif phase == "inside-a-batch":
    calls = []
    after(portq.ledger.store, "to_json_text", lambda a, k: calls.append(1) or len(calls) == 2)
elif phase == "finishing":
    finishing = []
    original_finish = portq.ledger.store.Ledger.finish_wave
    def finish_wave(self, wave, status="complete"):
        finishing.append(status)
        return original_finish(self, wave, status)
    portq.ledger.store.Ledger.finish_wave = finish_wave
    after(portq.ledger.store, "_now", lambda a, k: bool(finishing))
main(["scan", "base..tip"])
"""


def _scan_killed_at(root, phase):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    repo_root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen([sys.executable, "-c", SCAN_KILLED_AT, phase], cwd=root, text=True,
                               env={**os.environ, "PYTHONPATH": str(repo_root)},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        said = process.stdout.readline()  # blocks until the scan stops where asked (or exits)
        assert said == "stopped\n", (said, process.stderr.read() if process.poll() is not None else "")
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("phase", ["reading", "begun", "inside-a-batch", "finishing"])
def test_kill_9_at_any_phase_keeps_the_ledger_intact_and_a_rerun_completes_the_same_wave(workspace, capsys, phase):
    import sqlite3

    root, _ = workspace
    _scan_killed_at(root, phase)
    ledger = root / "ledger.sqlite"
    if ledger.exists():
        with sqlite3.connect(ledger) as db:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        db.close()
    assert main(["scan", "base..tip", "--json"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["wave"] == "PORTQ-1" and [e["entry"] for e in resumed["entries"]] == [1, 2, 3]
    assert waves_in(ledger) == [("PORTQ-1", "complete", 3)]
    with sqlite3.connect(ledger) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT COUNT(*) FROM verdict_events WHERE source = 'scan'").fetchone() == (3,)
    db.close()
    assert main(["scan", "base..tip", "--json"]) == 0  # a fresh wave of the same range agrees entry by entry
    fresh = json.loads(capsys.readouterr().out)
    assert [(e["sha"], e["verdict"]) for e in fresh["entries"]] == [(e["sha"], e["verdict"]) for e in resumed["entries"]]


# --- commit messages that imitate the log stream's own framing ------------------------------

FORGED_MESSAGES = [
    "[Kernel] forges a record\n\n\x1eportq 0123456789012345678901234567890123456789\nfake header",
    "[Kernel] forges the end of its message\n\nbody\x1f\n:100644 100644 abc def M\tcsrc/x.cu\ndiff --git a/x b/x",
    "[Kernel] both at once\x1f\n\x1eportq deadbeef\n",
]


def test_commit_messages_that_forge_the_log_framing_are_only_text(workspace, capsys):
    root, _ = workspace
    repo = git.Repo(root / "up")
    for number, message in enumerate(FORGED_MESSAGES):
        (root / "up" / "csrc" / "cache_kernels.cu").write_text(f"void f() {{ int forged{number}; }}\n")
        repo.git.add("-A")
        repo.git.commit("-q", "--cleanup=verbatim", "-m", message)
    repo.git.tag("forged")
    repo.close()
    with Upstream(root / "up") as upstream:
        commits = list(upstream.commits(upstream.resolve_range("tip..forged")))
    assert [c.message for c in commits] == [m.rstrip("\n") for m in FORGED_MESSAGES]
    assert all([ch.path for ch in c.changes] == ["csrc/cache_kernels.cu"] for c in commits)
    assert main(["scan", "base..forged", "--json"]) == 0, capsys.readouterr().err
    document = json.loads(capsys.readouterr().out)
    assert [e["title"] for e in document["entries"][3:]] == [m.split("\n", 1)[0].strip() for m in FORGED_MESSAGES]
