"""Where one cold ``portq scan`` spends its time, phase by phase, adding up to the total.

``python benchmarks/scan_breakdown.py [--commits 2000] [--keep DIR] [--repeat 5] [--compare CHECKOUT] [-- SCAN ARGUMENTS]``

Without scan arguments it scans the dense synthetic history (``synthetic_history.py``,
generated into ``--keep DIR`` or a temporary folder), and times ``git log -p base..tip``
in the same run, interleaved, for a column of ratios; with scan arguments (after ``--``)
it runs ``portq scan`` with those (each run adds its own new ``--ledger``), and times
``git log -p --first-parent RANGE`` in the clone their ``--upstream [NAME=]PATH`` names.

Each run is one fresh process, from bytecode compiled once (as ``bench_scan.py``
runs scans): it imports the scan pipeline, then runs ``portq.cli.main`` with
stdout to ``/dev/null``. Chosen functions of portq are wrapped to charge their
*exclusive* time (their own, less that of wrapped functions they call) to one
phase; what no wrapper covers is "orchestration (the rest)", and the wall time
of the process (timed by this script) less all of that is the interpreter's
start and exit. So the rows add up to the wall time; the wrappers' own cost (an
empty wrapped call timed, times the calls made) is printed below the table.
git runs in its own processes meanwhile; what the scan's thread waits for it is
charged to the rows naming git. The first run of each checkout writes bytecode
and is not counted. ``--compare`` runs another checkout's scans alternately with this one's
and prints its breakdown beside this one's. It measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

PHASES = {
    # module: {function, Class.method, or Class (every method not named on its own): phase}
    "portq.upstream.history": {
        "ReadAhead.read1": "waiting for git log",
        "BlobReader.read_many": "waiting for git cat-file (blobs)",
        "Upstream.git": "other git commands (rev-parse, rev-list)",
        "split_records": "patch records (split, parse)",
        "parse_record": "patch records (split, parse)",
    },
    "portq.upstream.hunks": {"parse_hunks": "hunks (unidiff)"},
    "portq.language.symbols": {"parse_from": "tree-sitter: incremental edits (Python)"},
    "portq.tree.symbol_cache": {
        "_parsed": "definitions from parse trees",
        "DefinitionCache.recall": "definition store (sqlite)",
        "DefinitionCache.flush": "definition store (sqlite)",
        "DefinitionCache.close": "definition store (sqlite)",
        "DefinitionCache._open": "definition store (sqlite)",
        "SignatureStore": "signature store (sqlite)",
    },
    "portq.tree.product_store": {"ProductStore": "product store (sqlite)"},  # absent before it existed
    "portq.classifier.mapping": {"ChangeMapper": "mapping: ownership, enclosing symbols"},
    "portq.tree.tree_index": {"TreeIndex": "in-tree index and anchors"},
    "portq.classifier.decision_keys": {"DecisionKeys": "decision keys"},
    "portq.language.extraction": {"signature_of": "signatures (upstream and in-tree)"},
    "portq.classifier.classify": {"StructuralClassifier": "classification (verdicts, evidence)",
                                  "NetZeroPairing": "classification (verdicts, evidence)"},  # absent before it existed
    "portq.ledger.store": {"Ledger.wave_entries": "ledger: read the wave back", "Ledger._entry_record": "ledger: read the wave back",
                     "Ledger": "ledger: open, record entries, finish", "open_ledger": "ledger: open, record entries, finish",
                     "to_json_text": "ledger: open, record entries, finish"},
    "portq.pipeline.scan": {"_entry_to_record": "ledger: open, record entries, finish"},
    "portq.commands.scan": {"scan_json": "printing (JSON)"},
    "portq.reporting.output": {"emit": "printing (JSON)"},
}
PARSE = "tree-sitter: Parser.parse (C)"
ROOT = "orchestration (the rest)"


class Charges:
    """Exclusive time per phase on the main thread: a stack of phases and the time of the last change."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls = 0
        self.stack = [ROOT]
        self.last = time.perf_counter()
        self.main = threading.get_ident()

    def switch(self, phase: str | None) -> None:
        now = time.perf_counter()
        top = self.stack[-1]
        self.seconds[top] = self.seconds.get(top, 0.0) + now - self.last
        self.last = now
        if phase is None:
            self.stack.pop()
        else:
            self.stack.append(phase)
            self.calls += 1

    def wrap(self, function, phase: str):
        charges = self

        if inspect.isgeneratorfunction(function):
            @functools.wraps(function)
            def generator(*args, **kwargs):
                if threading.get_ident() != charges.main:
                    yield from function(*args, **kwargs)
                    return
                inner = function(*args, **kwargs)
                while True:
                    charges.switch(phase)
                    try:
                        value = next(inner)
                    except StopIteration:
                        return
                    finally:
                        charges.switch(None)
                    yield value
            generator.charged_to = phase
            return generator

        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            if threading.get_ident() != charges.main:
                return function(*args, **kwargs)
            charges.switch(phase)
            try:
                return function(*args, **kwargs)
            finally:
                charges.switch(None)
        wrapped.charged_to = phase
        return wrapped


