"""The catalogue of bad inputs: every case ends in exit 0 or 2 with at most one line on stderr,
never exit 1, a hang or a traceback.

Each case copies one scanned fixture (an upstream clone, a stale port, a
matrix, a ledger), breaks something, and runs ``python -m portq`` in a child
process with a deadline, the way a user's shell would. ``python
tests/portq/test_bad_inputs.py`` prints the same catalogue as a table with
the counts.
"""
from __future__ import annotations

import os
import random
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

DEADLINE_S = 120


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    exits: tuple[int, ...] = (2,)
    prepare: Callable[[Path], None] | None = None
    shell_suffix: str = ""  # redirections, or a pipe into another command
    env: dict = field(default_factory=dict)
    root_only: bool = False


def _replace_line(path: Path, prefix: str, line: str) -> None:
    path.write_text("\n".join(line if l.startswith(prefix) else l for l in path.read_text().splitlines()) + "\n")


def _sql(*statements: str) -> Callable[[Path], None]:
    def run(root: Path) -> None:
        with sqlite3.connect(root / "ledger.sqlite") as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("DROP TRIGGER IF EXISTS verdict_events_no_update")
            for statement in statements:
                db.execute(statement)
    return run


def _random_page(root: Path) -> None:
    ledger = root / "ledger.sqlite"
    with sqlite3.connect(ledger) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(ledger.read_bytes())
    page = data.find(b"gather_and_maybe_dequant_cache", 4096) // 4096 * 4096
    data[page:page + 4096] = random.Random(27).randbytes(4096)
    ledger.write_bytes(bytes(data))


def _fifo(name: str) -> Callable[[Path], None]:
    return lambda root: os.mkfifo(root / name)


def _symlink(root: Path) -> None:
    (root / "precious").write_text("keep\n")
    (root / "page.html").symlink_to(root / "precious")


def _device(root: Path) -> None:
    os.mknod(root / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))


def _loop(root: Path) -> None:
    shutil.rmtree(root / "upstream")
    (root / "loop-a").symlink_to(root / "loop-b")
    (root / "loop-b").symlink_to(root / "loop-a")
    (root / "upstream").symlink_to(root / "loop-a")


def _deep(name: str) -> Callable[[Path], None]:
    return lambda root: (root / name).write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")


def _tree(place: str) -> Callable[[Path], None]:
    return lambda root: _replace_line(root / "matrix.toml", "tree", f'tree = ["{place}"]')


def _bom(root: Path) -> None:
    (root / "matrix.toml").write_bytes(b"\xef\xbb\xbf" + (root / "matrix.toml").read_bytes())


def _foreign_owner(root: Path) -> None:
    for directory, _subdirectories, files in os.walk(root / "upstream"):
        os.chown(directory, 65534, 65534)
        for name in files:
            os.lchown(os.path.join(directory, name), 65534, 65534)


def _reviews(content: str | bytes | None) -> Callable[[Path], None]:
    """A portq.toml naming a reviews file with ``content`` (None: a directory in its place)."""
    def prepare(root: Path) -> None:
        (root / "portq.toml").write_text('reviews = "reviews.toml"\n')
        if content is None:
            (root / "reviews.toml").mkdir()
        else:
            getattr(root / "reviews.toml", "write_bytes" if isinstance(content, bytes) else "write_text")(content)
    return prepare


_REVIEW = ('[[review]]\nupstream = "vllm"\ncommit = "{commit}"\nverdict = "{verdict}"\nbecause = "x"\nwho = "a"\n'
           'when = "2025-01-01T00:00:00+00:00"\n')


READERS = (("status",), ("show", "1"), ("summary",), ("file-issue", "1"))

