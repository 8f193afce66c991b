"""Signatures: a language-neutral record of one definition's surface.

The classifier compares an upstream definition (old and new side of a commit)
with its in-tree port, which is often in another language (upstream CUDA, a
Triton port). So a signature keeps only what both sides can express
(DESIGN §6):

* ordered parameters, with names normalised so that ``src_cache`` and
  ``src_cache_ptr``, ``token_to_seq`` and ``token_to_seq_p``, and
  ``const int32_t* __restrict__ x`` and ``x`` compare equal (case folded,
  leading underscores and ``_ptr``/``_p`` suffixes dropped, types and
  qualifiers dropped, ``self``/``cls`` dropped); a constexpr/template flag and
  whether a default is present;
* dead parameters: declared but never used in the body, or used only in a
  ``(void)x;`` cast, ``del x`` or ``_ = x``;
* launches inside the definition (``k<<<grid, block, smem, stream>>>(...)``,
  including launches written inside a function-like macro the body names;
  ``k[grid](...)``, a pre-bound ``launch = k[grid]`` called later, module-level
  aliases, and launches inside same-module helpers the definition calls, two
  levels deep): the kernel, the argument identifiers, each argument's slot and
  text and the kernel parameters they bind to, the grid expression's
  identifiers resolved through simple local assignments (``dim3 grid(n)``,
  ``grid = (B * H * C,)``) and its tuple shape, and block / ``num_warps`` /
  ``num_stages`` when literal;
* in kernels, the program-id axes read (``tl.program_id``/``blockIdx``), the
  ``num_programs``/``gridDim`` axes read, and how the program's work index is
  decomposed (``pid // H``, ``pid % H``), also inside the ``@triton.jit``
  helpers it calls, plus early-exit guards;
* C++ out-parameters (written through only) and the names a Python
  definition returns.

Every fact keeps its line and the quoted source line, so a verdict can cite
it. This module holds the records, the name rules and what both languages
share, and must never import its extractors: ``signatures_cpp`` and
``signatures_python`` fill the records from C/C++/CUDA and Python/Triton
definitions, and ``extraction.signature_of`` picks one by language. These
modules only read tree-sitter nodes; they decide nothing and do no I/O, and
they never compare signatures (that is ``portq.classifier``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from portq.language.expressions import Form, Unpacked
from portq.language.expressions import int_literal as _int_literal
from portq.language.memo import STRINGS, TEXT_OR_NONE, per_definition
from portq.language.symbols import KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION, KIND_TRITON_KERNEL, Definition, grammar

# --- names ------------------------------------------------------------------

_NAME_SUFFIXES = ("_ptr", "_p")
_DROPPED_PARAMS = frozenset({"self", "cls"})


def normalise_name(name: str) -> str:
    """The comparable form of a parameter or variable name.

    Case is folded, leading underscores and one ``_ptr``/``_p`` suffix are
    dropped: ``token_to_seq_p`` → ``token_to_seq``, ``SRC_CACHE_PTR`` →
    ``src_cache``.
    """
    text = name.strip().lower().lstrip("_")
    for suffix in _NAME_SUFFIXES:
        if text.endswith(suffix) and len(text) > len(suffix):
            return text[: -len(suffix)]
    return text


def bare_name(text: str) -> str:
    """The last name of a (possibly qualified, templated, multi-line) callee:
    ``vllm::foo<T,\n N>`` → ``foo``, ``mod.kernel`` → ``kernel``, ``p->f`` → ``f``."""
    text = re.sub(r"<.*", "", text, flags=re.DOTALL)
    return re.split(r"::|\.|->", text)[-1].strip()


def normalise_kernel_name(name: str) -> str:
    """A kernel name without namespace, template arguments, leading
    underscores or a ``_kernel`` suffix: ``vllm::foo<T>`` → ``foo``,
    ``_foo_kernel`` → ``foo``."""
    text = bare_name(name)
    text = text.strip().lower().lstrip("_")
    if text.endswith("_kernel") and len(text) > len("_kernel"):
        text = text[: -len("_kernel")]
    return text


# --- records ----------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One declared parameter."""

    name: str  # as written
    normalised: str
    position: int  # 0-based among the definition's parameters
    constexpr: bool = False  # tl.constexpr annotation or C++ non-type template parameter
    has_default: bool = False
    line: int = 0
    quote: str = ""
    # Triton: a ``@triton.heuristics`` decorator computes it from the
    # kernel's own arguments, so no caller ever passes it.
    heuristic: bool = False


