"""Provenance of a port that records none: which upstream definition each in-tree
definition ports, and which upstream commit each port file was taken from.

``portq init`` asks this module three questions about a tree with no anchors:

1. **Where to look.** Every C/C++/CUDA and Python file of the upstream at one
   revision is read through one ``git cat-file --batch``; the files whose
   identifiers (weighted by how rare they are upstream) cover a port file's best,
   the files naming its definitions (normalised, or with a word or two more:
   ``run_mha_fwd_hdim32`` for ``fwd_hdim32``), those of its file name in any
   language, the Python file declaring a compiled function a port name matches,
   plus any upstream path the port file quotes ("Adapted from ...PATH"), are its
   candidate files.
2. **Which definition ports which** (``portq.tree.definition_match``). Each port definition
   is compared with every definition of its candidate files: its name (equal,
   equal once normalised: case, underscores, ``_kernel``/``_fwd``/``_p`` suffixes,
   so ``token_to_seq_p`` matches ``token_to_seq`` across languages; a method with
   its class), the token similarity of the bodies, their structure once the
   author's names are abstracted (``structure_similarity``), the parameter names,
   whether both are kernels or both host code, and the call graph (a wrapper that
   launches a matched kernel pairs with the upstream wrapper launching its
   counterpart). Pairs are taken best first, one to one per port file. A match
   below ``CONFIDENCE_THRESHOLD`` is reported as unmatched, never proposed.
3. **The base** (``find_bases``). The first-parent commits that touch the matched
   upstream files (following their renames back) come from one streaming ``git log``;
   their blobs from one ``git cat-file --batch``. Each blob is read and parsed once
   (``BlobDefinitions``, keyed by content hash), however many commits hold it and in
   both passes, and a commit compares again only the files it changed, for the matches
   whose names they define. Each port file's base is the
   commit whose versions of its matched upstream definitions (looked for under every
   spelling of their names, a method in its own class) hold most of the port
   (``version_similarity``: the share of the port's tokens and token pairs a version
   holds, times ``interface_agreement``: a version whose parameters are more or fewer
   than the port's is further from it; the oldest of equal ones: the start of the run
   where that code is unchanged), with the score; where no version stands out, the oldest commit near
   the best whose files are where upstream has them now, marked undetermined. The
   path an anchor names is the one the upstream definition had at that commit (its
   own file's, while that file still defines it and the closer version is in another
   language: a binding is no version of its declaration). Once a base is found the
   port is matched again against the upstream as it was there, and just before the newest commits that
   split a matched file (``survey``), unless the files are the same blobs as at the
   revision already matched; a pass is kept when it matches more of the port.

It reads the tree's files and the upstream clone; it writes nothing and decides no
verdict (the command ``portq.commands.init`` writes what it proposes).
"""

from __future__ import annotations

import bisect
import math
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable

from portq.core.errors import HistoryError
from portq.core.paths import is_test_file
from portq.language.symbols import MAX_PARSE_BYTES, language_for_path
from portq.language.symbols import Definition as SymbolDefinition
from portq.tree.definition_match import (_COMMON_WORDS, _NAME_NOISE, Definition, Match, definition_from, definition_texts,
                                         definitions_of, match_definitions, name_words, normalised_name, specific_words,
                                         version_similarity, word_run)
from portq.upstream.history import BlobReader, Upstream

NAMED_FILE_SCORE = 0.5
"""The candidate score of an upstream file found because it names the port's definitions."""

CANDIDATE_FILES_PER_PORT_FILE = 8

SAME_NAME_FILES = 4
"""Upstream files of the port file's own name are candidates when there are at most this many."""
"""Upstream files compared definition by definition with each port file."""

_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")


def port_files(tree_root: Path, port_paths: Iterable[str]) -> list[str]:
    """The tree's source files under ``port_paths`` (relative to the tree root), tests left out."""
    from portq.tree.tree_index import tree_files

    wanted = [p.strip("/") for p in port_paths if p.strip("/") not in ("", ".")]
    files = []
    for file in tree_files(tree_root):
        relative = file.relative_to(tree_root).as_posix()
        if wanted and not any(relative == p or relative.startswith(p + "/") for p in wanted):
            continue
        if is_test_file(relative):
            continue
        files.append(relative)
    return files


# --- upstream files -------------------------------------------------------------------


