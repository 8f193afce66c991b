"""portq verify: the row's tests run in a pytest subprocess, counted per file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from portq.commands import verify
from portq.core.config import load_config
from portq.core.errors import PortqError
from portq.pipeline.workspace import Workspace

MATRIX = """
[[row]]
id       = "ROW-GOOD"
upstream = "up"
paths    = ["a/**"]
tests    = ["tests/good/"]

[[row]]
id       = "ROW-BAD"
upstream = "up"
paths    = ["b/**"]
tests    = ["tests/bad/", "tests/gone/"]

[[row]]
id       = "ROW-GPU"
upstream = "up"
paths    = ["g/**"]
tests    = ["tests/gpu/"]

[[row]]
id       = "ROW-NONE"
upstream = "up"
paths    = ["c/**"]
"""

GOOD = """
import os
import pytest

def test_runs_on_the_interpreter():
    assert os.environ.get("TRITON_INTERPRET") == "1"

def test_two():
    assert 1 + 1 == 2

@pytest.mark.gpu
def test_gpu_only():
    assert "TRITON_INTERPRET" not in os.environ
"""

BAD = """
def test_passes():
    assert True

def test_fails():
    assert 1 == 2
"""

GPU_ONLY = """
import pytest

@pytest.mark.gpu
def test_on_the_device():
    assert True

@pytest.mark.gpu
def test_needs_two_devices():
    pytest.skip("one device")