@dataclass(frozen=True)
class Use:
    """Where a parameter is read in the body (first real use)."""

    line: int
    quote: str


@dataclass(frozen=True)
class Launch:
    """One kernel launch inside a definition."""

    kernel: str  # as written, e.g. "vllm::gather<T, 576>" or "mod._kernel"
    kernel_normalised: str
    arguments: tuple[str, ...]  # normalised identifiers passed (positional and keyword values)
    keywords: tuple[str, ...]  # keyword names (Python launches)
    grid_text: str  # the grid expression after resolving the grid variable
    grid_identifiers: tuple[str, ...]  # normalised, transitively through simple local assignments
    grid_shape: int | None  # tuple/dim3 arity; None when unknown
    block: int | None = None  # literal threads per block (CUDA)
    num_warps: int | None = None
    num_stages: int | None = None
    line: int = 0
    quote: str = ""
    via_macro: str | None = None  # the macro whose body holds the launch
    # Each argument in order: its slot ("#0", "#1", ... for positional ones,
    # "-1", "-2", ... counted from the end for positional ones after the last
    # splat, "?" for one between two splats,
    # the normalised keyword for keyword ones, "*" for a splat, "**" for a
    # keyword splat) and its
    # normalised text; and the kernel parameters the arguments bind to when
    # the launched kernel is defined in the same file (None otherwise).
    slots: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    bound: tuple[str, ...] | None = None
    via_helper: str | None = None  # the same-module function(s) the definition calls to launch ("a > b")
    # ``unread-kernel-parameter``: the launched Triton kernel's parameters (the
    # kernel defined in the same file) its body never reads and no
    # ``@triton.heuristics`` lambda of it reads, normalised.
    unread: tuple[str, ...] = ()
    # A positional argument (or an element of a spread sequence) that is a
    # local with one value reaching the launch: (its normalised name, the
    # value's normalised text), so an expression moved into a local compares.
    argument_values: tuple[tuple[str, str], ...] = ()
    # The grid and block as canonical expressions (``portq.language.expressions``):
    # resolved through bindings and known equivalents, so they compare
    # across naming and across languages; ``grid_opaque`` lists what could
    # not be resolved; ``grid_line`` is where the grid value is written.
    grid_form: str = ""
    grid_leaves: tuple[str, ...] = ()
    grid_opaque: tuple[str, ...] = ()
    grid_line: int = 0
    grid_quote: str = ""
    block_form: str = ""
    # The locals (and module constants) the grid and the block resolve
    # through, each as (name, first line of its value, the quoted lines of
    # the value, the value's text without whitespace): where a grid changed
    # whose own line did not, the change is in one of these, and that is the
    # line a delta cites.
    grid_bindings: tuple[tuple[str, int, tuple[str, ...], str], ...] = ()
    block_bindings: tuple[tuple[str, int, tuple[str, ...], str], ...] = ()
    num_warps_bindings: tuple[tuple[str, int, tuple[str, ...], str], ...] = ()
    num_stages_bindings: tuple[tuple[str, int, tuple[str, ...], str], ...] = ()
    # ``excluded-path`` (Python): where the grid's value depends on the path, the conditions
    # (``x.dim() == 1``: one comparison of a parameter's attribute or method with an integer) of the
    # ``if``s whose assignments of the grid's inputs do not run on every path, empty unless every such
    # assignment is so guarded; and the comparisons the definition asserts of a parameter before the launch.
    path_conditions: tuple[str, ...] = ()
    asserted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decomposition:
    """``pid // H`` or ``pid % H`` applied to a value derived from a program id."""

    axis: int
    operator: str  # "//", "%", "/"
    operand: str  # normalised operand text
    line: int = 0
    quote: str = ""
    via: str = ""  # the @triton.jit helper(s) it was found in ("a > b"), "" for the kernel's own body


