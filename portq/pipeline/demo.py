"""The embedded demo: build the example upstream histories, scan them against
two downstream trees, and show what portq found.

``examples/upstream/<name>/`` holds a patch series we wrote, one directory per
commit: ``000-base/`` carries the starting tree in ``tree/``, and every later
``NNN-slug/`` a ``change.diff`` (a ``git diff -M`` of that commit) next to a
``commit.toml`` with the title, author, date, message and, under
``[expected.<target>]``, the verdict the commit must get against each
downstream tree and why. ``build_upstream`` turns a series into a git
repository with the author and committer dates of the series, so every SHA
is the same on every machine; ``run_demo`` scans the whole range of each
series against ``examples/stale-tree`` and against this repository's
``kernels/``.

This module must not import torch, triton or the kernels, must not reach the
network, and writes only under the directory it is given. A ``{sha:N}`` in a
commit message stands for the SHA of commit N of the same series (a revert
names the commit it reverts), filled in while building.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import git

from portq.core import bundled
from portq.core.config import tomllib  # tomli on Python 3.10
from portq.core.errors import PortqError
from portq.core.model import JUSTIFICATIONS, NOT_APPLICABLE, VERDICTS

EXAMPLES_DIR = bundled.demo_root() / "examples"
"""Where the series and the stale tree live: a checkout's ``examples/``, or the installed copy."""

TARGETS = ("stale-tree", "kernels")
"""The downstream trees every commit has an expected verdict against."""

BASE_TAG = "demo-base"
"""Tag on the first commit of a built series: the range is ``demo-base..main``."""

_COMMIT_DIR = re.compile(r"^(\d{3})-[a-z0-9][a-z0-9-]*$")
_SHA_PLACEHOLDER = re.compile(r"\{sha:(\d+)\}")
_AUTHOR = re.compile(r"^(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+)>$")


class DemoError(PortqError):
    """A series on disk is malformed, or building it failed."""


@dataclass(frozen=True)
class ExpectedVerdict:
    """What the series' author says a commit must get against one tree."""

    verdict: str
    justification: str | None
    why: str


@dataclass(frozen=True)
class SeriesCommit:
    """One commit of a series as written on disk."""

    number: int
    directory: Path
    title: str
    author_name: str
    author_email: str
    date: str
    message: str
    expected: dict[str, ExpectedVerdict] = field(default_factory=dict)
    report: str | None = None  # the tree whose scan of this entry the demo files

    @property
    def slug(self) -> str:
        return self.directory.name

    def full_message(self, shas: list[str]) -> str:
        """Title and body, with ``{sha:N}`` replaced by built SHAs."""

        def fill(match: re.Match) -> str:
            number = int(match.group(1))
            if number >= len(shas):
                raise DemoError(
                    f"{self.directory / 'commit.toml'}: message names {{sha:{number}}}, "
                    f"but only commits 0..{len(shas) - 1} are built before it"
                )
            return shas[number]

        body = _SHA_PLACEHOLDER.sub(fill, self.message.strip("\n"))
        return f"{self.title}\n\n{body}\n" if body else f"{self.title}\n"


@dataclass(frozen=True)
class Series:
    """An upstream's patch series: the base commit first, then the entries."""

    name: str
    directory: Path
    commits: tuple[SeriesCommit, ...]

    @property
    def entries(self) -> tuple[SeriesCommit, ...]:
        """The commits a scan of ``base..main`` sees, entry 1 first."""
        return self.commits[1:]


@dataclass(frozen=True)
class BuiltUpstream:
    """A series built into a git repository."""

    series: Series
    path: Path
    shas: tuple[str, ...]  # index = commit number; shas[0] is the base

    @property
    def range(self) -> str:
        """The whole series as a scan range: every entry, none of the base."""
        return f"{self.shas[0]}..{self.shas[-1]}"


