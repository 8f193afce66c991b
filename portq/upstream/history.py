"""Upstream history: ranges, commits and blobs, read from git.

The entries of ``A..B`` are ``git rev-list --reverse --first-parent A..B``,
numbered from 1, so anyone can reproduce "entry 132 of A..B" with git alone.
Their patches come from ONE streaming ``git log`` process for the whole range
(``-M`` renames, merges diffed against their first parent, raw lines for blob
SHAs and modes), read through a thread that keeps git's output flowing up
to ``READ_AHEAD_BYTES`` ahead of its reader (``ReadAhead``); a rescan reads
only the commits it decides again, the same patches from one ``git log
--no-walk`` (``commits_of``). Blob contents come from ONE ``git cat-file
--batch`` process. Nothing here runs git once per commit.

Every way a range can be wrong (not a repository, unknown revision, empty or
reversed range, revisions of unrelated histories, a shallow clone that lacks
part of the range) is a
``HistoryError`` with one line saying what and where, raised before anything
is written anywhere.

This module reads git only: it does not parse hunks (``portq.upstream.hunks``), decide
ownership (``portq.classifier.mapping``) or write the ledger.
"""

from __future__ import annotations

import os
import queue
import re
import secrets
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None

from portq.core.errors import EXIT_INTERNAL, HistoryError
from portq.core.model import Commit, FileChange

RECORD_MARK = b"\x1eportq "
"""Starts each commit record of the log stream. No patch line can start with
it (diff lines start with a marker character, raw lines with ':'), and a
commit message cannot forge it: ``commits`` adds a random token of its own
(``log_marks``) that no history written before the run can contain."""

_NULL_SHA = "0" * 40
_PR_SUFFIX = re.compile(r"\(#([0-9]+)\)\s*\Z")
_LARGEST_PR = 2**63 - 1
"""The ledger stores PR numbers as SQLite integers (signed 64-bit)."""
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_PAGER": "cat"}
_DIFF_OPTIONS = (
    "-M",
    "--patch-with-raw",
    "--no-abbrev",
    "--full-index",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-relative",
)
_CONFIG_OVERRIDES = (
    "-c", "core.quotePath=true",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "log.showSignature=false",
    "-c", "log.showRoot=true",
)
_STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "modified", "R": "renamed", "C": "copied"}


def pr_number(title: str) -> int | None:
    """The PR number of a squash title ending in ``(#1234)``.

    A number no pull request can have (0, or past what the ledger stores) is
    commit text, not a PR number: None, so such a title never stops a scan.
    """
    match = _PR_SUFFIX.search(title)
    if match is None or len(match.group(1).lstrip("0")) > len(str(_LARGEST_PR)):
        return None
    number = int(match.group(1))
    return number if 0 < number <= _LARGEST_PR else None


@dataclass(frozen=True)
class Range:
    """A resolved range: the text the user gave and the first-parent entries."""

    spec: str
    base: str  # full SHA of A
    tip: str  # full SHA of B
    shas: tuple[str, ...]  # entries, oldest first: entry N is shas[N - 1]

    def __len__(self) -> int:
        return len(self.shas)


def unquote_path(path: str) -> str:
    """Undo git's C-style quoting of unusual paths (``core.quotePath``)."""
    if not (len(path) >= 2 and path[0] == '"' and path[-1] == '"'):
        return path
    body = path[1:-1].encode("latin-1", "backslashreplace")
    return body.decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