@dataclass
class Signature:
    """The comparable surface of one definition."""

    name: str
    qualified_name: str
    kind: str
    language: str
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    params: list[Param] = field(default_factory=list)
    dead_params: list[str] = field(default_factory=list)  # normalised names
    first_use: dict[str, Use] = field(default_factory=dict)  # normalised name -> first use
    launches: list[Launch] = field(default_factory=list)
    program_id_axes: list[int] = field(default_factory=list)
    num_programs_axes: list[int] = field(default_factory=list)
    decomposition: list[Decomposition] = field(default_factory=list)
    early_exit_guards: list[str] = field(default_factory=list)  # normalised identifiers of `if ...: return`
    early_exits: list[Use] = field(default_factory=list)  # where those guards are
    body_tokens_hash: str = ""  # hash of the token stream without comments/docstrings
    # C++ out-parameters: pointer/reference parameters the body only writes
    # through, normalised name -> the normalised fields written (the name
    # itself for a whole-value write ``*out = v``).
    out_params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    returned: tuple[str, ...] = ()  # normalised names a Python definition returns (``return a, b``)
    # Normalised parameters a ``@triton.heuristics`` lambda of the kernel reads (``args["n"]``).
    heuristic_reads: tuple[str, ...] = ()
    # ``unread-kernel-parameter``: normalised parameters of a Python host whose
    # every read is an argument of a launch filling a parameter the launched
    # kernel (defined beside it) never reads.
    forwarded_unread: tuple[str, ...] = ()
    # ``unread-kernel-parameter``: normalised parameters of a Triton kernel its
    # body never reads that a string literal of its file names (an autotuner's
    # key, a pruner's or hook's ``nargs["NAME"]``).
    tuner_reads: tuple[str, ...] = ()
    # ``hint-parameter``: normalised parameters of a Triton kernel whose every
    # read is the value of a memory hint (``eviction_policy=``, ``cache_modifier=``).
    hint_only: tuple[str, ...] = ()
    # ``default-selector-parameter``: for a Triton kernel, each parameter with a literal default whose every
    # read is the whole condition of an ``if`` (no ``elif``): (normalised name, the lines the default selects,
    # the lines it does not select), each line without whitespace or trailing comment; and the body's lines
    # read the same way, to compare with the kernel's other side.
    selector_defaults: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()
    body_lines: tuple[str, ...] = ()

    @property
    def param_names(self) -> list[str]:
        return [p.normalised for p in self.params]

    @property
    def runtime_param_names(self) -> list[str]:
        return [p.normalised for p in self.params if not p.constexpr]

    def param(self, normalised: str) -> Param | None:
        return next((p for p in self.params if p.normalised == normalised), None)

    @property
    def is_kernel(self) -> bool:
        return self.kind in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL, KIND_DEVICE_FUNCTION)

    def to_json(self) -> dict[str, Any]:
        """``dataclasses.asdict`` of the signature, built field by field: its records hold no
        nested records, and a scan that stores every upstream signature it computes writes
        thousands (``asdict`` copies every value recursively, several times slower)."""
        data = dict(vars(self))
        data["params"] = [dict(vars(p)) for p in self.params]
        data["dead_params"] = list(self.dead_params)
        data["first_use"] = {name: dict(vars(use)) for name, use in self.first_use.items()}
        data["launches"] = [dict(vars(launch)) for launch in self.launches]
        data["program_id_axes"] = list(self.program_id_axes)
        data["num_programs_axes"] = list(self.num_programs_axes)
        data["decomposition"] = [dict(vars(d)) for d in self.decomposition]
        data["early_exit_guards"] = list(self.early_exit_guards)
        data["early_exits"] = [dict(vars(u)) for u in self.early_exits]
        data["out_params"] = dict(self.out_params)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Signature":
        data = dict(data)
        data["params"] = [Param(**p) for p in data.get("params", [])]
        data["first_use"] = {k: Use(**v) for k, v in data.get("first_use", {}).items()}
        data["launches"] = [
            Launch(**{**l, "arguments": tuple(l["arguments"]), "keywords": tuple(l["keywords"]),
                      "grid_identifiers": tuple(l["grid_identifiers"]), "slots": tuple(l.get("slots", ())),
                      "texts": tuple(l.get("texts", ())), "unread": tuple(l.get("unread", ())),
                      "argument_values": tuple(tuple(v) for v in l.get("argument_values", ())),
                      "bound": tuple(l["bound"]) if l.get("bound") is not None else None,
                      "grid_leaves": tuple(l.get("grid_leaves", ())), "grid_opaque": tuple(l.get("grid_opaque", ())),
                      "path_conditions": tuple(l.get("path_conditions", ())), "asserted": tuple(l.get("asserted", ())),
                      "grid_bindings": _bindings_from_json(l.get("grid_bindings", ())),
                      **{key: _bindings_from_json(l.get(key, ())) for key in
                         ("block_bindings", "num_warps_bindings", "num_stages_bindings")}})
            for l in data.get("launches", [])
        ]
        data["decomposition"] = [Decomposition(**d) for d in data.get("decomposition", [])]
        data["early_exits"] = [Use(**u) for u in data.get("early_exits", [])]
        data["out_params"] = {k: tuple(v) for k, v in data.get("out_params", {}).items()}
        data["returned"] = tuple(data.get("returned", ()))
        data["heuristic_reads"] = tuple(data.get("heuristic_reads", ()))
        data["forwarded_unread"] = tuple(data.get("forwarded_unread", ()))
        data["tuner_reads"] = tuple(data.get("tuner_reads", ()))
        data["hint_only"] = tuple(data.get("hint_only", ()))
        data["selector_defaults"] = tuple((n, tuple(k), tuple(d)) for n, k, d in data.get("selector_defaults", ()))
        data["body_lines"] = tuple(data.get("body_lines", ()))
        return cls(**data)


