"""The command line: lazy subcommands, shared options, exit codes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from portq import cli

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_command_without_importing_them(capsys):
    before = {name for name in sys.modules if name.startswith("portq.commands.")}
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in cli.COMMANDS)
    assert {name for name in sys.modules if name.startswith("portq.commands.")} == before


def test_a_command_whose_module_is_missing_is_a_one_line_error(monkeypatch, capsys):
    monkeypatch.setitem(cli.COMMANDS, "nonesuch", "a command not written yet")
    assert cli.main(["nonesuch"]) == 2
    err = capsys.readouterr().err
    assert err == "portq: error: portq nonesuch: this command is not available in this installation " \
                  "(portq.commands.nonesuch is missing)\n"


@pytest.mark.parametrize("command", ["scan", "show"])
def test_config_and_json_options_are_shared_by_every_command(command):
    parser = cli.build_parser(command)
    subparser = parser._subparsers._group_actions[0].choices[command]
    options = {option for action in subparser._actions for option in action.option_strings}
    assert {"--upstream", "--tree", "--matrix", "--ledger", "--json"} <= options


def test_usage_error_exits_2_in_one_line(capsys):
    assert cli.main(["show", "zero"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("portq: error: portq show: argument N: expected an entry number") and err.count("\n") == 1


def test_show_without_a_ledger_says_to_scan_first(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["show", "1", "--ledger", "none.sqlite"]) == 2
    assert "run portq scan first" in capsys.readouterr().err


def test_internal_error_exits_1_without_a_traceback(monkeypatch, capsys):
    import portq.commands.show as show

    def broken(args, config):
        raise RuntimeError("boom")

    monkeypatch.setattr(show, "run", broken)
    assert cli.main(["show", "1"]) == 1
    err = capsys.readouterr().err
    assert "portq: internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_console_script_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "portq.cli", "--version"], capture_output=True, text=True,
                            cwd=REPO_ROOT)
    assert result.returncode == 0 and result.stdout.startswith("portq ")
