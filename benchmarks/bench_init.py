"""How well ``portq init`` recovers the hand-written anchors and bases of the labelled corpus.

``python benchmarks/bench_init.py [--upstream NAME=PATH]... [--aiter PATH] [--port NAME] [--scan] [--json]``
``python benchmarks/bench_init.py --aiter PATH --long-history N``

For every port of ``examples/accuracy/`` (with a clone of its upstream; held-out ports are
never read): copy the port's tree to a temporary directory (a vendored port's files written
from the clone, pinned), delete every ``portq:`` anchor line from the copy, run
``portq init --upstream NAME=CLONE --tree TREE --json`` there (timed, wall clock, in a
child process), and compare what it proposes with the anchors the port was written with:

- **proposed**: hand-written ``ports`` anchors that init proposes exactly (the same in-tree
  definition, upstream path and symbol), at or above the confidence threshold;
- **wrong**: hand-anchored definitions for which init proposes a different upstream symbol
  (or path) above the threshold;
- **extra**: proposals for definitions the port's author did not anchor (helpers copied
  from upstream are often right to propose; they are listed, not judged);
- **base**: whether init's base lies in the run of first-parent commits where the
  hand-anchored upstream definitions are exactly as at the port's hand-written pin (a port
  whose anchors carry no pin: as at the first commit of its labelled range, the commit it
  was taken from).

With ``--long-history N`` (and ``--aiter``) it times instead the case of a long history:
the files of ``LONG_HISTORY_FILES`` copied verbatim from aiter's Nth first-parent commit
before HEAD into a fresh tree, ``portq init`` run there, and prints its stages (reading
the upstream, matching, the base search with both passes), the commits compared, and the
base found with its score and distance from the copied commit.

With ``--scan`` it also scans the port's labelled range twice, with the hand-made matrix
and anchors and with the generated configuration (the copy has none of the hand-written
``not-carried`` declarations; the generated one holds those init proposes itself), and
prints flagged precision and recall of both.

Without a clone it prints ``skipped: ...`` and exits 0.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy  # noqa: E402  (the corpus loader and scorer beside this script)

from portq.language.symbols import language_for_path, symbol_table  # noqa: E402
from portq.tree.anchors import PORTS, find_anchors  # noqa: E402
from portq.tree.definition_match import definitions_of  # noqa: E402
from portq.tree.tree_index import tree_files  # noqa: E402
from portq.upstream.history import BlobReader  # noqa: E402

ANCHOR_LINE = re.compile(r"portq:\s*(ports|not-carried)\s")


def strip_tree(port: accuracy.Port, work: Path, clone: Path) -> tuple[Path, list[tuple[str, str, str, str, str]]]:
    """A copy of the port's tree without anchor lines, and its hand-written ``ports`` anchors
    as (file, definition, upstream path, symbol as written, pin)."""
    source = accuracy.port_tree(port, work, clone)
    tree = work / port.name / "tree"
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns("labels.toml", "kernel-matrix.toml", "README.md",
                                                                 "__pycache__"))
    hand: list[tuple[str, str, str, str, str]] = []
    for file in tree_files(tree):
        relative = file.relative_to(tree).as_posix()
        data = file.read_bytes()
        for anchor in find_anchors(symbol_table(data, relative), relative):
            if anchor.kind == PORTS and anchor.definition:
                hand.append((relative, anchor.definition, anchor.path, anchor.symbol, anchor.pin or ""))
        text = data.decode("utf-8")
        kept = [line for line in text.splitlines(True) if not ANCHOR_LINE.search(line)]
        file.write_text("".join(kept))
    return tree, hand


def run_init(tree: Path, upstream: str, clone: Path) -> tuple[dict, float]:
    command = [sys.executable, "-c", "import sys; from portq.cli import main; sys.exit(main())",
               "init", "--upstream", f"{upstream}={clone}", "--tree", str(tree), "--json"]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=tree.parent)
    elapsed = time.perf_counter() - start
    if result.returncode == 2 and "resembles" in result.stderr:  # nothing proposed: scored as such
        return {"proposals": [], "base": None, "commits_compared": 0, "unmatched": []}, elapsed
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise accuracy.CorpusError(f"portq init exited {result.returncode} in {tree}: {last}")
    return json.loads(result.stdout), elapsed


def unchanged_run(clone: Path, hand: list[tuple], pin: str) -> tuple[int, int, list[str]]:
    """(first, last) positions, in first-parent order from the root, of the run of commits where
    every hand-anchored upstream definition has the text it has at ``pin``; and that order."""
    order = subprocess.run(["git", "rev-list", "--first-parent", "--reverse", "HEAD"], cwd=clone,
                           capture_output=True, text=True, check=True).stdout.split()
    position = {sha: i for i, sha in enumerate(order)}
    pin_sha = subprocess.run(["git", "rev-parse", pin], cwd=clone, capture_output=True, text=True).stdout.strip()
    paths = sorted({path for _, _, path, _, _ in hand})
    touching = subprocess.run(["git", "log", "--first-parent", "--format=%H", "HEAD", "--", *paths], cwd=clone,
                              capture_output=True, text=True, check=True).stdout.split()
    touching = sorted((sha for sha in touching if sha in position), key=position.get)
    reader = BlobReader(clone)

    def texts(commit: str) -> tuple:
        found = []
        for path in paths:
            try:
                data = reader.read_many([f"{commit}:{path}"])[f"{commit}:{path}"]
            except Exception:
                data = b""
            by_name = {d.name: d.text for d in definitions_of(data, path)} if data else {}
            found.extend(by_name.get(bare(symbol)) for _, _, p, symbol, _ in hand if p == path)
        return tuple(found)

    try:
        states = [(position[sha], texts(sha)) for sha in touching]
    finally:
        reader.close()
    at_pin = max((i for i, (pos, _) in enumerate(states) if pos <= position[pin_sha]), default=None)
    if at_pin is None:
        return position[pin_sha], position[pin_sha], order
    wanted = states[at_pin][1]
    first = at_pin
    while first > 0 and states[first - 1][1] == wanted:
        first -= 1
    last = at_pin
    while last + 1 < len(states) and states[last + 1][1] == wanted:
        last += 1
    end = states[last + 1][0] - 1 if last + 1 < len(states) else len(order) - 1
    return states[first][0], end, order


def bare(symbol: str) -> str:
    """A symbol's last name (``forward`` of ``Function.forward``, ``f`` of ``ns::f``)."""
    return re.split(r"::|\.", symbol)[-1]