# --- shared helpers (also used by anchors and reachability) -------------------------------


def node_text(node) -> str:
    """The source text of a tree-sitter node ("" for None)."""
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def definition_text(node) -> str:
    """A definition node's source, indented as in its file (so it dedents and parses alone)."""
    return " " * node.start_point[1] + node.text.decode("utf-8", errors="replace")


def walk(node) -> Iterable:
    """Every node below ``node`` (itself included), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


_text = node_text
_walk = walk


@lru_cache(maxsize=None)
def _types_query(language: str, types: tuple[str, ...]):
    from tree_sitter import Query

    return Query(grammar(language), "[" + " ".join(f"({t})" for t in types) + "] @node")


def nodes_of(node, types: tuple[str, ...], language: str) -> list:
    """The nodes of ``types`` below ``node`` (itself included), in the order
    ``walk`` visits them: found by a compiled tree-sitter query, in C, instead
    of a Python walk of every node. A subtree with a syntax error, or two
    wanted nodes with one span (whose order a sort by position cannot tell),
    is walked instead, so the answer is always the walk's."""
    if isinstance(node, Unpacked):  # one target of an unpacking: the nodes of the value it unpacks
        node = node.node
    if node.has_error:
        return [n for n in walk(node) if n.type in types]
    from tree_sitter import QueryCursor

    found = QueryCursor(_types_query(language, types)).captures(node).get("node", [])
    if len(found) < 2:
        return list(found)
    found = sorted(found, key=_preorder)
    for before, after in zip(found, found[1:]):
        if before.start_byte == after.start_byte and before.end_byte == after.end_byte:
            return [n for n in walk(node) if n.type in types]
    return found


def _preorder(node) -> tuple[int, int]:
    return node.start_byte, -node.end_byte


def _line_of(node) -> int:
    return node.start_point[0] + 1


class _Lines:
    """Quoted source lines of one blob."""

    def __init__(self, source: bytes) -> None:
        self._lines = source.decode("utf-8", errors="replace").splitlines()

    def quote(self, line: int) -> str:
        if 1 <= line <= len(self._lines):
            return self._lines[line - 1].strip()
        return ""


_CPP_NON_VARIABLES = frozenset(
    {"const", "int", "unsigned", "long", "float", "double", "void", "auto", "char", "bool",
     "int32_t", "int64_t", "uint32_t", "uint64_t", "size_t", "true", "false", "nullptr",
     "sizeof", "static_cast", "reinterpret_cast", "dim3", "std", "min", "max", "None",
     "True", "False", "triton", "tl", "math", "torch", "META", "lambda", "and", "or", "not",
     "if", "else", "int", "len", "cdiv", "ceil_div", "div_ceil"}
)


_STRINGS = ("string", "string_literal", "raw_string_literal")


