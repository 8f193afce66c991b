"""What the damage check before a write costs on large ledgers.

``python benchmarks/bench_ledger_check.py [--entries 2000 20000] [--repeat 7]``

``scan`` (when it begins a wave) and ``review`` (before it records a
decision) run ``Ledger.require_intact`` (``PRAGMA quick_check``) so that
nothing is ever written into a damaged file. This builds one ledger per size
in a temporary folder (one wave, each entry with three symbols and five
evidence records of about 400 characters, roughly what a scan of a real range
stores), then times the check ``--repeat`` times and prints the median and the
spread. The file is in the page cache after it is written, as it is right
after a scan; a cold disk reads it once more. It measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from portq.core.model import Evidence, Verdict  # noqa: E402
from portq.ledger.store import open_ledger  # noqa: E402


def build(path: Path, entries: int) -> None:
    evidence = [Evidence(kind="hunk", message="x" * 400, path="csrc/cache_kernels.cu") for _ in range(5)]
    symbols = [{"path": "csrc/cache_kernels.cu", "name": f"kernel_{i}", "change": "modified"} for i in range(3)]
    with open_ledger(path) as ledger:
        wave, _ = ledger.begin_wave(range_spec="A..B", upstream="up", base_sha="a" * 40, tip_sha="b" * 40,
                                    tree=".", entry_count=entries, matrix_fingerprint="m", tree_fingerprint="t")
        batch = []
        for position in range(1, entries + 1):
            verdict = Verdict("NEEDS_REVIEW", None, "fallback", reason="r" * 100, evidence=evidence)
            batch.append(dict(position=position, sha=f"{position:040x}", title="t" * 80, pr=position,
                              rows=["ROW"], symbols=symbols, verdict=verdict))
            if len(batch) == 500:
                ledger.record_scan_entries(wave, batch)
                batch = []
        if batch:
            ledger.record_scan_entries(wave, batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    print("| entries | ledger MB | quick_check median ms | min–max ms |")
    print("|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="portq-bench-ledger-") as folder:
        for entries in options.entries:
            path = Path(folder) / f"ledger-{entries}.sqlite"
            build(path, entries)
            with open_ledger(path) as ledger:
                times = []
                for _ in range(options.repeat):
                    start = time.perf_counter()
                    ledger.require_intact()
                    times.append((time.perf_counter() - start) * 1000)
            size = path.stat().st_size / 1e6
            print(f"| {entries} | {size:.0f} | {statistics.median(times):.0f} | {min(times):.0f}–{max(times):.0f} |")


if __name__ == "__main__":
    main()
