"""Which in-tree definition ports which upstream one: the definitions compared and how they are scored.

``portq init``'s second question (``portq.tree.provenance`` asks all
three). A port file's definitions (``Definition``: name, kind, parameters,
comment-free tokens and their shape once the author's names are abstracted)
are compared with every definition of their candidate upstream files by
name (equal, or equal once normalised: case, underscores, ``_kernel`` /
``_fwd`` / ``_p`` suffixes, a method with its class; or the same specific
words in order with a word or two more, across languages; less, a word that
abbreviates two or three of the other's), body tokens,
structure, parameter names, kind, and the call graph (a wrapper that
launches a matched kernel pairs with the upstream wrapper launching its
counterpart; a wrapper's one launched kernel with its counterpart's; a C-family
definition calls what the macros it expands call; a helper its matched caller
calls with the callee of the caller's counterpart, up to four calls deep through
functions the port folded in, that shares the most of its name words; a
method with the same method of the class a sibling method matched);
``match_definitions`` takes pairs best first, one to one per
port file, discounting look-alikes (a close runner-up, a structural match in
an upstream file the rest of its port file does not draw from, a call-graph
pairing that rests only on other look-alikes).

It reads only the sources handed to it: it must not read git, the upstream
clone or the ledger, and it decides no verdict.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from portq.language.symbols import Definition as SymbolDefinition
from portq.language.symbols import (KIND_CLASS, KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION, KIND_METHOD, KIND_OP_SCHEMA,
                                    KIND_TRITON_KERNEL, language_for_path, symbol_table)

CONFIDENCE_THRESHOLD = 0.6
"""A proposal at or above it is written; below it the definition is reported unmatched."""


_DEVICE_KINDS = frozenset({KIND_TRITON_KERNEL, KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION})


_SKIPPED_KINDS = frozenset({KIND_CLASS, KIND_OP_SCHEMA})


_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|==|!=|<=|>=|\*\*|//|<<|>>|&&|\|\||[^\s\w]")


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

    @cached_property
    def token_counts(self) -> Counter:
        """The multiset of ``tokens`` (counted once per definition, read by every cheap bound)."""
        return Counter(self.tokens)

    @cached_property
    def bigram_counts(self) -> Counter:
        """The multiset of consecutive token pairs (what ``version_similarity`` reads of the order)."""
        return Counter(zip(self.tokens, self.tokens[1:]))

    @cached_property
    def shape_counts(self) -> Counter:
        """The multiset of ``shape``."""
        return Counter(self.shape)

    @cached_property
    def owner(self) -> str:
        """The class a method belongs to ('' for a function)."""
        if self.kind != KIND_METHOD:
            return ""
        parts = re.split(r"::|\.", self.qualified_name)
        return parts[-2] if len(parts) > 1 else ""


def definitions_of(source: bytes, path: str) -> list[Definition]:
    """The functions, methods and kernels of one file (not classes or op schemas); in C-family
    files, what a definition calls includes what the macros it expands call (see ``macro_callees``)."""
    definitions = [definition_from(path, symbol, text) for symbol, text in definition_texts(source, path)]
    macros = macro_callees(source, path)
    if macros:
        for definition in definitions:
            expanded = _expanded(definition.called, macros)
            if expanded:
                definition.called = definition.called | expanded
    return definitions


_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)\n]*\))?((?:[^\n]*\\\r?\n)*[^\n]*)", re.M)


MACRO_DEPTH = 4
"""How deep macros that expand macros are followed."""


def macro_callees(source: bytes, path: str) -> dict[str, frozenset[str]]:
    """Each function-like or object-like macro a C-family file defines, with the identifiers its
    body names (its own parameters aside): upstream code often launches a kernel inside a macro
    (``LAUNCH_KERNEL(silu)`` expanding to ``act_kernel<...><<<grid, block>>>(...)``), which the
    definition using it names only through the macro."""
    if b"#" not in source or language_for_path(path) != "cpp":
        return {}
    macros: dict[str, frozenset[str]] = {}
    for found in _MACRO.finditer(source):
        name = found.group(1).decode()
        parameters = set(re.findall(r"[A-Za-z_]\w*", (found.group(2) or b"").decode(errors="replace")))
        body = _COMMENT.sub(" ", found.group(3).decode(errors="replace").replace("\\\n", "\n"))
        named = frozenset(re.findall(r"[A-Za-z_]\w*", body)) - parameters - {name}
        if named:
            macros[name] = macros.get(name, frozenset()) | named
    return macros


def _expanded(called: frozenset[str], macros: dict[str, frozenset[str]]) -> frozenset[str]:
    """The identifiers the macros among ``called`` name, followed ``MACRO_DEPTH`` macros deep."""
    found: set[str] = set()
    frontier = [name for name in called if name in macros]
    seen = set(frontier)
    for _ in range(MACRO_DEPTH):
        following: list[str] = []
        for macro in frontier:
            for name in macros[macro]:
                found.add(name)
                if name in macros and name not in seen:
                    seen.add(name)
                    following.append(name)
        frontier = following
    return frozenset(found - called)


def definition_texts(source: bytes, path: str) -> list[tuple[SymbolDefinition, str]]:
    """Each function, method and kernel of one file (not classes or op schemas) with its
    source lines: what ``definitions_of`` reads, before anything is computed from them."""
    table = symbol_table(source, path)
    if table.tree is None:
        return []
    lines = source.decode("utf-8", errors="replace").splitlines()
    return [(definition, "\n".join(lines[definition.start_line - 1:definition.end_line]))
            for definition in table.definitions if definition.kind not in _SKIPPED_KINDS]


def definition_from(path: str, definition: SymbolDefinition, text: str) -> Definition:
    """The ``Definition`` the comparison reads, of a symbol-table definition and its source lines."""
    code = _COMMENT.sub(" ", _strip_docstrings(text))
    tokens = tuple(_TOKEN.findall(code))
    header, _, body = code.partition("(")
    parameters = _parameter_names(body)
    called = frozenset(t for t in tokens if t[0].isalpha() or t[0] == "_") - {definition.name}
    shape, api = shape_of(tokens)
    constexprs = _signature(body).count("constexpr")
    return Definition(path, definition.name, definition.qualified_name, definition.kind,
                      definition.language or "", definition.start_line, definition.end_line, text,
                      tokens, frozenset(parameters), called, shape, api, len(parameters), constexprs)


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


# --- names ----------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
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


@lru_cache(maxsize=1 << 16)
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
    if word_run(name_words(port), name_words(upstream)) or word_run(name_words(upstream), name_words(port)):
        return WORD_RUN_SIMILARITY
    if _abbreviated(name_words(port), name_words(upstream)) or _abbreviated(name_words(upstream), name_words(port)):
        return ABBREVIATION_SIMILARITY
    a, b = set(name_words(port)), set(name_words(upstream))
    if not a or not b:
        return 0.0
    joined_a, joined_b = normalised_name(port), normalised_name(upstream)
    if len(joined_a) >= 4 and len(joined_b) >= 4 and (joined_a in joined_b or joined_b in joined_a):
        return 0.6
    return 0.6 * len(a & b) / len(a | b)


WORD_RUN_SIMILARITY = 0.85
"""The name similarity of a name whose words are another's in order with a word or two more
(``fwd_hdim32`` and ``run_mha_fwd_hdim32``, ``max_exp2_sum`` and ``max_scale_exp2_sum``)."""


ABBREVIATION_SIMILARITY = 0.8
"""The name similarity of a name one of whose words abbreviates two or three consecutive words of
the other, every other word the same (``bmm_bf16`` and ``batched_gemm_bf16``): below
``WORD_RUN_SIMILARITY``, so that it is scored like a renamed definition, its body or structure
carrying part of the confidence (letters in order match more words than the author meant)."""


def abbreviates(short: str, words: tuple[str, ...]) -> bool:
    """Whether ``short`` (three letters or more) abbreviates ``words`` (two or more) in order: it
    starts with the first word's first letter, and its letters follow through the words in order,
    each word giving one letter at least (``bmm``: b of ``batched``, mm of ``gemm``; ``rms``: root
    mean square)."""
    if len(short) < 3 or not short.isalpha() or len(words) < 2 or not words[0] or short[0] != words[0][0] \
            or len(short) >= sum(len(word) for word in words):
        return False

    @lru_cache(maxsize=None)
    def follows(letter: int, word: int, position: int, given: bool) -> bool:
        if letter == len(short):
            return word == len(words) - 1 and given
        text = words[word]
        found = text.find(short[letter], position)
        while found >= 0:
            if follows(letter + 1, word, found + 1, True):
                return True
            found = text.find(short[letter], found + 1)
        return given and word + 1 < len(words) and follows(letter, word + 1, 0, False)

    return follows(1, 0, 1, True)


def _abbreviated(shorter: tuple[str, ...], longer: tuple[str, ...]) -> bool:
    """Whether one word of ``shorter`` abbreviates two or three consecutive words of ``longer``
    (``abbreviates``) and every other word is the same, in order."""
    for index, word in enumerate(shorter):
        for count in (2, 3):
            if len(longer) == len(shorter) - 1 + count and longer[:index] == shorter[:index] \
                    and longer[index + count:] == shorter[index + 1:] and abbreviates(word, longer[index:index + count]):
                return True
    return False


def word_run(shorter: tuple[str, ...], longer: tuple[str, ...]) -> bool:
    """Whether ``longer`` holds ``shorter``'s words in order with one or two words more, and
    the words shared say something specific: three of them, or one holding a number (``hdim32``,
    ``exp2``); two plain words (``rms_norm`` in ``fused_add_rms_norm``) name a family, not one
    of its members."""
    if not specific_words(shorter) or not 1 <= len(longer) - len(shorter) <= 2:
        return False
    position = 0
    for word in longer:
        if position < len(shorter) and word == shorter[position]:
            position += 1
    return position == len(shorter)


def specific_words(words: tuple[str, ...]) -> bool:
    """Whether a name's words say which member of a family it is: three words or more, or
    two with one of them holding a number beside its letters."""
    if len(words) < 2:
        return False
    return len(words) >= 3 or any(any(c.isdigit() for c in w) and any(c.isalpha() for c in w) for w in words)


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# --- matching -------------------------------------------------------------------------


@dataclass
class Match:
    """A proposed anchor: ``port`` ports ``upstream`` with ``confidence`` (0..1)."""

    port: Definition
    upstream: Definition
    confidence: float
    how: str  # name | normalised name | name words | structure | call graph
    body: float = 0.0
    structure: float = 0.0
    grounded: bool = False  # a call-graph pairing resting on a neighbour matched by name (or so grounded itself)

    @property
    def by_name(self) -> bool:
        """Whether it rests on names: its own, or (through the call graph) a neighbour's."""
        return self.how in ("name", "normalised name", "name words") or self.grounded

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


