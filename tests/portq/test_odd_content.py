"""The odd-content corpus: every shape a real history throws at a scan, scanned end to end.

Binary files, submodule add/bump/drop, CRLF, non-UTF-8 messages and content,
a 10 MB single-line file, symlinks, a file turned into a symlink, mode-only
changes, empty commits, a 100,000-character title, and paths with unicode,
spaces, quotes and a newline. Each is one entry of one history; the scan
records all of them, ``show`` and ``summary`` read every one back, and the
paths come back exactly as git stores them.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from portq.cli import main
from tests.portq.fixtures import _environment

OWNING_MATRIX = """\
[[row]]
id       = "ALL"
title    = "everything upstream"
upstream = "up"
paths    = ["**"]
symbols  = ["gather"]
"""

LONG_TITLE = "[Kernel] " + "very long title " * 6250  # 100,009 characters
ODD_PATHS = ("src/ünïcode kernel.py", 'src/"quoted" name.cu', "src/with space/x.py", "src/new\nline.cu")


def _git(root, *arguments, index=0, stdin=None):
    environment = {**os.environ, **_environment(index)}
    return subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *arguments],
                          cwd=root, env=environment, input=stdin, capture_output=True, check=True).stdout


def build_odd_history(root) -> list[tuple[str, str]]:
    """The corpus history at ``root``: returns (label, expected content kind) per entry, in order."""
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    step = iter(range(1, 100))

    def commit(message: bytes | str, *paths: str, allow_empty: bool = False):
        if paths:
            _git(root, "add", "-A", "--", *paths)
        message_bytes = message if isinstance(message, bytes) else message.encode()
        _git(root, "commit", "-q", "--no-verify", "--cleanup=verbatim", *(["--allow-empty"] if allow_empty else []),
             "-F", "-", index=next(step), stdin=message_bytes)

    def write(path: str, data: bytes | str):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if isinstance(data, bytes) else data.encode())

    write("src/gather.py", "def gather(x):\n    return x\n")
    commit("base", "src/gather.py")
    _git(root, "tag", "base")
    expected: list[tuple[str, str]] = []

    def entry(label: str, kind: str):
        expected.append((label, kind))

    write("src/table.bin", bytes(range(256)) * 4)
    commit("Add a binary table", "src/table.bin"), entry("binary", "binary")
    write("src/table.bin", bytes(reversed(range(256))) * 4)
    commit("Change the binary table", "src/table.bin"), entry("binary-change", "binary")
    _git(root, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},third_party/sub")
    commit("Add a submodule", allow_empty=True), entry("submodule-add", "submodule")
    _git(root, "update-index", "--cacheinfo", f"160000,{'2' * 40},third_party/sub")
    commit("Bump the submodule", allow_empty=True), entry("submodule-bump", "submodule")
    _git(root, "update-index", "--force-remove", "third_party/sub")
    commit("Drop the submodule", allow_empty=True), entry("submodule-drop", "submodule")
    write("src/crlf.cu", "void gather(int n) {\r\n  int a = n;\r\n}\r\n")
    commit("Add a CRLF kernel", "src/crlf.cu"), entry("crlf-add", "text")
    write("src/crlf.cu", "void gather(int n) {\r\n  int a = n + 1;\r\n}\r\n")
    commit("Edit the CRLF kernel", "src/crlf.cu"), entry("crlf-edit", "text")
    write("src/latin1.py", b"def gather(x):\n    return x  # caf\xe9\n")
    commit(b"[Kernel] Non-UTF-8 message: caf\xe9 \xff\xfe (#7)\n\nbody \xe9\n", "src/latin1.py")
    entry("non-utf8", "text")
    write("src/huge.py", "x = '" + "a" * (10 * 1024 * 1024) + "'\n")
    commit("Add a 10 MB single-line file", "src/huge.py"), entry("ten-megabytes", "text")
    os.symlink("gather.py", root / "src" / "link.py")
    commit("Add a symlink", "src/link.py"), entry("symlink", "text")
    (root / "src" / "crlf.cu").unlink()
    os.symlink("gather.py", root / "src" / "crlf.cu")
    commit("Turn a file into a symlink", "src/crlf.cu"), entry("type-change", "text")
    (root / "src" / "gather.py").chmod(0o755)
    commit("Make gather executable", "src/gather.py"), entry("mode-only", "mode-only")
    commit("Empty commit", allow_empty=True), entry("empty", None)
    write("src/long.py", "def gather(x):\n    return x + 1\n")
    commit(LONG_TITLE + "\n", "src/long.py"), entry("long-title", "text")
    for number, path in enumerate(ODD_PATHS):
        write(path, f"def gather(x):\n    return x + {number}\n")
        commit(f"Add {path!r}", path), entry(f"odd-path-{number}", "text")
    _git(root, "tag", "tip")
    return expected


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("odd")
    expected = build_odd_history(root / "up")
    (root / "port").mkdir()
    (root / "matrix.toml").write_text(OWNING_MATRIX)
    (root / "portq.toml").write_text(
        'tree = "port"\nmatrix = "matrix.toml"\nledger = "ledger.sqlite"\n[upstream.up]\npath = "up"\n'
    )
    return root, expected


@pytest.fixture(scope="module")
def scanned(corpus):
    root, expected = corpus
    previous = os.getcwd()
    os.chdir(root)
    try:
        from io import StringIO
        from contextlib import redirect_stderr, redirect_stdout

        out, err = StringIO(), StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["scan", "base..tip", "--json"])
        assert code == 0, err.getvalue()
        yield root, expected, json.loads(out.getvalue())
    finally:
        os.chdir(previous)


def test_every_odd_commit_is_one_recorded_entry(scanned):
    _, expected, document = scanned
    assert [e["entry"] for e in document["entries"]] == list(range(1, len(expected) + 1))
    assert all(e["verdict"] for e in document["entries"])


def test_non_utf8_message_and_long_title_are_kept_as_text(scanned):
    _, expected, document = scanned
    by_label = dict(zip((label for label, _ in expected), document["entries"]))
    title = by_label["non-utf8"]["title"]  # git re-encodes it (as Latin-1) or portq replaces the bad bytes
    assert title.startswith("[Kernel] Non-UTF-8 message: caf") and title.endswith(" (#7)") and len(title) < 50
    assert by_label["non-utf8"]["pr"] == 7
    assert by_label["long-title"]["title"] == LONG_TITLE.strip() and by_label["long-title"]["pr"] is None


def test_odd_paths_come_back_as_git_stores_them(scanned):
    _, expected, document = scanned
    by_label = dict(zip((label for label, _ in expected), document["entries"]))
    for number, path in enumerate(ODD_PATHS):
        symbols = by_label[f"odd-path-{number}"]["symbols"]
        assert {s["path"] for s in symbols} == {path}, symbols
        assert by_label[f"odd-path-{number}"]["rows"] == ["ALL"]


def test_unparsed_content_is_recorded_as_lines_with_the_reason(scanned):
    _, expected, document = scanned
    by_label = dict(zip((label for label, _ in expected), document["entries"]))
    for label in ("binary", "submodule-add", "submodule-bump", "submodule-drop", "mode-only", "ten-megabytes"):
        symbols = by_label[label]["symbols"]
        assert symbols and all(s["name"] == "<lines>" for s in symbols), (label, symbols)
    assert by_label["empty"]["symbols"] == [] and by_label["empty"]["rows"] == []


def test_the_history_reader_classifies_each_odd_change(corpus):
    from portq.upstream.history import Upstream

    root, expected = corpus
    with Upstream(root / "up", "up") as upstream:
        commits = list(upstream.commits(upstream.resolve_range("base..tip")))
    kinds = [{c.content for c in commit.changes} or {None} for commit in commits]
    assert [(label, {kind}) for label, kind in expected] == [(label, k) for (label, _), k in zip(expected, kinds)]


def test_show_and_summary_read_every_odd_entry_back(scanned, capsys, monkeypatch):
    root, expected, _ = scanned
    monkeypatch.chdir(root)
    for number in range(1, len(expected) + 1):
        assert main(["show", str(number), "--json"]) == 0, capsys.readouterr().err
        assert json.loads(capsys.readouterr().out)
    assert main(["summary"]) == 0, capsys.readouterr().err
    assert f"{len(expected)} entries." in capsys.readouterr().out


def test_a_rescan_of_the_corpus_is_identical(scanned, capsys, monkeypatch):
    root, _, document = scanned
    monkeypatch.chdir(root)
    assert main(["scan", "base..tip", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["entries"] == document["entries"] and again["wave"] != document["wave"]
