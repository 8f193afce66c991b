"""Provenance of a port that records none: which upstream definition each in-tree
definition ports, and which upstream commit each port file was taken from.

``portq init`` asks this module three questions about a tree with no anchors:

1. **Where to look.** Every C/C++/CUDA and Python file of the upstream at one
   revision is read through one ``git cat-file --batch``; the files whose
   identifiers (weighted by how rare they are upstream) cover a port file's best,
   plus any upstream path the port file quotes ("Adapted from ...PATH"), are its
   candidate files.
2. **Which definition ports which** (``match_definitions``). Each port definition
   is compared with every definition of its candidate files: its name (equal,
   equal once normalised: case, underscores, ``_kernel``/``_fwd``/``_p`` suffixes,
   so ``token_to_seq_p`` matches ``token_to_seq`` across languages), the token
   similarity of the bodies, the parameter names, whether both are kernels or both
   host code, and the launches (a definition the matched wrapper launches, on both
   sides). A match below ``CONFIDENCE_THRESHOLD`` is reported as unmatched, never
   proposed.
3. **The base** (``find_bases``). The first-parent commits that touch the matched
   upstream files (following their renames back) come from one streaming ``git log``;
   their blobs from one ``git cat-file --batch``. Each port file's base is the
   commit whose versions of its matched upstream definitions resemble the port
   most (the oldest of equal ones: the start of the run where that code is
   unchanged), with the score; the path an anchor names is the one the upstream
   definition had at that commit.

It reads the tree's files and the upstream clone; it writes nothing and decides no
verdict (the command ``portq.commands.init`` writes what it proposes).
"""

from __future__ import annotations

import difflib
import math
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable

from portq.core.errors import HistoryError
from portq.core.paths import is_test_file
from portq.language.symbols import (KIND_CLASS, KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION, KIND_OP_SCHEMA,
                                    KIND_TRITON_KERNEL, MAX_PARSE_BYTES, language_for_path, symbol_table)
from portq.upstream.history import BlobReader, Upstream

CONFIDENCE_THRESHOLD = 0.6
"""A proposal at or above it is written; below it the definition is reported unmatched."""

NAMED_FILE_SCORE = 0.5
"""The candidate score of an upstream file found because it names the port's definitions."""

CANDIDATE_FILES_PER_PORT_FILE = 8
"""Upstream files compared definition by definition with each port file."""

_DEVICE_KINDS = frozenset({KIND_TRITON_KERNEL, KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION})
_SKIPPED_KINDS = frozenset({KIND_CLASS, KIND_OP_SCHEMA})
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|==|!=|<=|>=|\*\*|//|<<|>>|&&|\|\||[^\s\w]")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")
_COMMENT = re.compile(r"#[^\n]*|//[^\n]*|/\*.*?\*/", re.S)
_NAME_NOISE = ("kernel", "kernels", "fwd", "forward", "impl", "p", "triton", "launch", "cuda", "hip", "op", "func")
_COMMON_WORDS = frozenset(
    "def return import from self None True False and not for range with else elif while pass int float "
    "const void auto static inline template typename struct class namespace include define if endif "
    "torch triton tl constexpr tensor Tensor dtype device shape stride size program_id arange load store "
    "mask other where zeros empty cdiv jit assert raise ValueError print float32 bfloat16 float16 int32 int64 "
    "__global__ __device__ __forceinline__ threadIdx blockIdx blockDim".split())


# --- the port's side ------------------------------------------------------------------


@dataclass
class Definition:
    """One definition of either side, with what the comparison reads of it."""

    file: str
    name: str
    qualified_name: str
    kind: str
    language: str
    start_line: int
    end_line: int
    text: str
    tokens: tuple[str, ...] = ()
    params: frozenset[str] = frozenset()
    called: frozenset[str] = frozenset()  # identifiers its body uses (callees, launched kernels)

    @property
    def device(self) -> bool:
        return self.kind in _DEVICE_KINDS