def version_similarity(a: Definition, b: Definition) -> float:
    """How alike two definitions' token streams are, as the multiset overlap of their tokens and
    of their consecutive token pairs: near ``body_similarity`` on versions of one definition (an
    edit adds and removes tokens and the pairs around them), linear in their length rather than
    quadratic, and read from counts each text computes once (the base search compares one port
    definition with every version of its counterpart)."""
    if not a.tokens or not b.tokens:
        return 0.0
    if a.tokens == b.tokens:
        return 1.0
    tokens = _covered(a.token_counts, b.token_counts)
    pairs = _covered(a.bigram_counts, b.bigram_counts) if len(a.tokens) > 1 and len(b.tokens) > 1 else tokens
    return 0.5 * tokens + 0.5 * pairs


def _covered(port: Counter, version: Counter) -> float:
    return sum((port & version).values()) / max(sum(port.values()), 1)


def _quick_similarity(a: Definition, b: Definition) -> float:
    """Multiset overlap of the tokens: an upper bound of ``body_similarity``, cheap to compute."""
    if not a.tokens or not b.tokens:
        return 0.0
    common = sum((a.token_counts & b.token_counts).values())
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
    if port.name == candidate.name and _nested_owner(port.owner, candidate.owner):
        return 0.9
    return 0.5 * method * owners


