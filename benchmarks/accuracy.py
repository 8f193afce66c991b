"""How often portq's verdicts on real upstream history agree with a person's.

``python benchmarks/accuracy.py [--upstream NAME=PATH]... [--aiter PATH]
[--port NAME] [--held-out] [--json]``

Scans every range of the labelled corpus in ``examples/accuracy/`` (one port
per directory: ``kernel-matrix.toml``, ``labels.toml``, the port, its caller
and its tests; a ``tree_from`` port lays its files over another port's tree;
a ``[vendor]`` port is a verbatim copy of upstream files, written from the
clone at scoring time and pinned, see ``vendored_tree``)
with the real ``portq scan``, in a fresh ledger, and
compares each entry's verdict with its label. Prints, per port and overall:

- flagged precision and recall, where flagged means REAL_GAP, INERT or
  NEEDS_REVIEW (what a maintainer is asked to look at);
- REAL_GAP precision and recall (what the tool files as a gap);
- the confusion table, labels down, portq's verdicts across;
- every disagreement (verdict, or NOT_APPLICABLE justification) with the
  label's reason and portq's justification.
- per classifier rule (``portq/classifier/rules/``): the entries it decided,
  its precision (how many of them agree with their label) and recall (how
  many of the entries labelled with a verdict it gives it decided rightly).

Each port names its upstream (``upstream = "NAME"``); that upstream's clone
is ``--upstream NAME=PATH`` (``--aiter PATH`` is ``--upstream aiter=PATH``),
else ``portq.toml``'s ``[upstream.NAME].path``. The ports of an upstream
without a clone are skipped with one line saying so; with nothing left to
score the script exits 0 (CI has no clones). Ports whose directory ends in
``_heldout`` are a held-out split, scored once after the rules they test are
written: they are skipped unless ``--held-out`` is given, which scores them
alone. A ``--upstream`` that is not a git clone, a range the clone lacks, or
an entry without a label (or a label without an entry) exits 2 with one
line: the corpus or the clone is wrong, and no score is printed from a
partial join.

This script only materialises trees, runs ``portq scan`` and counts; it
never decides a verdict and never edits a label.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from portq.classifier.rules import RULES
from portq.core.config import tomllib  # tomli on Python 3.10
from portq.language.symbols import KIND_CLASS, language_for_path, symbol_table
from portq.tree.anchors import parse_reference

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "examples" / "accuracy"
VERDICTS = ("REAL_GAP", "INERT", "NEEDS_REVIEW", "IN_SYNC", "NOT_APPLICABLE")
FLAGGED = frozenset({"REAL_GAP", "INERT", "NEEDS_REVIEW"})
JUSTIFICATIONS = ("no-row", "not-carried", "not-ported", "non-code", "cosmetic", "net-zero")
HELD_OUT_SUFFIX = "_heldout"


class CorpusError(Exception):
    """The corpus, the clone or an argument is not what scoring needs."""


@dataclass(frozen=True)
class Label:
    sha: str
    title: str
    verdict: str
    justification: str | None
    reason: str


@dataclass(frozen=True)
class Vendor:
    """A vendored tree's ``[vendor]`` table: upstream files copied verbatim at ``base``."""

    base: str
    files: tuple[tuple[str, str], ...]  # (upstream path, tree path)


@dataclass
class Port:
    name: str
    directory: Path
    kind: str
    upstream: str
    range: str
    tree_from: str | None = None  # another port whose tree this one's files overlay
    tree_without: tuple[str, ...] = ()  # paths of that tree this port leaves out
    vendor: Vendor | None = None  # upstream files the tree holds verbatim, written at scoring time
    labels: list[Label] = field(default_factory=list)

    @property
    def matrix(self) -> Path:
        return self.directory / "kernel-matrix.toml"

    @property
    def held_out(self) -> bool:
        return self.name.endswith(HELD_OUT_SUFFIX)


def _hex(value: object, shortest: int = 7) -> bool:
    return isinstance(value, str) and shortest <= len(value) <= 40 and all(c in "0123456789abcdef" for c in value)


def _relative(path: str) -> bool:
    parts = Path(path).parts
    return bool(parts) and not Path(path).is_absolute() and ".." not in parts and "\\" not in path


