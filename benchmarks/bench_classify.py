"""Cost of structural classification on the synthetic 2,000-commit history.

``python benchmarks/bench_classify.py [--commits 2000] [--seed 0] [--repeat 3]``
``python benchmarks/bench_classify.py --range A..B [--upstream NAME=PATH] [--repeat 3]``

Generates the history with ``synthetic_history.py`` into a temporary
directory and measures the classifier's share two ways:

1. **Of a whole scan, in the same run** (the figure issue 16's "classification
   cost ≤ 15% of a scan" is about): ``--repeat`` cold in-process scans
   (``portq.pipeline.scan.run_scan`` of ``base..tip`` into a fresh ledger folder: no
   ledger, no definition or signature store, no in-tree index cache), after
   one untimed scan that imports what a scan imports. In each, the time spent
   inside the classifier (building it, and every step of its
   ``classify_range``) is summed and divided by that scan's own wall time, so
   the two figures come from the same entries in the same run; the median
   share is printed with the lowest and highest. The classifier here gets the
   scan's own context, as ``portq scan`` builds it: its own symbol-table cache
   (it parses the upstream blobs it reads), the scan's in-tree index and
   signature store.
2. **Of read + map, as first measured** (kept beside the first for
   comparison with the figures taken before it existed): reads and maps the
   whole range once (history → hunks → symbols, with one table cache the
   classifier then shares), then classifies the same entries with the
   provisional rule and with the structural classifier (a cold in-tree index,
   then a warm one read from the content-hash cache), best of ``--repeat``
   each, and divides the structural time by read + map + structural. These
   come from separate runs, and that mapping is not the scan's (no
   definition store, no ledger, no decision keys).

3. **Of a ``portq scan`` process**, as a user runs one: ``--repeat`` fresh
   processes (after one that writes bytecode), each running ``portq.cli.main``
   with ``scan base..tip`` into a fresh ledger folder, stdout to
   ``/dev/null``, with the same classifier clock installed; the share is the
   classifier's seconds over the wall time of that process, start-up and
   imports included (the child also imports this script, a few stdlib modules
   a plain ``portq scan`` does not, which makes the share a little smaller
   than it is, by well under a percent of the process).

Prints the times, the ratio of a read + map with structural classification to
one with the provisional rule, and the verdict counts. With ``--range``, only
the first figure, of cold scans of that range of a real upstream against this
repository's own tree and matrix (``portq.toml``; ``--upstream`` names the
clone as ``portq scan`` takes it). It measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic_history import generate  # noqa: E402
from portq.classifier import classify  # noqa: E402
from portq.classifier.classify import ClassifierContext, ProvisionalClassifier, StructuralClassifier  # noqa: E402
from portq.classifier.mapping import ChangeMapper  # noqa: E402
from portq.core.config import load_config  # noqa: E402
from portq.core.errors import PortqError  # noqa: E402
from portq.language.symbols import SymbolTableCache  # noqa: E402
from portq.pipeline.scan import run_scan  # noqa: E402
from portq.tree.matrix import Matrix  # noqa: E402
from portq.upstream.history import Upstream  # noqa: E402


def best(repeat: int, run, prepare=lambda: None):
    """Best time of ``repeat`` calls of ``run(prepare())``; ``prepare`` is not timed."""
    times, result = [], None
    for _ in range(repeat):
        argument = prepare()
        start = time.perf_counter()
        result = run(argument) if argument is not None else run()
        times.append(time.perf_counter() - start)
    return min(times), result


class ClassifierClock:
    """Seconds spent inside ``StructuralClassifier`` (its constructor and each
    step of ``classify_range``) while installed; the scan's own code between
    the steps (decision keys, ledger writes) is not counted. ``collecting``:
    the part of them Python's garbage collector ran, whoever's objects made
    the collection due (a full one scans the whole heap the scan has built)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collecting = 0.0
        self._inside = False
        self._collection_began = 0.0

    def _collector(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._collection_began = time.perf_counter()
        elif self._inside:
            self.collecting += time.perf_counter() - self._collection_began

    def _step(self, call, *args):
        self._inside, start = True, time.perf_counter()
        try:
            return call(*args)
        finally:
            self.seconds += time.perf_counter() - start
            self._inside = False

    def __enter__(self) -> "ClassifierClock":
        self._init, self._classify_range = StructuralClassifier.__init__, StructuralClassifier.classify_range
        clock, init, classify_range = self, self._init, self._classify_range

        def timed_init(classifier, *args, **kwargs):
            clock._step(lambda: init(classifier, *args, **kwargs))

        def timed_classify_range(classifier, entries, *facts):
            steps = classify_range(classifier, entries, *facts)
            done = object()
            while (item := clock._step(next, steps, done)) is not done:
                yield item

        StructuralClassifier.__init__, StructuralClassifier.classify_range = timed_init, timed_classify_range
        gc.callbacks.append(self._collector)
        return self

    def __exit__(self, *exc) -> None:
        StructuralClassifier.__init__, StructuralClassifier.classify_range = self._init, self._classify_range
        gc.callbacks.remove(self._collector)


def whole_scans(paths: dict, scratch: Path, repeat: int) -> list[tuple[float, float, float, int]]:
    """(scan seconds, classifier seconds, of them collecting, entries) of ``repeat`` cold scans, after one untimed."""
    return timed_scans(lambda ledger: load_config(cwd=scratch, upstream=[paths["upstream"]], tree=paths["tree"],
                                                  matrix=paths["matrix"], ledger=str(ledger)),
                       "base..tip", scratch, repeat)


def timed_scans(config_for, range_spec: str, scratch: Path, repeat: int) -> list[tuple[float, float, float, int]]:
    """(scan seconds, classifier seconds, of them collecting, entries) of ``repeat`` cold scans of ``range_spec``, each into a
    fresh ledger folder under ``scratch`` (``config_for(ledger path)``), after one untimed."""
    results = []
    for trial in range(repeat + 1):
        config = config_for(scratch / f"scan-{trial}" / "ledger.sqlite")
        with ClassifierClock() as clock:
            start = time.perf_counter()
            result = run_scan(config, range_spec)
            elapsed = time.perf_counter() - start
        if trial:  # the first scan pays the imports a scan makes, once per process
            results.append((elapsed, clock.seconds, clock.collecting, len(result.entries)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--range", metavar="A..B", help="scan this range of a real upstream instead")
    parser.add_argument("--upstream", metavar="NAME=PATH", action="append", help="with --range: the clone")
    if sys.argv[1:2] == ["--child"]:  # one scan process of ``process_scans``: not a user's option
        split = sys.argv.index("--")
        child_scan(Path(sys.argv[2]), sys.argv[split + 1:])
        return
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    if args.range is not None:
        real_history(args)
        return
    if args.upstream:
        parser.error("--upstream needs --range")
    with tempfile.TemporaryDirectory() as scratch:
        paths = generate(Path(scratch), args.commits, args.seed)
        scans = whole_scans(paths, Path(scratch), args.repeat)
        processes = process_scans(["scan", "base..tip", "--upstream", str(paths["upstream"]), "--tree",
                                   str(paths["tree"]), "--matrix", str(paths["matrix"])],
                                  Path(scratch), Path(scratch), args.repeat)
        matrix = Matrix.load(paths["matrix"])
        upstream_name = matrix.upstreams()[0]
        with Upstream(paths["upstream"], upstream_name) as upstream:
            revisions = upstream.resolve_range("base..tip")

            def read_and_map():
                tables = SymbolTableCache()
                mapper = ChangeMapper(matrix, upstream_name, upstream.read_blob, tables)
                return [mapper.map_commit(i, c) for i, c in enumerate(upstream.commits(revisions), 1)], tables

            mapping_time, (entries, tables) = best(args.repeat, read_and_map)

            def context(cache_dir):
                return ClassifierContext(upstream=upstream_name, matrix=matrix, tree_root=Path(paths["tree"]),
                                         read_blob=upstream.read_blob, is_ancestor=upstream.is_ancestor,
                                         symbol_tables=tables, cache_dir=cache_dir)

            # Every run classifies a fresh copy of the mapped entries: the
            # classifier may parse and keep hunks on them, which a real scan
            # pays once, so a reused copy would time only the cheap repeats.
            fresh = lambda: copy.deepcopy(entries)  # noqa: E731
            provisional_time, _ = best(
                args.repeat, lambda batch: list(ProvisionalClassifier(context(None)).classify_range(batch)), fresh)
            structural_time, verdicts = best(
                args.repeat, lambda batch: list(StructuralClassifier(context(None)).classify_range(batch)), fresh)
            cache = Path(scratch) / "cache"
            StructuralClassifier(context(cache))  # fill the index cache
            warm_time, _ = best(
                args.repeat, lambda batch: list(StructuralClassifier(context(cache)).classify_range(batch)), fresh)

    counts = collections.Counter(
        v.verdict + (f"/{v.justification}" if v.justification else "") for _, v in verdicts)
    with_provisional = mapping_time + provisional_time
    with_structural = mapping_time + structural_time
    print_shares(scans)
    print_shares(processes, "portq scan processes")
    print("as first measured: read + map, then classify the same entries")
    print(f"entries                               {len(entries)}")
    print(f"read + map (scan without classifying) {mapping_time:8.3f} s")
    print(f"provisional rule                      {provisional_time:8.3f} s")
    print(f"structural, cold in-tree index        {structural_time:8.3f} s")
    print(f"structural, cached in-tree index      {warm_time:8.3f} s")
    print(f"scan with structural / with provisional  {with_structural / with_provisional:6.2f}x")
    print(f"classification share of read + map + it  {structural_time / with_structural:6.1%}")
    for label, count in counts.most_common():
        print(f"  {label:32s} {count}")


def process_scans(scan_args: list[str], cwd: Path, scratch: Path, repeat: int) -> list[tuple[float, float, float, int]]:
    """(process seconds, classifier seconds, of them collecting, entries) of ``repeat`` fresh ``portq scan``
    processes (``portq.cli.main(scan_args + ['--ledger', ...])`` in ``cwd``), after one that writes bytecode."""
    results = []
    for trial in range(repeat + 1):
        out = scratch / f"process-{trial}.json"
        ledger = scratch / f"process-{trial}" / "ledger.sqlite"
        command = [sys.executable, __file__, "--child", str(out), "--", *scan_args, "--ledger", str(ledger)]
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        if trial:
            child = json.loads(out.read_text())
            results.append((elapsed, child["classifier_s"], child["collecting_s"], child["entries"]))
    return results


def child_scan(out: Path, scan_args: list[str]) -> None:
    """One ``portq scan`` with the classifier clock installed; its seconds go to ``out``."""
    from portq import cli

    counted = {"entries": 0}
    original = StructuralClassifier.classify_range

    def counting(classifier, entries):
        counted["entries"] += len(entries)
        return original(classifier, entries)

    StructuralClassifier.classify_range = counting
    with ClassifierClock() as clock:
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
            status = cli.main(scan_args)
    out.write_text(json.dumps({"classifier_s": clock.seconds, "collecting_s": clock.collecting,
                               "entries": counted["entries"], "status": status}))
    sys.exit(status)


def print_shares(scans: list[tuple[float, float, float, int]], what: str = "cold scans in process") -> None:
    shares = sorted(classified / elapsed for elapsed, classified, _, _ in scans)
    others = sorted((classified - collecting) / elapsed for elapsed, classified, collecting, _ in scans)
    print(f"{what:37s} {len(scans)} of {scans[0][3]} entries each")
    print(f"whole scan (median)                   {statistics.median(s[0] for s in scans):8.3f} s")
    print(f"  of which in the classifier (median) {statistics.median(s[1] for s in scans):8.3f} s")
    print(f"    of which collecting garbage       {statistics.median(s[2] for s in scans):8.3f} s")
    print(f"classification share of a whole scan     {statistics.median(shares):6.1%}"
          f"  (lowest {shares[0]:.1%}, highest {shares[-1]:.1%})")
    print(f"  the same without garbage collection    {statistics.median(others):6.1%}"
          f"  (lowest {others[0]:.1%}, highest {others[-1]:.1%})")


def real_history(args) -> None:
    """The share of cold scans of ``args.range`` against this repository's tree; bad input exits 2."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as scratch:
        try:
            scans = timed_scans(lambda ledger: load_config(cwd=root, upstream=args.upstream, ledger=str(ledger)),
                                args.range, Path(scratch), args.repeat)
        except PortqError as error:
            print(f"bench_classify: {error}" if str(error) else "bench_classify: the scan failed", file=sys.stderr)
            sys.exit(2)
    print(f"range {args.range} against {root / 'kernels'}")
    print_shares(scans)


if __name__ == "__main__":
    main()