_OWNER_NOISE = frozenset({"function", "functions", "op", "ops", "module", "autograd", "impl"})


def _nested_owner(port: str, upstream: str) -> bool:
    """Whether one class name's words hold the other's and one word more at most (the kind
    words ``Function``, ``Op``, ``Module`` aside), at least one word of four letters or more:
    ``RMSNormOp`` and ``LigerRMSNormFunction`` (an upstream prefixes its own name to its
    classes), not ``LigerFusedAddRMSNormFunction``."""
    if not port or not upstream:
        return False
    a = set(name_words(port)) - _OWNER_NOISE
    b = set(name_words(upstream)) - _OWNER_NOISE
    shorter = min(a, b, key=len)
    # one word more at most (the upstream's own name): a class that adds more is another operation
    return bool(shorter) and (a <= b or b <= a) and len(a ^ b) <= 1 and any(len(word) >= 4 for word in shorter)


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
    common = sum((a.shape_counts & b.shape_counts).values())
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
    elif name >= WORD_RUN_SIMILARITY:
        # the name's words in order, a prefix or a qualifier more: the name carries it, less surely
        confidence = WORD_RUN_BASE + 0.4 * evidence
        how = "name words"
    else:
        by_tokens = 0.75 * body + 0.15 * params + 0.25 * name
        by_shape = STRUCTURE_WEIGHT * structure + 0.25 * name + 0.1 * params
        confidence = max(by_tokens, by_shape)
        how = "structure"
    if not same_side:
        confidence *= 0.75
    return min(confidence, 1.0), how


