"""Closed pipes, a closed stdout and narrow encodings end as git's do (``portq.standard_streams``);
``scan --json`` always prints its document."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.portq.golden.reports.scenario import scanned

TITLE = "[Kernel] Gather → page tasks for the naïve cache (#7)"


def _run(scenario, *argv, env=None, stdout=subprocess.PIPE, shell_suffix=None):
    command = [sys.executable, "-m", "portq", *argv, *scenario.flags()]
    environment = dict(os.environ, **(env or {}))
    if shell_suffix is not None:
        import shlex

        return subprocess.run(["bash", "-c", " ".join(map(shlex.quote, command)) + " " + shell_suffix],
                              cwd=scenario.root, env=environment, capture_output=True, text=True, timeout=120)
    return subprocess.run(command, cwd=scenario.root, env=environment, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120)


def test_a_closed_pipe_ends_the_command_quietly_with_exit_0(tmp_path):
    scenario = scanned(tmp_path, title=TITLE)
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before portq writes a byte
    try:
        result = _run(scenario, "scan", scenario.range, "--all", stdout=writer)
    finally:
        os.close(writer)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error" not in result.stderr


def test_a_closed_stdout_is_one_line_exit_2(tmp_path):
    scenario = scanned(tmp_path, title=TITLE)
    result = _run(scenario, "status", shell_suffix=">&-")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("portq: error: standard output is closed")


def test_an_ascii_stdout_gets_escapes_not_an_error(tmp_path):
    scenario = scanned(tmp_path, title=TITLE)
    result = _run(scenario, "show", "1", env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 0, result.stderr
    assert "\\u2192" in result.stdout and "na\\xefve" in result.stdout
    assert result.stdout.isascii()


def test_scan_json_with_nothing_new_prints_the_empty_document(tmp_path):
    scenario = scanned(tmp_path)
    result = scenario.portq("scan", "--json")
    assert result.code == 0, result.err
    document = result.json()
    assert document["entries"] == [] and document["upstream"] == "vllm"
    assert document["status"] == "nothing-new" and document["wave"] is None