def comment_free_tokens(node, spell=None, expand=None) -> list[str]:
    """The leaf tokens of ``node`` with comments and docstrings removed, and a
    trailing comma before a closing bracket dropped (formatters add those).

    ``spell(leaf)`` may respell a leaf (``portq.classifier.deltas`` renames locals);
    ``expand(node)`` may replace a node by the nodes (or literal token
    strings) standing for it, ``[]`` dropping it (``portq.classifier.deltas`` prunes
    branches a declaration sets aside)."""
    tokens: list[str] = []
    # Each node with whether it lies inside a string (None: not known yet). The walk never enters a
    # string, so the children of a node it enters lie inside one exactly when that node does: one
    # look up the parents per start node (or node ``expand`` gives), not one per leaf.
    stack: list = [(node, None)]
    while stack:
        current, inside = stack.pop()
        if isinstance(current, str):
            tokens.append(current)
            continue
        if current.type == "comment":
            continue
        replacement = expand(current) if expand is not None and current is not node else None
        if replacement is not None:
            stack.extend((r, None) for r in reversed(replacement))
            continue
        if current.child_count == 0 or current.type in _STRINGS:
            if is_docstring(current) or (_inside_string(current) if inside is None else inside):
                continue
            tokens.append(spell(current) if spell is not None else _text(current))
            continue
        below = _inside_string(current) if inside is None else inside
        stack.extend((child, below) for child in reversed(current.children))
    cleaned: list[str] = []
    for index, token in enumerate(tokens):
        if token == "," and index + 1 < len(tokens) and tokens[index + 1] in (")", "]", "}", ","):
            continue  # a trailing comma, or the one left by an argument ``expand`` dropped
        if token == "," and cleaned and cleaned[-1] in ("(", "[", "{"):
            continue
        cleaned.append(token)
    return cleaned


def has_ancestor(node, types: tuple[str, ...]) -> bool:
    """Does a node above ``node`` (not itself) have one of ``types``?"""
    parent = node.parent
    while parent is not None:
        if parent.type in types:
            return True
        parent = parent.parent
    return False


def _inside_string(node) -> bool:
    return has_ancestor(node, _STRINGS)


def is_docstring(node) -> bool:
    """True for a Python string that is the first statement of a module, class or function."""
    if node.type != "string":
        return False
    statement = node.parent
    if statement is None or statement.type != "expression_statement" or statement.named_child_count != 1:
        return False
    block = statement.parent
    if block is None or block.type not in ("block", "module"):
        return False
    first = next((c for c in block.named_children if c.type != "comment"), None)
    return first is not None and first.id == statement.id


@per_definition("definition-tokens", STRINGS)
def definition_tokens(node) -> list[str]:
    """``comment_free_tokens`` of a whole definition (which lies in no string),
    computed once per content (``portq.language.memo``). Callers never mutate it."""
    return comment_free_tokens(node)


@per_definition("body-tokens-hash", TEXT_OR_NONE)
def body_tokens_hash(node) -> str:
    """The digest of a definition's comment-free tokens."""
    import hashlib

    return hashlib.sha1("\x1f".join(definition_tokens(node)).encode()).hexdigest()


def normalised_text(node) -> str:
    """An expression's tokens without comments or spaces, names normalised
    (``valid_counts.stride(0)``, ``token_to_seq_p`` → ``token_to_seq``)."""
    text = ""
    for token in comment_free_tokens(node):
        word = re.match(r"\w", token) is not None
        if word and text and re.match(r"\w", text[-1]):
            text += " "
        text += normalise_name(token) if re.match(r"[A-Za-z_]", token) else token
    return text


UNRESOLVED = "*"  # in a binding: what a splat of unknown length reaches


