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
   so ``token_to_seq_p`` matches ``token_to_seq`` across languages; a method with
   its class), the token similarity of the bodies, their structure once the
   author's names are abstracted (``structure_similarity``), the parameter names,
   whether both are kernels or both host code, and the call graph (a wrapper that
   launches a matched kernel pairs with the upstream wrapper launching its
   counterpart). Pairs are taken best first, one to one per port file. A match
   below ``CONFIDENCE_THRESHOLD`` is reported as unmatched, never proposed.
3. **The base** (``find_bases``). The first-parent commits that touch the matched
   upstream files (following their renames back) come from one streaming ``git log``;
   their blobs from one ``git cat-file --batch``. Each port file's base is the
   commit whose versions of its matched upstream definitions resemble the port
   most (the oldest of equal ones: the start of the run where that code is
   unchanged), with the score; the path an anchor names is the one the upstream
   definition had at that commit. Once a base is found the port is matched again
   against the upstream as it was there (``survey``).

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
from portq.language.symbols import (KIND_CLASS, KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION, KIND_METHOD,
                                    KIND_OP_SCHEMA, KIND_TRITON_KERNEL, MAX_PARSE_BYTES, language_for_path, symbol_table)
from portq.upstream.history import BlobReader, Upstream

CONFIDENCE_THRESHOLD = 0.6
"""A proposal at or above it is written; below it the definition is reported unmatched."""

NAMED_FILE_SCORE = 0.5
"""The candidate score of an upstream file found because it names the port's definitions."""

CANDIDATE_FILES_PER_PORT_FILE = 8

SAME_NAME_FILES = 4
"""Upstream files of the port file's own name are candidates when there are at most this many."""
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
_KEPT_WORDS = frozenset(
    "def return import from None True False and or not in is for range while if elif else with as pass break "
    "continue lambda yield raise assert try except finally class global self ctx cls len min max abs sum int "
    "float bool str tuple list dict isinstance getattr print super "
    "const void auto static inline template typename struct namespace using unsigned signed char short long "
    "double size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t half bfloat16 sizeof "
    "return switch case default do nullptr this true false "
    "__global__ __device__ __host__ __forceinline__ __restrict__ __syncthreads __shfl_xor_sync threadIdx blockIdx "
    "blockDim gridDim warpSize x y z "
    "tl triton torch math np libdevice std at c10 cute".split())
"""Identifiers a definition's shape keeps: keywords, builtins and the modules whose members it calls;
every other identifier (the author's own names) is abstracted away."""


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
    shape: tuple[str, ...] = ()  # the tokens with the author's own names abstracted (see ``shape_of``)
    api: Counter = field(default_factory=Counter)  # the library members and attributes it uses, counted
    parameter_count: int = 0
    constexpr_count: int = 0

    @property
    def device(self) -> bool:
        return self.kind in _DEVICE_KINDS

    @property
    def owner(self) -> str:
        """The class a method belongs to ('' for a function)."""
        if self.kind != KIND_METHOD:
            return ""
        parts = re.split(r"::|\.", self.qualified_name)
        return parts[-2] if len(parts) > 1 else ""


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
        parameters = _parameter_names(body)
        called = frozenset(t for t in tokens if t[0].isalpha() or t[0] == "_") - {definition.name}
        shape, api = shape_of(tokens)
        constexprs = _signature(body).count("constexpr")
        found.append(Definition(path, definition.name, definition.qualified_name, definition.kind,
                                definition.language or "", definition.start_line, definition.end_line, text,
                                tokens, frozenset(parameters), called, shape, api, len(parameters), constexprs))
    return found


def shape_of(tokens: tuple[str, ...]) -> tuple[tuple[str, ...], Counter]:
    """A definition's tokens with every identifier of its author's choosing replaced by ``$``
    (keywords, builtins, library modules and the members reached through them stay), and the
    multiset of those members: what a re-implementation that renames everything keeps."""
    shape: list[str] = []
    api: Counter = Counter()
    for position, token in enumerate(tokens):
        if not (token[0].isalpha() or token[0] == "_"):
            shape.append(token)
            continue
        before = tokens[position - 1] if position else ""
        member = before == "." or (before in (":", ">") and position > 1 and tokens[position - 2] in (":", "-"))
        if token in _KEPT_WORDS or member:
            shape.append(token)
            if member or token not in _COMMON_WORDS:
                api[token] += 1
        else:
            shape.append("$")
    return tuple(shape), api


