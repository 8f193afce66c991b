"""Cost of structural classification on the synthetic 2,000-commit history.

``python benchmarks/bench_classify.py [--commits 2000] [--seed 0] [--repeat 3]``

Generates the history with ``synthetic_history.py`` into a temporary
directory, reads and maps the whole range once (history → hunks → symbols:
the scan without classification), then classifies the same entries with the
provisional rule and with the structural classifier (a cold in-tree index,
then a warm one read from the content-hash cache). Prints the times, the
ratio of a full scan with structural classification to one with the
provisional rule, and the verdict counts. Best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import collections
import copy
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic_history import generate  # noqa: E402
from portq.classify import ClassifierContext, ProvisionalClassifier, StructuralClassifier  # noqa: E402
from portq.history import Upstream  # noqa: E402
from portq.mapping import ChangeMapper  # noqa: E402
from portq.matrix import Matrix  # noqa: E402
from portq.symbols import SymbolTableCache  # noqa: E402


def best(repeat: int, run, prepare=lambda: None):
    """Best time of ``repeat`` calls of ``run(prepare())``; ``prepare`` is not timed."""
    times, result = [], None
    for _ in range(repeat):
        argument = prepare()
        start = time.perf_counter()
        result = run(argument) if argument is not None else run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        paths = generate(Path(scratch), args.commits, args.seed)
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
    print(f"entries                               {len(entries)}")
    print(f"read + map (scan without classifying) {mapping_time:8.3f} s")
    print(f"provisional rule                      {provisional_time:8.3f} s")
    print(f"structural, cold in-tree index        {structural_time:8.3f} s")
    print(f"structural, cached in-tree index      {warm_time:8.3f} s")
    print(f"scan with structural / with provisional  {with_structural / with_provisional:6.2f}x")
    print(f"classification share of the scan         {structural_time / with_structural:6.1%}")
    for label, count in counts.most_common():
        print(f"  {label:32s} {count}")


if __name__ == "__main__":
    main()
