"""``portq verify ROW [-- PYTEST_ARGS]``: run the tests of the kernels a row owns.

This is how a maintainer checks a port before calling it done (the "done
when" of every issue report). The row's ``tests`` paths are run with pytest in
a subprocess, from the tree root:

- on a machine where torch sees a CUDA device, the GPU-marked tests
  (``-m gpu``);
- otherwise the others on the CPU, through Triton's interpreter
  (``TRITON_INTERPRET=1``, ``-m "not gpu"``).

The command says which it chose, prints pass/fail counts per test file and
exits with pytest's status. Anything after ``--`` goes to pytest last, so a
``-m`` there overrides the choice.

portq itself must not import torch or triton: CUDA is probed in a child
process, and only for ``--device auto``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass
from pathlib import Path

from portq.errors import PortqError

CUDA_PROBE = "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"
PROBE_TIMEOUT_S = 120

DEVICE_MODES = {
    "gpu": {"marker": "gpu", "label": "the GPU-marked tests on the GPU (-m gpu)"},
    "cpu": {
        "marker": "not gpu",
        "label": "the CPU tests through Triton's interpreter (TRITON_INTERPRET=1, -m 'not gpu')",
    },
}


@dataclass
class FileCounts:
    """Outcomes of the tests of one file."""

    file: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("row", metavar="ROW", help="matrix row id, e.g. KERNEL-KV-CACHE")
    parser.add_argument(
        "--device",
        choices=("auto", "gpu", "cpu"),
        default="auto",
        help="where to run: auto (GPU when torch sees CUDA), gpu, or cpu (Triton interpreter)",
    )
    parser.add_argument(
        "pytest_args",
        nargs="*",
        metavar="PYTEST_ARGS",
        help="arguments for pytest, after '--' (e.g. -- -k gather -x)",
    )


def cuda_available(python: str = sys.executable) -> bool:
    """Whether torch in ``python`` sees a CUDA device (False without torch)."""
    try:
        done = subprocess.run([python, "-c", CUDA_PROBE], capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def pytest_command(paths: list[str], device: str, junit_path: Path, extra: list[str]) -> list[str]:
    """The pytest argv: the row's paths, the device marker, a junit report, then the user's args."""
    return [
        sys.executable,
        "-m",
        "pytest",
        *paths,
        "-m",
        DEVICE_MODES[device]["marker"],
        "-o",
        "junit_family=xunit1",  # xunit1 records the file of every test case
        f"--junitxml={junit_path}",
        *extra,
    ]


def pytest_environment(device: str) -> dict[str, str]:
    env = dict(os.environ)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)  # on the GPU the interpreter would hide the device
    return env


def counts_per_file(junit_path: Path) -> list[FileCounts]:
    """Pass/fail/error/skip counts per test file from pytest's junit report."""
    try:
        root = ElementTree.parse(junit_path).getroot()
    except (OSError, ElementTree.ParseError):
        return []
    files: dict[str, FileCounts] = {}
    for case in root.iter("testcase"):
        name = case.get("file") or _file_from_classname(case.get("classname") or case.get("name") or "")
        counts = files.setdefault(name, FileCounts(name))
        if case.find("failure") is not None:
            counts.failed += 1
        elif case.find("error") is not None:
            counts.errors += 1
        elif case.find("skipped") is not None:
            counts.skipped += 1
        else:
            counts.passed += 1
    return sorted(files.values(), key=lambda c: c.file)


def _file_from_classname(classname: str) -> str:
    """``tests.kernels.test_x.TestY`` → ``tests/kernels/test_x.py`` (collection errors carry no file)."""
    parts = classname.split(".")
    while parts and parts[-1][:1].isupper():
        parts.pop()
    return "/".join(parts) + ".py" if parts else "(unknown file)"


def run(args: argparse.Namespace, workspace) -> int:
    config, matrix = workspace.config, workspace.matrix
    try:
        row = matrix.row(args.row)
    except KeyError:
        known = ", ".join(r.id for r in matrix.rows)
        raise PortqError(f"verify: no row {args.row!r} in {config.matrix_path} (rows: {known})") from None
    tree = workspace.tree
    if not row.tests:
        raise PortqError(f"{config.matrix_path}:{row.line}: row {row.id} lists no tests to run (add tests = [...])")
    present = [p for p in row.tests if (tree / p).exists()]
    missing = [p for p in row.tests if p not in present]
    if not present:
        raise PortqError(f"row {row.id}: none of its tests paths exist under {tree}: {', '.join(missing)}")

    device = args.device
    if device == "auto":
        device = "gpu" if cuda_available() else "cpu"
    as_json = getattr(args, "json", False)
    say = sys.stderr if as_json else sys.stdout
    for path in missing:
        print(f"warning: row {row.id}: tests path {path} does not exist under {tree}; skipped", file=sys.stderr)
    print(f"portq verify {row.id}: running {DEVICE_MODES[device]['label']} in {', '.join(present)}", file=say, flush=True)

    with tempfile.TemporaryDirectory(prefix="portq-verify-") as scratch:
        junit = Path(scratch) / "junit.xml"
        argv = pytest_command(present, device, junit, list(args.pytest_args or []))
        try:
            done = subprocess.run(
                argv,
                cwd=tree,
                env=pytest_environment(device),
                stdout=2 if as_json else None,  # keep --json output pure: pytest talks on stderr
            )
        except OSError as error:
            raise PortqError(f"verify: cannot run pytest with {sys.executable}: {error.strerror or error}", 1) from None
        files = counts_per_file(junit)

    totals = FileCounts("total")
    for counts in files:
        for key in ("passed", "failed", "errors", "skipped"):
            setattr(totals, key, getattr(totals, key) + getattr(counts, key))
    if as_json:
        print(
            json.dumps(
                {
                    "row": row.id,
                    "device": device,
                    "mode": DEVICE_MODES[device]["label"],
                    "paths": present,
                    "missing_paths": missing,
                    "command": argv,
                    "exit_status": done.returncode,
                    "files": [asdict(c) for c in files],
                    "totals": {k: v for k, v in asdict(totals).items() if k != "file"},
                },
                indent=2,
            )
        )
    else:
        print_counts(row.id, device, files, totals, done.returncode)
    return done.returncode


def print_counts(row_id: str, device: str, files: list[FileCounts], totals: FileCounts, status: int) -> None:
    print()
    print(f"{row_id} on the {'GPU' if device == 'gpu' else 'CPU (Triton interpreter)'}:")
    if not files:
        print(f"  no test results (pytest exit status {status})")
        return
    width = max(len(c.file) for c in [*files, totals])
    print(f"  {'file'.ljust(width)}  passed  failed  errors  skipped")
    for counts in [*files, totals]:
        print(
            f"  {counts.file.ljust(width)}  {counts.passed:>6}  {counts.failed:>6}  {counts.errors:>6}  {counts.skipped:>7}"
        )
    verdict = "passed" if status == 0 else f"did not pass (pytest exit status {status})"
    print(f"  {row_id} {verdict}")