WORD_RUN_BASE = 0.6
"""The confidence a ``name words`` match starts from, before the two definitions' own likeness."""


STRUCTURE_WEIGHT = 0.75
"""How far a renamed definition's structure alone (``structure_similarity``) carries its confidence."""


LAUNCH_BASE = 0.45
"""The confidence a call-graph pairing starts from, before the two definitions' own likeness."""


MARGIN = 0.05
"""A structural match this close to the runner-up loses ``MARGIN_PENALTY``: two look alike."""


MARGIN_PENALTY = 0.1


LOOK_ALIKE_NEIGHBOUR_PENALTY = 0.1
"""What a call-graph pairing loses when every neighbour it rests on was itself matched by
structure or the call graph, not by name."""


SOLE_LAUNCH_BONUS = 0.2
"""What a call-graph pairing gains when the neighbour's one device callee is the port definition
and its counterpart's one device callee the candidate: a wrapper launching one kernel, on both
sides (the kernel's body, in another language, may share nothing else with its counterpart)."""


CALLEE_WORDS_BONUS = 0.15
"""What a call-graph pairing gains when the candidate is the one callee (direct, or through
functions the port folded in) of the neighbour's counterpart that shares the most of the port
definition's name words: ``row_max`` called by the port kernel, ``reduce_max`` reached from its
counterpart."""


SIBLING_METHOD_BONUS = 0.2
"""What a pairing gains when the candidate is the method of the same name of the upstream class
that another method of the port definition's class was matched to (``XentOp.backward`` once
``XentOp.forward`` is ``LigerFusedLinearCrossEntropyFunction.forward``): the classes are paired,
and within a class a method's name says which it is."""


STRAY_PENALTY = 0.1
"""What a structural or call-graph match loses when every other matched definition of its port
file is matched in other upstream files."""


CALL_GRAPH_ROUNDS = 6
"""Rounds of call-graph pairing at most: each pairs the neighbours of what the round before settled
(a name-matched launcher, then the kernel it launches, then that kernel's helpers, then a helper
whose callee was shared with one settled the round before)."""


