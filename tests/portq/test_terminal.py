"""Commit text is data on a terminal too: no markup, control sequence, hyperlink or bidi override gets through."""

from __future__ import annotations

import io
import re

import pytest

from portq.core.terminal import one_line, visible
from tests.portq.test_workflow import team  # noqa: F401  (the fixture)

HOSTILE_TITLE = ("[/red] closing [link=https://evil.invalid]click[/link] \x1b[2J\x1b]8;;https://evil.invalid\x1b\\"
                 "osc\x1b]8;;\x1b\\ \u202eevil\u202c [bold]b[/bold] :smile: \x07\x9b31m")
HOSTILE_PATH = "aiter/\x1b[31mred\u202etxt.py"
RAW = ("\x1b[2J", "\x1b]8;", "\u202e", "\u202c", "\x07", "\x9b")


def test_visible_escapes_controls_and_bidi_and_keeps_text():
    assert visible("a\x1b[2Jb\u202ec\td\ne") == "a\\x1b[2Jb\\u202ec\td\ne"
    assert one_line("a\nb\u2028c\x85") == "a\\x0ab\\u2028c\\x85"
    assert visible("plain [red] ünïcode ✓") == "plain [red] ünïcode ✓"


class Terminal(io.StringIO):
    """A stdout that says it is a terminal, so rich renders its tables and colours."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def hostile(team):
    team.commit_upstream("aiter", HOSTILE_TITLE, {HOSTILE_PATH: "def f(x):\n    return x\n"})
    return team


@pytest.mark.parametrize("stream", [io.StringIO, Terminal], ids=["pipe", "terminal"])
@pytest.mark.parametrize("argv", [["--all"], []], ids=["all", "default"])
def test_hostile_titles_and_paths_reach_the_scan_output_inert(hostile, stream, argv):
    code, out, err = hostile.portq("scan", f"{hostile.aiter[0][:10]}..HEAD", *argv, stdout=stream())
    assert code == 0, err
    for raw in RAW:
        assert raw not in out and raw not in err
    assert "\x1b]" not in out  # no OSC at all: no hyperlink
    if argv:
        flat = re.sub(r"\x1b\[[0-9;]*m", "", out)  # rich's own colours
        flat = flat.replace("\n", "").replace("│", "").replace(" ", "")
        assert "[/red]closing[link=https://evil.invalid]click[/link]\\x1b[2J" in flat
        assert "\\u202eevil" in flat and "[bold]b[/bold]:smile:" in flat


@pytest.mark.parametrize("stream", [io.StringIO, Terminal], ids=["pipe", "terminal"])
def test_hostile_titles_and_paths_reach_show_inert(hostile, stream):
    assert hostile.portq("scan", f"{hostile.aiter[0][:10]}..HEAD", "--json")[0] == 0
    code, out, err = hostile.portq("show", "2", "--upstream", "aiter", stdout=stream())
    assert code == 0, err
    for raw in RAW:
        assert raw not in out
    assert "\x1b]" not in out
    assert "[/red] closing [link=https://evil.invalid]click[/link] \\x1b[2J\\x1b]8;;" in out
    assert "aiter/\\x1b[31mred\\u202etxt.py::f" in out


def test_json_output_escapes_everything_outside_ascii(hostile):
    code, out, _ = hostile.portq("scan", f"{hostile.aiter[0][:10]}..HEAD", "--json", stdout=Terminal())
    assert code == 0 and out.isascii() and "\x1b" not in out and "\\u202e" in out


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("elapsed, shown", [(0.1, False), (2.0, True)])
def test_the_progress_bar_appears_only_once_a_scan_takes_more_than_a_moment(monkeypatch, elapsed, shown):
    from portq.reporting import output

    clock = _Clock()
    monkeypatch.setattr(output.time, "monotonic", clock)
    stream = Terminal()
    with output.progress(stream=stream, delay_s=0.5) as reporter:
        reporter.phase("reading a..b\x1b[2J", 10)
        clock.now = elapsed
        reporter.advance()
    assert bool(stream.getvalue()) is shown
    assert "\x1b[2J" not in stream.getvalue()
