"""``portq verify ROW [-- PYTEST_ARGS]``: run the tests of the kernels a row owns.

This is how a maintainer checks a port before calling it done (the "done
when" of every issue report). The row's ``tests`` paths are run with pytest in
a subprocess, from the tree root:

- ``gpu``: the row's whole suite compiled for the GPU, ``gpu``-marked tests
  included; without a CUDA device torch can use, exit 2 with the reason (a
  GPU check that skips everything must not pass);
- ``cpu``: the tests not marked ``gpu``, through Triton's interpreter
  (``TRITON_INTERPRET=1``, ``-m "not gpu"``);
- ``auto``: ``gpu`` where torch sees a CUDA device, else ``cpu``.

The command says which it chose, prints pass/fail counts per test file (and
how many ``gpu``-marked tests ran, were deselected or were skipped: the
junit report leaves deselected tests out, so verify's pytest plugin counts
them) and exits with pytest's status. Anything after ``--`` goes to pytest last, so a ``-m``
there narrows the choice. Without pytest: exit 2, install ``portq[test]``.

portq itself must not import torch or triton: CUDA is probed in a child
process.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass
from pathlib import Path

from portq.core.errors import PortqError
from portq.core.terminal import one_line
from portq.reporting import output

CUDA_PROBE = """
import sys
try:
    import torch
except Exception as error:
    print(f"torch cannot be imported ({type(error).__name__}: {error})")
    sys.exit(3)
if not torch.cuda.is_available():
    print(f"torch {torch.__version__} sees no CUDA device")
    sys.exit(3)
"""
MARKS_PLUGIN = "portq.commands.verify_marks"
"""Loaded into the child pytest: records which tests carry the ``gpu`` mark, and which of them did not run."""
MARKS_OPTION = "--portq-gpu-marks"  # the plugin's option: where it writes its per-file counts
PROBE_TIMEOUT_S = 120

DEVICE_MODES = {
    "gpu": {"marker": None, "label": "the whole suite compiled on the GPU (gpu-marked tests included)"},
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
    gpu: int = 0  # gpu-marked tests among those that ran (not skipped)
    gpu_deselected: int = 0  # gpu-marked tests deselected (-m "not gpu", -k): absent from the junit report
    gpu_skipped: int = 0  # gpu-marked tests that skipped


COUNTED = ("passed", "failed", "errors", "skipped", "gpu", "gpu_deselected", "gpu_skipped")


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


def cuda_unavailable(python: str = sys.executable) -> str | None:
    """Why torch in ``python`` cannot use a CUDA device, or None when it can."""
    try:
        done = subprocess.run([python, "-c", CUDA_PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except OSError as error:
        return f"cannot run {python}: {error.strerror or error}"
    except subprocess.TimeoutExpired:
        return f"the CUDA probe did not answer within {PROBE_TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else f"the CUDA probe exited {done.returncode}"


def pytest_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("pytest") is not None
    except (ImportError, ValueError):
        return False


def pytest_command(paths: list[str], device: str, junit_path: Path, extra: list[str],
                   marks_path: Path | None = None) -> list[str]:
    """The pytest argv: the row's paths, the device marker, the marks plugin, a junit report, then the user's args."""
    marker = DEVICE_MODES[device]["marker"]
    return [
        sys.executable,
        "-m",
        "pytest",
        *paths,
        *(["-m", marker] if marker else []),
        "-p",
        MARKS_PLUGIN,
        *([f"{MARKS_OPTION}={marks_path}"] if marks_path else []),
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


_UNXML_CONTROLS = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_RESTORE_CONTROLS = {0xE000 + code: code for code in range(0x20)}


def counts_per_file(junit_path: Path) -> list[FileCounts]:
    """Pass/fail/error/skip counts per test file from pytest's junit report."""
    try:
        # pytest writes a test file's path into the report unescaped; a control
        # character in it (which XML cannot hold) stands in for itself in the
        # private-use area while parsing, and is put back in the name.
        data = _UNXML_CONTROLS.sub(lambda m: chr(0xE000 + ord(m.group())).encode(), junit_path.read_bytes())
        root = ElementTree.fromstring(data)
    except (OSError, ElementTree.ParseError):
        return []
    files: dict[str, FileCounts] = {}
    for case in root.iter("testcase"):
        name = case.get("file") or _file_from_classname(case.get("classname") or case.get("name") or "")
        name = name.translate(_RESTORE_CONTROLS)
        counts = files.setdefault(name, FileCounts(name))
        ran = case.find("skipped") is None
        if ran and any(p.get("name") == "portq_gpu" for p in case.iter("property")):
            counts.gpu += 1
        if case.find("failure") is not None:
            counts.failed += 1
        elif case.find("error") is not None:
            counts.errors += 1
        elif case.find("skipped") is not None:
            counts.skipped += 1
        else:
            counts.passed += 1
    return sorted(files.values(), key=lambda c: c.file)