@dataclass
class UpstreamSnapshot:
    """The upstream's source files at one revision: path -> blob, bytes and identifiers."""

    revision: str
    blobs: dict[str, str]
    sources: dict[str, bytes]
    identifiers: dict[str, frozenset[bytes]]
    document_frequency: Counter
    _by_key: dict[bytes, set[str]] | None = field(default=None, repr=False)  # see ``_files_maybe_naming``
    _keys: list[bytes] = field(default_factory=list, repr=False)
    _by_identifier: dict[bytes, set[str]] | None = field(default=None, repr=False)  # see ``_files_naming_words``
    _identifiers_by_key: dict[bytes, set[bytes]] = field(default_factory=dict, repr=False)
    _sorted_keys: list[bytes] = field(default_factory=list, repr=False)
    _reversed_keys: list[bytes] = field(default_factory=list, repr=False)

    @classmethod
    def read(cls, upstream: Upstream, revision: str, cache: "BlobDefinitions | None" = None) -> "UpstreamSnapshot":
        """The snapshot at ``revision``; the blobs ``cache`` holds already are not read again."""
        listing = upstream.git("ls-tree", "-r", "-z", "--full-tree", revision).stdout
        blobs: dict[str, str] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            mode, kind, sha = meta.split()
            if kind == "blob" and language_for_path(path) is not None and not _test_or_benchmark(path):
                blobs[path] = sha
        cache = cache if cache is not None else BlobDefinitions(upstream)
        cache.read(blobs.values())
        contents = cache.contents
        sources = {path: contents[sha] for path, sha in blobs.items() if len(contents[sha]) <= MAX_PARSE_BYTES}
        identifiers = {path: cache.identifiers(blobs[path]) for path in sources}
        frequency: Counter = Counter()
        for found in identifiers.values():
            frequency.update(found)
        return cls(revision, blobs, sources, identifiers, frequency)

    def _files_maybe_naming(self, core: str) -> Iterable[str]:
        """The files that may hold a name ``_name_pattern`` gives for ``core`` (a normalised
        name): every match is a whole identifier whose letters, lower case and without
        underscores, are ``core`` then kind suffixes, so the other files need no search."""
        if not core[:1].isalpha():
            return self.sources  # an identifier starting with a digit is not in the index
        if self._by_key is None:
            by_key: dict[bytes, set[str]] = {}
            for path, found in self.identifiers.items():
                for identifier in found:
                    by_key.setdefault(identifier.lower().replace(b"_", b""), set()).add(path)
            self._by_key = by_key
            self._keys = sorted(by_key)
        prefix = core.encode()
        files: set[str] = set()
        position = bisect.bisect_left(self._keys, prefix)
        while position < len(self._keys) and self._keys[position].startswith(prefix):
            key = self._keys[position]
            if _SUFFIXES.fullmatch(key[len(prefix):]):
                files |= self._by_key[key]
            position += 1
        return files

    def _files_naming_words(self, name: str) -> set[str]:
        """The files holding an identifier whose name words are ``name``'s in order with a word
        or two more before or after (``run_mha_fwd_hdim32`` for ``fwd_hdim32``: ``word_run``),
        found through the identifiers that start or end with ``name``'s letters."""
        words = name_words(name)
        if not specific_words(words):
            return set()
        if self._by_identifier is None:
            by_identifier: dict[bytes, set[str]] = {}
            for path, found in self.identifiers.items():
                for identifier in found:
                    by_identifier.setdefault(identifier, set()).add(path)
            for identifier in by_identifier:
                self._identifiers_by_key.setdefault(identifier.lower().replace(b"_", b""), set()).add(identifier)
            self._sorted_keys = sorted(self._identifiers_by_key)  # sorted once per snapshot, not once per name
            self._reversed_keys = sorted(key[::-1] for key in self._identifiers_by_key)
            self._by_identifier = by_identifier
        core = "".join(words).encode()
        keys: list[bytes] = []
        for ordered, wanted, turn in ((self._sorted_keys, core, False),
                                      (self._reversed_keys, core[::-1], True)):
            position = bisect.bisect_left(ordered, wanted)
            while position < len(ordered) and ordered[position].startswith(wanted):
                keys.append(ordered[position][::-1] if turn else ordered[position])
                position += 1
        files: set[str] = set()
        for key in keys:
            for identifier in self._identifiers_by_key[key]:
                if word_run(words, name_words(identifier.decode())):
                    files |= self._by_identifier[identifier]
        return files

    def idf(self, identifier: bytes) -> float:
        return math.log((1 + len(self.identifiers)) / (1 + self.document_frequency.get(identifier, 0)))

    def candidate_files(self, port_source: bytes, names: Iterable[str] = (),
                        limit: int = CANDIDATE_FILES_PER_PORT_FILE, port_path: str = "") -> list[tuple[str, float]]:
        """The upstream files that hold most of the port file's rarer identifiers, best first,
        then the files that name the most of ``names`` (the port file's definitions) once
        normalised, the few files of the port file's own name (``rms_norm.py`` for
        ``rmsnorm.py``: a port often keeps it), and any upstream path the port file quotes."""
        mine = {i for i in _IDENTIFIER.findall(port_source) if i.decode() not in _COMMON_WORDS}
        weights = {i: self.idf(i) for i in mine if i in self.document_frequency}
        # summed exactly (``math.fsum``): a float sum in a set's order differs in its last bits from
        # run to run, and near-equal files would swap places at the cut
        total = math.fsum(weights.values()) or 1.0
        scores: list[tuple[float, str]] = []
        for path, theirs in self.identifiers.items():
            shared = weights.keys() & theirs
            if shared:
                covered = math.fsum(weights[i] for i in shared) / total
                # a file that holds everything (a huge one) must also be mostly about these identifiers
                focus = len(shared) / max(len(theirs), 1) ** 0.5
                scores.append((covered * (0.5 + 0.5 * min(1.0, focus)), path))
        scores.sort(reverse=True)
        chosen = [(path, score) for score, path in scores[:limit]]
        by_score = {path: score for score, path in scores}
        patterns = [_name_pattern(name) for name in names if len(normalised_name(name)) >= 4]
        if patterns:
            naming = Counter()
            declared: list[str] = []
            for name in names:
                if len(normalised_name(name)) < 4:
                    continue
                pattern, definition = _name_pattern(name), _definition_pattern(name)
                named = {path for path in self._files_maybe_naming(normalised_name(name))
                         if pattern.search(self.sources[path])}
                for path in named | self._files_naming_words(name):
                    naming[path] += 1
                defined = {path for path in named if definition.search(self.sources[path])}
                in_python = sorted(path for path in defined if language_for_path(path) == "python")
                if specific_words(name_words(name)) and len(in_python) < len(defined) and len(in_python) <= 2:
                    declared.extend(in_python)  # a compiled function and the Python declaration binding it
            naming = Counter({path: naming[path] for path in self.sources if naming[path]})  # the files' order
            ranked = sorted(naming, key=lambda path: (-naming[path], -by_score.get(path, 0.0), path))
            for path in ranked[:limit]:
                if path not in dict(chosen):
                    chosen.append((path, max(by_score.get(path, 0.0), NAMED_FILE_SCORE)))
            for path in declared:  # however little else it shares with the port
                chosen = [item for item in chosen if item[0] != path] + [(path, NAMED_FILE_SCORE)]
        if port_path:
            stem = normalised_name(PurePosixPath(port_path).stem)
            # any language: a Triton re-implementation of ``softmax.h`` is often ``softmax.py``
            same = [path for path in self.sources if len(stem) >= 3
                    and normalised_name(PurePosixPath(path).stem) == stem]
            if 0 < len(same) <= SAME_NAME_FILES:
                for path in same:
                    if path not in dict(chosen):
                        chosen.append((path, max(by_score.get(path, 0.0), NAMED_FILE_SCORE)))
        text = port_source.decode("utf-8", errors="replace")
        for path in self.sources:
            if path not in dict(chosen) and len(path) > 8 and path in text:
                chosen.append((path, 1.0))
        return chosen


