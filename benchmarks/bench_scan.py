"""How long ``portq scan`` takes against ``git log -p`` over the same history.

``python benchmarks/bench_scan.py [--commits 2000] [--repeat 3] [--keep DIR] [--report FILE] [--compare CHECKOUT]``

Generates a synthetic upstream (``synthetic_history.py``: 2,000 first-parent
entries by default, a generated matrix and a small tree), then, in one run,
``--repeat`` times each, interleaved so that machine load hits all alike:

- ``git log -p base..tip``, read to the end through a pipe (the floor: git's
  own cost of producing every patch);
- a cold ``portq scan base..tip --json`` in a fresh process with a fresh
  ledger folder (no ledger, no definition cache, no in-tree index cache);
- a second scan of the same range into the same ledger folder, unchanged:
  it reuses every decision of the first (``portq.classifier.decision_keys``) and
  reads no patch;
- the floor: a process that starts Python, imports the scan pipeline and
  stops (``bench_rescan.START_UP``);
- with ``--compare``, the other checkout's cold scan, whose JSON is
  checked to be byte for byte this one's.

Scans run as an installed portq does, from compiled bytecode: the script
compiles ``portq`` once into a private ``PYTHONPYCACHEPREFIX`` before
timing, whatever ``PYTHONDONTWRITEBYTECODE`` says (otherwise every process
would recompile every module and the figures would measure the compiler).

Prints medians, the ratios to ``git log -p`` (each scan's median over the
median of ``git log -p`` of the same run), and where a cold and a cached
scan's time goes, measured in process (with the time spent in tree-sitter's
own parses, which no change to portq's Python removes). ``--report FILE`` also writes that as
markdown with the command that reproduces it at the top. It measures; it
asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
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

from bench_rescan import COMPARE_HELP, START_UP, compiled_environment, git_head  # noqa: E402
from synthetic_history import generate  # noqa: E402


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None, output: list[str] | None = None) -> float:
    """Seconds to run ``command`` reading all its output; ``output`` gets the SHA-256 of its stdout."""
    digest = hashlib.sha256()
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    while chunk := process.stdout.read(1 << 16):
        digest.update(chunk)
    error = process.stderr.read()
    if process.wait() != 0:
        raise SystemExit(f"{' '.join(command)} failed: {error.decode(errors='replace')}")
    seconds = time.perf_counter() - start
    if output is not None:
        output.append(digest.hexdigest())
    return seconds


def scan_command(work: Path, ledger: Path) -> list[str]:
    return [
        sys.executable, "-m", "portq.cli", "scan", "base..tip", "--json",
        "--upstream", str(work / "upstream"), "--matrix", str(work / "matrix.toml"),
        "--tree", str(work / "tree"), "--ledger", str(ledger),
    ]


def git_version() -> str:
    return subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()


class PhaseClock:
    """A progress reporter that records when each phase of the scan starts."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = []

    def phase(self, description: str, total: int) -> None:
        self.marks.append((description.split()[0], time.perf_counter()))

    def advance(self, steps: int = 1) -> None:
        pass