def load_vendor(directory: Path, path: Path, data: dict, range_base: str) -> Vendor | None:
    """The ``[vendor]`` table, checked: a base that starts the range, and
    upstream paths mapped to distinct relative tree paths that the committed
    directory does not hold (upstream code is written at scoring time only)."""
    raw = data.get("vendor")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise CorpusError(f"{path}: vendor = {raw!r}: expected a [vendor] table")
    base = raw.get("base")
    if not _hex(base):
        raise CorpusError(f"{path}: [vendor] base = {base!r}: expected 7 to 40 lowercase hex digits")
    if not (base.startswith(range_base) or range_base.startswith(base)):
        raise CorpusError(f"{path}: [vendor] base {base}: expected the range's first commit {range_base}")
    files = raw.get("files")
    if not isinstance(files, dict) or not files:
        raise CorpusError(f"{path}: [vendor] files = {files!r}: expected {{ \"upstream/path\" = \"tree/path\", ... }}")
    targets: set[str] = set()
    for source, target in files.items():
        if not (isinstance(target, str) and _relative(source) and _relative(target)):
            raise CorpusError(f"{path}: [vendor] files {source!r} = {target!r}: expected two relative paths")
        if language_for_path(target) is None:
            raise CorpusError(f"{path}: [vendor] files {source!r} = {target!r}: expected a Python or C/C++/CUDA file")
        if target in targets:
            raise CorpusError(f"{path}: [vendor] files: {target!r} is the copy of two upstream files")
        targets.add(target)
        if (directory / target).exists():
            raise CorpusError(f"{path}: [vendor] files: {target!r} is committed: expected it written from the clone only")
    return Vendor(base, tuple(files.items()))


