"""Cold scans, unchanged rescans and rescans after editing one ported file, against ``git log -p``.

``python benchmarks/bench_rescan.py --upstream aiter=../aiter --range ROOT..HEAD --range HEAD~300..HEAD
[--tree DIR --matrix FILE] [--edit kernels/mla_prefix/gather_kv_b_proj.py] [--repeat 3] [--report FILE]
[--compare CHECKOUT] [--check-uncached]``

For each range, ``--repeat`` times, interleaved so that machine load hits
all alike, each scan a fresh ``portq`` process run from bytecode compiled
once (as an installed portq runs):

- ``git log -p --first-parent A..B`` read to the end through a pipe (the
  floor: git's own cost of producing every patch of the range);
- a cold ``portq scan A..B --json`` into a new ledger folder (no ledger,
  no definition cache, no in-tree index cache);
- the same scan again, unchanged (it reuses every decision), with the ledger's
  size in bytes before and after it (the WAL checkpointed: what is on disk);
- the same scan after appending a comment line to ``--edit`` (a ported file
  of a copy of this repository's tree), which re-decides that file's rows'
  entries; the number it re-decided is read from its report line;
- ``START_UP``: Python started with the scan pipeline imported, nothing
  done (the floor under every scan, against ``git log -p``'s whole time).

``ROOT`` in a range stands for the upstream's first-parent root commit. The
tree scanned is a copy of this checkout's tracked files, or of ``--tree DIR``
(a corpus port, e.g. ``examples/accuracy/liger_reimpl`` with ``--matrix
kernel-matrix.toml``, relative to it), so the edit never touches the
checkout. ``--check-uncached`` also runs one cold scan of each range with
the per-definition memo off (``PORTQ_PRODUCT_MEMO=off``, untimed) and says
whether it printed the same JSON as the memoised cold scans. Prints medians with min–max and ratios to the median of
``git log -p`` of the same range in the same run; ``--report FILE`` also
writes them as markdown with the command at the top. ``--compare CHECKOUT``
also times the cold scans of another checkout's code (a worktree of an
earlier commit), interleaved with this one's, prints them side by side, and
says whether every cold scan of both printed the same JSON (a change that is
only faster must decide the same). It measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def run_timed(command: list[str], cwd: Path, env: dict[str, str] | None = None,
              output: list[str] | None = None, cpu: list[float] | None = None) -> tuple[float, str]:
    """Seconds to run ``command`` reading all its output, and its stderr;
    ``output`` gets the SHA-256 of its stdout appended, ``cpu`` the CPU
    seconds (user + system) of the process and the children it waited for."""
    digest = hashlib.sha256()
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    while chunk := process.stdout.read(1 << 16):
        digest.update(chunk)
    error = process.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {error}")
    seconds = time.perf_counter() - start
    if output is not None:
        output.append(digest.hexdigest())
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    return seconds, error


START_UP = [sys.executable, "-c", "import portq.cli, portq.commands.scan, portq.pipeline.scan, portq.classifier.classify, portq.classifier.verdicts"]
"""A process that starts and imports what a scan runs, and does nothing else:
the floor under any scan, timed alongside the scans."""


def compiled_environment(work: Path, checkout: Path = REPO_ROOT) -> dict[str, str]:
    """An environment in which the portq of ``checkout`` (run from that folder)
    runs from bytecode compiled once, under ``work``."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(work / ("pycache" if checkout == REPO_ROOT else f"pycache-{checkout.name}"))
    env["PYTHONPATH"] = str(checkout)  # ahead of an installed portq, whichever checkout that is
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "portq")], env=env, check=True)
    return env


COMPARE_HELP = ("another portq checkout (e.g. `git worktree add /tmp/before HEAD~1`): its cold scans are timed "
                "too, interleaved with this checkout's, in the same run")


def copy_tree(destination: Path) -> Path:
    """This checkout's tracked and untracked-but-not-ignored files, copied to ``destination``."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = REPO_ROOT / relative
        if source.is_file():
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def git_head(checkout: Path) -> str:
    """The commit a checkout is at, with a mark when it has uncommitted edits."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=checkout,
                           capture_output=True, text=True).stdout.strip()
    return head + (" with uncommitted edits" if dirty else "")


