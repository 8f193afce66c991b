"""How long ``portq scan`` takes against ``git log -p`` over the same history.

``python benchmarks/bench_scan.py [--commits 2000] [--repeat 3] [--keep DIR]``

Generates a synthetic upstream (``synthetic_history.py``: 2,000 first-parent
entries by default, a generated matrix and a small tree), then, in one run,
``--repeat`` times each, interleaved so that machine load hits all alike:

- ``git log -p base..tip``, read to the end through a pipe (the floor: git's
  own cost of producing every patch);
- a cold ``portq scan base..tip --json`` in a fresh process with a fresh
  ledger and no caches;
- a second scan of the same range into the same ledger (its caches warm).

Prints medians, the ratios to ``git log -p``, and where a cold scan's time
goes (reading and mapping vs classifying and recording, measured in process).
It measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_history import generate  # noqa: E402


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while process.stdout.read(1 << 16):
        pass
    error = process.stderr.read()
    if process.wait() != 0:
        raise SystemExit(f"{' '.join(command)} failed: {error.decode(errors='replace')}")
    return time.perf_counter() - start


def scan_command(work: Path, ledger: Path) -> list[str]:
    return [
        sys.executable, "-m", "portq.cli", "scan", "base..tip", "--json",
        "--upstream", str(work / "upstream"), "--matrix", str(work / "matrix.toml"),
        "--tree", str(work / "tree"), "--ledger", str(ledger),
    ]


class PhaseClock:
    """A progress reporter that records when each phase of the scan starts."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = []

    def phase(self, description: str, total: int) -> None:
        self.marks.append((description.split()[0], time.perf_counter()))

    def advance(self, steps: int = 1) -> None:
        pass


def phases(work: Path, scratch: Path) -> dict[str, float]:
    from portq.config import load_config
    from portq.scan import run_scan

    config = load_config(
        cwd=work, upstream=[str(work / "upstream")], tree=str(work / "tree"),
        matrix=str(work / "matrix.toml"), ledger=str(scratch / "phases.sqlite"),
    )
    clock = PhaseClock()
    start = time.perf_counter()
    run_scan(config, "base..tip", progress=clock)
    end = time.perf_counter()
    (_, reading), (_, classifying) = clock.marks
    return {
        "setup (config, matrix, range, ledger open)": reading - start,
        "read patches + map ownership and symbols": classifying - reading,
        "classify + record in the ledger": end - classifying,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this directory")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="portq-bench-"))
    try:
        if not (work / "upstream").exists():
            start = time.perf_counter()
            generate(work, args.commits)
            print(f"generated {args.commits} entries in {time.perf_counter() - start:.1f} s: {work}")
        git_log, cold, cached = [], [], []
        for attempt in range(args.repeat):
            scratch = work / f"run-{attempt}"
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            git_log.append(timed(["git", "log", "-p", "base..tip"], work / "upstream"))
            cold.append(timed(scan_command(work, scratch / "ledger.sqlite"), REPO_ROOT))
            cached.append(timed(scan_command(work, scratch / "ledger.sqlite"), REPO_ROOT))
        base = statistics.median(git_log)
        rows = [("git log -p base..tip", git_log), ("portq scan, cold", cold), ("portq scan, second (cached)", cached)]
        print(f"\n{'measurement':32} {'median s':>9} {'min s':>7} {'x git log -p':>13}")
        for label, samples in rows:
            median = statistics.median(samples)
            print(f"{label:32} {median:9.2f} {min(samples):7.2f} {median / base:13.1f}")
        print("\nwhere a cold scan's time goes (in process, one run):")
        for label, seconds in phases(work, work / "run-0").items():
            print(f"  {label:44} {seconds:6.2f} s")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