CASES: list[Case] = [
    Case("summary --html over a FIFO", ("summary", "--html", "{root}/pipe"), prepare=_fifo("pipe")),
    Case("summary --html over a symlink", ("summary", "--html", "{root}/page.html"), prepare=_symlink),
    Case("summary --html over a character device", ("summary", "--html", "{root}/null"), prepare=_device,
         root_only=True),
    Case("summary --html over a binary file", ("summary", "--html", "{root}/blob"),
         prepare=lambda root: (root / "blob").write_bytes(bytes(range(256)) * 16)),
    Case("summary --html - (standard output)", ("summary", "--html", "-"), exits=(0,)),
    Case("summary --html ''", ("summary", "--html", "")),
    *[Case(f"{' '.join(c)} on a ledger missing a table", c, prepare=_sql("PRAGMA foreign_keys = OFF",
                                                                         "DROP TABLE wave_entries")) for c in READERS],
    *[Case(f"{' '.join(c)} on a ledger with 4 KiB of random bytes", c, prepare=_random_page) for c in READERS],
    *[Case(f"{' '.join(c)} on a ledger with unparsable stored JSON", c,
           prepare=_sql("UPDATE texts SET text = '{\"verdict\": '")) for c in READERS],
    *[Case(f"{' '.join(c)} on a ledger with a verdict outside the vocabulary", c,
           prepare=_sql("UPDATE verdict_events SET verdict = 'PROBABLY_FINE'")) for c in READERS],
    Case("ledger is a directory", ("status", "--ledger", "{root}/dir"), prepare=lambda root: (root / "dir").mkdir()),
    Case("ledger is not SQLite", ("status", "--ledger", "{root}/text"),
         prepare=lambda root: (root / "text").write_text("not a database\n")),
    Case("scan --all | head -1", ("scan", "{range}", "--all"), exits=(0,), shell_suffix="| head -1"),
    Case("status >&-", ("status",), shell_suffix=">&-"),
    Case("PYTHONIOENCODING=ascii show 1", ("show", "1"), exits=(0,), env={"PYTHONIOENCODING": "ascii"}),
    Case("a FIFO among the port files, scan --fresh", ("scan", "{range}", "--fresh"), exits=(0,),
         prepare=_fifo("tree/blocking_kernel.py")),
    Case("a symlink loop as the upstream", ("scan", "{range}"), prepare=_loop),
    Case("a 5,000-deep nested matrix", ("status",), prepare=_deep("matrix.toml")),
    Case("a 5,000-deep nested portq.toml", ("status",), prepare=_deep("portq.toml")),
    Case("tree = [\"/etc/\"]", ("scan", "{range}"), prepare=_tree("/etc/")),
    Case("tree = [\"../../\"]", ("scan", "{range}"), prepare=_tree("../../")),
    Case("a UTF-8 BOM in the matrix", ("scan", "{range}"), exits=(0,), prepare=_bom),
    Case("scan --json with nothing new", ("scan", "--json"), exits=(0,)),
    Case("a clone owned by another user", ("scan", "{range}"), prepare=_foreign_owner, root_only=True,
         env={"GIT_CONFIG_GLOBAL": "/dev/null"}),
    Case("scan --format sarif --output over a FIFO", ("scan", "{range}", "--format", "sarif", "--output", "{root}/p"),
         prepare=_fifo("p")),
    Case("scan --json --format sarif", ("scan", "{range}", "--json", "--format", "sarif")),
    Case("scan --output ''", ("scan", "{range}", "--output", "")),
    Case("scan --format xml", ("scan", "{range}", "--format", "xml")),
    Case("scan an unknown range", ("scan", "nope..alsonope")),
    Case("scan --fail-on a verdict that does not exist", ("scan", "{range}", "--fail-on", "MAYBE")),
    Case("show an entry that does not exist", ("show", "222")),
    Case("show a word", ("show", "twelve")),
    Case("show WAVE#N of the wave scanned", ("show", "PORTQ-1#1"), exits=(0,)),
    Case("show WAVE#N of a wave that does not exist", ("show", "PORTQ-9#1")),
    Case("show WAVE#N past the wave's end", ("show", "PORTQ-1#222")),
    Case("show WAVE# without a number", ("show", "PORTQ-1#")),
    Case("show WAVE#N and a different --wave", ("show", "PORTQ-1#1", "--wave", "PORTQ-2")),
    Case("review WAVE#0", ("review", "PORTQ-1#0", "--verdict", "IN_SYNC", "--because", "x")),
    Case("review with a verdict outside the vocabulary", ("review", "1", "--verdict", "FINE", "--because", "x")),
    Case("review without a reason", ("review", "1", "--verdict", "IN_SYNC")),
    Case("the upstream path does not exist", ("scan", "{range}", "--upstream", "{root}/missing")),
    Case("the matrix does not exist", ("status", "--matrix", "{root}/missing.toml")),
    Case("a matrix that is not UTF-8", ("status",), prepare=lambda root: (root / "matrix.toml").write_bytes(b"\xff\xfe")),
    Case("an unknown command", ("frobnicate",)),
    Case("reviews file: not TOML", ("scan", "{range}"), prepare=_reviews("[[review]\n")),
    Case("reviews file: not UTF-8", ("scan", "{range}"), prepare=_reviews(b"\xff\xfe")),
    Case("reviews file: an abbreviated commit", ("scan", "{range}"),
         prepare=_reviews(_REVIEW.format(commit="abc123", verdict="IN_SYNC"))),
    Case("reviews file: a verdict outside the vocabulary", ("scan", "{range}"),
         prepare=_reviews(_REVIEW.format(commit="0" * 40, verdict="FINE"))),
    Case("reviews file: the same commit twice", ("scan", "{range}"),
         prepare=_reviews(_REVIEW.format(commit="0" * 40, verdict="IN_SYNC") * 2)),
    Case("reviews file: an unknown key", ("scan", "{range}"), prepare=_reviews("[[review]]\nwhy = 1\n")),
    Case("reviews file: a 5,000-deep nesting", ("scan", "{range}"),
         prepare=_reviews("x = " + "[" * 5000 + "]" * 5000 + "\n")),
    Case("reviews file: a directory", ("review", "1", "--verdict", "IN_SYNC", "--because", "x"), prepare=_reviews(None)),
    Case("reviews file: a commit the clone lacks (a warning)", ("scan", "{range}"), exits=(0,),
         prepare=_reviews(_REVIEW.format(commit="0" * 40, verdict="IN_SYNC"))),
    Case("portq.toml: reviews = ''", ("status",), prepare=lambda root: (root / "portq.toml").write_text('reviews = ""\n')),
]


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory) -> tuple[Path, str]:
    from tests.portq.golden.reports.scenario import scanned

    root = tmp_path_factory.mktemp("catalogue") / "base"
    root.mkdir()
    scenario = scanned(root)
    return root, scenario.range