def same_symbol(proposed: str, hand: str) -> bool:
    """Init's symbol names the hand anchor's: the same, or one side names the class (or namespace)
    the other leaves out; a different class's method of the same name is another symbol."""
    if proposed == hand:
        return True
    if bare(proposed) != bare(hand):
        return False
    return proposed == bare(proposed) or hand == bare(hand)


def compare(port: accuracy.Port, hand: list[tuple], found: dict, clone: Path) -> dict:
    proposals = {}
    for p in found["proposals"]:
        proposals.setdefault((p["file"], p["definition"]), []).append(p)
    hits, wrong, missed = [], [], []
    for file, definition, path, symbol, _ in hand:
        mine = proposals.get((file, definition), [])
        if any(p["upstream_path"] == path and same_symbol(p["upstream_symbol"], symbol) for p in mine):
            hits.append((file, definition, path, symbol))
        elif mine:
            wrong.append((file, definition, f"{path}::{symbol}",
                          ", ".join(f"{p['upstream_path']}::{p['upstream_symbol']} ({p['confidence']})" for p in mine)))
        else:
            missed.append((file, definition, f"{path}::{symbol}"))
    nearest = {(u["file"], u["definition"]): u["nearest"] for u in found.get("unmatched", []) if u.get("nearest")}
    candidates = []  # per hand anchor: (confidence, right?) of each proposal, or of the best guess below the threshold
    for file, definition, path, symbol, _ in hand:
        offered = [(p["confidence"], p["upstream_path"], p["upstream_symbol"]) for p in proposals.get((file, definition), [])]
        if not offered and (file, definition) in nearest:
            guess = nearest[(file, definition)]  # below the threshold, whatever its rounding says
            offered = [(min(guess["confidence"], 0.5999), guess["upstream_path"], guess["upstream_symbol"])]
        candidates.append([(confidence, p == path and same_symbol(s, symbol)) for confidence, p, s in offered])
    anchored = {(file, definition) for file, definition, *_ in hand}
    extra = [p for p in found["proposals"] if (p["file"], p["definition"]) not in anchored]
    pins = sorted({pin for *_, pin in hand if pin}) or [port.range.split("..")[0]]
    base = (found.get("base") or {}).get("commit")
    in_run = None
    run = ""
    if pins and base:
        first, last, order = unchanged_run(clone, hand, pins[0])
        index = {sha: i for i, sha in enumerate(order)}
        in_run = base in index and first <= index[base] <= last
        run = f"{order[first][:10]}..{order[last][:10]} ({last - first + 1})"
    return {"port": port.name, "hand": len(hand), "proposed": len(hits), "wrong": wrong, "missed": missed,
            "extra": [f"{p['file']}::{p['definition']} -> {p['upstream_path']}::{p['upstream_symbol']} "
                      f"({p['confidence']})" for p in extra],
            "pin": pins[0][:10] if pins else "", "base": (base or "")[:10], "base_in_run": in_run, "run": run,
            "commits_compared": found["commits_compared"], "candidates": candidates}