def _signature(after_paren: str) -> str:
    """The parameter list of a definition, from the text after its opening parenthesis."""
    depth = 1
    for end, char in enumerate(after_paren):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0:
            return after_paren[:end]
    return after_paren


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
    names: list[str] = []
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
            if kind == "blob" and language_for_path(path) is not None and not _test_or_benchmark(path):
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
                        limit: int = CANDIDATE_FILES_PER_PORT_FILE, port_path: str = "") -> list[tuple[str, float]]:
        """The upstream files that hold most of the port file's rarer identifiers, best first,
        then the files that name the most of ``names`` (the port file's definitions) once
        normalised, the few files of the port file's own name (``rms_norm.py`` for
        ``rmsnorm.py``: a port often keeps it), and any upstream path the port file quotes."""
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
        if port_path:
            stem = normalised_name(PurePosixPath(port_path).stem)
            same = [path for path in self.sources if len(stem) >= 3
                    and normalised_name(PurePosixPath(path).stem) == stem
                    and PurePosixPath(path).suffix == PurePosixPath(port_path).suffix]
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
    how: str  # name | normalised name | structure | call graph
    body: float = 0.0
    structure: float = 0.0

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


def definition_name_similarity(port: Definition, candidate: Definition) -> float:
    """``name_similarity`` of two definitions, reading a method's class too: ``forward`` of
    one class says little about ``forward`` of another, and a special method is matched
    only within a class of the same name."""
    if not port.owner and not candidate.owner:
        return name_similarity(port.name, candidate.name)
    if port.owner == candidate.owner and port.name == candidate.name:
        return 1.0
    method = 1.0 if port.name == candidate.name else name_similarity(port.name, candidate.name)
    owners = name_similarity(port.owner, candidate.owner) if port.owner and candidate.owner else 0.0
    if owners >= 0.9 and method >= 0.9:
        return min(owners, method)
    return 0.5 * method * owners