class _TimedParser:
    """A tree-sitter parser whose ``parse`` (C) is charged to its own phase."""

    def __init__(self, parser, charges: Charges) -> None:
        self._parser = parser
        self.parse = charges.wrap(parser.parse, PARSE)

    def __getattr__(self, name: str):
        return getattr(self._parser, name)


def install(charges: Charges) -> None:
    import importlib

    import portq.language.symbols

    # Methods named on their own first: a class-wide wrap leaves them alone.
    ordered = sorted(((module_name, name, phase) for module_name, names in PHASES.items()
                      for name, phase in names.items()), key=lambda item: "." not in item[1])
    for module_name, name, phase in ordered:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:  # a checkout compared with, from before the module existed
            continue
        owner_name, _, attribute = name.rpartition(".")
        if not hasattr(module, name.split(".")[0]):  # a checkout compared with, from before it existed
            continue
        if not owner_name and isinstance(getattr(module, name), type):
            cls = getattr(module, name)
            for key, value in list(vars(cls).items()):
                if inspect.isfunction(value) and not hasattr(value, "charged_to"):
                    setattr(cls, key, charges.wrap(value, phase))
                elif isinstance(value, (classmethod, staticmethod)):
                    setattr(cls, key, type(value)(charges.wrap(value.__func__, phase)))
            continue
        owner = getattr(module, owner_name) if owner_name else module
        setattr(owner, attribute, charges.wrap(getattr(owner, attribute), phase))
    # Modules that imported a wrapped function by name get the wrapped one too.
    for module_name, names in PHASES.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in names:
            if "." in name or not hasattr(module, name) or isinstance(getattr(module, name), type):
                continue
            for other in list(sys.modules.values()):
                if getattr(other, "__name__", "").startswith("portq") and other is not module \
                        and getattr(getattr(other, name, None), "__module__", None) == module_name:
                    setattr(other, name, getattr(module, name))
    parsers: dict[str, _TimedParser] = {}
    real_parser = portq.language.symbols._parser

    def timed_parser(language: str) -> _TimedParser:
        if language not in parsers:
            parsers[language] = _TimedParser(real_parser(language), charges)
        return parsers[language]

    portq.language.symbols._parser = timed_parser
    for other in list(sys.modules.values()):  # modules that imported it by name (the in-tree call sites)
        if getattr(other, "__name__", "").startswith("portq") and getattr(other, "_parser", None) is real_parser:
            other._parser = timed_parser


def child(scan_arguments: list[str]) -> None:
    """One measured scan (run in a fresh process); prints its breakdown as JSON."""
    began = time.perf_counter()
    import portq.cli
    import portq.classifier.classify, portq.commands.scan, portq.pipeline.scan, portq.classifier.verdicts  # noqa: E401,F401 (what a scan imports)

    imported = time.perf_counter()
    charges = Charges()
    install(charges)
    # The wrappers' own cost: an empty wrapped call, timed many times over.
    empty = Charges().wrap(lambda: None, "probe")
    start = time.perf_counter()
    for _ in range(20000):
        empty()
    per_call = (time.perf_counter() - start) / 20000
    charges.seconds.clear()
    charges.calls = 0
    stdout = sys.stdout
    with open(os.devnull, "w") as sink:
        sys.stdout = sink
        charges.last = time.perf_counter()
        try:
            code = portq.cli.main(["scan", *scan_arguments])
        finally:
            sys.stdout = stdout
    charges.switch(ROOT)  # charges the last stretch to the rest
    print(json.dumps({"exit": code, "imports": imported - began, "phases": charges.seconds,
                      "wrapper calls": charges.calls, "wrapper cost per call": per_call}))


def real_history_log(scan_arguments: list[str]) -> tuple[list[str] | None, Path | None]:
    """``git log -p --first-parent RANGE`` and the clone to run it in, from scan arguments
    (the first, the range, as ``portq scan`` takes it; ``--upstream [NAME=]PATH`` the clone); None without both."""
    spec = scan_arguments[0] if scan_arguments and not scan_arguments[0].startswith("-") else None
    clone = None
    for flag, value in zip(scan_arguments, scan_arguments[1:]):
        if flag == "--upstream":
            clone = Path(value.split("=", 1)[-1])
    if spec is None or clone is None:
        return None, None
    return ["git", "log", "-p", "--first-parent", spec], clone


def dense_arguments(work: Path, ledger: Path) -> list[str]:
    return ["base..tip", "--json", "--upstream", str(work / "upstream"), "--matrix", str(work / "matrix.toml"),
            "--tree", str(work / "tree"), "--ledger", str(ledger)]