def _test_or_benchmark(path: str) -> bool:
    """Upstream tests and benchmarks (``op_tests/``, ``benchmark/``, ``test_*.py``): never what a port ports."""
    directories = PurePosixPath(path).parts[:-1]
    return is_test_file(path) or any(re.search(r"(^|_)(tests?|bench\w*)$", part) for part in directories)


_SUFFIXES = re.compile(("(?:" + "|".join(_NAME_NOISE) + ")*").encode())
"""What may follow a normalised name in an identifier ``_name_pattern`` matches (lower case, no underscores)."""


def _name_pattern(name: str) -> re.Pattern:
    """A definition's name as upstream may spell it: any case, underscores anywhere, a kind suffix."""
    letters = normalised_name(name)
    core = "_*".join(re.escape(char) for char in letters)
    suffix = "|".join(_NAME_NOISE)
    return re.compile((r"(?<![A-Za-z0-9_])_*" + core + r"(?:_*(?:" + suffix + r"))*(?![A-Za-z0-9_])").encode(), re.I)


def _definition_pattern(name: str) -> re.Pattern:
    """``_name_pattern`` where a line defines or declares it: after ``def``, or after a return
    type and qualifiers (``void``, ``__global__ void``, ``torch::Tensor&``), before its parameters."""
    letters = normalised_name(name)
    core = "_*".join(re.escape(char) for char in letters)
    suffix = "|".join(_NAME_NOISE)
    # the line's start before the name: ``def``, or words without an assignment, a call or a keyword
    # that starts a statement (no nested repetition: a long line must not backtrack exponentially)
    return re.compile((r"(?m)^[ \t]*+(?:(?:async[ \t]+)?def[ \t]+|(?!(?:return|if|elif|while|and|or|not|await|yield|"
                       r"else|case)\b)[^\n(=;{}\"'#/]*?[\w>*&][ \t*&]+)_*" + core +
                       r"(?:_*(?:" + suffix + r"))*[ \t]*(?:<[^>\n]*>)?[ \t]*\(").encode(), re.I)


# --- history and bases ----------------------------------------------------------------


@dataclass
class FileBase:
    """The upstream commit a port file resembles most, and how much."""

    port_file: str
    commit: str
    score: float
    run_start: str  # the oldest commit of the run with the same best score
    run_end: str  # the newest
    paths: dict[str, tuple[str, str]] = field(default_factory=dict)  # match_key -> (path, name) at the base
    scores: dict[str, float] = field(default_factory=dict, repr=False)  # commit -> score, every commit compared
    undetermined: bool = False  # no version stands out: the oldest near the best with today's files was taken (see ``_best``)


@dataclass
class _Lineage:
    """One upstream file followed back through its renames: (path, oldest commit it holds) newest first."""

    head_path: str
    names: list[str]


def _log_states(upstream: Upstream, revision: str, paths: list[str],
                names: dict[str, set[str]] | None = None) -> tuple[list[str], list[dict[str, str]], dict[str, str]]:
    """The first-parent commits touching ``paths`` (following renames back, and moves git
    does not see as renames: a file the commit that added a tracked path deleted, which
    defined one of the ``names`` that path defines), oldest first, and for each the blob of
    every tracked path after it, and path -> the path it was renamed to."""
    names = names or {}
    tracked = set(paths)
    renamed_to: dict[str, str] = {}
    for _ in range(4):  # rename chains longer than this are not followed
        commits, changes = _log(upstream, revision, sorted(tracked))
        added = [(sha, path) for sha, lines in zip(commits, changes) for status, old, path, _ in lines
                 if status == "A" and path in tracked and path not in renamed_to.values()]
        found = _rename_sources(upstream, added, names)
        new = {old: new for old, new in found.items() if old not in tracked}
        if not new:
            break
        renamed_to.update(new)
        for old, later in new.items():
            names.setdefault(old, set()).update(names.get(later, ()))
        tracked |= set(new)
    commits, changes = _log(upstream, revision, sorted(tracked))
    states: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for lines in reversed(list(zip(commits, changes))):
        for status, old, path, blob in lines[1]:
            if status in ("D",):
                current.pop(path, None)
            elif status == "R":
                current.pop(old, None)
                current[path] = blob
            else:
                current[path] = blob
        states.append(dict(current))
    return list(reversed(commits)), states, renamed_to


def _log(upstream: Upstream, revision: str, paths: list[str]) -> tuple[list[str], list[list[tuple[str, str, str, str]]]]:
    """One streaming ``git log --first-parent --raw`` over ``paths``: commits newest first and their raw changes."""
    command = ["git", "log", "--first-parent", "--diff-merges=first-parent", "-M", "--raw", "--no-abbrev",
               "--format=%x1e%H", revision, "--", *paths]
    process = subprocess.run(command, cwd=upstream.path, capture_output=True)
    if process.returncode != 0:
        last = (process.stderr.decode(errors="replace").strip().splitlines() or ["(no message)"])[-1]
        raise HistoryError(f"git log failed in {upstream.path}: {last}")
    commits: list[str] = []
    changes: list[list[tuple[str, str, str, str]]] = []
    for record in process.stdout.decode("utf-8", errors="replace").split("\x1e")[1:]:
        lines = record.strip("\n").split("\n")
        commits.append(lines[0].strip())
        found = []
        for line in lines[1:]:
            if not line.startswith(":"):
                continue
            meta, _, names = line.partition("\t")
            fields = meta.split()
            status = fields[4][0]
            parts = names.split("\t")
            old, new = (parts[0], parts[-1])
            found.append((status, old, new, fields[3]))
        changes.append(found)
    return commits, changes