def phases(work: Path, ledger: Path) -> dict[str, float]:
    """One in-process scan into ``ledger``, timed by phase."""
    from portq.core.config import load_config
    from portq.language import symbols
    from portq.pipeline.scan import run_scan

    config = load_config(
        cwd=work, upstream=[str(work / "upstream")], tree=str(work / "tree"),
        matrix=str(work / "matrix.toml"), ledger=str(ledger),
    )
    clock = PhaseClock()
    parsing = [0.0, 0]
    parse_from = symbols.parse_from

    def timed_parse(*args, **kwargs):
        began = time.perf_counter()
        try:
            return parse_from(*args, **kwargs)
        finally:
            parsing[0] += time.perf_counter() - began
            parsing[1] += 1

    symbols.parse_from = timed_parse
    try:
        start = time.perf_counter()
        run_scan(config, "base..tip", progress=clock)
        end = time.perf_counter()
    finally:
        symbols.parse_from = parse_from
    labels = {"reading": "read patches + map ownership and symbols", "classifying": "classify + record in the ledger"}
    times = [start] + [mark for _, mark in clock.marks] + [end]
    phases = {"setup (config, matrix, range, ledger open, in-tree index, reuse plan)": times[1] - start}
    for (name, mark), following in zip(clock.marks, times[2:]):
        phases[labels.get(name, name)] = following - mark
    phases["total in process"] = end - start
    phases["of which tree-sitter's parses (in C; mapping and classifier)"] = parsing[0]
    phases["tree-sitter parses (count)"] = parsing[1]
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this directory")
    parser.add_argument("--report", type=Path, help="also write the results as markdown to this file")
    parser.add_argument("--compare", type=Path, help=COMPARE_HELP)
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="portq-bench-"))
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text)
        lines.append(text)

    try:
        if not (work / "upstream").exists():
            start = time.perf_counter()
            generate(work, args.commits)
            print(f"generated {args.commits} entries in {time.perf_counter() - start:.1f} s: {work}")
        env = compiled_environment(work)
        other = args.compare.resolve() if args.compare else None
        other_env = compiled_environment(work, other) if other else None
        load_before = os.getloadavg()[0]
        git_log, cold, cached, other_cold, start_up, outputs, other_outputs = [], [], [], [], [], [], []
        for attempt in range(args.repeat):
            scratch = work / f"run-{attempt}"
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            git_log.append(timed(["git", "log", "-p", "base..tip"], work / "upstream"))
            if other:
                other_cold.append(timed(scan_command(work, scratch / "other" / "ledger.sqlite"), other, other_env,
                                        other_outputs))
            start_up.append(timed(START_UP, REPO_ROOT, env))
            cold.append(timed(scan_command(work, scratch / "ledger.sqlite"), REPO_ROOT, env, outputs))
            cached.append(timed(scan_command(work, scratch / "ledger.sqlite"), REPO_ROOT, env))
        base = statistics.median(git_log)
        rows = [("git log -p base..tip", git_log), ("portq scan, cold", cold), ("portq scan, unchanged rescan", cached),
                ("Python start-up + imports of the scan pipeline, nothing else (the floor)", start_up)]
        if other:
            same = "the same JSON" if len(set(outputs) | set(other_outputs)) == 1 else "DIFFERENT JSON"
            rows.append((f"portq scan, cold, the code in `{other}` ({git_head(other)}; {same})", other_cold))
        say(f"{args.commits} entries, {args.repeat} runs each, interleaved; {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, {git_version()}; load average {load_before:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after (other work on the machine shows here)")
        say()
        say("| measurement | median s | min s | × git log -p |")
        say("|---|---:|---:|---:|")
        for label, samples in rows:
            median = statistics.median(samples)
            say(f"| {label} | {median:.2f} | {min(samples):.2f} | {median / base:.1f} |")
        in_process = {}
        phase_dir = work / "phases"
        shutil.rmtree(phase_dir, ignore_errors=True)
        for label in ("cold", "cached"):
            in_process[label] = phases(work, phase_dir / "ledger.sqlite")
        say()
        say("Where the time goes (one scan in process, without interpreter start-up):")
        say()
        say("| phase | cold s | unchanged rescan s |")
        say("|---|---:|---:|")
        for phase in dict.fromkeys([*in_process["cold"], *in_process["cached"]]):
            cells = [("{:.2f}" if isinstance(in_process[label][phase], float) else "{}").format(in_process[label][phase])
                     if phase in in_process[label] else "–" for label in ("cold", "cached")]
            say(f"| {phase} | {' | '.join(cells)} |")
        if args.report:
            command = "python benchmarks/bench_scan.py " + " ".join(
                part for part in (f"--commits {args.commits}" if args.commits != 2000 else "",
                                  f"--repeat {args.repeat}",
                                  f"--compare {args.compare}" if args.compare else "") if part)
            args.report.parent.mkdir(parents=True, exist_ok=True)
            args.report.write_text(f"# portq scan against git log -p\n\nReproduce: `{command}`\n\n"
                                   + "\n".join(lines) + "\n")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
