"""Input, permission, disk and lock problems: exit 2, one line naming the path and what to do.

Exit 1 is left for portq's own bugs. Read-only commands work on a read-only
ledger and in a read-only folder; nothing is ever written into a damaged
ledger. Permission cases run portq without the privilege to bypass file modes
(``setpriv`` drops it when the tests run as root), so they test what a user
sees.
"""
from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from portq.cli import main
from portq.ledger.store import open_ledger
from tests.portq.test_reliability import one_line_error, waves_in, workspace  # noqa: F401 (fixture)

_UNPRIVILEGED = (
    ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"] if os.geteuid() == 0 else []
)
needs_file_modes = pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None,
    reason="running as root without setpriv: file modes cannot be enforced",
)


def portq_without_privileges(root, *arguments) -> subprocess.CompletedProcess:
    """``portq ARGUMENTS`` in ``root`` as a user whom file modes bind."""
    return subprocess.run(
        [*_UNPRIVILEGED, sys.executable, "-m", "portq.cli", *arguments],
        cwd=root, capture_output=True, text=True, timeout=300,
    )


def assert_one_line_exit_2(result, *expected):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    for text in expected:
        assert text in result.stderr, result.stderr


@pytest.fixture
def scanned(workspace):  # noqa: F811
    root, _ = workspace
    assert main(["scan", "base..tip", "--json"]) == 0
    return root


# --- files portq cannot decode -----------------------------------------------------------


def test_a_matrix_that_is_not_utf8_is_exit_2_with_its_path(workspace, capsys):  # noqa: F811
    root, _ = workspace
    (root / "matrix.toml").write_bytes(b'[[row]]\nid = "A"\ntitle = "caf\xe9"\nupstream = "up"\npaths = ["x"]\n')
    assert main(["scan", "base..tip"]) == 2
    err = one_line_error(capsys)
    assert "matrix.toml:3: not UTF-8" in err, err


def test_a_config_file_that_is_not_utf8_is_exit_2_with_its_path(workspace, capsys):  # noqa: F811
    root, _ = workspace
    (root / "portq.toml").write_bytes(b'tree = "port"\n# \xff\xfe\n')
    assert main(["matrix"]) == 2
    assert "portq.toml:2: not UTF-8" in one_line_error(capsys)


# --- permissions -----------------------------------------------------------------------------


@needs_file_modes
def test_a_read_only_ledger_refuses_scan_and_review_and_answers_show_and_summary(scanned):
    ledger = scanned / "ledger.sqlite"
    before = ledger.read_bytes()
    ledger.chmod(0o444)
    try:
        assert_one_line_exit_2(portq_without_privileges(scanned, "scan", "base..tip"), "ledger.sqlite is read-only")
        assert_one_line_exit_2(
            portq_without_privileges(scanned, "review", "1", "--verdict", "REAL_GAP", "--because", "x"),
            "ledger.sqlite is read-only",
        )
        for command in (["show", "1"], ["summary"]):
            result = portq_without_privileges(scanned, *command)
            assert result.returncode == 0, result.stderr
    finally:
        ledger.chmod(0o644)
    assert ledger.read_bytes() == before


@needs_file_modes
def test_a_ledger_in_a_read_only_folder_answers_show_and_summary(scanned):
    folder = scanned / "kept"
    folder.mkdir()
    shutil.move(scanned / "ledger.sqlite", folder / "ledger.sqlite")
    folder.chmod(0o555)
    try:
        for command in (["show", "2"], ["summary"]):
            result = portq_without_privileges(scanned, *command, "--ledger", "kept/ledger.sqlite")
            assert result.returncode == 0, result.stderr
            assert "not a portq ledger" not in result.stderr
        assert_one_line_exit_2(
            portq_without_privileges(scanned, "scan", "base..tip", "--ledger", "kept/ledger.sqlite"),
            "is read-only", "folder",
        )
        assert sorted(p.name for p in folder.iterdir()) == ["ledger.sqlite"]
    finally:
        folder.chmod(0o755)


@needs_file_modes
def test_an_unreadable_ledger_is_exit_2_naming_it(scanned):
    (scanned / "ledger.sqlite").chmod(0o000)
    try:
        for command in (["show", "1"], ["summary"], ["scan", "base..tip"]):
            assert_one_line_exit_2(portq_without_privileges(scanned, *command), "ledger.sqlite", "Permission denied")
    finally:
        (scanned / "ledger.sqlite").chmod(0o644)


@needs_file_modes
def test_an_unreadable_upstream_is_exit_2_naming_it(workspace):  # noqa: F811
    root, _ = workspace
    (root / "up").chmod(0o000)
    try:
        assert_one_line_exit_2(portq_without_privileges(root, "scan", "base..tip"), str(root / "up"))
    finally:
        (root / "up").chmod(0o755)


@needs_file_modes
def test_an_unreadable_tree_is_exit_2_naming_it(workspace):  # noqa: F811
    root, _ = workspace
    (root / "port" / "kv.py").write_text("def f():\n    return 1\n")
    (root / "port").chmod(0o000)
    try:
        assert_one_line_exit_2(portq_without_privileges(root, "scan", "base..tip"), f"tree {root / 'port'} is not readable")
    finally:
        (root / "port").chmod(0o755)