def _rename_sources(upstream: Upstream, added: list[tuple[str, str]],
                    names: dict[str, set[str]]) -> dict[str, str]:
    """For files a commit added: the path each was renamed from, where it was a rename, or
    moved from (a source file the same commit deleted that defined one of its ``names``: a
    module split in two, or moved with too many edits for git to call it a rename)."""
    sources: dict[str, str] = {}
    for sha, path in added:
        result = subprocess.run(["git", "diff-tree", "-M", "-r", "--raw", "--no-abbrev", "--no-commit-id", f"{sha}^", sha],
                                cwd=upstream.path, capture_output=True, text=True)
        if result.returncode != 0:
            continue
        deleted: list[tuple[str, str]] = []
        for line in result.stdout.splitlines():
            meta, _, listed = line.partition("\t")
            parts = listed.split("\t")
            fields = meta.split()
            if fields[-1].startswith("R") and len(parts) == 2 and parts[1] == path:
                sources[parts[0]] = path
            elif fields[-1] == "D" and len(parts) == 1 and language_for_path(parts[0]) is not None:
                deleted.append((parts[0], fields[2]))
        if path in sources.values() or not deleted or not names.get(path):
            continue
        wanted = [re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"\s*[(<\[]") for name in names[path]]
        reader = BlobReader(upstream.path)
        try:
            contents = reader.read_many([blob for _, blob in deleted])
        finally:
            reader.close()
        for old, blob in deleted:
            if any(pattern.search(contents.get(blob, b"")) for pattern in wanted):
                sources[old] = path
    return sources


def match_key(match: Match) -> str:
    """A match as ``FindBases.paths`` keys it: the port definition and the upstream one it was matched to."""
    return f"{match.port.file}::{match.port.qualified_name}@{match.port.start_line}->{match.upstream.file}::{match.upstream.qualified_name}"


