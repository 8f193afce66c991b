"""The ``portq`` command line: the argument tree and nothing else.

Each subcommand lives in ``portq/commands/<name>.py`` and exposes
``add_arguments(parser)`` and ``run(args, workspace) -> int`` (a
``portq.pipeline.workspace.Workspace``: the configuration, and the matrix, tree and
ledger loaded when first asked for); only the module of
the command being run is imported, so ``portq --help`` and small commands
start fast and never import a stage they do not use. The shared option groups
(config overrides, ``--json``) are defined once here and given to every
command.

Exit codes: 0 ok, 2 usage, input or environment error (one line on stderr,
no traceback: ``portq.core.errors``), 3 a ``--fail-on`` verdict stands in the upstream's ledger,
1 internal error (a bug), 130 interrupted. Set ``PORTQ_DEBUG=1`` to see the traceback
of an internal error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import signal
import sys
import traceback
from typing import Sequence

from portq import __version__
from portq.core import standard_streams
from portq.core.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, PortqError, environment_error

COMMANDS: dict[str, str] = {
    "init": "set portq up on a port that records no provenance: propose anchors, bases and matrix rows",
    "scan": "audit an upstream range A..B (default: what is new since the last scan); record a wave",
    "status": "per upstream: the last scanned commit, how far the clone is beyond it, open flagged entries",
    "show": "show entry N of the newest complete wave, with its verdict history",
    "file-issue": "render entry N as an issue report under reports/",
    "review": "record a human verdict for entry N (--verdict V --because \"...\")",
    "summary": "summarise a wave: verdict counts, gaps by row, coverage holes",
    "matrix": "list the matrix rows, their anchors, and ported symbols without tests",
    "verify": "run the tests of the kernels a matrix row owns",
    "demo": "build the embedded demo upstream, scan it and file its report",
}
"""Subcommand → one-line help, in the order ``portq --help`` lists them."""


def module_name(command: str) -> str:
    return "portq.commands." + command.replace("-", "_")


def _config_options() -> argparse.ArgumentParser:
    group_parser = argparse.ArgumentParser(add_help=False)
    group = group_parser.add_argument_group("configuration (overrides portq.toml)")
    group.add_argument(
        "--upstream",
        action="append",
        metavar="NAME|PATH|NAME=PATH",
        help="pick an upstream by NAME, give its clone as NAME=PATH, or give the PATH of the "
        "matrix's only upstream (repeatable)",
    )
    group.add_argument("--tree", metavar="PATH", help="the in-tree port's root directory")
    group.add_argument("--matrix", metavar="PATH", help="the kernel matrix (TOML)")
    group.add_argument("--ledger", metavar="PATH", help="the ledger file (SQLite)")
    return group_parser


def _output_options() -> argparse.ArgumentParser:
    group_parser = argparse.ArgumentParser(add_help=False)
    group = group_parser.add_argument_group("output")
    group.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    return group_parser


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors with exit code 2 in one line."""

    def error(self, message: str) -> None:  # pragma: no cover - exercised through main()
        raise PortqError(f"{self.prog}: {message}")


def build_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s own arguments are loaded (lazily)."""
    parser = _Parser(prog="portq", description="Keep a downstream kernel port honest against its upstreams.")
    parser.add_argument("--version", action="version", version=f"portq {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    shared = [_config_options(), _output_options()]
    for name, help_text in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text, parents=shared)
        if name == command:
            _load(name).add_arguments(sub)
    return parser


def _load(command: str):
    name = module_name(command)
    if importlib.util.find_spec(name) is None:
        raise PortqError(f"portq {command}: this command is not available in this installation ({name} is missing)")
    return importlib.import_module(name)


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (its first non-option word)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _one_line(error: BaseException) -> str:
    """An error message as one visible line (it may quote a commit title or a range)."""
    from portq.core.terminal import one_line

    return one_line(error)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    previous = signal.signal(signal.SIGTERM, _terminate)
    config = None
    try:
        standard_streams.prepare()
        command = _command_of(argv)
        parser = build_parser(command)
        # Everything after a bare "--" belongs to the tool a command runs
        # (pytest, for verify); argparse with subcommands does not pass it on.
        passthrough: list[str] = []
        if "--" in argv:
            cut = argv.index("--")
            argv, passthrough = argv[:cut], argv[cut + 1:]
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if passthrough:
            if not hasattr(args, "pytest_args"):
                parser.error(f"{args.command} takes no arguments after '--'")
            args.pytest_args = list(args.pytest_args or []) + passthrough
        module = _load(args.command)
        from portq.core.config import load_config
        from portq.pipeline.workspace import Workspace

        config = load_config(upstream=args.upstream, tree=args.tree, matrix=args.matrix, ledger=args.ledger)
        with Workspace(config) as workspace:
            return int(module.run(args, workspace) or 0)
    except PortqError as error:
        print(f"portq: error: {_one_line(error)}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("portq: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as git does
        standard_streams.quiet_after_broken_pipe()
        return 0
    except Exception as error:  # an internal error unless the environment failed: say so plainly
        problem = environment_error(error, ledger=config.ledger_path if config is not None else None)
        if problem is not None:
            print(f"portq: error: {_one_line(problem)}", file=sys.stderr)
            return problem.exit_code
        print(f"portq: internal error: {type(error).__name__}: {_one_line(error)}", file=sys.stderr)
        if os.environ.get("PORTQ_DEBUG"):
            traceback.print_exc()
        else:
            print("portq: rerun with PORTQ_DEBUG=1 for the traceback", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
