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
it. This module only reads tree-sitter nodes; it decides nothing and does no
I/O. It must not compare signatures (that is ``portq.verdicts``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from portq.expressions import Form, canonical_form
from portq.expressions import int_literal as _int_literal
from portq.symbols import (
    KIND_CUDA_KERNEL,
    KIND_DEVICE_FUNCTION,
    KIND_FUNCTION,
    KIND_OP_SCHEMA,
    KIND_TRITON_KERNEL,
    Definition,
    parse,
)

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
    # the normalised keyword for keyword ones, "*" for a splat) and its
    # normalised text; and the kernel parameters the arguments bind to when
    # the launched kernel is defined in the same file (None otherwise).
    slots: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    bound: tuple[str, ...] | None = None
    via_helper: str | None = None  # the same-module function(s) the definition calls to launch ("a > b")
    # The grid and block as canonical expressions (``portq.expressions``):
    # resolved through bindings and known equivalents, so they compare
    # across naming and across languages; ``grid_opaque`` lists what could
    # not be resolved; ``grid_line`` is where the grid value is written.
    grid_form: str = ""
    grid_leaves: tuple[str, ...] = ()
    grid_opaque: tuple[str, ...] = ()
    grid_line: int = 0
    grid_quote: str = ""
    block_form: str = ""


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
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Signature":
        data = dict(data)
        data["params"] = [Param(**p) for p in data.get("params", [])]
        data["first_use"] = {k: Use(**v) for k, v in data.get("first_use", {}).items()}
        data["launches"] = [
            Launch(**{**l, "arguments": tuple(l["arguments"]), "keywords": tuple(l["keywords"]),
                      "grid_identifiers": tuple(l["grid_identifiers"]), "slots": tuple(l.get("slots", ())),
                      "texts": tuple(l.get("texts", ())),
                      "bound": tuple(l["bound"]) if l.get("bound") is not None else None,
                      "grid_leaves": tuple(l.get("grid_leaves", ())), "grid_opaque": tuple(l.get("grid_opaque", ()))})
            for l in data.get("launches", [])
        ]
        data["decomposition"] = [Decomposition(**d) for d in data.get("decomposition", [])]
        data["early_exits"] = [Use(**u) for u in data.get("early_exits", [])]
        data["out_params"] = {k: tuple(v) for k, v in data.get("out_params", {}).items()}
        data["returned"] = tuple(data.get("returned", ()))
        return cls(**data)


# --- shared helpers (also used by anchors and reachability) -------------------------------


def node_text(node) -> str:
    """The source text of a tree-sitter node ("" for None)."""
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def walk(node) -> Iterable:
    """Every node below ``node`` (itself included), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


_text = node_text
_walk = walk


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


def comment_free_tokens(node, spell=None, expand=None) -> list[str]:
    """The leaf tokens of ``node`` with comments and docstrings removed, and a
    trailing comma before a closing bracket dropped (formatters add those).

    ``spell(leaf)`` may respell a leaf (``portq.deltas`` renames locals);
    ``expand(node)`` may replace a node by the nodes (or literal token
    strings) standing for it, ``[]`` dropping it (``portq.deltas`` prunes
    branches a declaration sets aside)."""
    tokens: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            tokens.append(current)
            continue
        if current.type == "comment":
            continue
        replacement = expand(current) if expand is not None and current is not node else None
        if replacement is not None:
            stack.extend(reversed(replacement))
            continue
        if current.child_count == 0 or current.type in ("string", "string_literal", "raw_string_literal"):
            if is_docstring(current) or _inside_string(current):
                continue
            tokens.append(spell(current) if spell is not None else _text(current))
            continue
        stack.extend(reversed(current.children))
    cleaned: list[str] = []
    for index, token in enumerate(tokens):
        if token == "," and index + 1 < len(tokens) and tokens[index + 1] in (")", "]", "}", ","):
            continue  # a trailing comma, or the one left by an argument ``expand`` dropped
        if token == "," and cleaned and cleaned[-1] in ("(", "[", "{"):
            continue
        cleaned.append(token)
    return cleaned


def _inside_string(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("string", "string_literal", "raw_string_literal"):
            return True
        parent = parent.parent
    return False


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


def body_tokens_hash(node) -> str:
    import hashlib

    return hashlib.sha1("\x1f".join(comment_free_tokens(node)).encode()).hexdigest()


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


def bind_arguments(slots: Iterable[str], params: list[str]) -> tuple[str, ...]:
    """The parameters (normalised, in order) that arguments in ``slots`` bind
    to: positional by index, keywords by name; keywords that are no
    parameter (launch options such as ``num_warps``) bind to nothing."""
    known = set(params)
    bound: list[str] = []
    for slot in slots:
        if slot.startswith("#"):
            index = int(slot[1:])
            if index < len(params):
                bound.append(params[index])
        elif slot in known:
            bound.append(slot)
    return tuple(dict.fromkeys(bound))


def _root(node):
    while node.parent is not None:
        node = node.parent
    return node


def _kernel_params_in_file(root, kernel: str, language: str) -> list[str] | None:
    """Normalised parameters of the kernel ``kernel`` (as written at the
    launch) when the file defines it, else None. C++ template parameters go
    between ``<>``, not in the argument list, so only function parameters count."""
    from portq.symbols import definitions_in

    bare = bare_name(kernel)
    candidates = [d for d in definitions_in(root, language) if d.name == bare]
    kernels = [d for d in candidates if d.kind in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL)] or candidates
    if not kernels:
        return None
    signature = Signature(kernels[0].name, kernels[0].qualified_name, kernels[0].kind, language)
    lines = _Lines(b"")
    if language == "cpp":
        _CppExtractor(kernels[0].node, signature, lines)._params()
    else:
        _PythonExtractor(kernels[0].node, signature, lines)._params()
    return [p.normalised for p in signature.params if not p.name.startswith("*")]


# --- entry point --------------------------------------------------------------


def signature_of(definition: Definition, source: bytes, path: str = "", imported=None) -> Signature:
    """The signature of ``definition`` (its ``node`` must come from ``source``).
    ``imported(name)`` finds a helper imported from another module of the
    same package (``single_return`` of it), for grids computed there."""
    lines = _Lines(source)
    signature = Signature(
        name=definition.name,
        qualified_name=definition.qualified_name,
        kind=definition.kind,
        language=definition.language,
        path=path,
        start_line=definition.start_line,
        end_line=definition.end_line,
    )
    node = definition.node
    if node is None:
        return signature
    signature.body_tokens_hash = body_tokens_hash(node)
    if definition.kind == KIND_OP_SCHEMA:
        _schema_signature(node, signature, lines)
    elif definition.language == "cpp":
        _CppExtractor(node, signature, lines, imported).run()
    elif definition.language == "python":
        _PythonExtractor(node, signature, lines, imported).run()
    return signature


# --- op schemas ----------------------------------------------------------------

_SCHEMA_PARAMS = re.compile(r"\((.*)\)\s*->", re.S)


def _schema_signature(node, signature: Signature, lines: _Lines) -> None:
    """``ops.def("name(Tensor a, int b, Tensor? c=None) -> ()")``: params only."""
    content = "".join(_text(c) for c in _walk(node) if c.type in ("string_content", "raw_string_content"))
    match = _SCHEMA_PARAMS.search(content)
    if not match:
        return
    line = _line_of(node)
    for position, part in enumerate(p for p in _split_top_level(match.group(1)) if p.strip()):
        declaration, _, default = part.partition("=")
        name = declaration.strip().split()[-1] if declaration.strip() else ""
        signature.params.append(
            Param(name, normalise_name(name), position, False, bool(default.strip()), line, lines.quote(line))
        )


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


# --- C / C++ / CUDA ----------------------------------------------------------------


class _CppExtractor:
    def __init__(self, node, signature: Signature, lines: _Lines, imported=None) -> None:
        self.imported = imported  # helpers and macro roots of the headers the file includes (portq.tree_index)
        self.outer = node
        self.signature = signature
        self.lines = lines
        self.function = node
        if node.type == "template_declaration":
            self.function = next((c for c in node.named_children if c.type == "function_definition"), node)
        self.body = self.function.child_by_field_name("body")

    def run(self) -> None:
        self._template_params()
        self._params()
        if self.body is None:
            return
        self._dead_params()
        self._out_params()
        self._launches()
        self._program_ids()

    def _out_params(self) -> None:
        """Non-const pointer/reference parameters the body only writes through
        (``out->f = v``, ``(*out).f = v``, ``*out = v``, ``ref = v``): a
        Triton port returns these values instead of taking the parameter."""
        candidates = {}
        for declaration in self._parameter_nodes():
            declarator = declaration.child_by_field_name("declarator")
            if declarator is None or declarator.type not in ("pointer_declarator", "reference_declarator"):
                continue
            if any(c.type == "type_qualifier" and _text(c) == "const" for c in declaration.children):
                continue
            name = self._declarator_name(declarator)
            if name:
                candidates[name] = []
        for node in _walk(self.body):
            if node.type != "identifier" or _text(node) not in candidates or candidates[_text(node)] is None:
                continue
            written = _cpp_written_through(node)
            if written is None:
                candidates[_text(node)] = None  # read or passed on: not an out-parameter
            else:
                candidates[_text(node)].append(written)
        for name, fields in candidates.items():
            if fields:
                self.signature.out_params[normalise_name(name)] = tuple(
                    dict.fromkeys(normalise_name(f) for f in fields))

    def _parameter_nodes(self) -> list:
        declarator = self.function.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        return [c for c in (parameters.named_children if parameters else [])
                if c.type in ("parameter_declaration", "optional_parameter_declaration")]

    def _template_params(self) -> None:
        if self.outer.type != "template_declaration":
            return
        parameters = self.outer.child_by_field_name("parameters")
        for child in parameters.named_children if parameters else []:
            if child.type in ("parameter_declaration", "optional_parameter_declaration"):
                name = self._declarator_name(child.child_by_field_name("declarator"))
                if name:
                    self._add_param(name, child, constexpr=True,
                                    has_default=child.type == "optional_parameter_declaration")

    def _params(self) -> None:
        declarator = self.function.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        for child in parameters.named_children if parameters else []:
            if child.type not in ("parameter_declaration", "optional_parameter_declaration",
                                  "variadic_parameter_declaration"):
                continue
            name = self._declarator_name(child.child_by_field_name("declarator"))
            if name:
                self._add_param(name, child, constexpr=False,
                                has_default=child.type == "optional_parameter_declaration")

    def _add_param(self, name: str, node, constexpr: bool, has_default: bool) -> None:
        line = _line_of(node)
        self.signature.params.append(
            Param(name, normalise_name(name), len(self.signature.params), constexpr, has_default,
                  line, self.lines.quote(line))
        )

    @staticmethod
    def _declarator_name(node) -> str | None:
        while node is not None:
            if node.type in ("identifier", "field_identifier"):
                return _text(node)
            inner = node.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in node.named_children if c.type == "identifier"), None)
                if inner is None:
                    return None
            node = inner
        return None

    def _dead_params(self) -> None:
        wanted = {p.name: p for p in self.signature.params}
        uses: dict[str, list[int]] = {}
        for node in _walk(self.body):
            if node.type not in ("identifier", "type_identifier") or _text(node) not in wanted:
                continue
            if self._is_void_cast(node):
                continue
            uses.setdefault(_text(node), []).append(_line_of(node))
        # Uses inside a launch macro the body names count as uses (cited at the mention).
        for _, macro_root, mention in self._launch_macros():
            for node in _walk(macro_root):
                if node.type in ("identifier", "type_identifier") and _text(node) in wanted:
                    uses.setdefault(_text(node), []).append(_line_of(mention))
        for param in self.signature.params:
            found = uses.get(param.name)
            if found:
                line = min(found)
                self.signature.first_use[param.normalised] = Use(line, self.lines.quote(line))
            elif not param.constexpr:
                self.signature.dead_params.append(param.normalised)

    @staticmethod
    def _is_void_cast(node) -> bool:
        parent = node.parent
        if parent is None or parent.type != "cast_expression":
            return False
        type_node = parent.child_by_field_name("type")
        return _text(type_node).replace(" ", "") == "void" and parent.parent is not None and \
            parent.parent.type == "expression_statement"

    # -- launches

    def _local_assignments(self, scope) -> dict[str, Any]:
        return self._assignments_in(scope)

    @staticmethod
    def _assignments_in(scope) -> dict[str, Any]:
        """name -> expression node for simple local declarations/assignments
        (``dim3 grid(n)``, ``auto g = x;``, ``g = x;``), first one wins."""
        assignments: dict[str, Any] = {}
        for node in _walk(scope):
            if node.type == "init_declarator":
                name = node.child_by_field_name("declarator")
                value = node.child_by_field_name("value")
                if name is not None and name.type == "identifier" and value is not None:
                    assignments.setdefault(_text(name), value)
            elif node.type == "declaration":
                declarator = node.child_by_field_name("declarator")
                # The most vexing parse: `dim3 grid(num_tokens);` is a function declarator.
                if declarator is not None and declarator.type == "function_declarator":
                    name = declarator.child_by_field_name("declarator")
                    parameters = declarator.child_by_field_name("parameters")
                    if name is not None and name.type == "identifier" and parameters is not None:
                        assignments.setdefault(_text(name), parameters)
            elif node.type == "assignment_expression":
                left = node.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    assignments.setdefault(_text(left), node.child_by_field_name("right"))
        return assignments

    def _helper(self, name: str):
        """A single-return function of this file, else of an included header, for grids computed there."""
        if not hasattr(self, "_functions"):
            from portq.symbols import definitions_in

            self._functions = {d.name: d for d in definitions_in(_root(self.outer), "cpp")
                               if d.kind in (KIND_FUNCTION, KIND_DEVICE_FUNCTION)}
        found = self._functions.get(name)
        if found is not None and found.node is not None:
            node = found.node
            if node.type == "template_declaration":
                node = next((c for c in node.named_children if c.type == "function_definition"), None)
            return single_return(node)
        return self.imported(name) if self.imported is not None else None

    def _launch_macros(self) -> list:
        """Function-like macros, defined in the same file, that contain a
        ``<<<`` launch and whose name the body mentions (vLLM's
        ``DISPATCH_BY_KV_CACHE_DTYPE(..., CALL_GATHER_CACHE)`` style), as
        ``(name, parsed body, the mentioning node)``."""
        if hasattr(self, "_macros"):
            return self._macros
        self._macros = []
        if self.body is None:
            return self._macros
        root = self.outer
        while root.parent is not None:
            root = root.parent
        mentions = {}
        for node in _walk(self.body):
            if node.type == "identifier":
                mentions.setdefault(_text(node), node)
        roots = [root] + list(getattr(self.imported, "roots", ()))  # macros of included headers too
        for node in (n for r in roots for n in _walk(r)):
            if node.type != "preproc_function_def":
                continue
            name = _text(node.child_by_field_name("name"))
            value = node.child_by_field_name("value")
            if name in mentions and value is not None and "<<<" in _text(value):
                body_text = _text(value).replace("\\\n", "\n")
                wrapped = ("void __portq_macro() {\n" + body_text + "\n;}\n").encode()
                self._macros.append((name, parse(wrapped, "cpp").root_node, mentions[name]))
        return self._macros

    def _launches(self) -> None:
        assignments = self._local_assignments(self.body)
        for node in _walk(self.body):
            if node.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in node.children):
                self._add_launch(node, assignments, None, node)
        for name, macro_root, mention in self._launch_macros():
            for node in _walk(macro_root):
                if node.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in node.children):
                    self._add_launch(node, assignments, name, mention)

    def _add_launch(self, node, assignments, via_macro: str | None, cite) -> None:
        function = node.child_by_field_name("function")
        config = next(c for c in node.children if c.type == "kernel_call_syntax")
        config_args = [c for c in config.named_children]
        arguments = node.child_by_field_name("arguments")
        grid_node = config_args[0] if config_args else None
        grid_expression, shape = self._resolve_grid(grid_node, assignments)
        identifiers = _closure_identifiers(grid_expression, assignments, _cpp_identifiers)
        block, block_form = None, ""
        if len(config_args) > 1:
            block_expression, _ = self._resolve_grid(config_args[1], assignments)
            block = _resolve_literal(block_expression, assignments, _cpp_identifiers)
            block_form = canonical_form(config_args[1], assignments.get, normalise_name, self._helper).text
        grid_form = canonical_form(grid_node, assignments.get, normalise_name, self._helper, grid=True) \
            if grid_node is not None \
            else Form("")
        argument_nodes = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
        argument_ids = tuple(normalise_name(i) for a in argument_nodes for i in _cpp_identifiers(a)[:1])
        line = _line_of(cite)
        kernel = _text(function)
        slots = tuple(f"#{index}" for index in range(len(argument_nodes)))
        params = _kernel_params_in_file(_root(self.outer), kernel, "cpp")
        self.signature.launches.append(
            Launch(
                kernel=kernel,
                kernel_normalised=normalise_kernel_name(kernel),
                arguments=argument_ids,
                keywords=(),
                grid_text=_text(grid_expression) if grid_expression is not None else "",
                grid_identifiers=tuple(sorted(identifiers)),
                grid_shape=shape,
                block=block,
                line=line,
                quote=self.lines.quote(line),
                via_macro=via_macro,
                **_form_fields(grid_form, grid_expression, line, via_macro is None, self.lines),
                block_form=block_form,
                slots=slots,
                texts=tuple(normalised_text(a) for a in argument_nodes),
                bound=bind_arguments(slots, params) if params is not None else None,
            )
        )

    @staticmethod
    def _resolve_grid(node, assignments):
        """The expression a grid/block argument stands for, and its dim3 arity."""
        if node is None:
            return None, None
        seen = set()
        while node is not None and node.type in ("identifier", "type_identifier") \
                and _text(node) in assignments and _text(node) not in seen:
            seen.add(_text(node))
            node = assignments[_text(node)]
        shape = None
        if node is not None and node.type in ("parameter_list", "argument_list"):
            shape = len(node.named_children)
        elif node is not None and node.type == "call_expression" and _text(node.child_by_field_name("function")) == "dim3":
            arguments = node.child_by_field_name("arguments")
            shape = len(arguments.named_children) if arguments else None
        elif node is not None and node.type == "initializer_list":
            shape = len(node.named_children)
        elif node is not None:
            shape = 1
        return node, shape

    def _program_ids(self) -> None:
        for node in _walk(self.body):
            if node.type == "field_expression":
                base = _text(node.child_by_field_name("argument"))
                field_name = _text(node.child_by_field_name("field"))
                axis = {"x": 0, "y": 1, "z": 2}.get(field_name)
                if axis is None:
                    continue
                if base == "blockIdx" and axis not in self.signature.program_id_axes:
                    self.signature.program_id_axes.append(axis)
                elif base == "gridDim" and axis not in self.signature.num_programs_axes:
                    self.signature.num_programs_axes.append(axis)


def single_return(node):
    """``(parameter names, returned expression, local assignments)`` when the
    function ``node`` (Python, or a C++ ``function_definition``) returns
    exactly one expression, else None."""
    if node is None:
        return None
    function = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    body = function.child_by_field_name("body") if function is not None else None
    returns = [n for n in _walk(body) if n.type == "return_statement"] if body is not None else []
    if len(returns) != 1 or not returns[0].named_children:
        return None
    if function.type == "function_definition" and function.child_by_field_name("declarator") is not None:  # C++
        declarator = function.child_by_field_name("declarator")
        parameters = declarator.child_by_field_name("parameters") if declarator.type == "function_declarator" else None
        names = [_CppExtractor._declarator_name(p.child_by_field_name("declarator")) or ""
                 for p in (parameters.named_children if parameters else []) if p.type.endswith("parameter_declaration")]
        return names, returns[0].named_children[0], _CppExtractor._assignments_in(body)
    return _python_parameter_names(function), returns[0].named_children[0], _python_assignments(body)


def _form_fields(form: Form, grid_expression, launch_line: int, same_file: bool, lines: "_Lines") -> dict[str, Any]:
    line = _line_of(grid_expression) if grid_expression is not None and same_file else launch_line
    return dict(grid_form=form.text, grid_leaves=form.leaves, grid_opaque=form.opaque, grid_line=line,
                grid_quote=lines.quote(line))


def _cpp_written_through(identifier) -> str | None:
    """The field (or the name itself) a plain ``=`` writes through
    ``identifier``, or None when this occurrence is anything but such a write."""
    node, field_name = identifier, None
    parent = node.parent
    if parent is not None and parent.type == "pointer_expression":
        node, parent = parent, parent.parent
        if parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
    if parent is not None and parent.type == "field_expression" and parent.child_by_field_name("argument") is not None \
            and parent.child_by_field_name("argument").id == node.id:
        field_name = _text(parent.child_by_field_name("field"))
        node, parent = parent, parent.parent
    if parent is None or parent.type != "assignment_expression":
        return None
    left, operator = parent.child_by_field_name("left"), parent.child_by_field_name("operator")
    if left is None or left.id != node.id or _text(operator) != "=":
        return None
    return field_name or _text(identifier)


def _cpp_identifiers(node) -> list[str]:
    """Variable-like identifiers in a C++ expression: callees, namespaces,
    field names and types are left out."""
    if node is None:
        return []
    found: list[str] = []
    for current in _walk(node):
        if current.type not in ("identifier", "type_identifier"):
            continue
        parent = current.parent
        if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") is not None \
                and parent.child_by_field_name("function").id == current.id:
            continue
        if parent is not None and parent.type in ("template_function", "qualified_identifier", "template_type"):
            continue
        text = _text(current)
        if text in _CPP_NON_VARIABLES:
            continue
        found.append(text)
    return found


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


# --- Python / Triton ---------------------------------------------------------------


class _PythonExtractor:
    def __init__(self, node, signature: Signature, lines: _Lines, imported=None) -> None:
        self.imported = imported  # name -> single_return() of a helper imported from a sibling module
        self.outer = node
        self.signature = signature
        self.lines = lines
        self.function = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
        self.body = self.function.child_by_field_name("body") if self.function is not None else None

    def run(self) -> None:
        if self.function is None:
            return
        if self.function.type == "class_definition":
            self._fields()
            return
        self._params()
        if self.body is None:
            return
        self._dead_params()
        self._returned()
        assignments = self._local_assignments()
        self._launches(assignments)
        self._program_ids(assignments)

    def _returned(self) -> None:
        """Names the function returns (``return a, b`` → ``a, b``), nested
        definitions left out."""
        names: list[str] = []
        stack = list(self.body.children)
        while stack:
            node = stack.pop()
            if node.type in ("function_definition", "lambda", "class_definition", "decorated_definition"):
                continue
            if node.type == "return_statement":
                value = next(iter(node.named_children), None)
                if value is not None and value.type == "parenthesized_expression" and value.named_child_count == 1:
                    value = value.named_children[0]
                parts = value.named_children if value is not None and value.type in ("expression_list", "tuple") \
                    else ([value] if value is not None else [])
                names.extend(normalise_name(_text(p)) for p in parts if p.type == "identifier")
                continue
            stack.extend(node.children)
        self.signature.returned = tuple(dict.fromkeys(names))

    def _params(self) -> None:
        parameters = self.function.child_by_field_name("parameters")
        for child in parameters.named_children if parameters else []:
            name, constexpr, has_default = None, False, False
            if child.type == "identifier":
                name = _text(child)
            elif child.type == "typed_parameter":
                name_node = next((c for c in child.named_children if c.type == "identifier"), None)
                name = _text(name_node) if name_node is not None else None
                constexpr = "constexpr" in _text(child.child_by_field_name("type"))
            elif child.type in ("default_parameter", "typed_default_parameter"):
                name = _text(child.child_by_field_name("name"))
                constexpr = "constexpr" in _text(child.child_by_field_name("type"))
                has_default = True
            elif child.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                inner = next((c for c in child.named_children if c.type == "identifier"), None)
                name = _text(child)[: len(_text(child)) - len(_text(inner))] + _text(inner) if inner is not None else None
            if not name or name in _DROPPED_PARAMS:
                continue
            line = _line_of(child)
            bare = name.lstrip("*")
            self.signature.params.append(
                Param(name, normalise_name(bare), len(self.signature.params), constexpr, has_default,
                      line, self.lines.quote(line))
            )

    def _fields(self) -> None:
        """A class's annotated fields (dataclass style) stand for its parameters."""
        for statement in self.body.named_children if self.body is not None else []:
            if statement.type != "expression_statement" or not statement.named_children:
                continue
            assignment = statement.named_children[0]
            if assignment.type != "assignment" or assignment.child_by_field_name("type") is None:
                continue
            left = assignment.child_by_field_name("left")
            if left is None or left.type != "identifier":
                continue
            name = _text(left)
            line = _line_of(statement)
            self.signature.params.append(
                Param(name, normalise_name(name), len(self.signature.params),
                      "ClassVar" in _text(assignment.child_by_field_name("type")),
                      assignment.child_by_field_name("right") is not None, line, self.lines.quote(line))
            )

    def _dead_params(self) -> None:
        wanted = {p.name.lstrip("*"): p for p in self.signature.params}
        uses: dict[str, list[int]] = {}
        for node in _walk(self.body):
            if node.type != "identifier" or _text(node) not in wanted:
                continue
            if not _is_python_read(node) or _is_discard(node):
                continue
            uses.setdefault(_text(node), []).append(_line_of(node))
        for param in self.signature.params:
            found = uses.get(param.name.lstrip("*"))
            if found:
                line = min(found)
                self.signature.first_use[param.normalised] = Use(line, self.lines.quote(line))
            elif not param.name.startswith("*"):
                self.signature.dead_params.append(param.normalised)

    def _local_assignments(self) -> dict[str, Any]:
        return _python_assignments(self.body)

    MAX_HELPER_DEPTH = 2
    """How deep launches and program-id use are followed into same-module helpers."""

    def _module(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The file's top-level functions (name -> Definition) and simple
        module-level assignments (name -> value node), computed once."""
        if not hasattr(self, "_module_cache"):
            from portq.symbols import definitions_in

            root = _root(self.outer)
            functions = {d.name: d for d in definitions_in(root, "python")
                         if d.qualified_name == d.name and d.kind in (KIND_FUNCTION, KIND_TRITON_KERNEL)}
            assignments: dict[str, Any] = {}
            for statement in root.named_children:
                if statement.type == "expression_statement" and statement.named_children \
                        and statement.named_children[0].type == "assignment":
                    left = statement.named_children[0].child_by_field_name("left")
                    right = statement.named_children[0].child_by_field_name("right")
                    if left is not None and left.type == "identifier" and right is not None:
                        assignments.setdefault(_text(left), right)
            self._module_cache = (functions, assignments)
        return self._module_cache

    def _launches(self, assignments) -> None:
        self._collect_launches(self.body, assignments, None, 0, {}, {self.signature.name})
        unique: dict[tuple[str, int], Launch] = {}
        for launch in self.signature.launches:  # one launch site reached through two helpers is one launch
            unique.setdefault((launch.kernel, launch.line), launch)
        self.signature.launches = list(unique.values())

    def _collect_launches(self, body, assignments, via: str | None, depth: int, substitution: dict[str, Any],
                          seen: set[str]) -> None:
        """Launches in ``body``: ``k[grid](...)``, a pre-bound ``launch = k[grid]``
        called later (local or module-level), and those inside same-module
        helper functions it calls, ``MAX_HELPER_DEPTH`` levels deep, with the
        helper's parameters replaced by the caller's arguments."""
        for node in _walk(body):
            if node.type != "call":
                continue
            function = node.child_by_field_name("function")
            if function is None:
                continue
            target = self._launch_target(function, assignments, substitution)
            if target is not None:
                self._add_launch(node, target[0], target[1], assignments, via, substitution)
                continue
            helper = self._called_helper(function, KIND_FUNCTION, seen) if depth < self.MAX_HELPER_DEPTH else None
            if helper is None:
                continue
            name, helper_function, helper_body = helper
            bindings = _bind_call(helper_function, node, substitution)
            self._collect_launches(helper_body, _python_assignments(helper_body), f"{via} > {name}" if via else name,
                                   depth + 1, bindings, seen | {name})

    def _called_helper(self, function, kind: str, seen: set[str]):
        """``(name, function node, body)`` of the same-module function of
        ``kind`` that a call of ``function`` (an identifier) reaches, unless
        it is one of ``seen`` (recursion)."""
        if function.type != "identifier":
            return None
        functions, _ = self._module()
        helper = functions.get(_text(function))
        if helper is None or helper.kind != kind or helper.name in seen:
            return None
        helper_function = helper.node.child_by_field_name("definition") \
            if helper.node.type == "decorated_definition" else helper.node
        body = helper_function.child_by_field_name("body")
        return (helper.name, helper_function, body) if body is not None else None

    def _launch_target(self, function, assignments, substitution):
        """``(kernel node, grid node)`` when calling ``function`` launches a kernel."""
        if function.type == "subscript":
            return function.child_by_field_name("value"), function.child_by_field_name("subscript")
        if function.type != "identifier":
            return None
        functions, module_assignments = self._module()
        name = _text(function)
        value = substitution.get(name) or assignments.get(name)
        if value is None and name not in functions:
            value = module_assignments.get(name)
        if value is not None and value.type == "subscript":
            return value.child_by_field_name("value"), value.child_by_field_name("subscript")
        return None

    def _kernel_name(self, kernel_node, substitution) -> str:
        """The launched kernel as written, through a helper parameter bound to
        it and through module-level aliases (``_fast = _kernel``)."""
        _, module_assignments = self._module()
        seen = set()
        while kernel_node is not None and kernel_node.type == "identifier" and _text(kernel_node) not in seen:
            seen.add(_text(kernel_node))
            replacement = substitution.get(_text(kernel_node)) or module_assignments.get(_text(kernel_node))
            if replacement is None or replacement.type not in ("identifier", "attribute"):
                break
            kernel_node = replacement
        return _text(kernel_node)

    def _add_launch(self, node, kernel_node, grid_node, assignments, via, substitution) -> None:
        kernel = self._kernel_name(kernel_node, substitution)
        grid_expression, shape = self._resolve_grid(grid_node, assignments)
        grid_form = canonical_form(grid_node, self._resolver(assignments, substitution), normalise_name,
                                   self._single_return_helper, grid=True) if grid_node is not None else Form("")
        identifiers = _closure_identifiers(grid_expression, assignments, _python_identifiers)
        arguments = node.child_by_field_name("arguments")
        positional, keywords, options = [], [], {}
        slots, texts = [], []
        after_splat = False  # positional indices are unknown past a *args splat
        for argument in arguments.named_children if arguments else []:
            if argument.type == "comment":
                continue
            if argument.type == "keyword_argument":
                key = _text(argument.child_by_field_name("name"))
                value = argument.child_by_field_name("value")
                if key in ("num_warps", "num_stages"):
                    options[key] = _resolve_literal(value, assignments, _python_identifiers)
                    continue
                keywords.append(key)
                ids = _python_identifiers(value)
                positional.append(normalise_name(ids[0]) if ids else normalise_name(key))
                slots.append(normalise_name(key))
                texts.append(normalised_text(value))
            elif argument.type in ("list_splat", "dictionary_splat"):
                spread = _literal_sequence(argument, assignments, substitution)
                if spread is not None and not after_splat:
                    for element in spread:  # *(a, b, c) or *views with views = (a, b, c)
                        ids = _python_identifiers(element)
                        positional.append(normalise_name(ids[0]) if ids else _text(element))
                        slots.append(f"#{sum(1 for slot in slots if slot.startswith('#'))}")
                        texts.append(normalised_text(element))
                    continue
                after_splat = after_splat or argument.type == "list_splat"
                slots.append("*")
                texts.append(normalised_text(argument))
            else:
                ids = _python_identifiers(argument)
                positional.append(normalise_name(ids[0]) if ids else _text(argument))
                slots.append("*" if after_splat else f"#{sum(1 for slot in slots if slot.startswith('#'))}")
                texts.append(normalised_text(argument))
        params = _kernel_params_in_file(_root(self.outer), kernel, "python")
        renamed = _substituted_names(substitution)
        line = _line_of(node)
        self.signature.launches.append(
            Launch(
                kernel=kernel,
                kernel_normalised=normalise_kernel_name(kernel),
                arguments=tuple(renamed.get(a, a) for a in positional),
                keywords=tuple(keywords),
                grid_text=_text(grid_expression) if grid_expression is not None else "",
                grid_identifiers=tuple(sorted({renamed.get(i, i) for i in identifiers})),
                grid_shape=shape,
                num_warps=options.get("num_warps"),
                num_stages=options.get("num_stages"),
                line=line,
                quote=self.lines.quote(line),
                slots=tuple(slots),
                texts=tuple(texts),
                bound=bind_arguments(slots, params) if params is not None else None,
                via_helper=via,
                **_form_fields(grid_form, grid_expression, line, True, self.lines),
            )
        )

    def _resolver(self, assignments, substitution):
        """name -> bound value: a helper parameter's argument, a local, then a module-level constant."""
        _, module_assignments = self._module()
        return lambda name: substitution.get(name) or assignments.get(name) or module_assignments.get(name)

    def _single_return_helper(self, name: str):
        """``(function node, returned expression)`` of the function a grid
        helper call reaches: same-module first, then one imported from a
        sibling module of the same package (``imported``)."""
        functions, _ = self._module()
        helper = functions.get(name)
        if helper is not None and helper.kind == KIND_FUNCTION:
            return single_return(helper.node)
        return self.imported(name) if self.imported is not None else None

    @staticmethod
    def _resolve_grid(node, assignments):
        seen = set()
        while node is not None and node.type == "identifier" and _text(node) in assignments and _text(node) not in seen:
            seen.add(_text(node))
            node = assignments[_text(node)]
        if node is not None and node.type == "lambda":
            node = node.child_by_field_name("body")
        if node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        if node is None:
            return None, None
        if node.type in ("tuple", "list", "expression_list"):
            return node, len(node.named_children)
        return node, None

    def _program_ids(self, assignments) -> None:
        self._scan_program_ids(self.body, {}, 0, {self.signature.name}, "")
        for node in self.body.named_children:
            if node.type == "if_statement":
                consequence = node.child_by_field_name("consequence")
                if consequence is not None and any(c.type == "return_statement" for c in consequence.named_children):
                    line = _line_of(node)
                    self.signature.early_exits.append(Use(line, self.lines.quote(line)))
                    for name in _python_identifiers(node.child_by_field_name("condition")):
                        normalised = normalise_name(name)
                        if normalised not in self.signature.early_exit_guards:
                            self.signature.early_exit_guards.append(normalised)

    def _scan_program_ids(self, body, derived: dict[str, int], depth: int, seen: set[str], via: str) -> None:
        """Program-id and num_programs axes read in ``body``, the variables
        derived from a program id (``derived``: name -> axis, seeded with a
        helper's parameters that receive one), and how they are decomposed
        (``// H``, ``% H``); then the same inside the ``@triton.jit`` helpers
        of this file that ``body`` calls, ``MAX_HELPER_DEPTH`` levels deep."""
        for node in _walk(body):
            if node.type == "call":
                found = _program_id_call(node)
                if found:
                    kind, axis = found
                    target = self.signature.program_id_axes if kind == "program_id" else self.signature.num_programs_axes
                    if axis not in target:
                        target.append(axis)
        # Variables derived from a program id, in source order.
        for node in _walk(body):
            if node.type in ("assignment", "for_statement"):
                left = node.child_by_field_name("left")
                right = node.child_by_field_name("right")
                if left is None or right is None:
                    continue
                targets = [left] if left.type == "identifier" else \
                    [c for c in left.named_children if c.type == "identifier"] \
                    if left.type in ("pattern_list", "tuple_pattern") else []
                axis = self._derived_axis(right, derived) if targets else None
                if axis is not None:
                    for target in targets:  # row_tile, col_tile = _tile_of_item(pid, ...)
                        derived.setdefault(_text(target), axis)
            if node.type == "binary_operator":
                operator = _text(node.child_by_field_name("operator"))
                if operator not in ("//", "%", "/"):
                    continue
                left = node.child_by_field_name("left")
                axis = self._derived_axis(left, derived)
                if axis is None:
                    continue
                operand = " ".join(normalise_name(t) if re.match(r"[A-Za-z_]", t) else t
                                   for t in comment_free_tokens(node.child_by_field_name("right")))
                line = _line_of(node)
                found = Decomposition(axis, operator, operand, line, self.lines.quote(line), via)
                if found not in self.signature.decomposition:  # a helper called twice is read once
                    self.signature.decomposition.append(found)
        if depth >= self.MAX_HELPER_DEPTH:
            return
        for node in _walk(body):
            function = node.child_by_field_name("function") if node.type == "call" else None
            helper = self._called_helper(function, KIND_TRITON_KERNEL, seen) if function is not None else None
            if helper is None:
                continue
            name, helper_function, helper_body = helper
            seeded = {}
            for parameter, value in _bind_call(helper_function, node, {}).items():
                axis = self._derived_axis(value, derived)
                if axis is not None:
                    seeded[parameter] = axis
            self._scan_program_ids(helper_body, seeded, depth + 1, seen | {name}, f"{via} > {name}" if via else name)

    @staticmethod
    def _scales_work_index(node, derived) -> bool:
        """Is a program-id value multiplied inside ``node`` (an offset, not a decomposition)?"""
        for current in _walk(node):
            if current.type == "binary_operator" and _text(current.child_by_field_name("operator")) == "*" and any(
                    _mentions_work_index(side, derived)
                    for side in (current.child_by_field_name("left"), current.child_by_field_name("right"))):
                return True
        return False

    @staticmethod
    def _derived_axis(node, derived) -> int | None:
        """The program-id axis the per-program value ``node`` derives from.

        Only the program's work index counts: a value read from memory
        (``tl.load(... pid ...)``) is data, and anything with ``tl.arange``
        is a vector of lanes, so ``tokens // BLOCK`` over a lane vector is an
        offset computation, not a decomposition of ``program_id``."""
        if node is None:
            return None
        if node.type == "identifier":
            return derived.get(_text(node))
        axis = None
        if _PythonExtractor._scales_work_index(node, derived):
            return None  # `pid_head * 2 * D // S` addresses memory; it does not pack work into the id
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "call":
                short = _text(current.child_by_field_name("function")).split(".")[-1]
                if short == "arange":
                    return None
                if short in _MEMORY_READS:
                    continue
                found = _program_id_call(current)
                if found and found[0] == "program_id":
                    axis = found[1] if axis is None else axis
                    continue
            if current.type == "identifier" and _text(current) in derived and axis is None:
                axis = derived[_text(current)]
            stack.extend(current.children)
        return axis


def _mentions_work_index(node, derived) -> bool:
    for current in _walk(node):
        if current.type == "identifier" and _text(current) in derived:
            return True
        if current.type == "call" and _program_id_call(current):
            return True
    return False


_MEMORY_READS = frozenset({"load", "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min",
                           "atomic_and", "atomic_or", "atomic_xor"})


def _program_id_call(call) -> tuple[str, int] | None:
    """``("program_id" | "num_programs", axis)`` for ``tl.program_id(axis)`` calls."""
    function = _text(call.child_by_field_name("function"))
    short = function.split(".")[-1]
    if short not in ("program_id", "num_programs"):
        return None
    arguments = call.child_by_field_name("arguments")
    axis = 0
    for argument in arguments.named_children if arguments else []:
        value = argument.child_by_field_name("value") if argument.type == "keyword_argument" else argument
        literal = _int_literal(_text(value))
        if literal is not None:
            axis = literal
    return short, axis


def _python_assignments(body) -> dict[str, Any]:
    """name -> value node of the simple assignments in ``body``, first one wins."""
    assignments: dict[str, Any] = {}
    for node in _walk(body):
        if node.type != "assignment":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            continue
        if left.type == "identifier":
            assignments.setdefault(_text(left), right)
        elif left.type in ("pattern_list", "tuple_pattern"):
            targets = [c for c in left.named_children if c.type == "identifier"]
            values = right.named_children if right.type in ("expression_list", "tuple") else []
            for index, target in enumerate(targets):
                value = values[index] if len(values) == len(targets) else right
                assignments.setdefault(_text(target), value)
    return assignments


def _literal_sequence(splat, assignments, substitution) -> list | None:
    """The elements of ``*X`` when X is, or names, a tuple/list literal."""
    if splat.type != "list_splat" or not splat.named_children:
        return None
    value = splat.named_children[0]
    seen = set()
    while value is not None and value.type == "identifier" and _text(value) not in seen:
        seen.add(_text(value))
        value = substitution.get(_text(value)) or assignments.get(_text(value))
    if value is not None and value.type in ("tuple", "list"):
        return [c for c in value.named_children if c.type != "comment"]
    return None


def _python_parameter_names(function) -> list[str]:
    """Parameter names of a Python function node, as written (no ``*``)."""
    names = []
    parameters = function.child_by_field_name("parameters")
    for child in parameters.named_children if parameters else []:
        if child.type == "identifier":
            names.append(_text(child))
        elif child.type in ("typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"):
            inner = next((c for c in child.named_children if c.type == "identifier"), None)
            names.append(_text(inner) if inner is not None else "")
        elif child.type in ("default_parameter", "typed_default_parameter"):
            names.append(_text(child.child_by_field_name("name")))
        else:
            names.append("")  # the bare * or / separators keep positions honest
    return [n for n in names]


def _bind_call(function, call, outer_substitution: dict[str, Any]) -> dict[str, Any]:
    """helper parameter name -> the caller's argument node, for a call of
    ``function`` (positional by index, keywords by name), seen through the
    caller's own substitution when it is itself a helper."""
    params = [n for n in _python_parameter_names(function)]
    positional_params = [n for n in params if n and n not in ("self", "cls")]
    bindings: dict[str, Any] = {}
    arguments = call.child_by_field_name("arguments")
    index = 0
    for argument in arguments.named_children if arguments else []:
        if argument.type == "keyword_argument":
            name = _text(argument.child_by_field_name("name"))
            value = argument.child_by_field_name("value")
        elif argument.type in ("list_splat", "dictionary_splat", "comment"):
            if argument.type == "list_splat":
                index = len(positional_params)  # later positions are unknown
            continue
        else:
            name = positional_params[index] if index < len(positional_params) else None
            value = argument
            index += 1
        if name and value is not None:
            if value.type == "identifier" and _text(value) in outer_substitution:
                value = outer_substitution[_text(value)]
            bindings[name] = value
    return bindings


def _substituted_names(substitution: dict[str, Any]) -> dict[str, str]:
    """normalised helper parameter -> normalised first identifier of the
    caller's argument, for renaming a helper's launch into the caller's names."""
    renamed = {}
    for name, value in substitution.items():
        ids = _python_identifiers(value)
        if ids:
            renamed[normalise_name(name)] = normalise_name(ids[0])
    return renamed


def _is_python_read(node) -> bool:
    """False for names that are not reads of a variable: attribute fields,
    keyword names, assignment targets."""
    parent = node.parent
    if parent is None:
        return True
    if parent.type == "attribute" and parent.child_by_field_name("attribute") is not None \
            and parent.child_by_field_name("attribute").id == node.id:
        return False
    if parent.type == "keyword_argument" and parent.child_by_field_name("name") is not None \
            and parent.child_by_field_name("name").id == node.id:
        return False
    if parent.type == "assignment" and parent.child_by_field_name("left") is not None \
            and parent.child_by_field_name("left").id == node.id:
        return False
    return True


def _is_discard(node) -> bool:
    """``del x`` and ``_ = x``: a parameter kept only to be discarded."""
    parent = node.parent
    if parent is not None and parent.type == "delete_statement":
        return True
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        right = parent.child_by_field_name("right")
        return left is not None and _text(left) == "_" and right is not None and right.id == node.id
    return False


def _python_identifiers(node) -> list[str]:
    """Variable-like identifiers in a Python expression: callees and
    attribute fields are left out (``triton.cdiv(n, B)`` → ``n, B``;
    ``q.shape[0]`` → ``q``)."""
    if node is None:
        return []
    found: list[str] = []
    for current in _walk(node):
        if current.type != "identifier":
            continue
        parent = current.parent
        if parent is not None and parent.type == "attribute":
            if parent.child_by_field_name("attribute") is not None and parent.child_by_field_name("attribute").id == current.id:
                continue
        if parent is not None and parent.type == "call" and parent.child_by_field_name("function").id == current.id:
            continue
        if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name").id == current.id:
            continue
        if parent is not None and parent.type == "lambda_parameters":
            continue
        text = _text(current)
        if text in _CPP_NON_VARIABLES:
            continue
        found.append(text)
    return found