def ledger_bytes(path: Path) -> int:
    """The ledger's size on disk once its WAL is checkpointed into it."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def root_of(upstream: Path) -> str:
    return subprocess.run(["git", "rev-list", "--first-parent", "--max-parents=0", "HEAD"], cwd=upstream,
                          capture_output=True, text=True, check=True).stdout.split()[-1]


def summary(samples: list[float], digits: int = 2) -> str:
    """Median (min–max)."""
    return f"{statistics.median(samples):.{digits}f} ({min(samples):.{digits}f}–{max(samples):.{digits}f})"


def write_report(path: Path, script: str, lines: list[str]) -> None:
    """The printed tables as markdown, under the command that reproduces them."""
    command = f"python benchmarks/{script} " + " ".join(sys.argv[1:])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"Reproduce: `{command}`\n\n" + "\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="NAME=PATH of the upstream clone")
    parser.add_argument("--range", action="append", required=True, dest="ranges")
    parser.add_argument("--edit", default="kernels/mla_prefix/gather_kv_b_proj.py",
                        help="the ported file (relative to the tree) to edit before the last rescan")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--compare", type=Path, help=COMPARE_HELP)
    parser.add_argument("--tree", type=Path, help="scan a copy of this tree instead of this checkout's")
    parser.add_argument("--matrix", default="matrix/kernel-matrix.toml", help="the matrix, relative to the tree")
    parser.add_argument("--check-uncached", action="store_true",
                        help="also scan each range once with the per-definition memo off and compare the JSON")
    args = parser.parse_args()
    name, _, upstream_text = args.upstream.partition("=")
    upstream = Path(upstream_text).resolve()
    work = Path(tempfile.mkdtemp(prefix="portq-rescan-"))
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    try:
        env = compiled_environment(work)
        other = args.compare.resolve() if args.compare else None
        other_env = compiled_environment(work, other) if other else None
        tree = copy_tree(work / "tree") if args.tree is None else Path(shutil.copytree(
            args.tree, work / "tree", ignore=shutil.ignore_patterns("labels.toml", "README.md", "__pycache__")))
        edited = tree / args.edit
        original = edited.read_bytes()
        load_before = os.getloadavg()[0]
        root = root_of(upstream)
        results = []
        unchecked: dict[str, list[str]] = {}
        cpu_results: list[tuple[str, dict[str, list[float]]]] = []  # range -> the digest of its cold scan with the memo off
        for spec in args.ranges:
            spec = spec.replace("ROOT", root)
            count = int(subprocess.run(["git", "rev-list", "--count", "--first-parent", spec], cwd=upstream,
                                       capture_output=True, text=True, check=True).stdout)
            samples: dict[str, list[float]] = {"git": [], "cold": [], "warm": [], "edit": [], "other": [],
                                               "start-up": []}
            cpu: dict[str, list[float]] = {key: [] for key in samples}
            growth, redecided, outputs, other_outputs, uncached = [], [], [], [], []
            for attempt in range(args.repeat):
                ledger = work / f"ledger-{len(results)}-{attempt}" / "ledger.sqlite"
                scan = [sys.executable, "-m", "portq.cli", "scan", spec, "--json", "--upstream",
                        f"{name}={upstream}", "--tree", str(tree), "--matrix", str(tree / args.matrix),
                        "--ledger", str(ledger)]
                edited.write_bytes(original)
                samples["git"].append(run_timed(["git", "log", "-p", "--first-parent", spec], upstream,
                                                cpu=cpu["git"])[0])
                if other:
                    other_scan = scan[:-1] + [str(ledger.parent.with_name(ledger.parent.name + "-other") / ledger.name)]
                    samples["other"].append(run_timed(other_scan, other, other_env, other_outputs, cpu["other"])[0])
                samples["start-up"].append(run_timed(START_UP, REPO_ROOT, env, cpu=cpu["start-up"])[0])
                samples["cold"].append(run_timed(scan, REPO_ROOT, env, outputs, cpu["cold"])[0])
                before = ledger_bytes(ledger)
                samples["warm"].append(run_timed(scan, REPO_ROOT, env, cpu=cpu["warm"])[0])
                growth.append(ledger_bytes(ledger) - before)
                edited.write_bytes(original + f"\n# edited for a benchmark ({attempt})\n".encode())
                seconds, report = run_timed(scan, REPO_ROOT, env, cpu=cpu["edit"])
                samples["edit"].append(seconds)
                found = re.search(r": (\d+) of (\d+) entries decided again", report)
                redecided.append(found.group(1) if found else "all")
            edited.write_bytes(original)
            if args.check_uncached:
                ledger = work / f"ledger-{len(results)}-uncached" / "ledger.sqlite"
                run_timed(scan[:-1] + [str(ledger)], REPO_ROOT, {**env, "PORTQ_PRODUCT_MEMO": "off"}, uncached)
            unchecked[spec] = uncached
            results.append((spec, count, samples, growth, redecided, outputs, other_outputs))
            cpu_results.append((spec, cpu))
        say(f"{args.repeat} runs each, interleaved; {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}; "
            f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (the machine is shared: "
            "other work shows here, so compare ratios within one run)")
        say()
        say("| range | entries | git log -p s | cold s | × | unchanged rescan s | × | after one edit s | × "
            "| re-decided | ledger growth, unchanged rescan |")
        say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for spec, count, samples, growth, redecided, _, _ in results:
            base = statistics.median(samples["git"])
            ratio = {key: statistics.median(values) / base for key, values in samples.items() if values}
            short = "..".join(part[:10] for part in spec.split(".."))
            say(f"| {short} | {count} | {summary(samples['git'])} | {summary(samples['cold'])} | {ratio['cold']:.2f} "
                f"| {summary(samples['warm'])} | {ratio['warm']:.2f} | {summary(samples['edit'])} "
                f"| {ratio['edit']:.2f} | {'/'.join(sorted(set(redecided)))} | {max(growth)} B |")
        say()
        say("CPU seconds (user + system, the process and the git processes it waited for; the machine's other "
            "work slows wall time more than this), medians, and × git log -p's CPU:")
        say()
        say("| range | git log -p | cold | × | unchanged rescan | × | after one edit | × | start-up + imports | × |")
        say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for spec, cpu in cpu_results:
            base = statistics.median(cpu["git"])
            short = "..".join(part[:10] for part in spec.split(".."))
            cells = " | ".join(f"{statistics.median(cpu[key]):.2f} | {statistics.median(cpu[key]) / base:.2f}"
                               for key in ("cold", "warm", "edit", "start-up"))
            say(f"| {short} | {base:.2f} | {cells} |")
        if other:
            say()
            say(f"CPU seconds of the cold scans of `{other}` ({git_head(other)}), timed in the same run: what the "
                "machine's other work does not move as it moves wall time:")
            say()
            say("| range | git log -p | cold, this code | × | cold, that code | × |")
            say("|---|---:|---:|---:|---:|---:|")
            for spec, cpu in cpu_results:
                base = statistics.median(cpu["git"])
                short = "..".join(part[:10] for part in spec.split(".."))
                say(f"| {short} | {base:.2f} | {statistics.median(cpu['cold']):.2f} | "
                    f"{statistics.median(cpu['cold']) / base:.2f} | {statistics.median(cpu['other']):.2f} | "
                    f"{statistics.median(cpu['other']) / base:.2f} |")
        say()
        say("The floor under every scan, timed in the same run: a process that starts Python and imports "
            "the scan pipeline, and stops:")
        say()
        say("| range | git log -p s | start-up + imports s | × |")
        say("|---|---:|---:|---:|")
        for spec, count, samples, *_ in results:
            base = statistics.median(samples["git"])
            short = "..".join(part[:10] for part in spec.split(".."))
            say(f"| {short} | {summary(samples['git'])} | {summary(samples['start-up'])} "
                f"| {statistics.median(samples['start-up']) / base:.2f} |")
        if other:
            say()
            say(f"Cold scans of the code in `{other}` ({git_head(other)}), timed in the same run, "
                f"interleaved (this checkout: {git_head(REPO_ROOT)}); \"same JSON\": every cold scan of "
                "both printed the same bytes:")
            say()
            say("| range | git log -p s | cold s, that code | × | cold s, this code | × | same JSON |")
            say("|---|---:|---:|---:|---:|---:|---|")
            for spec, count, samples, growth, redecided, outputs, other_outputs in results:
                base = statistics.median(samples["git"])
                short = "..".join(part[:10] for part in spec.split(".."))
                same = "yes" if len(set(outputs) | set(other_outputs)) == 1 else "NO"
                say(f"| {short} | {summary(samples['git'])} | {summary(samples['other'])} "
                    f"| {statistics.median(samples['other']) / base:.2f} | {summary(samples['cold'])} "
                    f"| {statistics.median(samples['cold']) / base:.2f} | {same} |")
        if args.check_uncached:
            say()
            for spec, count, samples, growth, redecided, outputs, _ in results:
                short = "..".join(part[:10] for part in spec.split(".."))
                same = "yes" if len(set(outputs) | set(unchecked[spec])) == 1 else "NO"
                say(f"{short}: the cold scan with the per-definition memo off printed the same JSON as "
                    f"every memoised cold scan: {same}")
        if args.report:
            write_report(args.report, "bench_rescan.py", lines)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