def bind_arguments(slots: Iterable[str], params: list[str]) -> tuple[str, ...]:
    """The parameters (normalised, in order) that arguments in ``slots`` bind
    to, the way Python binds them: positional by index, keywords by name;
    keywords that are no parameter (launch options such as ``num_warps``)
    bind to nothing.

    A ``*expr`` splat (slot ``*``) fills as many positions as there are
    between the arguments before it and the first parameter a keyword names,
    so the positional arguments after the last splat (slots ``-k``, the k-th
    from the end) bind just before that parameter: ``k(x, *x.stride(), n,
    BLOCK=64)`` binds ``n`` to the parameter before ``BLOCK`` whatever the
    rank of ``x``. When no keyword fixes that end, or a ``**kwargs`` splat
    (slot ``**``) may hide the keyword that does, or a positional argument
    sits between two splats (slot ``?``), the binding is unresolved and
    :data:`UNRESOLVED` stands in the result for what the splats reach."""
    slots = list(slots)
    known = set(params)
    bound: list[str] = []
    # A normalised name two parameters share (``tokens``/``TOKENS``) is the
    # later one as a keyword: the earlier is the one positions can reach.
    keyword_at = [max(i for i, p in enumerate(params) if p == slot) for slot in slots if slot in known]
    leading = sum(1 for slot in slots if slot.startswith("#"))
    trailing = sum(1 for slot in slots if slot.startswith("-"))
    end = None
    if "*" in slots and "**" not in slots and keyword_at and leading + trailing <= min(keyword_at):
        end = min(keyword_at)
    for slot in slots:
        if slot.startswith("#"):
            index = int(slot[1:])
            if index < len(params):
                bound.append(params[index])
        elif slot.startswith("-"):
            if end is not None:
                bound.append(params[end - int(slot[1:])])
        elif slot == "*":
            if end is not None:
                bound.extend(params[leading:end - trailing])
        elif slot in known:
            bound.append(slot)
    if "?" in slots or (end is None and ("*" in slots or "**" in slots)):
        bound.append(UNRESOLVED)
    return tuple(dict.fromkeys(bound))


def _root(node):
    while node.parent is not None:
        node = node.parent
    return node


@lru_cache(maxsize=16)
def file_definitions(root, language: str) -> tuple[Definition, ...]:
    """The definitions of a parsed file, from its root node: walked once per
    file (the tree is never edited in place), however many launches and
    helpers of however many of its signatures ask."""
    from portq.language.symbols import definitions_in

    return tuple(definitions_in(root, language))


def kernel_params_in_file(root, kernel: str, language: str, extractor) -> tuple[str, ...] | None:
    """Normalised parameters of the kernel ``kernel`` (as written at the
    launch) when the file under ``root`` defines it, else None; ``extractor``
    is the language's extractor class (this module never imports one)."""
    bare = bare_name(kernel)
    candidates = [d for d in file_definitions(root, language) if d.name == bare]
    kernels = [d for d in candidates if d.kind in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL)] or candidates
    if not kernels:
        return None
    signature = Signature(kernels[0].name, kernels[0].qualified_name, kernels[0].kind, language)
    extractor(kernels[0].node, signature, _Lines(b""))._params()
    return tuple(p.normalised for p in signature.params if not p.name.startswith("*"))


def returns_of(node):
    """``(function, body, return statements)`` of the function ``node``
    (Python, possibly decorated, or C++), or None when it has no ``return``
    of a value (or one bare ``return``): what a helper that computes a grid
    offers to compare. Each language's ``single_return`` reads the rest."""
    if node is None:
        return None
    function = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    body = function.child_by_field_name("body") if function is not None else None
    returns = [n for n in _walk(body) if n.type == "return_statement"] if body is not None else []
    if not returns or any(not r.named_children for r in returns):
        return None
    return function, body, returns


def ancestors(node):
    while node is not None:
        yield node
        node = node.parent