class BlobDefinitions:
    """Each upstream blob's bytes and definitions, read and parsed once (keyed by path and
    content hash) however many commits hold it, and each port definition's likeness to
    them, computed once for both passes of the base search."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.contents: dict[str, bytes] = {}
        self._identifiers: dict[str, frozenset[bytes]] = {}
        self._parsed: dict[tuple[str, str], list[Definition]] = {}
        self._texts: dict[tuple[str, str], dict[str, list[tuple[SymbolDefinition, str]]]] = {}
        self._similarity: dict[tuple[int, str], float] = {}
        self._by_tokens: dict[tuple[int, tuple[str, ...]], float] = {}
        self._best: dict[tuple, float | None] = {}
        self._names_like: dict[tuple, list[str]] = {}
        self._by_core: dict[tuple[str, str], dict[str, list[tuple[int, str]]]] = {}
        self._best_of_path: dict[tuple, tuple[float, str] | None] = {}
        self.compared: dict[tuple[int, int], tuple] = {}  # match_definitions' pairs, for the second pass
        self._ports: dict[int, Definition] = {}  # the port definitions the caches key by id, kept alive
        self.renamed_to: dict[str, str] = {}  # an older upstream path -> the path it was renamed or moved to
        self.before_splits: list[str] = []  # see ``find_bases``

    def path_at_revision(self, path: str) -> str:
        """``path`` as the searched revision names it: a file matched at an older commit (the
        second pass) is followed through the renames and moves the base search saw, so its whole
        history is searched, not only the commits before it was renamed."""
        seen = {path}
        while path in self.renamed_to and self.renamed_to[path] not in seen:
            path = self.renamed_to[path]
            seen.add(path)
        return path

    def read(self, blobs: Iterable[str]) -> None:
        missing = sorted(set(blobs) - self.contents.keys())
        if not missing:
            return
        reader = BlobReader(self.upstream.path)
        try:
            self.contents.update(reader.read_many(missing))
        finally:
            reader.close()

    def identifiers(self, blob: str) -> frozenset[bytes]:
        """The identifiers of three characters or more that ``blob`` holds."""
        if blob not in self._identifiers:
            self._identifiers[blob] = frozenset(_IDENTIFIER.findall(self.contents.get(blob, b"")))
        return self._identifiers[blob]

    def definitions(self, path: str, blob: str, data: bytes | None = None) -> list[Definition]:
        """The definitions of ``path`` as ``blob`` holds it (``data``: its bytes, if not read here)."""
        key = (path, blob)
        if key not in self._parsed:
            self._parsed[key] = definitions_of(self.contents.get(blob, b"") if data is None else data, path)
        return self._parsed[key]

    def _texts_by_name(self, path: str, blob: str) -> dict[str, list[tuple[SymbolDefinition, str]]]:
        """``path``'s definitions as ``blob`` holds them, by name, as symbols and source lines
        (parsed once; nothing is computed from a text until it is compared)."""
        key = (path, blob)
        if key not in self._texts:
            table: dict[str, list[tuple[SymbolDefinition, str]]] = {}
            for symbol, text in definition_texts(self.contents.get(blob, b""), path):
                table.setdefault(symbol.name, []).append((replace(symbol, node=None), text))
            self._texts[key] = table
        return self._texts[key]

    def _names_by_core(self, path: str, blob: str) -> dict[str, list[tuple[int, str]]]:
        """The names ``path`` defines as ``blob`` holds it, by normalised name, with their order
        in the file (computed once per blob; ``names_like`` reads it for every match)."""
        key = (path, blob)
        if key not in self._by_core:
            table: dict[str, list[tuple[int, str]]] = {}
            for position, name in enumerate(self._texts_by_name(path, blob)):
                table.setdefault(normalised_name(name), []).append((position, name))
            self._by_core[key] = table
        return self._by_core[key]

    def cores_defined(self, path: str, blob: str) -> Iterable[str]:
        """The normalised names of the definitions of ``path`` as ``blob`` holds it."""
        return self._names_by_core(path, blob).keys()

    def names_like(self, path: str, blob: str, *names: str) -> list[str]:
        """``names`` and the names ``path`` defines, as ``blob`` holds it, that are the same once
        normalised (``rms_norm`` for ``rmsnorm``): a definition may have had another spelling of
        its name when the port was taken."""
        key = (path, blob, names)
        if key not in self._names_like:
            wanted = {normalised_name(name) for name in names}
            wanted = {core for core in wanted if len(core) >= 4}
            if not wanted:
                like = [n for n in names if n.encode() in self.contents.get(blob, b"")]
            else:
                by_core = self._names_by_core(path, blob)
                like = [n for _, n in sorted(found for core in wanted for found in by_core.get(core, ()))]
            self._names_like[key] = list(dict.fromkeys([*(n for n in names if n in like or not wanted), *like]))
        return self._names_like[key]

    def best_of_path(self, match: Match, path: str, blob: str) -> tuple[float, str] | None:
        """The best ``best_in`` of ``match``'s port definition over the definitions of ``path``
        as ``blob`` holds it whose names are like the matched ones (``names_like``), with the
        name; None where none is above 0."""
        key = (id(match.port), match.upstream.name, match.upstream.owner, path, blob)
        if key not in self._best_of_path:
            self._ports[id(match.port)] = match.port  # the key holds its id
            best: tuple[float, str] | None = None
            for name in self.names_like(path, blob, match.upstream.name, match.port.name):
                value = self.best_in(match.port, path, blob, name, match.upstream.owner)
                if value is not None and value > (best[0] if best else 0.0):
                    best = (value, name)
            self._best_of_path[key] = best
        return self._best_of_path[key]

    def best_in(self, port: Definition, path: str, blob: str, name: str, owner: str = "") -> float | None:
        """The highest likeness of ``port`` to a definition called ``name`` in ``path`` as
        ``blob`` holds it (``version_similarity`` times ``interface_agreement``; None where it
        defines none); ``owner``: only a method of that class
        (``forward`` of one class is no version of ``forward`` of another). A definition whose
        text was compared at another commit is not compared again."""
        key = (id(port), path, blob, name, owner)
        if key in self._best:
            return self._best[key]
        self._ports[id(port)] = port
        best = None
        if name.encode() in self.contents.get(blob, b""):
            for symbol, text in self._texts_by_name(path, blob).get(name, []):
                if owner and _owner_of(symbol.qualified_name) != owner:
                    continue
                pair = (id(port), text)
                if pair not in self._similarity:
                    candidate = definition_from(path, symbol, text)
                    same_tokens = (id(port), candidate.tokens)  # a text changed in comments or layout only
                    if same_tokens not in self._by_tokens:
                        self._by_tokens[same_tokens] = version_similarity(port, candidate) * interface_agreement(
                            port, candidate)
                    self._similarity[pair] = self._by_tokens[same_tokens]
                if best is None or self._similarity[pair] > best:
                    best = self._similarity[pair]
        self._best[key] = best
        return best


def interface_agreement(port: Definition, version: Definition) -> float:
    """How much a version's interface is the port's: 1 less the difference of their parameter
    counts relative to the larger. A re-implementation renames upstream's parameters and rewrites
    its body, but it takes what the version it was taken from takes; a version that added a
    parameter the port does not take (or dropped one it does) is further from it however many of
    the port's tokens it holds (a rename to the port's own word adds many). Host code takes the
    same arguments in either language (a Python op and the C++ function binding it); device code
    in another language does not (a Triton kernel takes the strides a CUDA kernel computes), and
    is not compared (1)."""
    if language_for_path(port.file) != language_for_path(version.file) and (port.device or version.device):
        return 1.0
    mine, theirs = parameter_count(port), parameter_count(version)
    larger = max(mine, theirs)
    return 1.0 - abs(mine - theirs) / larger if larger else 1.0


_OPENING = frozenset("([{<")
_CLOSING = frozenset(")]}>")


def parameter_count(definition: Definition) -> int:
    """How many parameters ``definition`` takes, read from its tokens after its own name: a
    decorator's arguments (``@compile_ops("module", develop=True)`` above a declaration) are not
    its parameters. Commas inside brackets (``std::map<int, int>``, a default tuple) separate none."""
    tokens = definition.tokens
    for position, token in enumerate(tokens[:-1]):
        if token != definition.name or (position and tokens[position - 1] == "."):
            continue
        start = position + 1
        if tokens[start] == "<":  # a template's arguments before the parameters
            depth = 0
            while start < len(tokens):
                depth += tokens[start] == "<"
                depth -= tokens[start] == ">"
                start += 1
                if depth == 0:
                    break
        if start >= len(tokens) or tokens[start] != "(":
            continue
        depth, count, pending = 0, 0, False
        for token in tokens[start:]:
            if token in _OPENING:
                depth += 1
                if depth == 1:
                    continue
            elif token in _CLOSING:
                depth -= 1
                if depth == 0:
                    break
            if depth == 1 and token == ",":
                count, pending = count + pending, False
            else:
                pending = True
        return count + pending
    return definition.parameter_count


def _owner_of(qualified_name: str) -> str:
    """The class part of a method's qualified name ('' for a function), as ``Definition.owner`` reads it."""
    parts = re.split(r"::|\.", qualified_name)
    return parts[-2] if len(parts) > 1 else ""