def series_names(examples: Path = EXAMPLES_DIR) -> list[str]:
    """The upstream series under ``examples/upstream``, sorted."""
    upstream = examples / "upstream"
    if not upstream.is_dir():
        raise DemoError(f"{upstream}: no such directory (expected one folder per upstream series)")
    return sorted(p.name for p in upstream.iterdir() if p.is_dir())


def load_series(directory: Path) -> Series:
    """Read a series directory; errors name the file and what was expected."""
    directory = Path(directory)
    commit_dirs = sorted(p for p in directory.iterdir() if p.is_dir()) if directory.is_dir() else []
    if not commit_dirs:
        raise DemoError(f"{directory}: expected commit folders named NNN-slug, found none")
    commits = []
    for number, commit_dir in enumerate(commit_dirs):
        match = _COMMIT_DIR.match(commit_dir.name)
        if not match or int(match.group(1)) != number:
            raise DemoError(
                f"{commit_dir}: expected a folder named {number:03d}-slug "
                "(commits are numbered from 000 without gaps)"
            )
        commits.append(_load_commit(number, commit_dir))
    if not (commit_dirs[0] / "tree").is_dir():
        raise DemoError(f"{commit_dirs[0]}: the base commit needs a tree/ folder with its files")
    for commit in commits[1:]:
        if not (commit.directory / "change.diff").is_file():
            raise DemoError(f"{commit.directory}: expected a change.diff")
    return Series(directory.name, directory, tuple(commits))