class ReachingLocals(dict):
    """Local assignments of a body, resolved where they are read. As a
    mapping it holds only names assigned once; ``at(use)`` gives the value
    of the assignment that reaches ``use``, because a later ``grid = ...``
    must not be read as an earlier one. A language fills ``definitions``
    (name -> [(statement, value node)] in source order; a value of None is
    an update that is not a plain value) and says which nodes are loops and
    which block holds a statement."""

    loops: tuple[str, ...] = ()

    def __init__(self):
        super().__init__()
        self.definitions: dict[str, list[tuple[Any, Any]]] = {}

    def settle(self) -> None:
        for name, found in self.definitions.items():
            if len(found) == 1 and found[0][1] is not None:
                self[name] = found[0][1]

    @staticmethod
    def holder(statement):
        return statement.parent

    def reaching(self, name: str, use, around=None) -> tuple[list[tuple[Any, Any]], bool]:
        """The assignments of ``name`` that can reach ``use``: the last one
        before it that every path runs, the conditional ones after that, and
        those later in a loop around ``use``; and whether one of them runs on
        every path. ``around`` is ``_around(use)``, when the caller asks of
        many names at one use."""
        found = self.definitions.get(name, [])
        if not found:
            return [], False
        use_ancestors, loops = around if around is not None else self._around(use)
        before = [d for d in found if d[0].end_byte <= use.start_byte]
        reaching: list[tuple[Any, Any]] = []
        always = False
        for definition in reversed(before):
            reaching.append(definition)
            holder = self.holder(definition[0])
            if holder is not None and holder.id in use_ancestors:  # the block holding it holds the use
                always = True
                break
        for definition in found:
            if definition[0].end_byte > use.start_byte and \
                    any(loop.start_byte <= definition[0].start_byte < loop.end_byte for loop in loops):
                reaching.append(definition)
        return reaching, always

    def _around(self, use) -> tuple[set[int], list]:
        """The ids of ``use`` and the nodes holding it, and the loops among them (innermost first)."""
        held_by = list(ancestors(use))
        return {a.id for a in held_by}, [a for a in held_by if a.type in self.loops]

    def at(self, use) -> "ResolvedLocals":
        """name -> the one value that reaches ``use``; names that several
        assignments (or none, on some path) reach are in ``ambiguous``."""
        resolved = ResolvedLocals()
        around = self._around(use)
        for name in self.definitions:
            reaching, always = self.reaching(name, use, around)
            if not reaching:
                continue
            if len(reaching) == 1 and reaching[0][1] is not None and always:
                resolved[name] = reaching[0][1]
            else:
                resolved.ambiguous.add(name)
        return resolved


class ResolvedLocals(dict):
    """Locals resolved at one use; ``ambiguous`` names more than one assignment reaches."""

    def __init__(self):
        super().__init__()
        self.ambiguous: set[str] = set()

    def at(self, use) -> "ResolvedLocals":
        return self


def _form_fields(form: Form, grid_expression, launch_line: int, same_file: bool, lines: "_Lines") -> dict[str, Any]:
    line = _line_of(grid_expression) if grid_expression is not None and same_file else launch_line
    return dict(grid_form=form.text, grid_leaves=form.leaves, grid_opaque=form.opaque, grid_line=line,
                grid_quote=lines.quote(line), grid_bindings=bindings_quoted(form, lines))


def bindings_quoted(form: Form, lines: "_Lines") -> tuple[tuple[str, int, tuple[str, ...], str], ...]:
    """The bindings a form was resolved through: name, first line, quoted lines, value text."""
    quoted = []
    for name, value in form.bindings:
        first, last = value.start_point[0] + 1, value.end_point[0] + 1
        quoted.append((name, first, tuple(lines.quote(n) for n in range(first, last + 1)),
                       re.sub(r"\s+", "", _text(value))))
    return tuple(quoted)


def _bindings_from_json(items) -> tuple[tuple[str, int, tuple[str, ...], str], ...]:
    return tuple((name, line, tuple(quotes), text) for name, line, quotes, text in items)


def _closure_identifiers(node, assignments, identifiers_of, depth: int = 4) -> set[str]:
    """Normalised identifiers of ``node`` plus those of the simple local
    assignments they name, a few levels deep."""
    result: set[str] = set()
    frontier = identifiers_of(node)
    seen: set[str] = set()
    for _ in range(depth):
        following: list[str] = []
        for name in frontier:
            if name in seen:
                continue
            seen.add(name)
            result.add(normalise_name(name))
            if name in assignments:
                following.extend(identifiers_of(assignments[name]))
        frontier = following
    return result


def _resolve_literal(node, assignments, identifiers_of) -> int | None:
    if node is None:
        return None
    for _ in range(4):
        text = _text(node).strip("() ")
        value = _int_literal(text)
        if value is not None:
            return value
        if node.type in ("identifier", "type_identifier") and _text(node) in assignments:
            node = assignments[_text(node)]
            continue
        if node.type in ("parameter_list", "argument_list") and len(node.named_children) == 1:
            node = node.named_children[0]
            if node.type == "parameter_declaration":
                node = node.named_children[0] if node.named_children else node
            continue
        return None
    return None
