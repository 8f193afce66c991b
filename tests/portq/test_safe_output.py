"""Writing where a user points: only a regular file is replaced, ``-`` is stdout (``portq.core.safe_output``)."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from portq.core.safe_output import UnsafeTarget, write_text
from tests.portq.golden.reports.scenario import scanned


def _one_error_line(result) -> str:
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err
    return lines[0]


def test_html_to_a_fifo_is_refused_and_the_fifo_stays(tmp_path):
    scenario = scanned(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = scenario.portq("summary", "--html", str(fifo))
    assert result.code == 2
    assert "FIFO" in _one_error_line(result)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_html_over_a_symlink_is_refused_and_its_target_untouched(tmp_path):
    scenario = scanned(tmp_path)
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = tmp_path / "page.html"
    link.symlink_to(target)
    result = scenario.portq("summary", "--html", str(link))
    assert result.code == 2 and "symbolic link" in _one_error_line(result)
    assert link.is_symlink() and target.read_text() == "keep me\n"


def test_html_to_a_character_device_is_refused(tmp_path):
    scenario = scanned(tmp_path)
    # A private twin of /dev/null: were the check ever lost, the real one must not be what gets replaced.
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a character device needs root (CI runs as root)")
    result = scenario.portq("summary", "--html", str(device))
    assert result.code == 2 and "character device" in _one_error_line(result)
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_html_over_a_binary_file_is_exit_2_not_an_internal_error(tmp_path):
    scenario = scanned(tmp_path)
    binary = tmp_path / "page.html"
    binary.write_bytes(bytes(range(256)) * 4)
    result = scenario.portq("summary", "--html", str(binary))
    assert result.code == 2 and "binary" in _one_error_line(result)
    assert binary.read_bytes() == bytes(range(256)) * 4


def test_html_dash_writes_the_page_to_stdout_and_no_file(tmp_path):
    scenario = scanned(tmp_path)
    result = scenario.portq("summary", "--html", "-")
    assert result.code == 0, result.err
    assert result.out.lstrip().lower().startswith("<!doctype html")
    assert not (scenario.root / "-").exists() and not Path("-").exists()


def test_html_replaces_a_regular_file_keeping_its_mode_and_leaves_no_temporary(tmp_path):
    scenario = scanned(tmp_path)
    page = tmp_path / "out" / "page.html"
    page.parent.mkdir()
    page.write_text("old page\n")
    page.chmod(0o640)
    result = scenario.portq("summary", "--html", str(page))
    assert result.code == 0, result.err
    assert "<html" in page.read_text().lower()
    assert stat.S_IMODE(page.stat().st_mode) == 0o640
    assert sorted(p.name for p in page.parent.iterdir()) == ["page.html"]


def test_write_text_refuses_a_directory_and_reports_unchanged(tmp_path):
    with pytest.raises(UnsafeTarget):
        write_text(tmp_path, "x")
    assert write_text(tmp_path / "a.txt", "same") is True
    assert write_text(tmp_path / "a.txt", "same") is False
