"""How long printing a scanned wave takes, and how many lines it is, in each of scan's forms.

``python benchmarks/bench_scan_output.py --ledger L [--wave PORTQ-N] [--repeat 7]``

Reads one wave from a ledger (the newest complete one by default) and, in
one run, ``--repeat`` times each, interleaved, renders it the ways ``portq
scan`` can print it, into memory: the default attention-first output and
``--all`` in a pipe, ``--all`` as the rich table a terminal gets, and
``--json``. Reading the wave from the ledger is timed apart. Prints the
median and spread (min–max) of each, and the line count. The machine is
shared: read the figures side by side, not as absolutes. It measures; it
asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from pathlib import Path
from types import SimpleNamespace

from portq.commands.scan import scan_json, write_scan
from portq.core.config import load_config
from portq.core.terminal import console
from portq.pipeline.workspace import Workspace
from portq.reporting import output


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _render(result, form: str) -> str:
    stream = _Terminal() if form == "all, terminal" else io.StringIO()
    if form == "json":
        output.print_json(scan_json(result), stream)
    else:
        out = console(stream)
        if form == "all, terminal":
            out.width = 160
        write_scan(out, result, show_all=form != "default, pipe")
    return stream.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", required=True, type=Path)
    parser.add_argument("--wave", help="PORTQ-N (default: the newest complete wave)")
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()

    with Workspace(load_config(ledger=str(options.ledger))) as workspace:
        wave = workspace.select_wave(None, options.wave)
        started = time.perf_counter()
        records = workspace.ledger().wave_entries(wave)
        read_s = time.perf_counter() - started
    result = SimpleNamespace(wave=wave, entries=records, upstream=wave.upstream)
    forms = ["default, pipe", "all, pipe", "all, terminal", "json"]
    timings: dict[str, list[float]] = {form: [] for form in forms}
    lines: dict[str, int] = {}
    for _ in range(options.repeat):
        for form in forms:
            started = time.perf_counter()
            text = _render(result, form)
            timings[form].append(time.perf_counter() - started)
            lines[form] = text.count("\n")
    print(f"{wave.name} {wave.range_spec} ({wave.upstream}): {len(records)} entries; "
          f"read from the ledger in {read_s * 1000:.0f} ms; {options.repeat} trials each, interleaved\n")
    print(f"| {'form':<15} | {'lines':>6} | {'median ms':>9} | {'min–max ms':>13} |")
    print(f"|{'-' * 17}|{'-' * 7}:|{'-' * 10}:|{'-' * 14}:|")
    for form in forms:
        values = [t * 1000 for t in timings[form]]
        spread = f"{min(values):.0f}–{max(values):.0f}"
        print(f"| {form:<15} | {lines[form]:>6} | {statistics.median(values):>9.0f} | {spread:>13} |")


if __name__ == "__main__":
    main()