class Upstream:
    """One upstream clone (work tree or bare). Use as a context manager."""

    def __init__(self, path: Path | str, name: str = "upstream") -> None:
        self.name = name
        self.path = Path(path)
        self._ancestry: dict[tuple[str, str], bool | None] = {}
        self._resolved: dict[str, str | None] = {}  # revision -> commit SHA, for the scan's lifetime
        self._entry_bases: dict[str, str] = {}  # entry SHA of a resolved range -> that range's base
        self._reachable: dict[tuple[str, str], frozenset[str]] = {}  # (commit, base) -> rev-list commit ^base
        self._blobs: BlobReader | None = None
        self._shallow: frozenset[str] | None = None
        self._check_repository()

    # --- plumbing -----------------------------------------------------------

    def git(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run one git command here; with ``check``, a failure is a HistoryError naming the clone.

        The commands portq runs are valid for any repository, so a failure means
        the clone is damaged or unreadable: something its owner can check.
        """
        try:
            result = subprocess.run(
                ["git", *_CONFIG_OVERRIDES, *arguments],
                cwd=self.path,
                capture_output=True,
                text=True,
                env={**os.environ, **_GIT_ENV},
            )
        except FileNotFoundError as error:
            if error.filename != "git":
                raise
            raise HistoryError("git is not on PATH: portq reads upstream history with git; install it") from None
        if check and result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise HistoryError(f"git {arguments[0]} failed in {self._where()}: {last}; check the clone with git fsck")
        return result

    def _where(self) -> str:
        return f"upstream {self.name} ({self.path})"

    def _check_repository(self) -> None:
        if not self.path.exists():
            raise HistoryError(f"{self._where()} does not exist: pass --upstream NAME=PATH to a git clone")
        if not self.path.is_dir():
            raise HistoryError(f"{self._where()} is not a directory: expected a git clone")
        if not os.access(self.path, os.R_OK | os.X_OK):
            raise HistoryError(f"{self._where()} is not readable: give portq read access to the clone")
        result = self.git("rev-parse", "--is-bare-repository", "--is-inside-git-dir", "--absolute-git-dir", check=False)
        if result.returncode != 0:
            said = " ".join(result.stderr.split())
            if "dubious ownership" in said:  # git's safe.directory check (a CI container's checkout)
                raise HistoryError(f"{self._where()}: git refuses to read it: detected dubious ownership (the clone "
                                   "belongs to another user); allow it with: git config --global --add "
                                   f"safe.directory {self.path.resolve()}")
            raise HistoryError(f"{self._where()} is not a git repository" + (f" (git: {said})" if said else ""))
        bare, inside_git_dir, git_dir = result.stdout.split("\n")[:3]
        here = self.path.resolve()
        if bare == "true" or inside_git_dir == "true":  # a bare clone, or a clone's .git directory
            top = Path(git_dir).resolve()
        else:
            top = Path(self.git("rev-parse", "--show-toplevel").stdout.strip()).resolve()
        if top != here:
            raise HistoryError(f"{self._where()} is not a git repository (it is inside {top}; pass that instead)")

    # --- revisions and ranges --------------------------------------------

    @property
    def shallow_boundary(self) -> frozenset[str]:
        """Commits whose parents this (shallow) clone does not have."""
        if self._shallow is None:
            shallow_file = self.git("rev-parse", "--git-path", "shallow").stdout.strip()
            path = Path(shallow_file) if os.path.isabs(shallow_file) else self.path / shallow_file
            try:
                self._shallow = frozenset(path.read_text().split())
            except FileNotFoundError:
                self._shallow = frozenset()
        return self._shallow

    def resolve(self, revision: str) -> str | None:
        """The full SHA of the commit ``revision`` names, or None."""
        if not revision or revision.startswith("-"):
            return None
        if revision not in self._resolved:  # the classifier asks about the same pins and commits again and again
            result = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}",
                              check=False)
            self._resolved[revision] = result.stdout.strip() if result.returncode == 0 else None
        return self._resolved[revision]

    def _resolve_side(self, revision: str, spec: str) -> str:
        sha = self.resolve(revision)
        if sha is None:
            hint = (
                "; the clone is shallow, so it may lie past its depth (git fetch --unshallow)"
                if self.shallow_boundary
                else ""
            )
            raise HistoryError(f"unknown revision '{revision}' in range {spec} of {self._where()}{hint}")
        return sha

    def resolve_range(self, spec: str) -> Range:
        """Resolve ``A..B`` into its first-parent entries, or raise HistoryError."""
        if "..." in spec or spec.count("..") != 1:
            raise HistoryError(f"range '{spec}': expected A..B (two revisions separated by '..')")
        left, right = spec.split("..")
        if not left or not right:
            raise HistoryError(f"range '{spec}': expected A..B with both A and B given")
        base = self._resolve_side(left, spec)
        tip = self._resolve_side(right, spec)
        if base == tip:
            raise HistoryError(f"range {spec} is empty: {left} and {right} are the same commit {base[:12]}")
        listed = self.git("rev-list", "--reverse", "--first-parent", f"{base}..{tip}").stdout.split()
        if not listed:
            if self.is_ancestor(tip, base):
                raise HistoryError(
                    f"range {spec} is empty: {right} is an ancestor of {left}; did you mean {right}..{left}?"
                )
            raise HistoryError(f"range {spec} is empty: {right} has no first-parent commits that {left} lacks")
        cut = self.shallow_boundary.intersection(listed)
        if cut:
            first = next(sha for sha in listed if sha in cut)
            raise HistoryError(
                f"range {spec} reaches past the history of shallow {self._where()}: the parents of "
                f"{first[:12]} are missing; run git fetch --unshallow there"
            )
        if self.git("merge-base", base, tip, check=False).returncode == 1:
            raise HistoryError(
                f"range {spec}: {left} and {right} have no common ancestor (unrelated histories); "
                f"expected both revisions from one upstream history"
            )
        for sha in listed:
            self._entry_bases.setdefault(sha, base)
        return Range(spec=spec, base=base, tip=tip, shas=tuple(listed))

    def is_ancestor(self, ancestor: str, descendant: str) -> bool | None:
        """Whether ``ancestor`` is an ancestor of (or equal to) ``descendant``.

        None when either revision does not exist here (a pin to a commit this
        clone lacks, say).
        """
        key = (ancestor, descendant)
        if key not in self._ancestry:
            base = self._entry_bases.get(ancestor)
            a, d = ancestor if base is not None else self.resolve(ancestor), self.resolve(descendant)
            if a is None or d is None:
                self._ancestry[key] = None
            elif base is not None:
                # An entry of base..tip is not reachable from base, so it is reachable from d exactly
                # when `git rev-list d ^base` lists it: one process per pin answers every entry.
                if (d, base) not in self._reachable:
                    listed = self.git("rev-list", d, f"^{base}", "--").stdout.split()
                    self._reachable[d, base] = frozenset(listed)
                self._ancestry[key] = a in self._reachable[d, base]
            else:
                code = self.git("merge-base", "--is-ancestor", a, d, check=False).returncode
                self._ancestry[key] = {0: True, 1: False}.get(code)
        return self._ancestry[key]

    # --- commits and blobs ---------------------------------------------------

    def commits(self, revisions: Range, while_waiting: Iterator[object] | None = None,
                started: bool = False) -> Iterator[Commit]:
        """The commits of ``revisions`` in entry order, from one git process.

        ``while_waiting``: work done a step at a time whenever the next patch
        has not arrived yet (``ReadAhead``), left off when the log ends.
        ``started``: first yields None once git runs (``started_commits``).
        """
        yield from self._log_stream(
            ["--reverse", "--end-of-options", f"{revisions.base}..{revisions.tip}"], revisions.shas, revisions.spec,
            while_waiting=while_waiting, started=started)

    def started_commits(self, revisions: Range, while_waiting: Iterator[object] | None = None) -> Iterator[Commit]:
        """``commits``, with git started now rather than when the first commit is asked for: a scan
        starts the log, then does its other setup while git writes. Close it if it is never read."""
        stream = self.commits(revisions, while_waiting, True)
        next(stream)  # git runs from here
        return stream

    def commits_of(self, shas: list[str] | tuple[str, ...], spec: str) -> Iterator[Commit]:
        """The commits ``shas`` (entries of ``spec``), in that order, from one git process.

        Each patch is the one ``commits`` gives for it (merges against their
        first parent), so a rescan can re-read only the entries it re-decides.
        """
        if not shas:
            return
        yield from self._log_stream(["--no-walk=unsorted", "--stdin"], tuple(shas), spec,
                                    stdin="\n".join(shas) + "\n")

    def _log_stream(self, selection: list[str], expected_shas: tuple[str, ...], spec: str,
                    stdin: str | None = None, while_waiting: Iterator[object] | None = None,
                    started: bool = False) -> Iterator[Commit]:
        """The commits of one ``git log``; ``started``: first yields None once git runs."""
        log_format, record_mark, message_end = log_marks(secrets.token_hex(8))
        arguments = [
            "git", *_CONFIG_OVERRIDES, "log", "--first-parent", "-m", *_DIFF_OPTIONS, f"--format={log_format}",
            *selection,
        ]
        with tempfile.TemporaryFile() as errors, tempfile.TemporaryFile() as revisions_in:
            if stdin is not None:
                revisions_in.write(stdin.encode())
                revisions_in.seek(0)
            process = subprocess.Popen(
                arguments, cwd=self.path, stdin=revisions_in, stdout=subprocess.PIPE, stderr=errors,
                env={**os.environ, **_GIT_ENV},
            )
            expected = iter(expected_shas)
            widen_pipe(process.stdout)
            output = ReadAhead(process.stdout, while_waiting=while_waiting)
            try:
                if started:
                    yield None
                for record in split_records(output, mark=record_mark):
                    commit = parse_record(record, mark=record_mark, message_end=message_end)
                    want = next(expected, None)
                    if commit.sha != want:
                        raise HistoryError(
                            f"git log returned {commit.sha[:12]} where rev-list listed {str(want)[:12]}", EXIT_INTERNAL
                        )
                    yield commit
            finally:
                if process.poll() is None:
                    process.kill()
                output.close()
                process.stdout.close()
                code = process.wait()
            if code != 0:
                errors.seek(0)
                last = (errors.read().decode("utf-8", "replace").strip().splitlines() or ["(no message)"])[-1]
                raise HistoryError(f"git log failed in {self._where()}: {last}; check the clone with git fsck")
            if next(expected, None) is not None:
                raise HistoryError(f"git log ended before the last entry of {spec}", EXIT_INTERNAL)

    def read_blob(self, sha: str) -> bytes:
        """The contents of blob ``sha`` (one ``git cat-file --batch`` process)."""
        return self.read_blobs([sha])[sha]

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        """Several blobs at once, through the same process, in one round trip."""
        if self._blobs is None:
            self._blobs = BlobReader(self.path)
        return self._blobs.read_many(shas)

    def close(self) -> None:
        if self._blobs is not None:
            self._blobs.close()
            self._blobs = None

    def __enter__(self) -> "Upstream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class BlobReader:
    """A long-lived ``git cat-file --batch``: one process for every blob read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.process = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_GIT_ENV},
        )

    MAX_BATCH = 1000
    """Requests written before reading answers; their bytes stay far below a pipe buffer."""

    def read(self, sha: str) -> bytes:
        return self.read_many([sha])[sha]

    def read_many(self, shas: list[str]) -> dict[str, bytes]:
        """Several blobs for one round trip per ``MAX_BATCH`` requests."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(shas))
        for start in range(0, len(unique), self.MAX_BATCH):
            batch = unique[start:start + self.MAX_BATCH]
            stdin, stdout = self.process.stdin, self.process.stdout
            stdin.write(b"".join(sha.encode("ascii") + b"\n" for sha in batch))
            stdin.flush()
            for sha in batch:
                parts = stdout.readline().split()
                if len(parts) != 3:
                    raise HistoryError(
                        f"blob {sha[:12]} is missing from the upstream clone {self.path}: a partial or "
                        "damaged clone? fetch it in full (git fetch --refetch) and run git fsck there"
                    )
                found[sha] = stdout.read(int(parts[2]))
                stdout.read(1)  # the newline after the contents
        return found

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()


# --- the log stream ---------------------------------------------------------

READ_AHEAD_BYTES = 32 << 20
"""How far a log stream's reader thread may run ahead of its consumer."""