CANDIDATES_PER_DEFINITION = 16
"""Upstream definitions compared in full with each port definition (the rest fail a cheap bound)."""


def _key(definition: Definition) -> tuple[str, str, int]:
    return (definition.file, definition.qualified_name, definition.start_line)


def _pair_key(match: Match) -> tuple[str, tuple[str, str, int]]:
    """One upstream definition is ported once per port file (two files may each copy it)."""
    return (match.port.file, _key(match.upstream))


def match_definitions(ports: list[Definition], candidates: dict[str, list[Definition]],
                      files_of_port: dict[str, list[str]],
                      compared: dict[tuple[int, int], tuple] | None = None
                      ) -> tuple[list[Match], list[Definition], list[Match]]:
    """Each port definition's upstream counterpart (``candidates``: upstream file -> its
    definitions; ``files_of_port``: port file -> its candidate upstream files, best first).

    Every pair is scored by name, body tokens and structure; the call graph then pairs
    definitions the matched ones call or are called by (a wrapper that launches a matched
    kernel with the upstream wrapper that launches its counterpart); finally pairs are
    taken best first, one port definition to one upstream definition (a name match may also
    take the same name in another language: a kernel and its binding). A structural match
    with a close runner-up loses confidence. Returns the proposals at or above
    ``CONFIDENCE_THRESHOLD``, the port definitions left unmatched, and the best candidate
    below the threshold of each unmatched one that has any (reported, never proposed: it
    shows how near a guess came). ``compared`` keeps each
    pair's bounds and scores for a later call with the same definition objects (a second
    pass over files that did not change), which then computes them once.
    """
    compared = {} if compared is None else compared
    scored: dict[int, list[Match]] = {}
    pools: dict[int, list[Definition]] = {}
    strong: Counter = Counter()  # upstream files where some port definition has its name and its body
    for index, port in enumerate(ports):
        pool = [d for path in files_of_port.get(port.file, []) for d in candidates.get(path, [])]
        pools[index] = pool
        bounds = []
        for candidate in pool:
            pair = (id(port), id(candidate))
            if pair not in compared:  # the pair's bounds, its match once scored, and both definitions kept alive
                quick = _quick_similarity(port, candidate)
                shape = _quick_shape(port, candidate)
                named = definition_name_similarity(port, candidate)
                compared[pair] = (max(quick, named, shape * 0.9), quick, shape, port, candidate, [])
            bound, quick, shape, _, _, _ = compared[pair]
            bounds.append((bound, quick, shape, candidate))
        bounds.sort(key=lambda item: -item[0])
        matches = []
        best = 0.0
        for _, quick, shape, candidate in bounds[:CANDIDATES_PER_DEFINITION]:
            if definition_name_similarity(port, candidate) < WORD_RUN_SIMILARITY and _confidence_bound(port, candidate, quick, shape) < best:
                # it cannot win: only another file's definition of the same name may still be proposed beside the best
                continue
            scored_pair = compared[(id(port), id(candidate))][5]
            if not scored_pair:
                scored_pair.append(_compared(port, candidate, quick, shape))
            matches.append(scored_pair[0])
            best = max(best, scored_pair[0].confidence)
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
    for _ in range(CALL_GRAPH_ROUNDS):
        if not _call_graph_evidence(ports, pools, scored):
            break
    return _assign(ports, scored)


def _confidence_bound(port: Definition, candidate: Definition, quick: float, shape: float) -> float:
    """An upper bound of the confidence ``_score`` gives a pair whose names differ, from the
    cheap bounds of its body (``quick``) and shape (``shape``) similarity."""
    name = definition_name_similarity(port, candidate)
    params = _parameter_similarity(port, candidate)
    by_tokens = 0.75 * quick + 0.15 * params + 0.25 * name
    by_shape = STRUCTURE_WEIGHT * (0.45 * shape + 0.55) + 0.25 * name + 0.1 * params
    bound = max(by_tokens, by_shape)
    return bound * (0.75 if port.device != candidate.device else 1.0)