def _dice(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    return 2.0 * sum((a & b).values()) / (sum(a.values()) + sum(b.values()))


def structure_similarity(a: Definition, b: Definition) -> float:
    """How alike two definitions are once their own names are abstracted away: the token
    similarity of their shapes, the library members both use, their parameter and
    compile-time-constant counts."""
    if not a.shape or not b.shape:
        return 0.0
    shape = difflib.SequenceMatcher(None, a.shape[:3000], b.shape[:3000], autojunk=False).ratio()
    api = _dice(a.api, b.api)
    wider = max(a.parameter_count, b.parameter_count, 1)
    count = 1.0 - abs(a.parameter_count - b.parameter_count) / wider
    constant = 1.0
    if a.constexpr_count or b.constexpr_count:
        constant = 1.0 - abs(a.constexpr_count - b.constexpr_count) / max(a.constexpr_count, b.constexpr_count)
    return 0.45 * shape + 0.35 * api + 0.1 * count + 0.1 * constant


def _quick_shape(a: Definition, b: Definition) -> float:
    """Multiset overlap of the shapes: an upper bound of their sequence similarity."""
    if not a.shape or not b.shape:
        return 0.0
    common = sum((Counter(a.shape) & Counter(b.shape)).values())
    return 2.0 * common / (len(a.shape) + len(b.shape))


def _score(port: Definition, candidate: Definition, body: float, structure: float) -> tuple[float, str]:
    """The confidence that ``port`` ports ``candidate`` and what it rests on."""
    name = definition_name_similarity(port, candidate)
    params = _parameter_similarity(port, candidate)
    same_side = port.device == candidate.device
    evidence = max(body, params)
    if name >= 0.9:
        confidence = 0.55 + 0.45 * evidence + (0.1 if name == 1.0 else 0.05 if name >= 0.95 else 0.0)
        how = "name" if name == 1.0 else "normalised name"
    else:
        by_tokens = 0.75 * body + 0.15 * params + 0.25 * name
        by_shape = STRUCTURE_WEIGHT * structure + 0.25 * name + 0.1 * params
        confidence = max(by_tokens, by_shape)
        how = "structure"
    if not same_side:
        confidence *= 0.75
    return min(confidence, 1.0), how


STRUCTURE_WEIGHT = 0.75
"""How far a renamed definition's structure alone (``structure_similarity``) carries its confidence."""

LAUNCH_BASE = 0.45
"""The confidence a call-graph pairing starts from, before the two definitions' own likeness."""

MARGIN = 0.05
"""A structural match this close to the runner-up loses ``MARGIN_PENALTY``: two look alike."""
MARGIN_PENALTY = 0.1

CANDIDATES_PER_DEFINITION = 16
"""Upstream definitions compared in full with each port definition (the rest fail a cheap bound)."""


def _key(definition: Definition) -> tuple[str, str, int]:
    return (definition.file, definition.qualified_name, definition.start_line)


def _pair_key(match: Match) -> tuple[str, tuple[str, str, int]]:
    """One upstream definition is ported once per port file (two files may each copy it)."""
    return (match.port.file, _key(match.upstream))


def match_definitions(ports: list[Definition], candidates: dict[str, list[Definition]],
                      files_of_port: dict[str, list[str]]) -> tuple[list[Match], list[Definition]]:
    """Each port definition's upstream counterpart (``candidates``: upstream file -> its
    definitions; ``files_of_port``: port file -> its candidate upstream files, best first).

    Every pair is scored by name, body tokens and structure; the call graph then pairs
    definitions the matched ones call or are called by (a wrapper that launches a matched
    kernel with the upstream wrapper that launches its counterpart); finally pairs are
    taken best first, one port definition to one upstream definition (a name match may also
    take the same name in another language: a kernel and its binding). A structural match
    with a close runner-up loses confidence. Returns the proposals at or above
    ``CONFIDENCE_THRESHOLD`` and the port definitions left unmatched.
    """
    scored: dict[int, list[Match]] = {}
    pools: dict[int, list[Definition]] = {}
    strong: Counter = Counter()  # upstream files where some port definition has its name and its body
    for index, port in enumerate(ports):
        pool = [d for path in files_of_port.get(port.file, []) for d in candidates.get(path, [])]
        pools[index] = pool
        bounds = []
        for candidate in pool:
            quick = _quick_similarity(port, candidate)
            shape = _quick_shape(port, candidate)
            named = definition_name_similarity(port, candidate)
            bounds.append((max(quick, named, shape * 0.9), quick, shape, candidate))
        bounds.sort(key=lambda item: -item[0])
        matches = [_compared(port, candidate, quick, shape) for _, quick, shape, candidate
                   in bounds[:CANDIDATES_PER_DEFINITION]]
        matches.sort(key=lambda m: -m.confidence)
        scored[index] = matches
        for match in matches:
            if match.how == "name" and match.body >= 0.5:
                strong[match.upstream.file] += 1
    if strong:
        # among look-alikes, the files the port demonstrably draws from come first
        for index, matches in scored.items():
            scored[index] = [m if strong[m.upstream.file] else
                             Match(m.port, m.upstream, m.confidence * 0.9, m.how, m.body) for m in matches]
    for _ in range(3):
        if not _call_graph_evidence(ports, pools, scored):
            break
    return _assign(ports, scored)


def _compared(port: Definition, candidate: Definition, quick: float, shape: float) -> Match:
    body = body_similarity(port, candidate) if quick > 0.1 else 0.0
    structure = structure_similarity(port, candidate) if shape > 0.3 else 0.0
    confidence, how = _score(port, candidate, body, structure)
    return Match(port, candidate, confidence, how, body, structure)


def _settled(scored: dict[int, list[Match]]) -> dict[int, Match]:
    """The port definitions whose best match is at or above the threshold, one-to-one."""
    settled: dict[int, Match] = {}
    for match in _assign_order(scored):
        index = match[0]
        if index in settled:
            continue
        if match[1].confidence >= CONFIDENCE_THRESHOLD and all(
                _pair_key(m) != _pair_key(match[1]) for m in settled.values()):
            settled[index] = match[1]
    return settled


def _assign_order(scored: dict[int, list[Match]]) -> list[tuple[int, Match]]:
    pairs = [(index, match) for index, matches in scored.items() for match in matches]
    pairs.sort(key=lambda pair: (-round(pair[1].confidence, 6), pair[1].how == "structure", -pair[1].body))
    return pairs


def _call_graph_evidence(ports: list[Definition], pools: dict[int, list[Definition]],
                         scored: dict[int, list[Match]]) -> bool:
    """Pair the port definitions that call, or are called by, a settled one with the
    upstream definitions that call, or are called by, its counterpart. Returns whether
    anything new was settled."""
    settled = _settled(scored)
    by_name: dict[str, list[int]] = {}
    for index, port in enumerate(ports):
        by_name.setdefault(port.name, []).append(index)
    used = {_pair_key(m) for m in settled.values()}
    changed = False
    for index, port in enumerate(ports):
        if index in settled:
            continue
        evidence: Counter = Counter()
        for other_index, match in settled.items():
            other = ports[other_index]
            counterpart = match.upstream
            calls = other.name in port.called and other.file == port.file or \
                (other.name in port.called and len(by_name.get(other.name, [])) == 1)
            called_by = port.name in other.called
            for candidate in pools[index]:
                if (port.file, _key(candidate)) in used or candidate is counterpart:
                    continue
                if calls and counterpart.name in candidate.called:
                    evidence[id(candidate)] += 1
                if called_by and candidate.name in counterpart.called:
                    evidence[id(candidate)] += 1
        if not evidence:
            continue
        found = [c for c in pools[index] if id(c) in evidence]
        launched = []
        for candidate in found:
            structure = structure_similarity(port, candidate)
            name = definition_name_similarity(port, candidate)
            confidence = LAUNCH_BASE + 0.4 * structure + 0.2 * name + 0.05 * (evidence[id(candidate)] - 1)
            if port.device != candidate.device:
                confidence *= 0.75
            launched.append(Match(port, candidate, min(confidence, 0.99), "call graph",
                                  body_similarity(port, candidate), structure))
        merged = {id(m.upstream): m for m in scored[index]}
        for match in launched:
            if id(match.upstream) not in merged or merged[id(match.upstream)].confidence < match.confidence:
                merged[id(match.upstream)] = match
        scored[index] = sorted(merged.values(), key=lambda m: -m.confidence)
        changed = changed or scored[index][0].confidence >= CONFIDENCE_THRESHOLD
    return changed


def _assign(ports: list[Definition], scored: dict[int, list[Match]]) -> tuple[list[Match], list[Definition]]:
    """Pairs best first, one to one; a match that depends on structure with a close
    runner-up (for its port definition, or for its upstream definition) is discounted."""
    chosen: dict[int, list[Match]] = {}
    taken: set[tuple[str, tuple[str, str, int]]] = set()
    for index, match in _assign_order(scored):
        if match.confidence < CONFIDENCE_THRESHOLD - MARGIN_PENALTY - 1e-9:
            break
        if _pair_key(match) in taken:
            continue
        if index in chosen:
            top = chosen[index][0]
            if top.how in ("name", "normalised name") and match.how in ("name", "normalised name") \
                    and match.upstream.file != top.upstream.file \
                    and normalised_name(match.upstream.name) == normalised_name(top.upstream.name) \
                    and match.confidence >= CONFIDENCE_THRESHOLD \
                    and all(o.upstream.file != match.upstream.file for o in chosen[index]):
                chosen[index].append(match)
                taken.add(_pair_key(match))
            continue
        if match.how in ("structure", "call graph"):
            runner = max([m.confidence for m in scored[index] if m.upstream.name != match.upstream.name
                          and _pair_key(m) not in taken] +
                         [m.confidence for other, ms in scored.items() if other != index and other not in chosen
                          and ports[other].file == match.port.file for m in ms if m.upstream is match.upstream],
                         default=0.0)
            if runner > match.confidence - MARGIN:
                match = Match(match.port, match.upstream, match.confidence - MARGIN_PENALTY, match.how,
                              match.body, match.structure)
        if match.confidence < CONFIDENCE_THRESHOLD:
            continue
        chosen[index] = [match]
        taken.add(_pair_key(match))
    proposals = [m for index in sorted(chosen) for m in chosen[index]]
    unmatched = [port for index, port in enumerate(ports) if index not in chosen]
    return proposals, unmatched


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
    defined: dict[str, set[str]] = {}
    for match in proposals:
        defined.setdefault(match.upstream.file, set()).add(match.upstream.name)
    commits, states, renamed_to = _log_states(upstream, revision, paths, defined)
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


def _match_with(snapshot: UpstreamSnapshot, definitions: list[Definition], sources: dict[str, bytes],
                files: list[str]) -> tuple[list[Match], list[Definition]]:
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
                candidates[path] = definitions_of(snapshot.sources[path], path)
    if not any(candidates.values()):
        raise NothingToMatch(f"no upstream file at {snapshot.revision} resembles the port files")
    return match_definitions(definitions, candidates, files_of_port)


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
    matches, unmatched = _match_with(snapshot, definitions, sources, files)
    clock["match"] = time.perf_counter()
    file_bases, base, compared = find_bases(upstream, revision, matches)
    if base is not None and base.commit != revision:
        # the port was taken from the base: what upstream held then may have been renamed,
        # split or rewritten since, so match again against the files as they were there
        earlier = UpstreamSnapshot.read(upstream, base.commit)
        again, left = _match_with(earlier, definitions, sources, files)
        if again and sum(m.confidence for m in again) > sum(m.confidence for m in matches):
            matches, unmatched = again, left
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
