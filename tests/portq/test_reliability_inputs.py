"""A catalogue of bad inputs: every one ends in exit 2 with one line, never a traceback or exit 1.

Each case names its class (range, matrix, config, upstream, tree, ledger,
entry), what it sets up, the command, and a fragment the line must hold (the
argument or path it names). Cases that need file modes or timing live in
``test_reliability_environment.py``.
"""
from __future__ import annotations

import json
import sqlite3

import pytest

from portq.cli import main
from tests.portq.fixtures import SAMPLE_MATRIX
from tests.portq.test_reliability import add_unrelated_root, workspace  # noqa: F401 (fixture)

GOOD_ROW = '[[row]]\nid = "A"\nupstream = "up"\npaths = ["csrc/"]\n'


def _matrix(text: str | bytes):
    def setup(root):
        data = text if isinstance(text, bytes) else text.encode()
        (root / "matrix.toml").write_bytes(data)
    return setup


def _config(text: str | bytes):
    def setup(root):
        (root / "portq.toml").write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup


def _ledger_bytes(data: bytes):
    def setup(root):
        (root / "ledger.sqlite").write_bytes(data)
    return setup


def _scanned(root):
    assert main(["scan", "base..tip", "--json"]) == 0


def _newer_schema(root):
    _scanned(root)
    with sqlite3.connect(root / "ledger.sqlite") as db:
        db.execute("UPDATE schema_version SET version = 99")
    db.close()


def _foreign_sqlite(root):
    with sqlite3.connect(root / "ledger.sqlite") as db:
        db.execute("CREATE TABLE notes (x)")
    db.close()


def _nothing(root):
    pass


def _mkdir(name):
    return lambda root: (root / name).mkdir()


def _file(name, text="x\n"):
    return lambda root: (root / name).write_text(text)


BAD_GLOBS = ["csrc/[z-a].cu", "x[!", "csrc/[abc", "***", "a/***/b", "../outside/x.cu", "csrc/../../x", "./csrc",
             "csrc//x", "/abs/x.cu", "[]"]