def load_port(directory: Path) -> Port:
    """One corpus port from its ``labels.toml``; every problem is a CorpusError
    naming the file and the entry."""
    path = directory / "labels.toml"
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CorpusError(f"{path}: {error}") from None
    for key in ("port", "kind", "upstream", "range"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise CorpusError(f"{path}: '{key}' missing: expected {key} = \"...\"")
    if data["port"] != directory.name:
        raise CorpusError(f"{path}: port = {data['port']!r}: expected the directory's name {directory.name!r}")
    if data["range"].count("..") != 1 or data["range"].startswith("..") or data["range"].endswith(".."):
        raise CorpusError(f"{path}: range = {data['range']!r}: expected BASE..END")
    tree_from = data.get("tree_from")
    if tree_from is not None and not (directory.parent / tree_from / "labels.toml").is_file():
        raise CorpusError(f"{path}: tree_from = {tree_from!r}: expected another port's directory")
    tree_without = data.get("tree_without", [])
    if not isinstance(tree_without, list) or not all(isinstance(p, str) and p for p in tree_without):
        raise CorpusError(f"{path}: tree_without = {tree_without!r}: expected a list of paths")
    if tree_without and tree_from is None:
        raise CorpusError(f"{path}: tree_without without tree_from: expected tree_from = \"PORT\" as well")
    vendor = load_vendor(directory, path, data, data["range"].split("..")[0])
    if vendor is not None and tree_from is not None:
        raise CorpusError(f"{path}: [vendor] with tree_from: expected one way of building the tree")
    port = Port(data["port"], directory, data["kind"], data["upstream"], data["range"], tree_from,
                tuple(tree_without), vendor)
    seen: set[str] = set()
    for number, raw in enumerate(data.get("entry", []), start=1):
        where = f"{path}: entry {number}"
        sha = raw.get("sha", "")
        if not _hex(sha):
            raise CorpusError(f"{where}: sha = {sha!r}: expected 7 to 40 lowercase hex digits")
        if sha in seen:
            raise CorpusError(f"{where}: sha {sha} is labelled twice")
        seen.add(sha)
        verdict = raw.get("verdict")
        if verdict not in VERDICTS:
            raise CorpusError(f"{where} ({sha}): verdict = {verdict!r}: expected one of {', '.join(VERDICTS)}")
        justification = raw.get("justification")
        if verdict == "NOT_APPLICABLE" and justification not in JUSTIFICATIONS:
            raise CorpusError(
                f"{where} ({sha}): justification = {justification!r}: expected one of {', '.join(JUSTIFICATIONS)}"
            )
        if verdict != "NOT_APPLICABLE" and justification is not None:
            raise CorpusError(f"{where} ({sha}): justification given for {verdict}: only NOT_APPLICABLE takes one")
        reason = raw.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise CorpusError(f"{where} ({sha}): reason missing: expected one line saying why")
        port.labels.append(Label(sha, raw.get("title", ""), verdict, justification, reason.strip()))
    if not port.labels:
        raise CorpusError(f"{path}: no [[entry]] labels")
    return port


def load_corpus(root: Path = CORPUS) -> list[Port]:
    directories = sorted(p for p in root.iterdir() if (p / "labels.toml").is_file())
    if not directories:
        raise CorpusError(f"{root}: no port directories with a labels.toml")
    return [load_port(directory) for directory in directories]


_NOT_TREE = shutil.ignore_patterns("labels.toml", "kernel-matrix.toml", "README.md", "__pycache__")


def port_tree(port: Port, work: Path, clone: Path | None = None) -> Path:
    """The port's tree: its directory; or (``tree_from``) a copy of another
    port's tree under ``work``, less its ``tree_without`` paths, with this
    port's files laid over it, so that two variants of one port share what
    does not differ between them; or (``[vendor]``) a copy of its directory
    with the vendored files written from ``clone`` (see ``vendored_tree``)."""
    if port.vendor is not None:
        return vendored_tree(port, work, clone)
    if port.tree_from is None:
        return port.directory
    tree = work / f"{port.name}-tree"
    shutil.copytree(port.directory.parent / port.tree_from, tree, ignore=_NOT_TREE)
    for dropped in port.tree_without:
        target = tree / dropped
        if not target.exists():
            raise CorpusError(f"{port.directory / 'labels.toml'}: tree_without {dropped!r}: not in {port.tree_from}'s tree")
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    shutil.copytree(port.directory, tree, ignore=_NOT_TREE, dirs_exist_ok=True)
    return tree


def vendored_tree(port: Port, work: Path, clone: Path | None) -> Path:
    """A copy of the port's directory under ``work`` with every ``[vendor]``
    file written verbatim from ``git show BASE:PATH`` of ``clone`` and pinned
    (``pinned_copy``): what a project that vendors upstream files holds."""
    assert port.vendor is not None
    if clone is None:
        raise CorpusError(f"{port.name}: a vendored tree needs a clone of {port.upstream}")
    tree = work / f"{port.name}-tree"
    shutil.copytree(port.directory, tree, ignore=_NOT_TREE)
    for source, target in port.vendor.files:
        shown = subprocess.run(["git", "-C", str(clone), "show", f"{port.vendor.base}:{source}"],
                               capture_output=True)
        if shown.returncode != 0:
            last = (shown.stderr.decode(errors="replace").strip().splitlines() or ["(no message)"])[-1]
            raise CorpusError(f"{port.name}: [vendor] {source} at {port.vendor.base}: {last}")
        written = tree / target
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_bytes(pinned_copy(shown.stdout, source, port.upstream, port.vendor.base))
    return tree


def pinned_copy(source: bytes, path: str, upstream: str, base: str) -> bytes:
    """``source`` (upstream's ``path``) with ``portq: ports UPSTREAM:PATH::SYMBOL @BASE``
    on the line directly above each definition a vendoring project would pin:
    every top-level function or kernel (above its decorators or template
    line) and every method of a top-level class or struct (as ``Class.method``),
    in the file's comment syntax and at the definition's indentation. Nested
    functions and the classes themselves get none: their lines belong to a
    pinned definition already, or to no callable one. Nor does a definition
    whose name no anchor can spell (a method of an explicit specialisation
    written ``Name <T>``): a vendoring project could not pin it either."""
    language = language_for_path(path)
    table = symbol_table(source, path)
    if table.fallback:
        raise CorpusError(f"[vendor] {path}: cannot be parsed to pin its definitions: {table.fallback}")
    marker = "#" if language == "python" else "//"
    callables = [d for d in table.definitions if d.kind != KIND_CLASS]
    classes = [d for d in table.definitions if d.kind == KIND_CLASS]

    def inside(d, others) -> bool:
        return any(o is not d and o.start_line <= d.start_line and d.end_line <= o.end_line
                   and o.span > d.span for o in others)

    chosen = [d for d in callables if not inside(d, callables)
              and not any(inside(d, [c]) and inside(c, classes) for c in classes)]
    lines = source.decode("utf-8").splitlines(keepends=True)
    above: dict[int, list[str]] = {}
    for d in sorted(chosen, key=lambda d: (d.start_line, d.qualified_name)):
        if d.start_line in above:
            continue  # one anchor a line: two definitions on one line are pinned by the first
        if parse_reference(f"{upstream}:{path}::{d.qualified_name}") is None:
            continue
        text = lines[d.start_line - 1]
        indent = text[: len(text) - len(text.lstrip())]
        above[d.start_line] = [f"{indent}{marker} portq: ports {upstream}:{path}::{d.qualified_name} @{base}\n"]
    out: list[str] = []
    for number, text in enumerate(lines, start=1):
        out += above.get(number, [])
        out.append(text)
    return "".join(out).encode("utf-8")


def default_clone(config: Path, upstream: str = "aiter") -> Path | None:
    """``[upstream.NAME].path`` of ``config`` (relative to it), or None."""
    try:
        data = tomllib.loads(config.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    entry = data.get("upstream", {}).get(upstream, {})
    path = entry.get("path") if isinstance(entry, dict) else None
    return (config.parent / path).resolve() if isinstance(path, str) else None


def is_git_clone(path: Path) -> bool:
    result = subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True, text=True)
    return path.is_dir() and result.returncode == 0


def scan(port: Port, clone: Path, work: Path) -> list[dict]:
    """The real ``portq scan --json`` of the port's range against its
    upstream's clone (``--upstream NAME=PATH``), in a child process."""
    tree = port_tree(port, work, clone)
    command = [
        sys.executable, "-c", "import sys; from portq.cli import main; sys.exit(main())",
        "scan", port.range, "--json",
        "--upstream", f"{port.upstream}={clone}",
        "--tree", str(tree),
        "--matrix", str(port.matrix),
        "--ledger", str(work / f"{port.name}.sqlite"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tree)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise CorpusError(f"{port.name}: portq scan {port.range} exited {result.returncode}: {last}")
    return json.loads(result.stdout)["entries"]


@dataclass(frozen=True)
class Outcome:
    port: str
    label: Label
    verdict: str
    justification: str | None
    position: int
    rules: tuple[str, ...] = ()  # the ids of the rules that decided portq's verdict

    @property
    def agrees(self) -> bool:
        return self.verdict == self.label.verdict

    @property
    def justification_agrees(self) -> bool:
        return self.label.verdict != "NOT_APPLICABLE" or self.justification == self.label.justification


def join(port: Port, entries: list[dict]) -> list[Outcome]:
    """Pair every scanned entry with its label; a missing side is an error."""
    by_sha = {label.sha: label for label in port.labels}
    outcomes, used = [], set()
    for entry in entries:
        matches = [sha for sha in by_sha if entry["sha"].startswith(sha)]
        if len(matches) != 1:
            raise CorpusError(
                f"{port.name}: entry {entry['entry']} {entry['sha'][:10]} has {len(matches)} labels: expected one"
            )
        used.add(matches[0])
        outcomes.append(Outcome(port.name, by_sha[matches[0]], entry["verdict"], entry["justification"], entry["entry"],
                                tuple(entry.get("rules", ()))))
    unused = sorted(set(by_sha) - used)
    if unused:
        raise CorpusError(f"{port.name}: labels for {', '.join(unused)} match no entry of {port.range}")
    return outcomes


def ratio(hits: int, total: int) -> float | None:
    return hits / total if total else None


def score(outcomes: list[Outcome]) -> dict:
    def counts(chosen: frozenset[str]) -> dict:
        tool = [o for o in outcomes if o.verdict in chosen]
        truth = [o for o in outcomes if o.label.verdict in chosen]
        both = [o for o in tool if o.label.verdict in chosen]
        return {
            "tool": len(tool),
            "labelled": len(truth),
            "both": len(both),
            "precision": ratio(len(both), len(tool)),
            "recall": ratio(len(both), len(truth)),
        }

    return {
        "entries": len(outcomes),
        "agree": sum(o.agrees for o in outcomes),
        "flagged": counts(FLAGGED),
        "real_gap": counts(frozenset({"REAL_GAP"})),
        "confusion": Counter((o.label.verdict, o.verdict) for o in outcomes),
    }


def shown(value: float | None, hits: int, total: int) -> str:
    return "n/a (0/0)" if value is None else f"{value:.2f} ({hits}/{total})"


def score_table(scores: dict[str, dict]) -> str:
    lines = [
        "| port | entries | agree | flagged precision | flagged recall | REAL_GAP precision | REAL_GAP recall |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in scores.items():
        f, g = s["flagged"], s["real_gap"]
        lines.append(
            f"| {name} | {s['entries']} | {s['agree']} "
            f"| {shown(f['precision'], f['both'], f['tool'])} | {shown(f['recall'], f['both'], f['labelled'])} "
            f"| {shown(g['precision'], g['both'], g['tool'])} | {shown(g['recall'], g['both'], g['labelled'])} |"
        )
    return "\n".join(lines)


def rule_scores(outcomes: list[Outcome]) -> dict[str, dict]:
    """Per classifier rule: the entries whose verdict it decided (``decided``),
    those agreeing with their label, verdict and NOT_APPLICABLE justification
    (``agree``), and the entries labelled with a verdict the rule can give
    (``labelled``). Precision is agree / decided: how often the rule's
    verdicts are right. Recall is agree / labelled: how much of what is
    labelled with its verdicts the rule decides rightly (several rules share
    a verdict, so recalls of one verdict add up to at most 1)."""
    scores = {}
    for rule in RULES.values():
        decided = [o for o in outcomes if rule.id in o.rules]
        agree = sum(o.agrees and o.justification_agrees for o in decided)
        labelled = sum(o.label.verdict in rule.gives for o in outcomes)
        scores[rule.id] = {"decided": len(decided), "agree": agree, "labelled": labelled,
                           "precision": ratio(agree, len(decided)), "recall": ratio(agree, labelled)}
    return scores


def rule_table(scores: dict[str, dict]) -> str:
    lines = ["| rule | decided | agree | precision | recall |", "|---|---:|---:|---:|---:|"]
    for name, s in scores.items():
        if s["decided"]:
            lines.append(f"| `{name}` | {s['decided']} | {s['agree']} | {shown(s['precision'], s['agree'], s['decided'])} "
                         f"| {shown(s['recall'], s['agree'], s['labelled'])} |")
    unused = [f"`{name}`" for name, s in scores.items() if not s["decided"]]
    if unused:
        lines += ["", "Deciding no entry of these ranges: " + ", ".join(unused) + "."]
    return "\n".join(lines)


def confusion_table(confusion: Counter) -> str:
    lines = ["| label \\ portq | " + " | ".join(VERDICTS) + " |", "|---|" + "---:|" * len(VERDICTS)]
    for label in VERDICTS:
        lines.append(f"| {label} | " + " | ".join(str(confusion.get((label, tool), 0)) for tool in VERDICTS) + " |")
    return "\n".join(lines)


def disagreement_table(outcomes: list[Outcome]) -> str:
    rows = [o for o in outcomes if not (o.agrees and o.justification_agrees)]
    if not rows:
        return "None."
    lines = ["| port | entry | sha | label | portq | label's reason |", "|---|---:|---|---|---|---|"]
    for o in rows:
        label = o.label.verdict + (f"/{o.label.justification}" if o.label.justification else "")
        tool = o.verdict + (f"/{o.justification}" if o.justification else "")
        reason = o.label.reason.replace("|", "\\|")
        lines.append(f"| {o.port} | {o.position} | `{o.label.sha}` | {label} | {tool} | {reason} |")
    return "\n".join(lines)


def report(ports: list[Port], outcomes: list[Outcome]) -> str:
    scores = {port.name: score([o for o in outcomes if o.port == port.name]) for port in ports}
    scores["all"] = score(outcomes)
    parts = ["## Scores", "", score_table(scores), ""]
    parts += ["## Confusion (all ports)", "", confusion_table(scores["all"]["confusion"]), ""]
    parts += ["## Disagreements (verdict or NOT_APPLICABLE justification)", "", disagreement_table(outcomes), ""]
    parts += ["## Per rule (all ports)", "", rule_table(rule_scores(outcomes)), ""]
    return "\n".join(parts)


def as_json(ports: list[Port], outcomes: list[Outcome]) -> dict:
    def plain(s: dict) -> dict:
        return {**s, "confusion": [{"label": a, "portq": b, "count": n} for (a, b), n in sorted(s["confusion"].items())]}

    return {
        "ports": {p.name: {"range": p.range, "kind": p.kind, **plain(score([o for o in outcomes if o.port == p.name]))} for p in ports},
        "all": plain(score(outcomes)),
        "rules": rule_scores(outcomes),
        "entries": [
            {"port": o.port, "entry": o.position, "sha": o.label.sha, "label": o.label.verdict,
             "label_justification": o.label.justification, "portq": o.verdict, "portq_justification": o.justification,
             "reason": o.label.reason, "rules": list(o.rules)}
            for o in outcomes
        ],
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", action="append", default=[], metavar="NAME=PATH",
                        help="the clone of the upstream NAME (repeatable; default: portq.toml's [upstream.NAME].path)")
    parser.add_argument("--aiter", type=Path, help="a clone of github.com/ROCm/aiter: --upstream aiter=PATH")
    parser.add_argument("--config", type=Path, default=REPO_ROOT / "portq.toml",
                        help="the portq.toml that names the default clones (default: this repository's)")
    parser.add_argument("--port", action="append", help="score only this corpus port (repeatable)")
    parser.add_argument("--held-out", action="store_true",
                        help=f"score the held-out ports (directories ending in {HELD_OUT_SUFFIX}) and only them")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    return parser.parse_args(argv)


def given_clones(args: argparse.Namespace, upstreams: set[str]) -> dict[str, Path]:
    """The clones named on the command line, each checked to be a git clone."""
    given: dict[str, tuple[str, Path]] = {}
    for value in args.upstream:
        name, equals, path = value.partition("=")
        if not equals or not name or not path:
            raise CorpusError(f"--upstream {value}: expected NAME=PATH")
        given[name] = (f"--upstream {value}", Path(path))
    if args.aiter is not None:
        given["aiter"] = (f"--aiter {args.aiter}", args.aiter)
    clones: dict[str, Path] = {}
    for name, (flag, path) in sorted(given.items()):
        if name not in upstreams:
            raise CorpusError(f"{flag}: expected an upstream of the corpus ({', '.join(sorted(upstreams))})")
        if not is_git_clone(path):
            what = "github.com/ROCm/aiter" if flag.startswith("--aiter") else f"the {name} upstream"
            raise CorpusError(f"{flag}: expected a git clone of {what}")
        clones[name] = path.resolve()
    return clones


def chosen_ports(args: argparse.Namespace, corpus: list[Port]) -> list[Port]:
    """The ports to score: ``--port``'s, else all; held-out ones only with ``--held-out``."""
    if args.port:
        unknown = sorted(set(args.port) - {p.name for p in corpus})
        if unknown:
            raise CorpusError(f"--port {unknown[0]}: expected one of {', '.join(p.name for p in corpus)}")
        wrong_split = [p.name for p in corpus if p.name in args.port and p.held_out != args.held_out]
        if wrong_split:
            need = "is held out: add --held-out" if not args.held_out else "is not held out: drop --held-out"
            raise CorpusError(f"--port {wrong_split[0]}: {need}")
        return [p for p in corpus if p.name in args.port]
    return [p for p in corpus if p.held_out == args.held_out]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    skipped: list[str] = []
    try:
        corpus = load_corpus()
        ports = chosen_ports(args, corpus)
        clones = given_clones(args, {p.upstream for p in corpus})
        for upstream in sorted({p.upstream for p in ports} - set(clones)):
            clone = default_clone(args.config, upstream)
            if clone is not None and is_git_clone(clone):
                clones[upstream] = clone
                continue
            names = [p.name for p in ports if p.upstream == upstream]
            skipped.append(f"skipped: no {upstream} clone at {clone or '(none named)'} (from {args.config}); "
                           f"clone it there or pass --upstream {upstream}=PATH ({len(names)} port(s): {', '.join(names)})")
        ports = [p for p in ports if p.upstream in clones]
        for line in skipped:
            print(line, file=sys.stderr if args.json and ports else sys.stdout)
        if not ports:
            return 0
        outcomes: list[Outcome] = []
        with tempfile.TemporaryDirectory(prefix="portq-accuracy-") as work:
            for port in ports:
                outcomes += join(port, scan(port, clones[port.upstream], Path(work)))
    except CorpusError as error:
        print(f"accuracy: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"held_out": args.held_out, **as_json(ports, outcomes)}, indent=2))
    else:
        used = sorted({p.upstream for p in ports})
        split = " (held-out split)" if args.held_out else ""
        print(f"# portq accuracy on {', '.join(used)} history{split}\n")
        print("Clones: " + ", ".join(f"{name} ({clones[name]})" for name in used) + "\n")
        head = ", ".join(f"{p.name} {p.range}" for p in ports)
        print(f"Ranges: {head}\n")
        print(report(ports, outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