def run_case(case: Case, base: Path, range_spec: str, workdir: Path) -> subprocess.CompletedProcess:
    root = workdir / "case"
    shutil.copytree(base, root, symlinks=True)
    if case.prepare is not None:
        case.prepare(root)
    flags = ["--upstream", f"{root}/upstream", "--tree", f"{root}/tree", "--matrix", f"{root}/matrix.toml",
             "--ledger", f"{root}/ledger.sqlite"]
    argv = [a.format(root=root, range=range_spec) for a in case.argv]
    for given in ("--upstream", "--matrix", "--ledger"):  # a case's own value replaces the fixture's
        if given in argv:
            index = flags.index(given)
            del flags[index:index + 2]
    command = " ".join(map(shlex.quote, [sys.executable, "-m", "portq", *argv, *flags]))
    repository = Path(__file__).resolve().parents[2]
    environment = dict(os.environ, **case.env, PYTHONPATH=str(repository))
    return subprocess.run(["bash", "-c", f"{command} {case.shell_suffix}"], cwd=root, env=environment,
                          capture_output=True, text=True, timeout=DEADLINE_S)


def verdict_on(case: Case, result: subprocess.CompletedProcess) -> str | None:
    """What is wrong with how the case ended, or None."""
    lines = result.stderr.strip().splitlines()
    if result.returncode not in case.exits:
        return f"exit {result.returncode}, expected {'/'.join(map(str, case.exits))}: {result.stderr.strip()[:300]}"
    if "Traceback" in result.stderr or "internal error" in result.stderr:
        return f"a traceback or internal error: {result.stderr.strip()[:300]}"
    if 2 in case.exits and len([l for l in lines if l.startswith("portq: error:") or l.startswith("portq: ")]) != 1:
        return f"expected one error line, got {len(lines)}: {result.stderr.strip()[:300]}"
    return None


def _skip_reason(case: Case) -> str | None:
    return "needs root" if case.root_only and os.geteuid() != 0 else None


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_ends_in_exit_0_or_2_with_one_line(case, fixture_root, tmp_path):
    if _skip_reason(case):
        pytest.skip(_skip_reason(case))
    base, range_spec = fixture_root
    result = run_case(case, base, range_spec, tmp_path)
    problem = verdict_on(case, result)
    assert problem is None, problem


def main() -> int:
    import tempfile

    from tests.portq.golden.reports.scenario import scanned

    counts = {"ok": 0, "wrong": 0, "hang": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        base.mkdir()
        range_spec = scanned(base).range
        print(f"{'case':<66} {'exit':>4}  result")
        for index, case in enumerate(CASES):
            if _skip_reason(case):
                counts["skipped"] += 1
                print(f"{case.name:<66} {'-':>4}  skipped ({_skip_reason(case)})")
                continue
            workdir = Path(scratch) / f"case-{index}"
            workdir.mkdir()
            try:
                result = run_case(case, base, range_spec, workdir)
            except subprocess.TimeoutExpired:
                counts["hang"] += 1
                print(f"{case.name:<66} {'-':>4}  HANG (over {DEADLINE_S} s)")
                continue
            problem = verdict_on(case, result)
            counts["ok" if problem is None else "wrong"] += 1
            print(f"{case.name:<66} {result.returncode:>4}  {'ok' if problem is None else 'WRONG: ' + problem}")
    print(f"\n{len(CASES)} cases: {counts['ok']} ok (exit 0 or 2, one line), {counts['wrong']} wrong, "
          f"{counts['hang']} hung, {counts['skipped']} skipped")
    return 0 if counts["wrong"] == counts["hang"] == 0 else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main())