CURVE_THRESHOLDS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9)


def curve(rows: list[dict]) -> list[tuple[float, int, int, int]]:
    """(threshold, hand anchors proposed right, proposed wrong, hand anchors) had the confidence
    threshold been each of ``CURVE_THRESHOLDS``: a definition init left unmatched counts with its
    best candidate below the threshold, so lower thresholds show what they would let through."""
    every = [offered for row in rows for offered in row["candidates"]]
    points = []
    for threshold in CURVE_THRESHOLDS:
        right = sum(any(ok and c >= threshold - 1e-9 for c, ok in offered) for offered in every)
        wrong = sum(not any(ok and c >= threshold - 1e-9 for c, ok in offered)
                    and any(c >= threshold - 1e-9 for c, _ in offered) for offered in every)
        points.append((threshold, right, wrong, len(every)))
    return points


def scan_generated(port: accuracy.Port, clone: Path, tree: Path, work: Path) -> list[dict]:
    """``portq scan`` of the port's labelled range with the configuration init wrote beside the tree."""
    command = [sys.executable, "-c", "import sys; from portq.cli import main; sys.exit(main())",
               "scan", port.range, "--json", "--upstream", f"{port.upstream}={clone}",
               "--ledger", str(work / f"{port.name}-generated.sqlite")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tree.parent)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise accuracy.CorpusError(f"{port.name}: scan with the generated configuration failed: {last}")
    return json.loads(result.stdout)["entries"]


def write_config(tree: Path, upstream: str, clone: Path) -> None:
    command = [sys.executable, "-c", "import sys; from portq.cli import main; sys.exit(main())",
               "init", "--upstream", f"{upstream}={clone}", "--tree", str(tree)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tree.parent)
    if result.returncode != 0:
        raise accuracy.CorpusError(f"portq init (writing) failed in {tree}: {result.stderr.strip()}")


def flagged(outcomes) -> str:
    counts = accuracy.score(outcomes)["flagged"]
    precision = "n/a" if counts["precision"] is None else f"{counts['precision']:.2f}"
    recall = "n/a" if counts["recall"] is None else f"{counts['recall']:.2f}"
    return f"P {precision} ({counts['both']}/{counts['tool']}) R {recall} ({counts['both']}/{counts['labelled']})"


LONG_HISTORY_FILES = ("aiter/jit/core.py", "aiter/fused_moe.py", "csrc/include/rocm_ops.hpp", "aiter/ops/mha.py")
"""Large aiter files with many definitions and a long history each: the slow case of the base search."""