def main() -> None:
    argv = sys.argv[1:]
    scan_arguments = None
    if "--" in argv:
        cut = argv.index("--")
        argv, scan_arguments = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--keep", type=Path, help="generate the dense history into (and keep) this directory")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compare", type=Path, help="another portq checkout, its scans run alternately with this "
                        "one's, its breakdown printed beside this one's")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(scan_arguments or [])
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="portq-breakdown-"))
    try:
        measure(args, scan_arguments, work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def measure(args, scan_arguments: list[str] | None, work: Path) -> None:
    from bench_rescan import compiled_environment, git_head

    if scan_arguments is None and not (work / "upstream").exists():
        from synthetic_history import generate

        generate(work, args.commits)
    checkouts = [REPO_ROOT] + ([args.compare.resolve()] if args.compare else [])
    envs = {checkout: compiled_environment(work, checkout) for checkout in checkouts}
    runs: dict[Path, list[dict]] = {checkout: [] for checkout in checkouts}
    git_log: list[float] = []
    log_command, log_folder = (["git", "log", "-p", "base..tip"], work / "upstream") if scan_arguments is None \
        else real_history_log(scan_arguments)
    load = os.getloadavg()[0]
    for attempt in range(args.repeat + 1):  # the first run writes the bytecode of what it imports; not counted
        if log_command is not None and attempt:
            began = time.perf_counter()  # read through a pipe to the end, as bench_scan.py times it
            subprocess.run(log_command, cwd=log_folder, capture_output=True, check=True)
            git_log.append(time.perf_counter() - began)
        for checkout in checkouts:
            ledger = Path(tempfile.mkdtemp(prefix="portq-breakdown-ledger-")) / "ledger.sqlite"
            arguments = scan_arguments + ["--ledger", str(ledger)] if scan_arguments is not None \
                else dense_arguments(work, ledger)
            began = time.perf_counter()
            done = subprocess.run([sys.executable, __file__, "--child", "--", *arguments], cwd=checkout,
                                  env=envs[checkout], capture_output=True, text=True)
            wall = time.perf_counter() - began
            shutil.rmtree(ledger.parent, ignore_errors=True)
            result = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
            if result.get("exit") != 0:
                raise SystemExit(f"the scan of {checkout} failed: {done.stderr.strip()}")
            if attempt:
                runs[checkout].append({**result, "total": wall})
    base = statistics.median(git_log) if git_log else None
    print(f"{args.repeat} runs of each checkout, each a fresh process, alternating; load average {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after" + (f"; git log -p base..tip {base:.3f} s (median, {min(git_log):.3f}–"
                                               f"{max(git_log):.3f}), timed between them" if base else ""))
    if base:
        print(f"git log: `{' '.join(log_command)}` in {log_folder}")
    print()
    tables = {checkout: breakdown(runs[checkout]) for checkout in checkouts}
    names = [f"{checkout} ({git_head(checkout)})" for checkout in checkouts]
    print("Seconds of each checkout's median run (by total)" + (", and × git log -p" if base else "") + ": "
          + "; ".join(f"{name}: totals {min(r['total'] for r in runs[c]):.2f}–{max(r['total'] for r in runs[c]):.2f} s"
                      for name, c in zip(names, checkouts)))
    print()
    per = " | ×" if base else ""
    print("| phase | " + " | ".join(f"{name} s{per}" for name in names) + " |")
    print("|---|" + "---:|" * (len(checkouts) * (2 if base else 1)))
    for phase in [key for key in tables[REPO_ROOT] if key != "run"]:
        cells = []
        for checkout in checkouts:
            seconds = tables[checkout].get(phase, 0.0)
            cells.append(f"{seconds:.3f}" + (f" | {seconds / base:.2f}" if base else ""))
        print(f"| {phase} | {' | '.join(cells)} |")
    for checkout, name in zip(checkouts, names):
        run = tables[checkout]["run"]
        print(f"\n{name}: the wrappers' own cost, {run['wrapper calls']} wrapped calls × "
              f"{run['wrapper cost per call'] * 1e6:.1f} µs = {run['wrapper calls'] * run['wrapper cost per call']:.3f} s, "
              "spread over the phases.")


def breakdown(runs: list[dict]) -> dict:
    """phase -> seconds in the median run (by total), the rows adding up to its wall time; "run": that run."""
    run = sorted(runs, key=lambda r: r["total"])[len(runs) // 2]
    table = {"interpreter start and exit (the rest of the wall time)":
             run["total"] - run["imports"] - sum(run["phases"].values()),
             "imports of the scan pipeline": run["imports"]}
    for phase in phase_order(runs):
        table[phase] = run["phases"].get(phase, 0.0)
    table["**total** (wall time of the process)"] = run["total"]
    return {**table, "run": run}


def phase_order(runs) -> list[str]:
    """Every phase, in the order of ``PHASES`` (C parses beside the edits that precede them), then any other."""
    seen: dict[str, None] = {}
    for names in PHASES.values():
        for phase in names.values():
            seen[phase] = None
            if phase == PHASES["portq.language.symbols"]["parse_from"]:
                seen[PARSE] = None
    seen[ROOT] = None
    for run in runs:
        seen.update(dict.fromkeys(run["phases"]))
    return list(seen)


if __name__ == "__main__":
    main()
