"""The labelled accuracy corpus (examples/accuracy/, docs/accuracy.md) is well
formed, and its scoring script says so plainly when there is no aiter clone.

CI has no aiter clone, so nothing here scans; ``benchmarks/accuracy.py``
scores the corpus where a clone exists.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from portq.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "accuracy.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("accuracy_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


accuracy = _load_script()
PORTS = accuracy.load_corpus()


def test_corpus_has_the_three_kinds_of_port():
    kinds = {port.name: port.kind for port in PORTS}
    assert len(PORTS) >= 3, kinds
    assert any("close" in kind for kind in kinds.values()), kinds
    assert any("re-implementation" in kind for kind in kinds.values()), kinds
    assert any("cross-language" in kind for kind in kinds.values()), kinds


@pytest.mark.parametrize("port", PORTS, ids=lambda p: p.name)
def test_matrix_loads_and_every_anchor_resolves_in_the_port_tree(port, capsys, tmp_path):
    code = main([
        "matrix", "--json",
        "--tree", str(accuracy.port_tree(port, tmp_path)),
        "--matrix", str(port.matrix),
        "--ledger", str(tmp_path / "ledger.sqlite"),
    ])
    page = json.loads(capsys.readouterr().out)
    assert code == 0
    assert page["problems"] == []
    ports = [p for row in page["rows"] for p in row["ports"]]
    assert ports, f"{port.name}: no ports anchor in the tree"
    for anchored in ports:
        assert anchored["definition"], anchored
        assert anchored["anchor"].startswith(f"{port.upstream}:"), anchored
    if port.tree_without:
        # A test-only variant: nothing but its tests reaches the port.
        assert not any(p["non_test_callers"] for p in ports), ports
    else:
        # Reachability is real: an engine module calls some port, not only tests.
        assert any(p["non_test_callers"] for p in ports), ports


@pytest.mark.parametrize("port", PORTS, ids=lambda p: p.name)
def test_every_label_has_a_verdict_from_the_vocabulary_and_a_reason(port):
    # load_corpus already rejects a malformed label; check what it returned.
    assert port.labels
    for label in port.labels:
        assert label.verdict in accuracy.VERDICTS
        assert (label.justification in accuracy.JUSTIFICATIONS) == (label.verdict == "NOT_APPLICABLE")
        assert label.reason
    # A range is worth scoring only if it has something to flag.
    assert any(label.verdict in accuracy.FLAGGED for label in port.labels), port.name


@pytest.mark.parametrize("port", [p for p in PORTS if p.tree_from], ids=lambda p: p.name)
def test_a_variant_port_is_the_other_tree_less_its_drops_plus_its_own_files(port, tmp_path):
    tree = accuracy.port_tree(port, tmp_path)
    base = port.directory.parent / port.tree_from
    own = [p for p in port.directory.rglob("*") if p.suffix in (".py", ".cu", ".cpp")]
    assert own or port.tree_without, f"{port.name} changes nothing of {port.tree_from}"
    for path in own:
        assert (tree / path.relative_to(port.directory)).read_text() == path.read_text()
    for dropped in port.tree_without:
        assert (base / dropped).exists() and not (tree / dropped).exists()
    assert not (tree / "labels.toml").exists()


def test_a_variant_dropping_what_its_base_lacks_is_rejected(tmp_path):
    directory = _write_port(tmp_path, '[[entry]]\nsha = "abcdef1"\nverdict = "IN_SYNC"\nreason = "r"\n')
    (directory.parent / "base").mkdir()
    (directory.parent / "base" / "labels.toml").write_text("")
    labels = directory / "labels.toml"
    labels.write_text(labels.read_text().replace('range = "a..b"\n', 'range = "a..b"\ntree_from = "base"\ntree_without = ["engine"]\n'))
    port = accuracy.load_port(directory)
    with pytest.raises(accuracy.CorpusError, match="tree_without 'engine': not in base's tree"):
        accuracy.port_tree(port, tmp_path / "work")


def _write_port(root: Path, body: str) -> Path:
    directory = root / "p"
    directory.mkdir()
    (directory / "labels.toml").write_text(
        'port = "p"\nkind = "k"\nupstream = "aiter"\nrange = "a..b"\n' + body
    )
    return directory


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('sha = "abcdef1"\nverdict = "GAP"\nreason = "r"', "verdict = 'GAP'"),
        ('sha = "abcdef1"\nverdict = "NOT_APPLICABLE"\nreason = "r"', "justification = None"),
        ('sha = "abcdef1"\nverdict = "IN_SYNC"\njustification = "no-row"\nreason = "r"', "only NOT_APPLICABLE"),
        ('sha = "abcdef1"\nverdict = "IN_SYNC"\nreason = " "', "reason missing"),
        ('sha = "XYZ"\nverdict = "IN_SYNC"\nreason = "r"', "sha = 'XYZ'"),
    ],
)
def test_a_malformed_label_is_rejected_with_its_entry(tmp_path, entry, message):
    directory = _write_port(tmp_path, f"[[entry]]\n{entry}\n")
    with pytest.raises(accuracy.CorpusError, match="entry 1") as raised:
        accuracy.load_port(directory)
    assert message in str(raised.value)


def test_a_sha_labelled_twice_is_rejected(tmp_path):
    one = '[[entry]]\nsha = "abcdef1"\nverdict = "IN_SYNC"\nreason = "r"\n'
    directory = _write_port(tmp_path, one + one)
    with pytest.raises(accuracy.CorpusError, match="labelled twice"):
        accuracy.load_port(directory)


def test_scores_count_flagged_and_real_gap_from_both_sides():
    label = lambda verdict: accuracy.Label("abcdef1", "", verdict, None, "r")  # noqa: E731
    outcomes = [
        accuracy.Outcome("p", label("REAL_GAP"), "REAL_GAP", None, 1),
        accuracy.Outcome("p", label("NEEDS_REVIEW"), "REAL_GAP", None, 2),
        accuracy.Outcome("p", label("IN_SYNC"), "NEEDS_REVIEW", None, 3),
        accuracy.Outcome("p", label("NEEDS_REVIEW"), "NOT_APPLICABLE", "no-row", 4),
    ]
    scores = accuracy.score(outcomes)
    assert scores["flagged"] == {"tool": 3, "labelled": 3, "both": 2, "precision": 2 / 3, "recall": 2 / 3}
    assert scores["real_gap"] == {"tool": 2, "labelled": 1, "both": 1, "precision": 0.5, "recall": 1.0}
    assert scores["confusion"][("NEEDS_REVIEW", "REAL_GAP")] == 1


def _run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=REPO_ROOT)


def test_script_skips_cleanly_without_a_clone(tmp_path):
    config = tmp_path / "portq.toml"
    config.write_text('[upstream.aiter]\npath = "no-aiter-here"\n')
    result = _run_script("--config", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: no aiter clone at ")
    assert str(tmp_path / "no-aiter-here") in result.stdout
    assert "Scores" not in result.stdout


def test_script_rejects_an_aiter_path_that_is_not_a_clone(tmp_path):
    result = _run_script("--aiter", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == f"accuracy: --aiter {tmp_path}: expected a git clone of github.com/ROCm/aiter"


def test_script_rejects_an_unknown_port():
    result = _run_script("--port", "nope")
    assert result.returncode == 2
    assert "--port nope: expected one of" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_script_stops_with_one_line_when_the_clone_lacks_a_range(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = _run_script("--aiter", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown revision" in lines[0], result.stderr