"""


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the child pytest starts in 0.5 s, not 2 s
    (tmp_path / "matrix.toml").write_text(MATRIX)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: needs a GPU\n")
    for name, body in (("good", GOOD), ("bad", BAD), ("gpu", GPU_ONLY)):
        folder = tmp_path / "tests" / name
        folder.mkdir(parents=True)
        (folder / f"test_{name}.py").write_text(body)
    return tmp_path


def verify_in(tree: Path, row: str, *extra: str, device: str = "cpu", as_json: bool = False) -> int:
    config = load_config(cwd=tree, matrix="matrix.toml", tree=".")
    args = argparse.Namespace(row=row, device=device, pytest_args=list(extra), json=as_json)
    with Workspace(config) as workspace:
        return verify.run(args, workspace)


def test_passing_row_exits_zero_and_counts_per_file(tree, capsys):
    assert verify_in(tree, "ROW-GOOD") == 0
    out = capsys.readouterr().out
    assert "Triton interpreter" in out
    assert "tests/good/test_good.py" in out and "ROW-GOOD passed" in out


def test_failing_row_exits_with_pytest_status(tree, capsys):
    assert verify_in(tree, "ROW-BAD") == 1
    assert "did not pass (pytest exit status 1)" in capsys.readouterr().out


def test_json_reports_counts_per_file(tree, capsys):
    assert verify_in(tree, "ROW-BAD", as_json=True) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == [{"file": "tests/bad/test_bad.py", "passed": 1, "failed": 1, "errors": 0, "skipped": 0,
                                "gpu": 0, "gpu_deselected": 0, "gpu_skipped": 0}]
    assert report["device"] == "cpu" and report["missing_paths"] == ["tests/gone/"]
    assert report["exit_status"] == 1


def test_gpu_mode_runs_the_whole_suite_compiled_and_counts_the_gpu_marked(tree, capsys, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(verify, "cuda_unavailable", lambda: None)  # a machine where torch sees a GPU
    assert verify_in(tree, "ROW-GOOD", device="gpu", as_json=True) == 1
    report = json.loads(capsys.readouterr().out)
    # all three ran: the gpu-marked one, and the interpreter-only one failing because the interpreter is off
    assert report["totals"] == {"passed": 2, "failed": 1, "errors": 0, "skipped": 0, "gpu": 1,
                                "gpu_deselected": 0, "gpu_skipped": 0}
    assert "-m" not in report["command"][3:]  # no marker filter after "python -m pytest"


def test_cpu_mode_counts_the_gpu_marked_tests_it_deselected(tree, capsys):
    assert verify_in(tree, "ROW-GOOD", as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["passed"] == 2
    assert report["totals"]["gpu"] == 0 and report["totals"]["gpu_deselected"] == 1
    assert [f["file"] for f in report["files"]] == ["tests/good/test_good.py"]  # one row per file, merged


def test_a_file_whose_tests_were_all_deselected_is_still_listed(tree, capsys):
    assert verify_in(tree, "ROW-GPU", as_json=True) == 5  # pytest: no tests ran
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == [{"file": "tests/gpu/test_gpu.py", "passed": 0, "failed": 0, "errors": 0, "skipped": 0,
                                "gpu": 0, "gpu_deselected": 2, "gpu_skipped": 0}]


def test_gpu_mode_counts_the_gpu_marked_tests_that_skipped(tree, capsys, monkeypatch):
    monkeypatch.setattr(verify, "cuda_unavailable", lambda: None)
    assert verify_in(tree, "ROW-GPU", device="gpu", as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"] == {"passed": 1, "failed": 0, "errors": 0, "skipped": 1, "gpu": 1,
                                "gpu_deselected": 0, "gpu_skipped": 1}


def test_the_table_says_how_many_gpu_marked_tests_did_not_run(tree, capsys):
    assert verify_in(tree, "ROW-GOOD") == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.strip().startswith("file"))
    total = next(line for line in lines if line.strip().startswith("total"))
    assert header.split()[-6:] == ["gpu", "ran", "gpu", "deselected", "gpu", "skipped"], header
    assert total.split()[-3:] == ["0", "1", "0"], total  # the gpu-marked test was deselected, not run


def test_gpu_mode_without_a_usable_cuda_device_is_an_error_not_a_pass(tree, monkeypatch):
    monkeypatch.setattr(verify, "cuda_unavailable", lambda: "torch 2.13.0+cpu sees no CUDA device")
    with pytest.raises(PortqError, match=r"--device gpu: no usable CUDA device \(torch 2.13.0\+cpu sees no CUDA"):
        verify_in(tree, "ROW-GOOD", device="gpu")


def test_gpu_mode_on_this_machine_exits_2_without_cuda(tree, capsys, monkeypatch):
    from portq.cli import main

    if verify.cuda_unavailable() is None:
        pytest.skip("this machine has a CUDA device")
    monkeypatch.chdir(tree)
    assert main(["verify", "ROW-GOOD", "--matrix", "matrix.toml", "--tree", ".", "--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no usable CUDA device" in err


def test_verify_without_pytest_says_what_to_install(tree, monkeypatch):
    monkeypatch.setattr(verify, "pytest_available", lambda: False)
    with pytest.raises(PortqError, match=r"pytest is not installed .*pip install 'portq\[test\]'"):
        verify_in(tree, "ROW-GOOD")


def test_pytest_args_after_the_row_reach_pytest(tree, capsys):
    assert verify_in(tree, "ROW-BAD", "-k", "passes", as_json=True) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["passed"] == 1


def test_auto_device_falls_back_to_the_cpu_without_cuda(tree, capsys, monkeypatch):
    monkeypatch.setattr(verify, "cuda_unavailable", lambda: "no CUDA here")
    assert verify_in(tree, "ROW-GOOD", device="auto", as_json=True) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "cpu"


def test_unknown_row_lists_the_rows(tree):
    with pytest.raises(PortqError, match="no row 'NOPE'.*ROW-GOOD, ROW-BAD"):
        verify_in(tree, "NOPE")


def test_row_without_tests_is_an_error(tree):
    with pytest.raises(PortqError, match="row ROW-NONE lists no tests"):
        verify_in(tree, "ROW-NONE")


def test_cuda_probe_says_why_when_the_interpreter_cannot_run(tmp_path):
    assert "cannot run" in verify.cuda_unavailable(str(tmp_path / "no-such-python"))


def test_cuda_probe_says_why_when_torch_is_missing():
    assert verify.cuda_unavailable("/usr/bin/python3").startswith("torch cannot be imported")


def test_the_command_line_hands_what_follows_a_bare_double_dash_to_pytest(tree, capsys, monkeypatch):
    from portq.cli import main

    monkeypatch.chdir(tree)
    code = main(["verify", "ROW-BAD", "--matrix", "matrix.toml", "--tree", ".", "--device", "cpu", "--json",
                 "--", "-k", "passes"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["totals"]["passed"] == 1


def test_a_double_dash_is_refused_by_commands_that_run_no_tool(tree, capsys, monkeypatch):
    from portq.cli import main

    monkeypatch.chdir(tree)
    assert main(["matrix", "--matrix", "matrix.toml", "--", "-k", "x"]) == 2
    assert "matrix takes no arguments after '--'" in capsys.readouterr().err