def most_touched(clone: Path, copied: str, count: int) -> tuple[str, ...]:
    """The ``count`` source files (tests and benchmarks left out) that the most first-parent
    commits touch and that exist at ``copied``."""
    listing = subprocess.run(["git", "log", "--first-parent", "--format=", "--name-only", "HEAD"], cwd=clone,
                             capture_output=True, text=True, check=True).stdout.split()
    present = set(subprocess.run(["git", "ls-tree", "-r", "--name-only", copied], cwd=clone, capture_output=True,
                                 text=True, check=True).stdout.split())
    touched = Counter(path for path in listing if path in present and language_for_path(path) is not None
                      and not re.search(r"(^|/)(tests?|op_tests|bench\w*)/|test_", path) and path != "setup.py")
    return tuple(path for path, _ in touched.most_common(count))


def long_history(clone: Path, back: int, files: int = 0) -> int:
    """Time ``portq init`` on ``LONG_HISTORY_FILES`` (or the ``files`` most touched source files)
    copied from the commit ``back`` first-parent commits before HEAD, and print what it found."""
    order = subprocess.run(["git", "rev-list", "--first-parent", "HEAD"], cwd=clone, capture_output=True,
                           text=True, check=True).stdout.split()
    if not 0 < back < len(order):
        print(f"bench_init: --long-history: expected a number of commits between 1 and {len(order) - 1}, got {back}",
              file=sys.stderr)
        return 2
    copied = order[back]
    paths = most_touched(clone, copied, files) if files else LONG_HISTORY_FILES
    with tempfile.TemporaryDirectory(prefix="bench-init-long-") as scratch:
        tree = Path(scratch) / "tree"
        for path in paths:
            data = subprocess.run(["git", "show", f"{copied}:{path}"], cwd=clone, capture_output=True,
                                  check=True).stdout
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_bytes(data)
        definitions = sum(len(definitions_of((tree / path).read_bytes(), path)) for path in paths)
        found, seconds = run_init(tree, "aiter", clone)
    base = found["base"] or {}
    position = {sha: i for i, sha in enumerate(order)}
    stages = found.get("seconds", {})
    print("| copied from | files | definitions | proposals | base | score | base commits before HEAD | commits compared "
          "| read s | match s | bases s | init s |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| HEAD~{back} {copied[:10]} | {len(paths)} | {definitions} | {len(found['proposals'])} | {base.get('commit', 'none')[:10]} "
          f"| {base.get('score', 0.0):.2f} | {position.get(base.get('commit'), '-')} | {found['commits_compared']} "
          f"| {stages.get('read upstream', 0.0):.1f} | {stages.get('match', 0.0):.1f} | {stages.get('bases', 0.0):.1f} "
          f"| {seconds:.1f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", action="append", default=[], metavar="NAME=PATH",
                        help="the clone of the upstream NAME (repeatable; default: portq.toml's [upstream.NAME].path)")
    parser.add_argument("--aiter", type=Path, help="a clone of github.com/ROCm/aiter: --upstream aiter=PATH")
    parser.add_argument("--port", action="append", help="only this corpus port (repeatable)")
    parser.add_argument("--scan", action="store_true", help="also scan each range with both configurations")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--long-history", type=int, metavar="N",
                        help="time init on large aiter files copied N first-parent commits before HEAD (needs --aiter)")
    parser.add_argument("--most-touched", type=int, default=0, metavar="K",
                        help="with --long-history: copy the K source files most commits touch instead of the four "
                        "large ones")
    args = parser.parse_args(argv)
    if args.long_history is not None:
        if args.aiter is None or not accuracy.is_git_clone(args.aiter):
            print("bench_init: --long-history: expected --aiter PATH, a clone of github.com/ROCm/aiter", file=sys.stderr)
            return 2
        return long_history(args.aiter, args.long_history, args.most_touched)
    args.held_out = False
    corpus = accuracy.load_corpus()
    ports = [p for p in accuracy.chosen_ports(args, corpus) if p.tree_from is None]  # test-only variants share a tree
    clones = accuracy.given_clones(args, {p.upstream for p in corpus})
    for upstream in sorted({p.upstream for p in ports} - set(clones)):
        clone = accuracy.default_clone(accuracy.REPO_ROOT / "portq.toml", upstream)
        if clone is not None and accuracy.is_git_clone(clone):
            clones[upstream] = clone
        else:
            print(f"skipped: no {upstream} clone (pass --upstream {upstream}=PATH)")
    ports = [p for p in ports if p.upstream in clones]
    if not ports:
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-init-") as scratch:
        work = Path(scratch)
        for port in ports:
            clone = clones[port.upstream]
            tree, hand = strip_tree(port, work, clone)
            found, seconds = run_init(tree, port.upstream, clone)
            row = compare(port, hand, found, clone)
            row["seconds"] = seconds
            if args.scan:
                (work / "hand").mkdir(exist_ok=True)
                hand_made = accuracy.join(port, accuracy.scan(port, clone, work / "hand"))
                row["scan_hand"], row["outcomes"] = flagged(hand_made), (hand_made, [])
                row["scan_generated"] = "no configuration: init proposed nothing"
                if found["proposals"]:
                    write_config(tree, port.upstream, clone)
                    generated = accuracy.join(port, scan_generated(port, clone, tree, work))
                    row["scan_generated"], row["outcomes"] = flagged(generated), (hand_made, generated)
            rows.append(row)
    if args.json:
        for row in rows:
            row.pop("outcomes", None)
        print(json.dumps(rows, indent=2))
        return 0
    print("| port | hand anchors | proposed | wrong | extra | pin | base | base in unchanged run | init s | commits compared |")
    print("|---|---:|---:|---:|---:|---|---|---|---:|---:|")
    for r in rows:
        print(f"| {r['port']} | {r['hand']} | {r['proposed']} | {len(r['wrong'])} | {len(r['extra'])} | {r['pin']} | "
              f"{r['base']} | {'yes' if r['base_in_run'] else 'no'} {r['run']} | {r['seconds']:.1f} | {r['commits_compared']} |")
    total_hand = sum(r["hand"] for r in rows)
    total_hits = sum(r["proposed"] for r in rows)
    print(f"| all | {total_hand} | {total_hits} ({total_hits / max(total_hand, 1):.0%}) | "
          f"{sum(len(r['wrong']) for r in rows)} | {sum(len(r['extra']) for r in rows)} | | | "
          f"{sum(bool(r['base_in_run']) for r in rows)}/{len(rows)} | {sum(r['seconds'] for r in rows):.1f} | |")
    print("\n| threshold | hand anchors proposed | wrong above it | precision | recall |")
    print("|---:|---:|---:|---:|---:|")
    for threshold, right, wrong, total in curve(rows):
        precision = f"{right / (right + wrong):.2f}" if right + wrong else "n/a"
        print(f"| {threshold:.2f} | {right} | {wrong} | {precision} | {right / max(total, 1):.2f} |")
    for r in rows:
        for file, definition, expected, got in r["wrong"]:
            print(f"wrong  {r['port']}: {file}::{definition}: hand {expected}, init {got}")
        for file, definition, expected in r["missed"]:
            print(f"missed {r['port']}: {file}::{definition}: hand {expected}")
        for text in r["extra"]:
            print(f"extra  {r['port']}: {text}")
    if args.scan:
        print("\n| port | flagged, hand-made configuration | flagged, generated configuration |")
        print("|---|---|---|")
        every_hand, every_generated = [], []
        for r in rows:
            print(f"| {r['port']} | {r['scan_hand']} | {r['scan_generated']} |")
            if r["outcomes"][1]:
                every_hand += r["outcomes"][0]
                every_generated += r["outcomes"][1]
        print(f"| ports init configured | {flagged(every_hand)} | {flagged(every_generated)} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except accuracy.CorpusError as error:
        print(f"bench_init: {error}", file=sys.stderr)
        sys.exit(2)
