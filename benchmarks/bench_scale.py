"""How ``portq scan`` grows with history: time and peak memory of cold and warm scans at vLLM's density.

``python benchmarks/bench_scale.py [--sizes 2000 10000 30000] [--repeat 3] [--work DIR]
[--report FILE] [--plot FILE] [--compare CHECKOUT] [--real NAME=CLONE RANGE TREE MATRIX [--real-steps 3]]``

For each size, a synthetic upstream of that many first-parent entries with
the density of real vLLM history (``synthetic_history.py --density vllm``:
~3% of commits touch owned files, which are large CUDA/C++ files growing
over time) is generated once into ``--work`` (default: a folder under the
system's temporary directory, reused by later runs). Then, ``--repeat``
times, interleaved:

- ``git log -p --first-parent base..tip`` read to the end (the floor);
- a cold ``portq scan base..tip --json`` into a new ledger folder;
- the same scan again, unchanged (it reuses every decision).

Each scan is its own process, run from bytecode compiled once; its peak
resident memory is the child's ``ru_maxrss`` (``os.wait4``). Prints medians
with min–max, ratios to ``git log -p`` and seconds per thousand entries (flat
when the cost is linear); ``--report`` writes the table as markdown, ``--plot``
draws time and peak memory against entries (matplotlib); ``--compare``
also times another checkout's cold scans, interleaved, side by side.

``--real`` adds a real history: cold scans of ``--real-steps`` growing
prefixes of ``RANGE`` (its first ``k/steps`` first-parent commits) of the
clone, against a copy of ``TREE`` with the matrix ``MATRIX`` (relative to
the tree), e.g. a corpus port: ``--real liger=../Liger-Kernel 27d2d519cd..74f4ad89f7
examples/accuracy/liger_reimpl kernel-matrix.toml``; its table and a third
panel of the plot show time, ratio and peak memory against entries. It
measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_rescan import COMPARE_HELP, compiled_environment, git_head, summary, write_report  # noqa: E402
from synthetic_history import generate_vllm_density  # noqa: E402


def measured(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Seconds and peak resident MiB of ``command``, its output read to the end."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    while process.stdout.read(1 << 16):
        pass
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {process.returncode}")
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 30000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "portq-scale")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--compare", type=Path, help=COMPARE_HELP)
    parser.add_argument("--real", nargs=4, metavar=("NAME=CLONE", "RANGE", "TREE", "MATRIX"),
                        help="also scan growing prefixes of a range of a real clone against a tree")
    parser.add_argument("--real-steps", type=int, default=3)
    args = parser.parse_args()
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    scratch = Path(tempfile.mkdtemp(prefix="portq-scale-run-"))
    try:
        env = compiled_environment(scratch)
        other = args.compare.resolve() if args.compare else None
        other_env = compiled_environment(scratch, other) if other else None
        for size in args.sizes:
            if not (args.work / str(size) / "upstream").exists():
                start = time.perf_counter()
                generate_vllm_density(args.work / str(size), size)
                print(f"generated {size} entries in {time.perf_counter() - start:.1f} s", flush=True)
        real = real_prefixes(args.real, args.real_steps, scratch) if args.real else []
        real_results = {count: {"git": [], "cold": [], "cold_rss": []} for count, *_ in real}
        load_before = os.getloadavg()[0]
        results = {size: {"git": [], "cold": [], "warm": [], "cold_rss": [], "warm_rss": [], "other": [],
                          "other_rss": []} for size in args.sizes}
        for attempt in range(args.repeat):
            for size in args.sizes:
                work = args.work / str(size)
                ledger = scratch / f"{size}-{attempt}" / "ledger.sqlite"
                scan = [sys.executable, "-m", "portq.cli", "scan", "base..tip", "--json",
                        "--upstream", str(work / "upstream"), "--matrix", str(work / "matrix.toml"),
                        "--tree", str(work / "tree"), "--ledger", str(ledger)]
                result = results[size]
                git_log = ["git", "log", "-p", "--first-parent", "base..tip"]
                result["git"].append(measured(git_log, work / "upstream")[0])
                if other:
                    other_scan = scan[:-1] + [str(ledger.parent.with_name(ledger.parent.name + "-other") / ledger.name)]
                    seconds, rss = measured(other_scan, other, other_env)
                    result["other"].append(seconds)
                    result["other_rss"].append(rss)
                for label in ("cold", "warm"):
                    seconds, rss = measured(scan, REPO_ROOT, env)
                    result[label].append(seconds)
                    result[f"{label}_rss"].append(rss)
            for count, spec, upstream, clone, tree, matrix in real:
                result = real_results[count]
                result["git"].append(measured(["git", "log", "-p", "--first-parent", spec], clone)[0])
                ledger = scratch / f"real-{count}-{attempt}" / "ledger.sqlite"
                seconds, rss = measured([sys.executable, "-m", "portq.cli", "scan", spec, "--json", "--upstream",
                                         upstream, "--tree", str(tree), "--matrix", str(matrix),
                                         "--ledger", str(ledger)], REPO_ROOT, env)
                result["cold"].append(seconds)
                result["cold_rss"].append(rss)
        say(f"vLLM-density synthetic histories; {args.repeat} runs each, interleaved; {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}; load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} "
            "after (the machine is shared with other work: compare ratios within one run)")
        say()
        say("| entries | git log -p s | cold s | × | cold s / 1k entries | cold peak MiB | warm s | × "
            "| warm peak MiB |")
        say("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size, result in results.items():
            base = statistics.median(result["git"])
            cold, warm = statistics.median(result["cold"]), statistics.median(result["warm"])
            say(f"| {size} | {summary(result['git'])} | {summary(result['cold'])} | {cold / base:.2f} "
                f"| {cold / size * 1000:.3f} | {summary(result['cold_rss'], 0)} | {summary(result['warm'])} "
                f"| {warm / base:.2f} | {summary(result['warm_rss'], 0)} |")
        if other:
            say()
            say(f"Cold scans of the code in `{other}` ({git_head(other)}), timed in the same run, interleaved "
                f"(this checkout: {git_head(REPO_ROOT)}):")
            say()
            say("| entries | git log -p s | cold s, that code | × | peak MiB | cold s, this code | × | peak MiB |")
            say("|---:|---:|---:|---:|---:|---:|---:|---:|")
            for size, result in results.items():
                base = statistics.median(result["git"])
                say(f"| {size} | {summary(result['git'])} | {summary(result['other'])} "
                    f"| {statistics.median(result['other']) / base:.2f} | {summary(result['other_rss'], 0)} "
                    f"| {summary(result['cold'])} | {statistics.median(result['cold']) / base:.2f} "
                    f"| {summary(result['cold_rss'], 0)} |")
        if real:
            say()
            say(f"The real history: cold scans of growing prefixes of {args.real[1]} of {args.real[0]} against "
                f"{args.real[2]} (the same runs, interleaved):")
            say()
            say("| range | entries | git log -p s | cold s | × | cold s / 1k entries | cold peak MiB |")
            say("|---|---:|---:|---:|---:|---:|---:|")
            for count, spec, *_ in real:
                result = real_results[count]
                base, cold = statistics.median(result["git"]), statistics.median(result["cold"])
                short = "..".join(part[:10] for part in spec.split(".."))
                say(f"| {short} | {count} | {summary(result['git'])} | {summary(result['cold'])} | {cold / base:.2f} "
                    f"| {cold / count * 1000:.3f} | {summary(result['cold_rss'], 0)} |")
        if args.report:
            write_report(args.report, "bench_scale.py", lines)
        if args.plot:
            plot(results, args.plot, real_results, args.real[0].split("=")[0] if args.real else None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def real_prefixes(real: list[str], steps: int, scratch: Path) -> list[tuple[int, str, str, Path, Path, Path]]:
    """(entries, range, --upstream, clone, tree copy, matrix) of ``steps`` growing prefixes of the real range."""
    upstream, spec, tree_text, matrix_text = real
    clone = Path(upstream.split("=", 1)[-1]).resolve()
    base = spec.split("..")[0]
    shas = subprocess.run(["git", "rev-list", "--first-parent", "--reverse", spec], cwd=clone, capture_output=True,
                          text=True, check=True).stdout.split()
    tree = Path(shutil.copytree(Path(tree_text), scratch / "real-tree",
                                ignore=shutil.ignore_patterns("labels.toml", "README.md", "__pycache__")))
    prefixes = []
    for step in range(1, steps + 1):
        count = len(shas) * step // steps
        prefixes.append((count, f"{base}..{shas[count - 1]}", f"{upstream.split('=')[0]}={clone}", clone, tree,
                         tree / matrix_text))
    return prefixes


def plot(results: dict[int, dict[str, list[float]]], path: Path, real: dict | None = None,
         real_name: str | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(results)
    figure, axes = plt.subplots(1, 3 if real else 2, figsize=(16 if real else 11, 4.2))
    left, right = axes[0], axes[1]
    for key, label in (("git", "git log -p"), ("cold", "portq scan, cold"), ("warm", "portq scan, unchanged rescan")):
        left.plot(sizes, [statistics.median(results[s][key]) for s in sizes], marker="o", label=label)
    left.set(xlabel="first-parent entries", ylabel="seconds (median)", title="time")
    left.legend()
    for key, label in (("cold_rss", "cold"), ("warm_rss", "unchanged rescan")):
        right.plot(sizes, [statistics.median(results[s][key]) for s in sizes], marker="o", label=label)
    right.axhline(300, color="grey", linestyle="--", linewidth=1, label="300 MiB bound")
    right.set(xlabel="first-parent entries", ylabel="peak resident MiB", title="memory")
    right.legend()
    if real:
        counts = sorted(real)
        third = axes[2]
        for key, label in (("git", "git log -p"), ("cold", "portq scan, cold")):
            third.plot(counts, [statistics.median(real[c][key]) for c in counts], marker="o", label=label)
        third.set(xlabel="first-parent entries", ylabel="seconds (median)",
                  title=f"dense real history ({real_name}), cold")
        ratio = third.twinx()
        ratio.plot(counts, [statistics.median(real[c]["cold_rss"]) for c in counts], color="grey", linestyle=":",
                   marker="s", label="cold peak MiB")
        ratio.set(ylabel="peak resident MiB")
        third.legend(loc="upper left")
        ratio.legend(loc="lower right")
    figure.suptitle("portq scan against history length (synthetic histories at vLLM's density"
                    + (", and a dense real one" if real else "") + "; shared 2-core machine)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
