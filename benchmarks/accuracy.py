"""How often portq's verdicts on real aiter history agree with a person's.

``python benchmarks/accuracy.py [--aiter PATH] [--port NAME] [--json]``

Scans every range of the labelled corpus in ``examples/accuracy/`` (one port
per directory: ``kernel-matrix.toml``, ``labels.toml``, the port, its caller
and its tests; a ``tree_from`` port lays its files over another port's tree)
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

The clone is ``--aiter PATH``, else ``portq.toml``'s ``[upstream.aiter]``
path (``../aiter``). Without a clone there is nothing to score: the script
says so and exits 0 (CI has no clone). A ``--aiter`` that is not a git
clone, a range the clone lacks, or an entry without a label (or a label
without an entry) exits 2 with one line: the corpus or the clone is wrong,
and no score is printed from a partial join.
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

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "examples" / "accuracy"
VERDICTS = ("REAL_GAP", "INERT", "NEEDS_REVIEW", "IN_SYNC", "NOT_APPLICABLE")
FLAGGED = frozenset({"REAL_GAP", "INERT", "NEEDS_REVIEW"})
JUSTIFICATIONS = ("no-row", "not-carried", "not-ported", "non-code", "cosmetic", "net-zero")


class CorpusError(Exception):
    """The corpus, the clone or an argument is not what scoring needs."""


@dataclass(frozen=True)
class Label:
    sha: str
    title: str
    verdict: str
    justification: str | None
    reason: str


@dataclass
class Port:
    name: str
    directory: Path
    kind: str
    upstream: str
    range: str
    tree_from: str | None = None  # another port whose tree this one's files overlay
    tree_without: tuple[str, ...] = ()  # paths of that tree this port leaves out
    labels: list[Label] = field(default_factory=list)

    @property
    def matrix(self) -> Path:
        return self.directory / "kernel-matrix.toml"


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
    port = Port(data["port"], directory, data["kind"], data["upstream"], data["range"], tree_from, tuple(tree_without))
    seen: set[str] = set()
    for number, raw in enumerate(data.get("entry", []), start=1):
        where = f"{path}: entry {number}"
        sha = raw.get("sha", "")
        if not (isinstance(sha, str) and 7 <= len(sha) <= 40 and all(c in "0123456789abcdef" for c in sha)):
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


def port_tree(port: Port, work: Path) -> Path:
    """The port's tree: its directory, or (``tree_from``) a copy of another
    port's tree under ``work``, less its ``tree_without`` paths, with this
    port's files laid over it, so that two variants of one port share what
    does not differ between them."""
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


def default_clone(config: Path) -> Path | None:
    """``[upstream.aiter].path`` of ``config`` (relative to it), or None."""
    try:
        data = tomllib.loads(config.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    path = data.get("upstream", {}).get("aiter", {}).get("path")
    return (config.parent / path).resolve() if isinstance(path, str) else None


def is_git_clone(path: Path) -> bool:
    result = subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True, text=True)
    return path.is_dir() and result.returncode == 0


def scan(port: Port, clone: Path, work: Path) -> list[dict]:
    """The real ``portq scan --json`` of the port's range, in a child process."""
    tree = port_tree(port, work)
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
    parser.add_argument("--aiter", type=Path, help="a clone of github.com/ROCm/aiter (default: portq.toml's)")
    parser.add_argument("--config", type=Path, default=REPO_ROOT / "portq.toml",
                        help="the portq.toml that names the default clone (default: this repository's)")
    parser.add_argument("--port", action="append", help="score only this corpus port (repeatable)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ports = load_corpus()
        if args.port:
            unknown = sorted(set(args.port) - {p.name for p in ports})
            if unknown:
                raise CorpusError(f"--port {unknown[0]}: expected one of {', '.join(p.name for p in ports)}")
            ports = [p for p in ports if p.name in args.port]
        if args.aiter is not None:
            if not is_git_clone(args.aiter):
                raise CorpusError(f"--aiter {args.aiter}: expected a git clone of github.com/ROCm/aiter")
            clone = args.aiter.resolve()
        else:
            clone = default_clone(args.config)
            if clone is None or not is_git_clone(clone):
                print(f"skipped: no aiter clone at {clone or '(none named)'} (from {args.config}); "
                      "clone github.com/ROCm/aiter there or pass --aiter PATH")
                return 0
        outcomes: list[Outcome] = []
        with tempfile.TemporaryDirectory(prefix="portq-accuracy-") as work:
            for port in ports:
                outcomes += join(port, scan(port, clone, Path(work)))
    except CorpusError as error:
        print(f"accuracy: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(ports, outcomes), indent=2))
    else:
        head = ", ".join(f"{p.name} {p.range}" for p in ports)
        print(f"# portq accuracy on aiter history ({clone})\n\nRanges: {head}\n")
        print(report(ports, outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