@needs_file_modes
def test_an_unreadable_file_in_the_tree_is_exit_2_naming_it_never_skipped(workspace):  # noqa: F811
    root, _ = workspace
    port = root / "port" / "kv.py"
    port.write_text("# portq: ports up csrc/cache_kernels.cu f\ndef f():\n    return 1\n")
    port.chmod(0o000)
    try:
        assert_one_line_exit_2(portq_without_privileges(root, "scan", "base..tip"), str(port), "cannot read")
    finally:
        port.chmod(0o644)


def _chattr(flag: str, path) -> bool:
    return shutil.which("chattr") is not None and subprocess.run(
        ["chattr", flag, str(path)], capture_output=True).returncode == 0


def test_an_immutable_ledger_refuses_scan_and_review_and_answers_show(scanned, capsys):
    ledger = scanned / "ledger.sqlite"
    if not _chattr("+i", ledger):
        pytest.skip("chattr +i is not available here (needs root on a file system that supports it)")
    try:
        assert main(["scan", "base..tip"]) == 2
        assert "ledger.sqlite is read-only" in one_line_error(capsys)
        assert main(["review", "1", "--verdict", "REAL_GAP", "--because", "x"]) == 2
        assert "ledger.sqlite is read-only" in one_line_error(capsys)
        assert main(["show", "1"]) == 0
    finally:
        _chattr("-i", ledger)


# --- damaged ledgers ---------------------------------------------------------------------


def _damage_pages(ledger, table: str) -> bytes:
    """Overwrite the root page of ``table`` with garbage; return the file's new bytes."""
    with sqlite3.connect(ledger) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root_page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    db.close()
    data = bytearray(ledger.read_bytes())
    data[(root_page - 1) * page_size:root_page * page_size] = b"\xa5" * page_size
    ledger.write_bytes(bytes(data))
    return bytes(data)


def test_a_ledger_with_damaged_data_pages_is_exit_2_for_readers(scanned, capsys):
    _damage_pages(scanned / "ledger.sqlite", "wave_entries")
    for command in (["show", "1"], ["summary"]):
        assert main(command) == 2, command
        err = one_line_error(capsys)
        assert "ledger.sqlite is damaged" in err and "restore it from a backup" in err, err


def test_review_never_writes_into_a_damaged_ledger(scanned, capsys):
    ledger = scanned / "ledger.sqlite"
    damaged = _damage_pages(ledger, "reports")  # a table review does not read: only a check finds it
    assert main(["review", "1", "--verdict", "REAL_GAP", "--because", "seen"]) == 2
    assert "ledger.sqlite is damaged" in one_line_error(capsys)
    assert ledger.read_bytes() == damaged
    assert not (scanned / "ledger.sqlite-wal").exists() or (scanned / "ledger.sqlite-wal").stat().st_size == 0


def test_scan_never_begins_a_wave_in_a_damaged_ledger(scanned, capsys):
    damaged = _damage_pages(scanned / "ledger.sqlite", "reports")
    assert main(["scan", "base..tip"]) == 2
    assert "ledger.sqlite is damaged" in one_line_error(capsys)
    assert (scanned / "ledger.sqlite").read_bytes() == damaged


# --- paths given on the command line ------------------------------------------------------