def definitions_of(source: bytes, path: str) -> list[Definition]:
    """The functions, methods and kernels of one file (not classes or op schemas)."""
    table = symbol_table(source, path)
    if table.tree is None:
        return []
    lines = source.decode("utf-8", errors="replace").splitlines()
    found: list[Definition] = []
    for definition in table.definitions:
        if definition.kind in _SKIPPED_KINDS:
            continue
        text = "\n".join(lines[definition.start_line - 1:definition.end_line])
        code = _COMMENT.sub(" ", _strip_docstrings(text))
        tokens = tuple(_TOKEN.findall(code))
        header, _, body = code.partition("(")
        params = frozenset(_parameter_names(body))
        called = frozenset(t for t in tokens if t[0].isalpha() or t[0] == "_") - {definition.name}
        found.append(Definition(path, definition.name, definition.qualified_name, definition.kind,
                                definition.language or "", definition.start_line, definition.end_line, text,
                                tokens, params, called))
    return found


def _strip_docstrings(text: str) -> str:
    return re.sub(r'"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'', " ", text)


def _parameter_names(after_paren: str) -> list[str]:
    """Parameter names from the text after a definition's opening parenthesis."""
    depth, end = 1, 0
    for end, char in enumerate(after_paren):
        depth += char in "([{<"
        depth -= char in ")]}>"
        if depth == 0:
            break
    names = []
    for part in after_paren[:end].split(","):
        part = part.split("=")[0].split(":")[0].strip()
        words = re.findall(r"[A-Za-z_]\w*", part)
        if words:
            names.append(_normalised_parameter(words[-1]))
    return names


def _normalised_parameter(name: str) -> str:
    name = name.lower().strip("_")
    for suffix in ("_ptr", "_ptrs", "_tensor"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


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


# --- names ----------------------------------------------------------------------------


def name_words(name: str) -> tuple[str, ...]:
    """A name's words, lower case, without the words that say only what kind of thing it is."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.split("::")[-1].split(".")[-1])
    words = [w for w in spaced.lower().split("_") if w]
    while len(words) > 1 and words[-1] in _NAME_NOISE:
        words.pop()
    return tuple(words)


def normalised_name(name: str) -> str:
    """``_rms_norm_kernel``, ``rms_norm``, ``RmsNorm`` and ``rmsnorm`` all give ``rmsnorm``."""
    return "".join(name_words(name))


def name_similarity(port: str, upstream: str) -> float:
    """1 for the same name, 0.95 the same but for case and underscores, 0.9 the same once
    normalised, less for shared words; 0 for special methods (``__init__`` says nothing)."""
    if _is_dunder(port) or _is_dunder(upstream):
        return 0.0
    if port == upstream:
        return 1.0
    if port.replace("_", "").lower() == upstream.replace("_", "").lower():
        return 0.95
    if normalised_name(port) == normalised_name(upstream):
        return 0.9
    a, b = set(name_words(port)), set(name_words(upstream))
    if not a or not b:
        return 0.0
    joined_a, joined_b = normalised_name(port), normalised_name(upstream)
    if len(joined_a) >= 4 and len(joined_b) >= 4 and (joined_a in joined_b or joined_b in joined_a):
        return 0.6
    return 0.6 * len(a & b) / len(a | b)


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# --- upstream files -------------------------------------------------------------------


@dataclass
class UpstreamSnapshot:
    """The upstream's source files at one revision: path -> blob, bytes and identifiers."""

    revision: str
    blobs: dict[str, str]
    sources: dict[str, bytes]
    identifiers: dict[str, frozenset[bytes]]
    document_frequency: Counter

    @classmethod
    def read(cls, upstream: Upstream, revision: str) -> "UpstreamSnapshot":
        listing = upstream.git("ls-tree", "-r", "-z", "--full-tree", revision).stdout
        blobs: dict[str, str] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            mode, kind, sha = meta.split()
            if kind == "blob" and language_for_path(path) is not None and not is_test_file(path):
                blobs[path] = sha
        reader = BlobReader(upstream.path)
        try:
            contents = reader.read_many(list(blobs.values()))
        finally:
            reader.close()
        sources = {path: contents[sha] for path, sha in blobs.items() if len(contents[sha]) <= MAX_PARSE_BYTES}
        identifiers = {path: frozenset(_IDENTIFIER.findall(data)) for path, data in sources.items()}
        frequency: Counter = Counter()
        for found in identifiers.values():
            frequency.update(found)
        return cls(revision, blobs, sources, identifiers, frequency)

    def idf(self, identifier: bytes) -> float:
        return math.log((1 + len(self.identifiers)) / (1 + self.document_frequency.get(identifier, 0)))

    def candidate_files(self, port_source: bytes, names: Iterable[str] = (),
                        limit: int = CANDIDATE_FILES_PER_PORT_FILE) -> list[tuple[str, float]]:
        """The upstream files that hold most of the port file's rarer identifiers, best first,
        then the files that name the most of ``names`` (the port file's definitions) once
        normalised, and any upstream path the port file quotes."""
        mine = {i for i in _IDENTIFIER.findall(port_source) if i.decode() not in _COMMON_WORDS}
        weights = {i: self.idf(i) for i in mine if i in self.document_frequency}
        total = sum(weights.values()) or 1.0
        scores: list[tuple[float, str]] = []
        for path, theirs in self.identifiers.items():
            shared = weights.keys() & theirs
            if shared:
                covered = sum(weights[i] for i in shared) / total
                # a file that holds everything (a huge one) must also be mostly about these identifiers
                focus = len(shared) / max(len(theirs), 1) ** 0.5
                scores.append((covered * (0.5 + 0.5 * min(1.0, focus)), path))
        scores.sort(reverse=True)
        chosen = [(path, score) for score, path in scores[:limit]]
        by_score = {path: score for score, path in scores}
        patterns = [_name_pattern(name) for name in names if len(normalised_name(name)) >= 4]
        if patterns:
            naming = Counter()
            for path, data in self.sources.items():
                hits = sum(1 for pattern in patterns if pattern.search(data))
                if hits:
                    naming[path] = hits
            ranked = sorted(naming, key=lambda path: (-naming[path], -by_score.get(path, 0.0), path))
            for path in ranked[:limit]:
                if path not in dict(chosen):
                    chosen.append((path, max(by_score.get(path, 0.0), NAMED_FILE_SCORE)))
        text = port_source.decode("utf-8", errors="replace")
        for path in self.sources:
            if path not in dict(chosen) and len(path) > 8 and path in text:
                chosen.append((path, 1.0))
        return chosen


def _name_pattern(name: str) -> re.Pattern:
    """A definition's name as upstream may spell it: any case, underscores anywhere, a kind suffix."""
    letters = normalised_name(name)
    core = "_*".join(re.escape(char) for char in letters)
    suffix = "|".join(_NAME_NOISE)
    return re.compile((r"(?<![A-Za-z0-9_])_*" + core + r"(?:_*(?:" + suffix + r"))*(?![A-Za-z0-9_])").encode(), re.I)


# --- matching -------------------------------------------------------------------------


@dataclass
class Match:
    """A proposed anchor: ``port`` ports ``upstream`` with ``confidence`` (0..1)."""

    port: Definition
    upstream: Definition
    confidence: float
    how: str  # name | normalised name | structure | launch
    body: float = 0.0

    @property
    def upstream_path(self) -> str:
        return self.upstream.file


def body_similarity(a: Definition, b: Definition) -> float:
    """Token similarity of two definitions (difflib's ratio over their token sequences)."""
    if not a.tokens or not b.tokens:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a.tokens[:3000], b.tokens[:3000], autojunk=False)
    if matcher.real_quick_ratio() < 0.05:
        return 0.0
    return matcher.ratio()


def _quick_similarity(a: Definition, b: Definition) -> float:
    """Multiset overlap of the tokens: an upper bound of ``body_similarity``, cheap to compute."""
    if not a.tokens or not b.tokens:
        return 0.0
    common = sum((Counter(a.tokens) & Counter(b.tokens)).values())
    return 2.0 * common / (len(a.tokens) + len(b.tokens))


def _parameter_similarity(a: Definition, b: Definition) -> float:
    if not a.params or not b.params:
        return 0.0
    return len(a.params & b.params) / len(a.params | b.params)


def _score(port: Definition, candidate: Definition, body: float) -> tuple[float, str]:
    """The confidence that ``port`` ports ``candidate`` and what it rests on."""
    name = name_similarity(port.name, candidate.name)
    params = _parameter_similarity(port, candidate)
    same_side = port.device == candidate.device
    evidence = max(body, params)
    if name >= 0.9:
        confidence = 0.55 + 0.45 * evidence + (0.1 if name == 1.0 else 0.05 if name >= 0.95 else 0.0)
        how = "name" if name == 1.0 else "normalised name"
    else:
        confidence = 0.75 * body + 0.15 * params + 0.25 * name
        how = "structure"
    if not same_side:
        confidence *= 0.75
    return min(confidence, 1.0), how


def match_definitions(ports: list[Definition], candidates: dict[str, list[Definition]],
                      files_of_port: dict[str, list[str]]) -> tuple[list[Match], list[Definition]]:
    """Each port definition's upstream counterparts (``candidates``: upstream file -> its
    definitions; ``files_of_port``: port file -> its candidate upstream files, best first).

    Returns the proposals at or above ``CONFIDENCE_THRESHOLD`` (a definition may port
    several upstream definitions of one name: a kernel and its binding) and the port
    definitions left unmatched.
    """
    best: dict[int, list[Match]] = {}
    strong: Counter = Counter()  # upstream files where some port definition has its name and its body
    for index, port in enumerate(ports):
        pool = [d for path in files_of_port.get(port.file, []) for d in candidates.get(path, [])]
        scored: list[tuple[float, float, Definition]] = []
        for candidate in pool:
            quick = _quick_similarity(port, candidate)
            named = name_similarity(port.name, candidate.name)
            scored.append((max(quick, named), quick, candidate))
        scored.sort(key=lambda item: -item[0])
        matches = []
        for _, quick, candidate in scored[:12]:
            body = body_similarity(port, candidate) if quick > 0.1 else 0.0
            confidence, how = _score(port, candidate, body)
            matches.append(Match(port, candidate, confidence, how, body))
        matches.sort(key=lambda m: -m.confidence)
        best[index] = matches
        for match in matches:
            if match.how == "name" and match.body >= 0.5:
                strong[match.upstream.file] += 1
    for index in best:
        # among look-alikes, the files the port demonstrably draws from come first
        best[index] = sorted(best[index], key=lambda m: (-round(m.confidence, 6), -strong[m.upstream.file],
                                                         -m.body))
        if best[index] and strong:
            best[index] = [m if strong[m.upstream.file] else
                           Match(m.port, m.upstream, m.confidence * 0.9, m.how, m.body) for m in best[index]]
            best[index].sort(key=lambda m: (-round(m.confidence, 6), -strong[m.upstream.file], -m.body))
    _launch_evidence(ports, best)
    proposals: list[Match] = []
    unmatched: list[Definition] = []
    taken: dict[tuple[str, str], float] = {}
    for index, port in enumerate(ports):
        ranked = best[index]
        if not ranked or ranked[0].confidence < CONFIDENCE_THRESHOLD:
            unmatched.append(port)
            continue
        top = ranked[0]
        if top.how == "structure" and len(ranked) > 1 and ranked[1].upstream.name != top.upstream.name \
                and ranked[1].confidence > top.confidence - 0.05:
            top = Match(top.port, top.upstream, top.confidence - 0.1, top.how, top.body)  # two look alike: say so
            if top.confidence < CONFIDENCE_THRESHOLD:
                unmatched.append(port)
                continue
        chosen = [top]
        # the same name in another of the port file's upstream files (a kernel and its Python binding)
        for other in ranked[1:]:
            if other.upstream.file != top.upstream.file and other.how != "structure" \
                    and (strong[other.upstream.file] or other.upstream.language != top.upstream.language) \
                    and normalised_name(other.upstream.name) == normalised_name(top.upstream.name) \
                    and other.confidence >= CONFIDENCE_THRESHOLD \
                    and all(o.upstream.file != other.upstream.file for o in chosen):
                chosen.append(other)
        proposals.extend(chosen)
    return proposals, unmatched


def _launch_evidence(ports: list[Definition], best: dict[int, list[Match]]) -> None:
    """A port definition that a matched port definition calls, and a definition its upstream
    counterpart calls, port each other more likely than their bodies alone say."""
    by_name = {(p.file, p.name): i for i, p in enumerate(ports)}
    for index, port in enumerate(ports):
        ranked = best[index]
        if not ranked or ranked[0].confidence < CONFIDENCE_THRESHOLD or ranked[0].how == "structure":
            continue
        upstream = ranked[0].upstream
        for callee in port.called:
            other = by_name.get((port.file, callee))
            if other is None or other == index:
                continue
            boosted = []
            for match in best[other]:
                if match.upstream.name in upstream.called and match.port.device == match.upstream.device:
                    confidence = max(match.confidence, 0.5 + 0.5 * max(match.body, 0.4))
                    boosted.append(Match(match.port, match.upstream, confidence, "launch", match.body))
                else:
                    boosted.append(match)
            boosted.sort(key=lambda m: -m.confidence)
            best[other] = boosted


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


@dataclass
class _Lineage:
    """One upstream file followed back through its renames: (path, oldest commit it holds) newest first."""

    head_path: str
    names: list[str]


def _log_states(upstream: Upstream, revision: str, paths: list[str]) -> tuple[list[str], list[dict[str, str]], dict[str, str]]:
    """The first-parent commits touching ``paths`` (following renames back), oldest first,
    and for each the blob of every tracked path after it, and path -> the path it was renamed to."""
    tracked = set(paths)
    renamed_to: dict[str, str] = {}
    for _ in range(4):  # rename chains longer than this are not followed
        commits, changes = _log(upstream, revision, sorted(tracked))
        added = [(sha, path) for sha, lines in zip(commits, changes) for status, old, path, _ in lines
                 if status == "A" and path in tracked and path not in renamed_to.values()]
        found = _rename_sources(upstream, added)
        new = {old: new for old, new in found.items() if old not in tracked}
        if not new:
            break
        renamed_to.update(new)
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


def _rename_sources(upstream: Upstream, added: list[tuple[str, str]]) -> dict[str, str]:
    """For files a commit added: the path each was renamed from, where it was a rename."""
    sources: dict[str, str] = {}
    for sha, path in added:
        result = subprocess.run(["git", "diff-tree", "-M", "-r", "--raw", "--no-commit-id", f"{sha}^", sha], cwd=upstream.path, capture_output=True, text=True)
        if result.returncode != 0:
            continue
        for line in result.stdout.splitlines():
            meta, _, names = line.partition("\t")
            parts = names.split("\t")
            if meta.split()[-1].startswith("R") and len(parts) == 2 and parts[1] == path:
                sources[parts[0]] = path
    return sources


def match_key(match: Match) -> str:
    """A match as ``FindBases.paths`` keys it: the port definition and the upstream one it was matched to."""
    return f"{match.port.file}::{match.port.qualified_name}@{match.port.start_line}->{match.upstream.file}::{match.upstream.qualified_name}"


def find_bases(upstream: Upstream, revision: str, proposals: list[Match]) -> tuple[dict[str, FileBase], FileBase | None, int]:
    """Each port file's base (see the module docstring), the whole port's (the commit its
    matched definitions resemble most together: ``port_file`` is ``*``), and how many
    commits were compared."""
    by_file: dict[str, list[Match]] = {}
    for match in proposals:
        by_file.setdefault(match.port.file, []).append(match)
    paths = sorted({m.upstream.file for m in proposals})
    if not paths:
        return {}, None, 0
    commits, states, renamed_to = _log_states(upstream, revision, paths)
    reader = BlobReader(upstream.path)
    try:
        blobs = reader.read_many(sorted({blob for state in states for blob in state.values()}))
    finally:
        reader.close()
    parsed: dict[tuple[str, str], dict[str, list[Definition]]] = {}

    def named(path: str, blob: str, name: str) -> list[Definition]:
        key = (path, blob)
        if key not in parsed:
            data = blobs.get(blob, b"")
            table: dict[str, list[Definition]] = {}
            for definition in definitions_of(data, path):
                table.setdefault(definition.name, []).append(definition)
            parsed[key] = table
        return parsed[key].get(name, [])

    similarity: dict[tuple[int, str], float] = {}
    bases: dict[str, FileBase] = {}
    overall = [0.0] * len(states)
    overall_where: list[dict[str, tuple[str, str]]] = [{} for _ in states]
    for port_file, matches in by_file.items():
        scores: list[float] = []
        where: list[dict[str, str]] = []
        for state in states:
            total, found_at = 0.0, {}
            for match in matches:
                best, best_at = 0.0, None
                for name in dict.fromkeys((match.upstream.name, match.port.name)):
                    for path, blob in state.items():
                        if name.encode() not in blobs.get(blob, b""):
                            continue
                        for candidate in named(path, blob, name):
                            key = (id(match.port), candidate.text)
                            if key not in similarity:
                                similarity[key] = 1.0 if candidate.tokens == match.port.tokens \
                                    else body_similarity(match.port, candidate)
                            if similarity[key] > best:
                                best, best_at = similarity[key], (path, name)
                total += best
                if best_at is not None:
                    found_at[match_key(match)] = best_at
            scores.append(total / len(matches))
            where.append(found_at)
        bases[port_file] = _best(port_file, scores, commits, where)
        for position, score in enumerate(scores):
            overall[position] += score * len(matches) / len(proposals)
            overall_where[position].update(where[position])
    return bases, _best("*", overall, commits, overall_where), len(commits)


def _best(port_file: str, scores: list[float], commits: list[str], where: list[dict]) -> FileBase:
    """The oldest commit of the best score (states are oldest first), and its run of equal scores."""
    top = max(scores)
    oldest = min(i for i, s in enumerate(scores) if abs(s - top) < 1e-9)
    run_end = oldest
    while run_end + 1 < len(scores) and abs(scores[run_end + 1] - top) < 1e-9:
        run_end += 1
    return FileBase(port_file, commits[oldest], top, commits[oldest], commits[run_end], where[oldest],
                    dict(zip(commits, scores)))



# --- the whole survey -------------------------------------------------------------------

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


class NothingToMatch(ValueError):
    """The tree or the upstream gives nothing to compare (the message says which)."""


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
    snapshot = UpstreamSnapshot.read(upstream, revision)
    clock["read"] = time.perf_counter()
    files_of_port: dict[str, list[str]] = {}
    candidates: dict[str, list[Definition]] = {}
    for file in files:
        names = [d.name for d in definitions if d.file == file]
        if not names:
            continue
        chosen = snapshot.candidate_files(sources[file], names)
        files_of_port[file] = [path for path, score in chosen if score > 0.05 or path in sources[file].decode(errors="replace")]
        for path in files_of_port[file]:
            if path not in candidates:
                candidates[path] = definitions_of(snapshot.sources[path], path)
    if not any(candidates.values()):
        raise NothingToMatch(f"no upstream file at {revision} resembles the port files")
    matches, unmatched = match_definitions(definitions, candidates, files_of_port)
    clock["match"] = time.perf_counter()
    file_bases, base, compared = find_bases(upstream, revision, matches)
    clock["bases"] = time.perf_counter()
    notes: list[str] = []
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
        pin = file_base.commit if file_base is not None else ""
        if any(p.port is match.port and p.path == path and p.symbol == symbol for p in proposals):
            continue
        proposals.append(Proposal(match.port, path, symbol, pin, match.confidence, match.how))
    clock["end"] = time.perf_counter()
    seconds = {"read upstream": clock["read"] - clock["start"], "match": clock["match"] - clock["read"],
               "bases": clock["bases"] - clock["match"], "total": clock["end"] - clock["start"]}
    return Survey(revision, definitions, proposals, unmatched, chosen_bases, base, notes, compared, seconds)