def _compared(port: Definition, candidate: Definition, quick: float, shape: float) -> Match:
    body = body_similarity(port, candidate) if quick > 0.1 else 0.0
    # a name match's confidence rests on its name and body (``_score``): its structure is not read
    named = definition_name_similarity(port, candidate) >= 0.9
    structure = structure_similarity(port, candidate) if shape > 0.3 and not named else 0.0
    confidence, how = _score(port, candidate, body, structure)
    return Match(port, candidate, confidence, how, body, structure)


def _settled(scored: dict[int, list[Match]]) -> dict[int, Match]:
    """The port definitions whose best match is at or above the threshold, one-to-one; a match by
    look (structure, the call graph) only where no other candidate comes within ``MARGIN`` of it:
    a tie between two look-alikes is no ground for pairing their neighbours."""
    settled: dict[int, Match] = {}
    for match in _assign_order(scored):
        index = match[0]
        if index in settled:
            continue
        if match[1].confidence >= CONFIDENCE_THRESHOLD and all(
                _pair_key(m) != _pair_key(match[1]) for m in settled.values()):
            if match[1].how in _BY_LOOK and any(
                    m.upstream is not match[1].upstream and m.confidence > match[1].confidence - MARGIN
                    for m in scored[index]):
                continue
            settled[index] = match[1]
    return settled


_BY_LOOK = ("structure", "call graph")
"""What a match by look rests on: how alike two definitions are, not a name."""


def _assign_order(scored: dict[int, list[Match]]) -> list[tuple[int, Match]]:
    pairs = [(index, match) for index, matches in scored.items() for match in matches]
    pairs.sort(key=lambda pair: (-round(pair[1].confidence, 6), pair[1].how == "structure", -pair[1].body))
    return pairs