def add_gpu_not_run(files: list[FileCounts], marks_path: Path) -> list[FileCounts]:
    """Add the plugin's per-file counts of gpu-marked tests deselected or skipped.

    A file whose tests were all deselected is missing from the junit report;
    it is listed here with its deselected count.
    """
    try:
        not_run = json.loads(marks_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return files  # pytest stopped before its run ended (a usage error): nothing to add
    by_file = {c.file: c for c in files}
    for name, counts in not_run.items() if isinstance(not_run, dict) else ():
        entry = by_file.setdefault(name, FileCounts(name))
        entry.gpu_deselected += int(counts.get("gpu_deselected", 0))
        entry.gpu_skipped += int(counts.get("gpu_skipped", 0))
    return sorted(by_file.values(), key=lambda c: c.file)


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

    if not pytest_available():
        raise PortqError(f"verify: pytest is not installed for {sys.executable}: pip install 'portq[test]'")
    device = args.device
    if device != "cpu":
        reason = cuda_unavailable()
        if reason is not None and device == "gpu":
            raise PortqError(f"verify --device gpu: no usable CUDA device ({one_line(reason)}); "
                             "use --device cpu for the Triton interpreter")
        device = "gpu" if reason is None else "cpu"
    as_json = getattr(args, "json", False)
    say = sys.stderr if as_json else sys.stdout
    for path in missing:
        print(f"warning: row {row.id}: tests path {path} does not exist under {tree}; skipped", file=sys.stderr)
    print(f"portq verify {row.id}: running {DEVICE_MODES[device]['label']} in {', '.join(present)}", file=say, flush=True)

    with tempfile.TemporaryDirectory(prefix="portq-verify-") as scratch:
        junit = Path(scratch) / "junit.xml"
        marks = Path(scratch) / "gpu-marks.json"
        argv = pytest_command(present, device, junit, list(args.pytest_args or []), marks)
        try:
            done = subprocess.run(
                argv,
                cwd=tree,
                env=pytest_environment(device),
                stdout=2 if as_json else None,  # keep --json output pure: pytest talks on stderr
            )
        except OSError as error:
            raise PortqError(f"verify: cannot run pytest with {sys.executable}: {error.strerror or error}", 1) from None
        files = add_gpu_not_run(counts_per_file(junit), marks)

    totals = FileCounts("total")
    for counts in files:
        for key in COUNTED:
            setattr(totals, key, getattr(totals, key) + getattr(counts, key))
    data = {
        "row": row.id,
        "device": device,
        "mode": DEVICE_MODES[device]["label"],
        "paths": present,
        "missing_paths": missing,
        "command": argv,
        "exit_status": done.returncode,
        "files": [asdict(c) for c in files],
        "totals": {k: v for k, v in asdict(totals).items() if k != "file"},
    }
    document = output.Document(data, table=lambda out: print_counts(out, row.id, device, files, totals, done.returncode))
    output.emit(document, output.output_format(args))
    return done.returncode


def print_counts(out, row_id: str, device: str, files: list[FileCounts], totals: FileCounts, status: int) -> None:
    output.print_line(out)
    output.print_line(out, f"{row_id} on the {'GPU' if device == 'gpu' else 'CPU (Triton interpreter)'}:")
    if not files:
        output.print_line(out, f"  no test results (pytest exit status {status})")
        return
    width = max(len(one_line(c.file)) for c in [*files, totals])
    output.print_line(out, f"  {'file'.ljust(width)}  passed  failed  errors  skipped  "
                           "gpu ran  gpu deselected  gpu skipped")
    for counts in [*files, totals]:
        output.print_line(out, f"  {one_line(counts.file).ljust(width)}  {counts.passed:>6}  {counts.failed:>6}  "
                               f"{counts.errors:>6}  {counts.skipped:>7}  {counts.gpu:>7}  "
                               f"{counts.gpu_deselected:>14}  {counts.gpu_skipped:>11}")
    verdict = "passed" if status == 0 else f"did not pass (pytest exit status {status})"
    output.print_line(out, f"  {row_id} {verdict}")