CASES = [
    # --- ranges
    *[("range", _nothing, ["scan", spec], fragment) for spec, fragment in [
        ("nope..tip", "unknown revision 'nope'"), ("tip..tip", "is empty"), ("tip..base", "did you mean base..tip"),
        ("base", "expected A..B"), ("base...tip", "expected A..B"), ("..tip", "both A and B"),
        ("base..", "both A and B"), ("-x..tip", "-x..tip"), ("base..tip~99", "unknown revision"),
        ("a..b..c", "expected A..B"), ("", "expected A..B"), ("base..HEAD@{99}", "unknown revision"),
        ("base..:/nothing-matches", "unknown revision"),
    ]],
    ("range", add_unrelated_root, ["scan", "other-root..tip"], "no common ancestor"),
    ("range", add_unrelated_root, ["scan", "tip..other-root"], "no common ancestor"),
    # --- the matrix
    *[("matrix", _matrix(GOOD_ROW.replace('"csrc/"', json.dumps(glob))), ["scan", "base..tip"], "matrix.toml:4")
      for glob in BAD_GLOBS],
    *[("matrix", _matrix(GOOD_ROW + f"exclude = [{json.dumps(glob)}]\n"), ["scan", "base..tip"], "matrix.toml:5")
      for glob in BAD_GLOBS],
    ("matrix", _matrix(b'[[row]]\nid = "A"\ntitle = "\xff"\nupstream = "up"\npaths = ["x"]\n'), ["scan", "base..tip"],
     "matrix.toml:3: not UTF-8"),
    ("matrix", _matrix(b"\xef\xbb\xbf\xc3"), ["matrix"], "not UTF-8"),
    ("matrix", _matrix("[[row]\n"), ["scan", "base..tip"], "invalid TOML"),
    ("matrix", _matrix(""), ["scan", "base..tip"], "no [[row]] tables"),
    ("matrix", _matrix('[[row]]\nupstream = "up"\npaths = ["x"]\n'), ["scan", "base..tip"], "missing 'id'"),
    ("matrix", _matrix(GOOD_ROW + GOOD_ROW), ["scan", "base..tip"], "duplicate id A"),
    ("matrix", _matrix(GOOD_ROW + 'owner = "me"\n'), ["scan", "base..tip"], "unknown key 'owner'"),
    ("matrix", _matrix('[[row]]\nid = "A"\nupstream = "up"\n'), ["matrix"], "claims nothing"),
    ("matrix", _matrix(SAMPLE_MATRIX.replace('upstream = "up"', 'upstream = "elsewhere"')), ["scan", "base..tip"],
     "names upstream 'elsewhere', which is not configured"),
    ("matrix", _nothing, ["scan", "base..tip", "--matrix", "missing.toml"], "missing.toml: matrix file does not exist"),
    ("matrix", _mkdir("adir"), ["scan", "base..tip", "--matrix", "adir"], "adir"),
    # --- the config file and its flags
    ("config", _config(b'tree = "port"\n# \xfe\n'), ["scan", "base..tip"], "portq.toml:2: not UTF-8"),
    ("config", _config('tree = "port"\n[upstream\n'), ["scan", "base..tip"], "invalid TOML"),
    ("config", _config('trees = "port"\n'), ["scan", "base..tip"], "unknown key 'trees'"),
    ("config", _config('upstream = "up"\n'), ["scan", "base..tip"], "must be a table"),
    ("config", _nothing, ["scan", "base..tip", "--upstream", ""], "--upstream"),
    ("config", _nothing, ["scan", "base..tip", "--upstream", "up="], "--upstream up="),
    ("config", _nothing, ["scan", "base..tip", "--tree", ""], "--tree"),
    # --- the upstream clone
    ("upstream", _nothing, ["scan", "base..tip", "--upstream", "up=missing"], "does not exist"),
    ("upstream", _file("plain.txt"), ["scan", "base..tip", "--upstream", "up=plain.txt"], "is not a directory"),
    ("upstream", _mkdir("plain"), ["scan", "base..tip", "--upstream", "up=plain"], "is not a git repository"),
    ("upstream", lambda root: (root / "up" / "csrc").mkdir(exist_ok=True), ["scan", "base..tip", "--upstream", "up=up/csrc"],
     "is not a git repository (it is inside"),
    # --- the tree
    ("tree", _nothing, ["scan", "base..tip", "--tree", "missing"], "does not exist"),
    ("tree", _file("afile"), ["scan", "base..tip", "--tree", "afile"], "is not a directory"),
    ("tree", _nothing, ["matrix", "--tree", "missing"], "does not exist"),
    # --- the ledger
    ("ledger", _ledger_bytes(b"my notes\n"), ["scan", "base..tip"], "is not a portq ledger"),
    ("ledger", _ledger_bytes(b"my notes\n"), ["show", "1"], "is not a portq ledger"),
    ("ledger", _foreign_sqlite, ["summary"], "an SQLite database with other tables"),
    ("ledger", _newer_schema, ["show", "1"], "newer than this portq"),
    ("ledger", _newer_schema, ["scan", "base..tip"], "newer than this portq"),
    ("ledger", _mkdir("ledger.sqlite"), ["summary"], "is a directory"),
    ("ledger", _nothing, ["show", "1"], "no ledger at"),
    ("ledger", _nothing, ["review", "1", "--verdict", "REAL_GAP", "--because", "x"], "no ledger at"),
    ("ledger", _file("afile"), ["scan", "base..tip", "--ledger", "afile/ledger.sqlite"], "afile"),
    # --- entries and reviews
    ("entry", _scanned, ["show", "0"], "0"),
    ("entry", _scanned, ["show", "4"], "4"),
    ("entry", _scanned, ["show", "x"], "N"),
    ("entry", _scanned, ["show", "1", "--range", "nope..tip"], "nope..tip"),
    ("entry", _scanned, ["review", "1", "--verdict", "MAYBE", "--because", "x"], "MAYBE"),
    ("entry", _scanned, ["review", "1", "--verdict", "REAL_GAP"], "--because"),
    ("entry", _scanned, ["review", "1", "--verdict", "NOT_APPLICABLE", "--justification", "whatever", "--because", "x"],
     "--justification"),
    ("entry", _scanned, ["review", "1", "--undo", "--because", "x"], "no review to undo"),
    ("entry", _scanned, ["file-issue", "9"], "9"),
]


@pytest.mark.parametrize("kind, setup, arguments, fragment", CASES,
                         ids=[f"{c[0]}-{i}-{' '.join(c[2])[:40]}" for i, c in enumerate(CASES)])
def test_bad_input_is_exit_2_in_one_line(workspace, capsys, kind, setup, arguments, fragment):  # noqa: F811
    root, _ = workspace
    setup(root)
    capsys.readouterr()
    code = main(arguments)
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("portq: error: "), err
    assert fragment in err, err