def _call_graph_evidence(ports: list[Definition], pools: dict[int, list[Definition]],
                         scored: dict[int, list[Match]]) -> bool:
    """Pair the port definitions that call, or are called by, a settled one with the
    upstream definitions that call, or are called by, its counterpart (or that it reaches
    through functions the port folded in, see ``_reached``), and a method with the method of
    the same name of the class a sibling method was matched to. Returns whether anything new
    was settled."""
    settled = _settled(scored)
    by_name: dict[str, list[int]] = {}
    for index, port in enumerate(ports):
        by_name.setdefault(port.name, []).append(index)
    used = {_pair_key(m) for m in settled.values()}
    matched_upstream = {id(m.upstream) for m in settled.values()}
    reached_cache: dict[tuple[int, str], list[Definition]] = {}
    changed = False
    for index, port in enumerate(ports):
        if index in settled:
            continue
        evidence: Counter = Counter()
        named: set[int] = set()  # candidates some name-matched neighbour points at
        sole: set[int] = set()  # candidates a neighbour's counterpart launches as its one device callee
        worded: set[int] = set()  # the callee of a neighbour's counterpart that shares the most of the port's name
        siblings: set[int] = set()  # the same method of the class a method of the port's class matched
        for other_index, match in settled.items():
            other = ports[other_index]
            counterpart = match.upstream
            calls = other.name in port.called and other.file == port.file or \
                (other.name in port.called and len(by_name.get(other.name, [])) == 1)
            called_by = port.name in other.called
            if called_by and match.by_name:  # a shared word counts only on a path that rests on names
                key = (id(counterpart), port.file)
                if key not in reached_cache:
                    reached_cache[key] = _reached(counterpart, pools[index], matched_upstream)
                reached = [c for c in reached_cache[key] if (port.file, _key(c)) not in used]
                chosen = _sharing_most_words(port, reached)
                if chosen is not None:
                    evidence[id(chosen)] += 0 if chosen.name in counterpart.called else 1
                    worded.add(id(chosen))
                    named.add(id(chosen))
            sibling = bool(port.owner) and other.owner == port.owner and other.file == port.file \
                and bool(counterpart.owner)
            for candidate in pools[index]:
                if (port.file, _key(candidate)) in used or candidate is counterpart:
                    continue
                if sibling and candidate.name == port.name and candidate.owner == counterpart.owner \
                        and candidate.file == counterpart.file:
                    evidence[id(candidate)] += 1
                    siblings.add(id(candidate))
                    if match.by_name:
                        named.add(id(candidate))
                if calls and counterpart.name in candidate.called or called_by and candidate.name in counterpart.called:
                    evidence[id(candidate)] += (calls and counterpart.name in candidate.called) + \
                        (called_by and candidate.name in counterpart.called)
                    if match.by_name:
                        named.add(id(candidate))
                    if called_by and port.device and candidate.device and \
                            _device_callees(other, ports) == [port] and _device_callees(counterpart, pools[index]) == [candidate]:
                        sole.add(id(candidate))
        if not evidence:
            continue
        found = [c for c in pools[index] if id(c) in evidence]
        launched = []
        for candidate in found:
            structure = structure_similarity(port, candidate)
            name = definition_name_similarity(port, candidate)
            confidence = LAUNCH_BASE + 0.4 * structure + 0.2 * name + 0.05 * (evidence[id(candidate)] - 1)
            if id(candidate) not in named:  # a neighbour matched by look only: weaker ground to stand on
                confidence -= LOOK_ALIKE_NEIGHBOUR_PENALTY
            if id(candidate) in sole:  # the one kernel a wrapper launches, on both sides
                confidence += SOLE_LAUNCH_BONUS
            if id(candidate) in worded:  # the one callee named like it, through the calls the port folded in
                confidence += CALLEE_WORDS_BONUS
            if id(candidate) in siblings:  # the same method of the class its class was matched to
                confidence += SIBLING_METHOD_BONUS
            if port.device != candidate.device:
                confidence *= 0.75
            launched.append(Match(port, candidate, min(confidence, 0.99), "call graph",
                                  body_similarity(port, candidate), structure, grounded=id(candidate) in named))
        merged = {id(m.upstream): m for m in scored[index]}
        for match in launched:
            if id(match.upstream) not in merged or merged[id(match.upstream)].confidence < match.confidence:
                merged[id(match.upstream)] = match
        scored[index] = sorted(merged.values(), key=lambda m: -m.confidence)
        changed = changed or scored[index][0].confidence >= CONFIDENCE_THRESHOLD
    return changed


INLINED_DEPTH = 4
"""How many calls deep a counterpart's callees are followed through functions no port definition matches."""


GENERIC_NAME_WORDS = frozenset(
    "apply compute run do get set make init update check load store to from with of is has by for in on "
    "the a an all".split())
"""Name words that say what a function does to anything (``apply_mask``, ``apply_bias``): sharing one
says nothing about which function it is."""


def _reached(counterpart: Definition, pool: list[Definition], matched: set[int]) -> list[Definition]:
    """The definitions of ``pool`` that ``counterpart`` calls, and that those call in turn where no
    port definition is matched to them, ``INLINED_DEPTH`` calls deep: a port kernel often calls its
    helpers itself where upstream's kernel reaches them through a body function or two the port
    folded into the kernel."""
    by_name: dict[str, list[Definition]] = {}
    for definition in pool:
        by_name.setdefault(definition.name, []).append(definition)
    found: list[Definition] = []
    seen = {id(counterpart)}
    frontier = [counterpart]
    for _ in range(INLINED_DEPTH):
        following: list[Definition] = []
        for caller in frontier:
            for name in sorted(caller.called & by_name.keys()):
                for definition in by_name[name]:
                    if id(definition) in seen:
                        continue
                    seen.add(id(definition))
                    found.append(definition)
                    if id(definition) not in matched:
                        following.append(definition)
        frontier = following
    return found