def find_bases(upstream: Upstream, revision: str, proposals: list[Match],
               cache: BlobDefinitions | None = None) -> tuple[dict[str, FileBase], FileBase | None, int]:
    """Each port file's base (see the module docstring), the whole port's (the commit its
    matched definitions resemble most together: ``port_file`` is ``*``), and how many
    commits were compared. ``cache`` keeps the blobs read and parsed for a later call."""
    by_file: dict[str, list[Match]] = {}
    for match in proposals:
        by_file.setdefault(match.port.file, []).append(match)
    cache = cache if cache is not None else BlobDefinitions(upstream)
    paths = sorted({cache.path_at_revision(m.upstream.file) for m in proposals})
    if not paths:
        return {}, None, 0
    defined: dict[str, set[str]] = {}
    for match in proposals:
        defined.setdefault(cache.path_at_revision(match.upstream.file), set()).add(match.upstream.name)
    commits, states, renamed_to = _log_states(upstream, revision, paths, defined)
    cache.renamed_to.update(renamed_to)
    # the commits (newest first) just before one that added a tracked file while the files it
    # came from stayed (code split out of a module): where the port's whole may still be one file
    cache.before_splits = [upstream.resolve(f"{commits[i]}^") or "" for i in range(len(states) - 1, 0, -1)
                           if states[i].keys() - states[i - 1].keys() and states[i - 1]
                           and states[i].keys() >= states[i - 1].keys()]
    cache.before_splits = [sha for sha in cache.before_splits if sha]
    cache.read(blob for state in states for blob in state.values())
    bases: dict[str, FileBase] = {}
    overall = [0.0] * len(states)
    overall_where: list[dict[str, tuple[str, str]]] = [{} for _ in states]
    for port_file, matches in by_file.items():
        # consecutive commits mostly change one tracked file: each match keeps its best per path and
        # only the paths a commit changed are compared again (a blob once per match, however many
        # commits hold it), so the work grows with the changes, not with commits times files
        per_path: list[dict[str, tuple[float, str]]] = [{} for _ in matches]
        found_in: dict[str, set[int]] = {}  # path -> the matches ``per_path`` holds it for
        # which matches a changed file may concern: those of a name it defines (normalised), those
        # found in it before, those whose own file it is, and those whose names are too short to
        # normalise (looked up as text); the others keep their best
        by_core: dict[str, list[int]] = {}
        by_own: dict[str, list[int]] = {}
        always: list[int] = []
        for position, match in enumerate(matches):
            cores = {normalised_name(match.upstream.name), normalised_name(match.port.name)}
            if any(len(core) < 4 for core in cores):
                always.append(position)
            for core in cores:
                by_core.setdefault(core, []).append(position)
            by_own.setdefault(match.upstream.file, []).append(position)
        languages = {path: language_for_path(path) for state in states for path in state}
        best_values = [0.0] * len(matches)
        found_at: dict[str, tuple[str, str]] = {}
        scores: list[float] = []
        where: list[dict[str, tuple[str, str]]] = []
        previous: dict[str, str] = {}
        for state in states:
            changed = [path for path, blob in state.items() if previous.get(path) != blob]
            changed += [path for path in previous if path not in state]
            previous = state
            if scores and not changed:
                scores.append(scores[-1])
                where.append(where[-1])
                continue
            recompute: set[int] = set()
            for path in changed:
                concerned = set(always) | found_in.get(path, set())
                concerned.update(by_own.get(path, ()))
                if path in state:
                    for core in cache.cores_defined(path, state[path]):
                        concerned.update(by_core.get(core, ()))
                for position in concerned:
                    found = cache.best_of_path(matches[position], path, state[path]) if path in state else None
                    if found is None:
                        per_path[position].pop(path, None)
                        found_in.get(path, set()).discard(position)
                    else:
                        per_path[position][path] = found
                        found_in.setdefault(path, set()).add(position)
                recompute |= concerned
            order = {path: position for position, path in enumerate(state)}
            for position in recompute:
                match = matches[position]
                best, best_at = 0.0, None
                # the highest, and of equal ones the first path in the state's order
                for path, (value, name) in sorted(per_path[position].items(), key=lambda item: order[item[0]]):
                    if value > best:
                        best, best_at = value, (path, name)
                best_values[position] = best
                own = match.upstream.file
                if best_at is not None and own in state and languages[best_at[0]] != languages[own] \
                        and cache.best_in(match.port, own, state[own], match.upstream.name, match.upstream.owner) is not None:
                    # the matched definition is still there and what resembles the port more is in another
                    # language: a binding is no version of its Python declaration, so the anchor names the latter
                    best_at = (own, match.upstream.name)
                if best_at is not None:
                    found_at[match_key(match)] = best_at
                else:
                    found_at.pop(match_key(match), None)
            scores.append(sum(best_values) / len(matches))
            where.append(dict(found_at))
        bases[port_file] = _best(port_file, scores, commits, where)
        for position, score in enumerate(scores):
            overall[position] += score * len(matches) / len(proposals)
            overall_where[position].update(where[position])
    return bases, _best("*", overall, commits, overall_where), len(commits)


