"""Inputs a new team's machine or a hostile repository hands portq: each is one line and exit 2
(or, where the input is harmless, a normal run), never a hang or a traceback."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.portq.golden.reports.scenario import scanned


def _one_error(result) -> str:
    lines = result.err.strip().splitlines()
    assert result.code == 2, (result.code, result.err)
    assert len(lines) == 1 and lines[0].startswith("portq: error:"), result.err
    return lines[0]


def test_a_fifo_among_the_port_files_does_not_hang_a_fresh_scan(tmp_path):
    scenario = scanned(tmp_path)
    os.mkfifo(tmp_path / "tree" / "blocking_kernel.py")
    # In a child with a deadline: reading the FIFO would block forever.
    result = subprocess.run([sys.executable, "-m", "portq", "scan", scenario.range, "--fresh", "--json",
                             *scenario.flags()], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [entry["verdict"] for entry in json.loads(result.stdout)["entries"]] == ["REAL_GAP"]


def test_a_symlink_loop_as_the_upstream_is_one_line(tmp_path):
    scenario = scanned(tmp_path)
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    shutil.rmtree(tmp_path / "upstream")
    (tmp_path / "upstream").symlink_to(tmp_path / "loop-a")
    line = _one_error(scenario.portq("scan", scenario.range))
    assert "symbolic link loop" in line


@pytest.mark.parametrize("file", ["matrix.toml", "portq.toml"])
def test_a_deeply_nested_toml_is_one_line(tmp_path, file):
    scenario = scanned(tmp_path)
    (tmp_path / file).write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    line = _one_error(scenario.portq("status"))
    assert "nested too deeply" in line and file in line


@pytest.mark.parametrize("place", ["/etc/", "../../", "kernels/../../outside", "~/port"])
def test_a_tree_path_outside_the_repository_is_refused(tmp_path, place):
    scenario = scanned(tmp_path)
    matrix = tmp_path / "matrix.toml"
    text = matrix.read_text()
    assert "tree" in text
    matrix.write_text("\n".join(f'tree = ["{place}"]' if line.startswith("tree") else line
                                for line in text.splitlines()) + "\n")
    line = _one_error(scenario.portq("scan", scenario.range))
    assert "outside the repository" in line and place in line


def test_a_utf8_bom_in_the_matrix_and_config_is_read(tmp_path):
    scenario = scanned(tmp_path)
    for name in ("matrix.toml",):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (tmp_path / "portq.toml").write_bytes(b"\xef\xbb\xbf" + b'[upstream.vllm]\npath = "upstream"\n')
    result = scenario.portq("scan", scenario.range, "--json")
    assert result.code == 0, result.err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the clone to another user")
def test_a_clone_owned_by_another_user_names_gits_reason_and_the_fix(tmp_path):
    scenario = scanned(tmp_path)
    for directory, _subdirectories, files in os.walk(tmp_path / "upstream"):
        os.chown(directory, 65534, 65534)
        for name in files:
            os.lchown(os.path.join(directory, name), 65534, 65534)
    home = tmp_path / "home"
    home.mkdir()
    previous = {key: os.environ.get(key) for key in ("HOME", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME")}
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), XDG_CONFIG_HOME=str(home))
    try:
        line = _one_error(scenario.portq("scan", scenario.range))
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert "dubious ownership" in line and "safe.directory" in line and "not a git repository" not in line