def _sharing_most_words(port: Definition, reached: list[Definition]) -> Definition | None:
    """The one definition of ``reached`` sharing the most of ``port``'s name words (generic verbs
    aside), one at least; None where two share as many (``mask_kv_tail``: ``apply_mask`` and
    ``apply_mask_causal`` alike, until the second is taken)."""
    words = set(name_words(port.name)) - GENERIC_NAME_WORDS
    if not words:
        return None
    shared = Counter({id(d): len(words & set(name_words(d.name))) for d in reached})
    ranked = shared.most_common(2)
    if not ranked or ranked[0][1] == 0 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return next(d for d in reached if id(d) == ranked[0][0])


def _device_callees(caller: Definition, definitions: list[Definition]) -> list[Definition]:
    """The kernels among ``definitions`` that ``caller`` launches, or where it launches none, the
    device functions it calls: a binding that launches a kernel templated on a device function
    (``act_kernel<silu>``) names both, and launches only the kernel."""
    called = [d for d in definitions if d.device and d.name in caller.called and d is not caller]
    kernels = [d for d in called if d.kind in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL)]
    return kernels or called


def _nearest(matches: list[Match], held: Match | None) -> Match | None:
    """An unmatched definition's best candidate below the threshold, as its confidence stands
    after the margins (None when every candidate went to another definition)."""
    below = [m for m in matches if m.confidence < CONFIDENCE_THRESHOLD]
    return max([m for m in (held, *below[:1]) if m is not None], key=lambda m: m.confidence, default=None)


def _assign(ports: list[Definition], scored: dict[int, list[Match]]
            ) -> tuple[list[Match], list[Definition], list[Match]]:
    """Pairs best first, one to one; a match that depends on structure with a close
    runner-up (for its port definition, or for its upstream definition) is discounted."""
    chosen: dict[int, list[Match]] = {}
    held: dict[int, Match] = {}  # the best match a margin took below the threshold, as reported
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
                    and definition_name_similarity(match.port, match.upstream) >= 0.95 \
                    and match.confidence >= CONFIDENCE_THRESHOLD \
                    and all(o.upstream.file != match.upstream.file for o in chosen[index]):
                chosen[index].append(match)
                taken.add(_pair_key(match))
            continue
        if match.how in ("structure", "call graph"):
            # a look-alike of the same name in another upstream file is a runner-up too (not an overload)
            runner = max([m.confidence for m in scored[index] if m.upstream is not match.upstream
                          and (m.upstream.name != match.upstream.name or m.upstream.file != match.upstream.file)
                          and _pair_key(m) not in taken] +
                         [m.confidence for other, ms in scored.items() if other != index and other not in chosen
                          and ports[other].file == match.port.file for m in ms if m.upstream is match.upstream],
                         default=0.0)
            if runner > match.confidence - MARGIN:
                match = Match(match.port, match.upstream, match.confidence - MARGIN_PENALTY, match.how,
                              match.body, match.structure)
        if match.confidence < CONFIDENCE_THRESHOLD:
            held.setdefault(index, match)
            continue
        chosen[index] = [match]
        taken.add(_pair_key(match))
    for index, (match, *_) in list(chosen.items()):
        if match.how not in ("structure", "call graph"):
            continue
        neighbours = [m for other, ms in chosen.items() if other != index for m in ms if m.port.file == match.port.file]
        if neighbours and all(m.upstream.file != match.upstream.file for m in neighbours):
            # the rest of its file is matched elsewhere: a look-alike in a file the port does not draw from
            demoted = Match(match.port, match.upstream, match.confidence - STRAY_PENALTY, match.how, match.body,
                            match.structure)
            if demoted.confidence < CONFIDENCE_THRESHOLD:
                del chosen[index]
                scored[index] = [demoted] + [m for m in scored[index] if m is not match]
            else:
                chosen[index] = [demoted]
    proposals = [m for index in sorted(chosen) for m in chosen[index]]
    unmatched = [port for index, port in enumerate(ports) if index not in chosen]
    guesses = [guess for index in range(len(ports)) if index not in chosen
               for guess in [_nearest(scored.get(index, []), held.get(index))] if guess is not None]
    return proposals, unmatched, guesses