def _best(port_file: str, scores: list[float], commits: list[str], where: list[dict]) -> FileBase:
    """The oldest commit of the best score (states are oldest first), and its run of equal scores.

    Where no version stands out (the best score is low and within ``FLAT_SCORES`` of the median:
    a port in another language, or a rewrite, resembles every version about as little), the
    history says nothing about the base: the oldest commit of the run scoring near the best
    whose matched files are where upstream has them at its newest is taken (a scan from there
    misses no upstream change, and the anchors name the upstream files as they are now rather
    than as an arbitrary old version had them), and the base is marked ``undetermined``."""
    top = max(scores)
    present = sorted(s for s in scores if s > 0)
    median = present[len(present) // 2] if present else 0.0
    if top < WEAK_BASE_SCORE and top - median < FLAT_SCORES:
        newest = max(i for i, s in enumerate(scores) if s >= top - FLAT_SCORES)
        start = newest
        while start > 0 and scores[start - 1] >= top - FLAT_SCORES:
            start -= 1
        # the oldest commit near the best whose files are where upstream has them at the newest:
        # a scan from there misses no change, and the anchors name the files as they are now
        taken = min(i for i in range(start, newest + 1) if scores[i] >= top - FLAT_SCORES
                    and {path for path, _ in where[i].values()} == {path for path, _ in where[newest].values()})
        return FileBase(port_file, commits[taken], scores[taken], commits[start], commits[newest], where[taken],
                        dict(zip(commits, scores)), undetermined=True)
    oldest = min(i for i, s in enumerate(scores) if abs(s - top) < 1e-9)
    run_end = oldest
    while run_end + 1 < len(scores) and abs(scores[run_end + 1] - top) < 1e-9:
        run_end += 1
    return FileBase(port_file, commits[oldest], top, commits[oldest], commits[run_end], where[oldest],
                    dict(zip(commits, scores)))


WEAK_BASE_SCORE = 0.5
"""A best base score below it is weak evidence: see ``_best``."""

FLAT_SCORES = 0.05
"""Scores this close to the best are as good as it where the evidence is weak."""


# --- the whole survey -------------------------------------------------------------------

EARLIER_SNAPSHOTS = 3
"""Commits before a split of a matched file that the port is matched against again (the newest ones)."""

COPY_SCORE = 0.9
"""A port file whose versions at its base score this or more is a copy (edits aside): its anchors pin the base."""

BASE_TOLERANCE = 0.02
"""A port file whose score at the port's base is within this of its own best takes the port's base."""


@dataclass
class Proposal:
    """One anchor to write: ``port`` ports ``symbol`` of ``path`` (as at ``pin``)."""

    port: Definition
    path: str
    symbol: str
    pin: str
    confidence: float
    how: str
    path_now: str = ""  # where the surveyed revision keeps the same definition, when another file ("" otherwise)


@dataclass
class LeftOut:
    """An upstream method that the port's class, which ports a method of the same class, does not
    define and that nothing ported calls: proposed as declared not carried, ``why`` says so."""

    port: Definition  # the port's method whose class ports the upstream class (the entry's ``tree``)
    path: str
    symbol: str  # the method's qualified name
    why: str


def left_out_methods(matches: list[Match], proposals: list[Proposal], definitions: list[Definition],
                     upstream_definitions: Callable[[str], list[Definition]]) -> list[LeftOut]:
    """The methods of each upstream class a port class ports (one of its methods matched to one of
    the upstream class's) that the port class does not define, that no port definition is matched
    to and that no matched upstream definition calls: a port's autograd function with a forward and
    no backward leaves the backward out, and says so in its own text. A method a ported one calls
    is never proposed (the port may have folded it in); nor is anything where the anchor names a
    file other than the one matched (the class there was not read). ``upstream_definitions``: an
    upstream file's definitions as matched."""
    matched = {(m.upstream.file, m.upstream.qualified_name) for m in matches}
    called = frozenset().union(*(m.upstream.called for m in matches))
    anchored = {(p.port.file, p.port.qualified_name): p.path for p in proposals}
    found: dict[tuple[str, str, str], LeftOut] = {}
    for match in sorted(matches, key=lambda m: (m.port.file, m.port.start_line)):
        port, counterpart = match.port, match.upstream
        if not port.owner or not counterpart.owner or anchored.get((port.file, port.qualified_name)) != counterpart.file:
            continue
        own = {d.name for d in definitions if d.file == port.file and d.owner == port.owner}
        prefix = counterpart.qualified_name[:len(counterpart.qualified_name) - len(counterpart.name)]
        for method in upstream_definitions(counterpart.file):
            if method.owner != counterpart.owner or method.qualified_name != prefix + method.name \
                    or method.name in own or method.name in called \
                    or (counterpart.file, method.qualified_name) in matched:
                continue
            key = (port.file, port.owner, method.qualified_name)
            found.setdefault(key, LeftOut(port, counterpart.file, method.qualified_name,
                                          f"{port.owner}, which ports {counterpart.owner}, defines no {method.name}"))
    return list(found.values())


@dataclass
class Survey:
    """What ``survey`` found: the anchors to propose, the definitions left unmatched, the bases."""

    revision: str
    port_definitions: list[Definition]
    proposals: list[Proposal]
    unmatched: list[Definition]
    file_bases: dict[str, FileBase]
    base: FileBase | None
    notes: list[str]
    commits_compared: int
    seconds: dict[str, float]
    guesses: list[Match] = field(default_factory=list)  # each unmatched definition's best candidate below the threshold
    left_out: list[LeftOut] = field(default_factory=list)  # upstream methods the port's classes leave out


class NothingToMatch(ValueError):
    """The tree or the upstream gives nothing to compare (the message says which)."""


def _match_with(snapshot: UpstreamSnapshot, definitions: list[Definition], sources: dict[str, bytes],
                files: list[str], cache: BlobDefinitions) -> tuple[list[Match], list[Definition], list[Match]]:
    """``match_definitions`` of the port against the candidate files of one upstream snapshot."""
    files_of_port: dict[str, list[str]] = {}
    candidates: dict[str, list[Definition]] = {}
    for file in files:
        names = [d.name for d in definitions if d.file == file]
        if not names:
            continue
        chosen = snapshot.candidate_files(sources[file], names, port_path=file)
        quoted = sources[file].decode(errors="replace")
        files_of_port[file] = [path for path, score in chosen if score > 0.05 or path in quoted]
        for path in files_of_port[file]:
            if path not in candidates:
                candidates[path] = cache.definitions(path, snapshot.blobs[path], snapshot.sources[path])
    if not any(candidates.values()):
        raise NothingToMatch(f"no upstream file at {snapshot.revision} resembles the port files")
    return match_definitions(definitions, candidates, files_of_port, cache.compared)


def _moved_to(snapshot: UpstreamSnapshot, cache: BlobDefinitions, path: str, symbol: str) -> list[str]:
    """The one file of ``snapshot`` that defines ``symbol`` where ``path`` (which the snapshot still
    has) no longer does: where the definition was moved to. Empty where ``path`` still defines it,
    where no file or several do, or where the name is too short to look up."""
    def defines(file: str) -> bool:
        return file in snapshot.sources and any(
            d.name == symbol for d in cache.definitions(file, snapshot.blobs[file], snapshot.sources[file]))

    core = normalised_name(symbol)
    if len(core) < 4 or defines(path):
        return []
    found = sorted(file for file in snapshot._files_maybe_naming(core) if file != path and defines(file))
    return found if len(found) == 1 else []


def matched_weight(matches: list[Match]) -> float:
    """How much of the port a pass matched: each port definition's best confidence, counted
    once (a definition matched in two upstream files, a copy upstream keeps elsewhere, is
    still one definition matched)."""
    best: dict[int, float] = {}
    for match in matches:
        best[id(match.port)] = max(best.get(id(match.port), 0.0), match.confidence)
    return sum(best.values())


def survey(upstream: Upstream, revision: str, tree_root: Path, files: list[str]) -> Survey:
    """Match the port ``files`` (relative to ``tree_root``) with the upstream at ``revision``
    and find each file's base."""
    import time

    clock = {"start": time.perf_counter()}
    definitions: list[Definition] = []
    sources: dict[str, bytes] = {}
    for file in files:
        sources[file] = (tree_root / file).read_bytes()
        definitions.extend(definitions_of(sources[file], file))
    if not definitions:
        raise NothingToMatch("no function, method or kernel definitions in the port files")
    cache = BlobDefinitions(upstream)
    snapshot = UpstreamSnapshot.read(upstream, revision, cache)
    clock["read"] = time.perf_counter()
    matches, unmatched, guesses = _match_with(snapshot, definitions, sources, files, cache)
    at_revision = matches  # where the surveyed revision keeps what the port was matched to
    matched_in = snapshot  # the snapshot the matches kept were made against
    clock["match"] = time.perf_counter()
    file_bases, base, compared = find_bases(upstream, revision, matches, cache)
    if base is not None:
        # the port was taken from the base: what upstream held then may have been renamed,
        # split or rewritten since, so match again against the files as they were there; and
        # just before each commit that split a matched file's code out into a new file (the
        # first pass may have matched the pieces, the port the whole)
        tried = {snapshot.revision}
        best_weight = matched_weight(matches)
        chosen: tuple | None = None
        chosen_snapshot = snapshot
        best_count = len({id(m.port) for m in matches})
        for earlier_revision in [base.commit, *cache.before_splits[:EARLIER_SNAPSHOTS]]:
            if earlier_revision in tried or (earlier_revision != base.commit and best_count == len(definitions)):
                continue  # a snapshot before a split wins only by matching more, and nothing is left
            tried.add(earlier_revision)
            earlier = UpstreamSnapshot.read(upstream, earlier_revision, cache)
            if earlier.blobs == snapshot.blobs:  # the same files match the same way
                continue
            again, left, near = _match_with(earlier, definitions, sources, files, cache)
            count = len({id(m.port) for m in again})
            # the base's snapshot wins on weight; one before a split only by matching more definitions
            if again and matched_weight(again) > best_weight and (earlier_revision == base.commit or count > best_count):
                best_weight, best_count, chosen = matched_weight(again), count, (again, left, near)
                chosen_snapshot = earlier
        if chosen is not None:
            matches, unmatched, guesses = chosen
            matched_in = chosen_snapshot
            file_bases, base, compared = find_bases(upstream, revision, matches, cache)
    clock["bases"] = time.perf_counter()
    notes: list[str] = []
    if base is not None and base.undetermined:
        notes.append(f"no version of the matched upstream definitions resembles the port more than the others "
                     f"(best {base.score:.2f}): the base {base.commit[:10]} is the oldest commit near the best "
                     "with the files where they are now; check it by hand")
    chosen_bases: dict[str, FileBase] = {}
    for file, own in sorted(file_bases.items()):
        at_port_base = own.scores.get(base.commit, 0.0) if base else 0.0
        if base is not None and at_port_base >= own.score - BASE_TOLERANCE:
            chosen_bases[file] = FileBase(file, base.commit, at_port_base, base.run_start, base.run_end,
                                          base.paths, own.scores)
        else:
            chosen_bases[file] = own
            if base is not None:
                notes.append(f"{file} resembles {own.commit[:10]} ({own.score:.2f}) more than the port's base "
                             f"{base.commit[:10]} ({at_port_base:.2f}): taken from a different snapshot?")
    proposals: list[Proposal] = []
    for match in matches:
        file_base = chosen_bases.get(match.port.file)
        path, symbol = match.upstream.file, match.upstream.name
        if file_base is not None and match_key(match) in file_base.paths:
            path, symbol = file_base.paths[match_key(match)]
        if match.upstream.owner and match.upstream.language == "python" and "." not in symbol:
            # a method is named with its class, as a hand-written anchor names it: two classes of one
            # file (autograd functions) each define ``forward``, and a bare name would be either
            symbol = f"{match.upstream.owner}.{symbol}"
        # a pin says the port is upstream's code at that commit (the classifier reads a pinned port as a
        # copy, which runs where upstream runs): a re-implementation keeps its base in the survey, unpinned
        pin = file_base.commit if file_base is not None and file_base.score >= COPY_SCORE else ""
        if any(p.port is match.port and p.path == path and p.symbol == symbol for p in proposals):
            continue
        # a definition moved since the base into another file while its file stayed (code split out
        # of a module): the range scanned from the base runs through the move, so its new file is the
        # port's too (a file renamed as a whole is followed by the scan on its own)
        moved = sorted({m.upstream.file for m in at_revision if m.port is match.port and m.upstream.name == symbol
                        and m.upstream.file != path and path in snapshot.blobs})
        if not moved and path in snapshot.blobs:
            moved = _moved_to(snapshot, cache, path, symbol)
        proposals.append(Proposal(match.port, path, symbol, pin, match.confidence, match.how,
                                  moved[0] if len(moved) == 1 else ""))
    left_out = left_out_methods(matches, proposals, definitions,
                                lambda path: cache.definitions(path, matched_in.blobs[path], matched_in.sources.get(path)))
    clock["end"] = time.perf_counter()
    seconds = {"read upstream": clock["read"] - clock["start"], "match": clock["match"] - clock["read"],
               "bases": clock["bases"] - clock["match"], "total": clock["end"] - clock["start"]}
    return Survey(revision, definitions, proposals, unmatched, chosen_bases, base, notes, compared, seconds, guesses,
                  left_out)