def _load_commit(number: int, directory: Path) -> SeriesCommit:
    path = directory / "commit.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DemoError(f"{path}: missing") from None
    except tomllib.TOMLDecodeError as error:
        raise DemoError(f"{path}: not valid TOML ({error})") from None
    for key in ("title", "author", "date"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise DemoError(f"{path}: expected a non-empty string '{key}'")
    author = _AUTHOR.match(data["author"])
    if author is None:
        raise DemoError(f"{path}: author must read 'Name <email>', got {data['author']!r}")
    report = data.get("report")
    if report is not None and report not in TARGETS:
        raise DemoError(f"{path}: report must name one of {', '.join(TARGETS)}, got {report!r}")
    expected = {}
    for target, table in (data.get("expected") or {}).items():
        expected[target] = _expected_verdict(path, target, table)
    if number > 0 and set(expected) != set(TARGETS):
        raise DemoError(f"{path}: expected [expected.{'] and [expected.'.join(TARGETS)}] tables")
    return SeriesCommit(
        number=number,
        directory=directory,
        title=data["title"],
        author_name=author.group("name"),
        author_email=author.group("email"),
        date=data["date"],
        message=data.get("message", ""),
        expected=expected,
        report=report,
    )


def _expected_verdict(path: Path, target: str, table) -> ExpectedVerdict:
    if target not in TARGETS:
        raise DemoError(f"{path}: [expected.{target}] names no known tree (expected one of {', '.join(TARGETS)})")
    verdict = table.get("verdict")
    if verdict not in VERDICTS:
        raise DemoError(f"{path}: [expected.{target}] verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    justification = table.get("justification")
    if justification is not None and (verdict != NOT_APPLICABLE or justification not in JUSTIFICATIONS):
        raise DemoError(
            f"{path}: [expected.{target}] justification {justification!r} needs verdict "
            f"NOT_APPLICABLE and one of {', '.join(JUSTIFICATIONS)}"
        )
    why = table.get("why")
    if not isinstance(why, str) or not why.strip():
        raise DemoError(f"{path}: [expected.{target}] needs a one-line 'why'")
    return ExpectedVerdict(verdict, justification, why)


def build_upstream(series: Series, destination: Path) -> BuiltUpstream:
    """Build ``series`` into a fresh git repository at ``destination``.

    Author and committer are the commit's author at the commit's date, hooks
    and signing are off and the message is kept verbatim, so the SHAs depend
    on nothing but the series.
    """
    destination = Path(destination)
    if destination.exists() and any(destination.iterdir()):
        raise DemoError(f"{destination}: exists and is not empty (expected a fresh directory)")
    repo = git.Repo.init(destination, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("commit", "gpgsign", "false")
        config.set_value("core", "hooksPath", str(destination / ".git" / "no-hooks"))
        config.set_value("core", "autocrlf", "false")
    base = series.commits[0]
    # An installed copy of the series has byte-code beside its .py files (pip compiles them):
    # never part of the history, or the SHAs would differ from a checkout's.
    shutil.copytree(base.directory / "tree", destination, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    repo.git.add("--all")
    shas = [_commit(repo, base, [])]
    for commit in series.entries:
        try:
            repo.git.apply("--index", "--whitespace=nowarn", str(commit.directory / "change.diff"))
        except git.GitCommandError as error:
            raise DemoError(
                f"{commit.directory / 'change.diff'}: does not apply on commit "
                f"{commit.number - 1:03d} ({error.stderr.strip()})"
            ) from None
        shas.append(_commit(repo, commit, shas))
    repo.create_tag(BASE_TAG, ref=shas[0])
    return BuiltUpstream(series, destination, tuple(shas))


def _commit(repo: git.Repo, commit: SeriesCommit, shas: list[str]) -> str:
    identity = {
        "GIT_AUTHOR_NAME": commit.author_name,
        "GIT_AUTHOR_EMAIL": commit.author_email,
        "GIT_AUTHOR_DATE": commit.date,
        "GIT_COMMITTER_NAME": commit.author_name,
        "GIT_COMMITTER_EMAIL": commit.author_email,
        "GIT_COMMITTER_DATE": commit.date,
    }
    message_file = Path(repo.git_dir) / "DEMO_MSG"
    message_file.write_text(commit.full_message(shas), encoding="utf-8")
    with repo.git.custom_environment(**identity):
        repo.git.commit("--quiet", "--allow-empty", "--cleanup=verbatim", "--file", str(message_file))
    message_file.unlink()
    return repo.head.commit.hexsha


def build_all(destination: Path, examples: Path = EXAMPLES_DIR) -> dict[str, BuiltUpstream]:
    """Build every series under ``examples/upstream`` into ``destination/<name>``."""
    built = {}
    for name in series_names(examples):
        series = load_series(examples / "upstream" / name)
        built[name] = build_upstream(series, Path(destination) / name)
    return built



# --- running the demo -----------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A downstream tree the demo scans, with its own matrix."""

    name: str  # a key of TARGETS
    tree: Path
    matrix: Path


def demo_targets(repository: Path = EXAMPLES_DIR.parent) -> tuple[Target, ...]:
    """The stale example tree and this repository's own port, in TARGETS order."""
    stale = repository / "examples" / "stale-tree"
    return (
        Target("stale-tree", stale, stale / "kernel-matrix.toml"),
        Target("kernels", repository, repository / "matrix" / "kernel-matrix.toml"),
    )


@dataclass(frozen=True)
class EntryOutcome:
    """One entry of one series, scanned against one tree."""

    series: str
    position: int
    sha: str
    title: str
    target: str
    verdict: str
    justification: str | None
    expected: ExpectedVerdict

    @property
    def as_expected(self) -> bool:
        if self.verdict != self.expected.verdict:
            return False
        return self.expected.justification is None or self.expected.justification == self.justification


@dataclass
class DemoResult:
    """Everything a demo run produced, and where it went."""

    workdir: Path
    upstreams: dict[str, BuiltUpstream]
    outcomes: list[EntryOutcome]
    ledgers: dict[str, Path]
    waves: dict[tuple[str, str], str]  # (target, series) -> wave name
    summaries: dict[str, Path]
    report: Path | None = None
    report_note: str | None = None

    def outcome(self, target: str, series: str, position: int) -> EntryOutcome:
        for outcome in self.outcomes:
            if (outcome.target, outcome.series, outcome.position) == (target, series, position):
                return outcome
        raise KeyError((target, series, position))

    @property
    def mismatches(self) -> list[EntryOutcome]:
        return [outcome for outcome in self.outcomes if not outcome.as_expected]


def _config_for(target: Target, upstream: BuiltUpstream, ledger: Path, root: Path):
    from portq.core.config import Config

    return Config(
        root=root,
        tree=target.tree,
        matrix_path=target.matrix,
        ledger_path=ledger,
        upstreams={upstream.series.name: upstream.path},
        selected_upstream=upstream.series.name,
    )


def run_demo(workdir: Path, *, repository: Path = EXAMPLES_DIR.parent, progress=None) -> DemoResult:
    """Build every series into ``workdir``, scan each whole range against
    every target, write the wave summaries and file the report the series
    asks for. ``progress(line)`` is told what happens, step by step."""
    from portq.pipeline.scan import run_scan

    say = progress or (lambda line: None)
    workdir = Path(workdir)
    if workdir.exists() and not workdir.is_dir():
        raise DemoError(f"{workdir}: is a file, not a directory (expected an empty or absent directory)")
    if workdir.is_dir() and any(workdir.iterdir()):
        raise DemoError(f"{workdir}: exists and is not empty (expected an empty or absent directory)")
    examples = repository / "examples"
    upstreams = build_all(workdir / "upstream", examples)
    for name, built in upstreams.items():
        say(f"built {name}: {len(built.series.entries)} commits on {built.shas[0][:10]}, {built.path}")
    result = DemoResult(workdir, upstreams, [], {}, {}, {})
    scans = {}
    for target in demo_targets(repository):
        ledger = workdir / target.name / "ledger.sqlite"
        result.ledgers[target.name] = ledger
        for name, built in upstreams.items():
            config = _config_for(target, built, ledger, workdir / target.name)
            scan = run_scan(config, built.range)
            scans[target.name, name] = (config, scan)
            result.waves[target.name, name] = scan.wave.name
            say(f"scanned {name} {built.shas[0][:10]}..{built.shas[-1][:10]} against {target.name}: {scan.wave.name}")
            for record, commit in zip(scan.entries, built.series.entries):
                event = record.current.event
                result.outcomes.append(EntryOutcome(
                    series=name,
                    position=record.position,
                    sha=record.sha,
                    title=record.title,
                    target=target.name,
                    verdict=event.verdict if event else "",
                    justification=event.justification if event else None,
                    expected=commit.expected[target.name],
                ))
        result.summaries[target.name] = _write_summaries(workdir / target.name, scans, target.name)
    _file_requested_report(result, scans, workdir / "reports")
    return result


def _write_summaries(directory: Path, scans: dict, target: str) -> Path:
    """The wave summaries of one target, one markdown file (portq summary's text)."""
    from portq.reporting.summary import wave_summary

    path = directory / "summary.md"
    parts = [wave_summary(scan.wave, scan.entries)
             for (scan_target, _name), (_config, scan) in scans.items() if scan_target == target]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _file_requested_report(result: DemoResult, scans: dict, out_dir: Path) -> None:
    """File the issue report of the entry whose commit.toml asks for one."""
    requested = [(name, commit) for name, built in result.upstreams.items()
                 for commit in built.series.entries if commit.report]
    if not requested:
        return
    name, commit = requested[0]
    config, scan = scans[commit.report, name]
    record = next(r for r in scan.entries if r.position == commit.number)
    try:
        from portq.ledger.store import open_ledger
        from portq.reporting import reports
        from portq.reporting.issue_context import build_issue_context
        from portq.tree.matrix import Matrix
    except ImportError as error:
        result.report_note = f"issue reports are not available in this installation ({error})"
        return
    with open_ledger(config.ledger_path, create=False) as ledger:
        context, _ = build_issue_context(config, Matrix.load(config.matrix_path), ledger, scan.wave, record)
        text = reports.render("issue.md.j2", context)
        path = reports.report_path(out_dir, scan.wave.upstream, scan.wave.short_range, record.position, context["slug"])
        reports.write_report(path, text)
    result.report = path