PIPE_BYTES = 1 << 20
"""The pipe buffer asked for git's output (Linux's default unprivileged
maximum). With the default 64 KiB, git fills the pipe in a few milliseconds
and then waits while the reader thread waits for the interpreter lock, so
git and the mapping take turns instead of running side by side."""


def widen_pipe(stream: IO[bytes], size: int = PIPE_BYTES) -> None:
    """Enlarge the buffer of the pipe ``stream`` reads, where the platform allows it."""
    setting = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if setting is None:
        return
    try:
        fcntl.fcntl(stream.fileno(), setting, size)
    except (OSError, ValueError):
        pass  # over a lowered limit, or not a pipe: the default buffer still works


class ReadAhead:
    """A pipe drained by a thread into a bounded buffer, read back by ``read1``.

    git then never waits for us while we do other work (index the tree,
    parse a large commit): a scan that starts its stream first has its
    patches produced on the other core, up to ``READ_AHEAD_BYTES`` ahead.
    """

    _CHUNK = 1 << 20

    def __init__(self, stream: IO[bytes], limit: int = READ_AHEAD_BYTES,
                 while_waiting: Iterator[object] | None = None) -> None:
        # steps of other work taken instead of blocking while git has not written the next chunk
        self._while_waiting = while_waiting
        self._chunks: queue.Queue[bytes] = queue.Queue(maxsize=max(1, limit // self._CHUNK))
        self._stop = threading.Event()
        self._ended = False
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[bytes]) -> None:
        read = getattr(stream, "read1", stream.read)
        data = b""
        try:
            while not self._stop.is_set():
                data = read(self._CHUNK)
                if not self._put(data) or not data:
                    return
        except (OSError, ValueError):
            self._put(b"")

    def _put(self, data: bytes) -> bool:
        while not self._stop.is_set():
            try:
                self._chunks.put(data, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read1(self, size: int = -1) -> bytes:
        """The next chunk git wrote (any size), b"" at the end."""
        if self._ended:
            return b""
        while self._while_waiting is not None:
            try:
                data = self._chunks.get_nowait()
                break
            except queue.Empty:
                if next(self._while_waiting, StopIteration) is StopIteration:
                    self._while_waiting = None
        else:
            data = self._chunks.get()
        self._ended = not data
        if self._ended:
            self._while_waiting = None
        return data

    read = read1

    def close(self) -> None:
        """Stop reading; call once git has exited or been killed (its pipe then ends)."""
        self._stop.set()
        self._thread.join(timeout=5)


def log_marks(token: str) -> tuple[str, bytes, bytes]:
    """``(git log --format, record mark, end of message)`` for one run's ``token``.

    A commit message is arbitrary bytes: one that holds a line starting with
    the record mark, or the byte that ends the message, must read as text of
    that message, never as the start of another commit.
    """
    log_format = f"%x1eportq{token} %H %P%n%aI%n%an <%ae>%n%B%x1fportq{token}"
    return log_format, b"\x1eportq" + token.encode() + b" ", b"\x1fportq" + token.encode() + b"\n"


def split_records(stream: IO[bytes], chunk_size: int = 1 << 16, *, mark: bytes = RECORD_MARK) -> Iterator[bytes]:
    """Cut the log stream into one bytes record per commit (each starts with ``mark``), as it arrives."""
    pending = bytearray()
    searched = 1  # where the next search for a record boundary may start
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(chunk_size)
        if not chunk:
            break
        pending += chunk
        start = 0
        while True:
            boundary = pending.find(b"\n" + mark, max(searched, start + 1))
            if boundary < 0:
                break
            yield bytes(pending[start:boundary + 1])
            start = boundary + 1
        del pending[:start]
        searched = max(1, len(pending) - len(mark))
    if pending:
        yield bytes(pending)


def parse_record(record: bytes, *, mark: bytes = RECORD_MARK, message_end: bytes = b"\x1f\n") -> Commit:
    """One commit record of the stream: header, message, raw lines, patch."""
    header, _, body = record.partition(message_end)
    head_line, date, author, message = (header.decode("utf-8", "replace").split("\n", 3) + ["", "", ""])[:4]
    ids = head_line[len(mark.decode()):].split()
    sha, parents = ids[0], tuple(ids[1:])
    message = message.rstrip("\n")
    title = message.split("\n", 1)[0].strip()
    patch_at = body.find(b"diff --git ")
    raw = body[:patch_at] if patch_at >= 0 else body
    patch = body[patch_at:] if patch_at >= 0 else b""
    raw_lines = [line for line in raw.decode("utf-8", "replace").split("\n") if line.startswith(":")]
    sections = _split_patch(patch)
    changes = [
        _file_change(line, sections[index] if index < len(sections) else "")
        for index, line in enumerate(raw_lines)
    ]
    return Commit(
        sha=sha,
        parents=parents,
        title=title,
        message=message,
        author=author,
        authored_at=date,
        pr=pr_number(title),
        changes=changes,
    )


def _split_patch(patch: bytes) -> list[str]:
    """One text section per ``diff --git`` header, in the order of the raw lines."""
    if not patch:
        return []
    text = patch.decode("utf-8", "replace")
    starts = [0] + [m.start() + 1 for m in re.finditer(r"\ndiff --git ", text)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def _is_binary(section: str) -> bool:
    """Whether a file's diff section is git's note of a binary change. The note
    comes before any hunk, and no line of a hunk starts with a letter, so only
    the lines before the first hunk are searched (not a large diff's every line)."""
    hunk = section.find("\n@@")
    head = section if hunk < 0 else section[:hunk + 1]
    return "\nBinary files " in head or "\nGIT binary patch" in head


def _file_change(raw_line: str, section: str) -> FileChange:
    meta, _, paths = raw_line.partition("\t")
    old_mode, new_mode, old_blob, new_blob, status = meta[1:].split(" ")
    names = [unquote_path(p) for p in paths.split("\t")]
    kind = status[0]
    similarity = int(status[1:]) if status[1:].isdigit() else None
    old_path = None if kind == "A" else names[0]
    new_path = None if kind == "D" else names[-1]
    if "160000" in (old_mode, new_mode):
        content = "submodule"
    elif kind in "MT" and old_blob == new_blob and old_mode != new_mode:
        content = "mode-only"
    elif _is_binary(section):
        content = "binary"
    else:
        content = "text"
    return FileChange(
        status=_STATUS.get(kind, "modified"),
        old_path=old_path,
        new_path=new_path,
        old_blob=None if old_blob == _NULL_SHA else old_blob,
        new_blob=None if new_blob == _NULL_SHA else new_blob,
        content=content,
        similarity=similarity,
        patch=section if content == "text" else "",
    )