def test_upstream_given_as_its_git_directory_is_read_like_the_clone(workspace, capsys):  # noqa: F811
    root, _ = workspace
    code = main(["scan", "base..tip", "--upstream", f"up={root / 'up' / '.git'}", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err


def test_git_missing_from_path_is_exit_2_saying_so(workspace, capsys, monkeypatch):  # noqa: F811
    root, _ = workspace
    (root / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(root / "empty-bin"))
    assert main(["scan", "base..tip"]) == 2
    assert "git is not on PATH" in one_line_error(capsys)


def test_demo_keep_on_a_file_is_exit_2_naming_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    assert main(["demo", "--keep", "notes.txt"]) == 2
    assert "notes.txt: is a file, not a directory" in one_line_error(capsys)
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


# --- disk full and locks ------------------------------------------------------------------


def test_disk_full_while_recording_is_exit_2_and_the_wave_can_be_completed(workspace, capsys, monkeypatch):  # noqa: F811
    import portq.ledger.store

    root, _ = workspace
    original = portq.ledger.store.Ledger.record_scan_entries

    def full(self, wave, entries):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(portq.ledger.store.Ledger, "record_scan_entries", full)
    assert main(["scan", "base..tip"]) == 2
    err = one_line_error(capsys)
    assert f"no space left on the device for {root / 'ledger.sqlite'}" in err, err
    monkeypatch.setattr(portq.ledger.store.Ledger, "record_scan_entries", original)
    assert main(["scan", "base..tip", "--json"]) == 0
    assert waves_in(root / "ledger.sqlite") == [("PORTQ-1", "complete", 3)]


SCAN_ON_A_FULL_DISK = """
import resource, signal, sys
from portq.cli import main

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) as on a full disk
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(["scan", "base..tip"]))
"""


@pytest.mark.parametrize("limit", [20_000, 60_000])
def test_a_scan_that_runs_out_of_space_is_exit_2_and_a_rerun_with_space_completes(workspace, capsys, limit):  # noqa: F811
    root, _ = workspace
    result = subprocess.run([sys.executable, "-c", SCAN_ON_A_FULL_DISK, str(limit)], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert_one_line_exit_2(result, str(root / "ledger.sqlite"), "has space")
    with sqlite3.connect(root / "ledger.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()
    assert main(["scan", "base..tip", "--json"]) == 0, capsys.readouterr().err
    assert [w[1:] for w in waves_in(root / "ledger.sqlite")] == [("complete", 3)]


def test_disk_full_while_writing_a_report_is_exit_2_naming_the_file(scanned, capsys, monkeypatch):
    from portq.core import safe_output

    def full(descriptor, data):  # reports are written through a temporary file beside the target
        os.close(descriptor)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safe_output, "_write_file", full)
    assert main(["file-issue", "1", "--force", "--out", str(scanned / "reports")]) == 2
    err = one_line_error(capsys)
    assert "cannot write report" in err and str(scanned / "reports") in err and "No space left" in err, err


@pytest.mark.parametrize("command", [["review", "1", "--verdict", "REAL_GAP", "--because", "x"], ["scan", "base..tip"]])
def test_a_ledger_locked_past_the_busy_timeout_is_exit_2(scanned, capsys, monkeypatch, command):
    import portq.ledger.store

    monkeypatch.setattr(portq.ledger.store, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(scanned / "ledger.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert main(command) == 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = one_line_error(capsys)
    assert "ledger.sqlite is locked by another portq process" in err, err


# --- what a failure leaves behind -----------------------------------------------------------


TREE_INDEX_ON_A_FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from portq.tree.tree_index import TreeIndex

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))  # the index JSON is far larger: its write fails
index = TreeIndex.build(Path(sys.argv[1]), Path(sys.argv[2]))
print(sorted(index.definitions_by_name))
"""


def test_a_tree_index_that_cannot_be_written_leaves_no_temporary_file(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "k.py").write_text("def kernel():\n    return 1\n\n\ndef wrapper():\n    return kernel()\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    result = subprocess.run([sys.executable, "-c", TREE_INDEX_ON_A_FULL_DISK, str(tmp_path / "tree"), str(cache)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['kernel', 'wrapper']"
    assert list(cache.iterdir()) == []


def test_matrix_without_a_config_writes_no_cache_into_the_working_directory(tmp_path, capsys, monkeypatch):
    from tests.portq.fixtures import SAMPLE_MATRIX

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.toml").write_text(SAMPLE_MATRIX)
    (tmp_path / "port").mkdir()
    (tmp_path / "port" / "k.py").write_text("def gather_cache():\n    return 1\n")
    assert main(["matrix", "--matrix", "m.toml", "--tree", "port"]) == 0, capsys.readouterr().err
    assert not (tmp_path / ".portq").exists()


def test_ctrl_c_while_finishing_the_wave_leaves_it_interrupted_with_a_clear_message(workspace, capsys, monkeypatch):  # noqa: F811
    import portq.ledger.store

    root, _ = workspace
    original = portq.ledger.store.Ledger.finish_wave
    interrupted = []

    def interrupt_the_first_completion(self, wave, status="complete"):
        if status == "complete" and not interrupted:
            interrupted.append(wave.name)
            raise KeyboardInterrupt
        return original(self, wave, status)

    monkeypatch.setattr(portq.ledger.store.Ledger, "finish_wave", interrupt_the_first_completion)
    assert main(["scan", "base..tip"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PORTQ-1" in err and "3 of 3 entries" in err and "run the same scan again" in err, err
    assert waves_in(root / "ledger.sqlite") == [("PORTQ-1", "interrupted", 3)]
    assert main(["scan", "base..tip", "--json"]) == 0
    assert waves_in(root / "ledger.sqlite") == [("PORTQ-1", "complete", 3)]


def test_an_upstream_clone_missing_an_object_is_exit_2_naming_the_clone(workspace, capsys):  # noqa: F811
    root, _ = workspace
    blob = subprocess.run(["git", "rev-parse", "tip:csrc/cache_kernels.cu"], cwd=root / "up", capture_output=True,
                          text=True, check=True).stdout.strip()
    (root / "up" / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    assert main(["scan", "base..tip"]) == 2
    err = one_line_error(capsys)
    assert str(root / "up") in err and "git fsck" in err, err


def test_an_upstream_clone_missing_a_commit_of_the_range_is_exit_2_naming_the_clone(workspace, capsys):  # noqa: F811
    root, _ = workspace
    commit = subprocess.run(["git", "rev-parse", "tip~1"], cwd=root / "up", capture_output=True, text=True,
                            check=True).stdout.strip()
    (root / "up" / ".git" / "objects" / commit[:2] / commit[2:]).unlink()
    assert main(["scan", "base..tip"]) == 2
    err = one_line_error(capsys)
    assert str(root / "up") in err and "git fsck" in err, err
