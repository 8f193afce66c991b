"""Symbol tables: the definitions in one source file, with their line ranges.

A scan maps every hunk to the definitions it touches, on the old and on the new
side. This module parses a blob with tree-sitter (C/C++/CUDA through
tree-sitter-cuda, Python through tree-sitter-python) and lists its definitions:
C++ functions and methods, ``__global__``/``__device__`` kernels, templates,
``struct``/``class``/``union`` definitions (kind ``class``) and their members,
op schemas registered in torch binding files (``ops.def("name(...) -> ()")``),
Python functions, methods and ``@triton.jit`` kernels. A definition a
function-like macro of the same file declares (``DEFINE_K(fwd, bool F) {
... }``, the macro expanding to a function declaration named by one of its
arguments) is listed as the definition it expands to (``macro_declared``).

It does not decide anything about a change and does no I/O: callers hand it
bytes and cache the result by blob SHA (``SymbolTableCache``); a caller that
walks a file's versions in order may hand the previous version's table too,
for an incremental parse with the same result (``symbol_table``'s
``previous``). A file over
``MAX_PARSE_BYTES`` or one that tree-sitter cannot parse gives a table with
``fallback`` set, so callers fall back to line ranges and say so.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any, Iterable

from portq.language.readable import readable, readable_python

MAX_PARSE_BYTES = 2_000_000
"""Files above this size are not parsed; hunks map to line ranges instead."""

CPP_SUFFIXES = frozenset(
    {".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl"}
)
PYTHON_SUFFIXES = frozenset({".py", ".pyi"})

# Definition kinds, shared with signatures and verdicts.
KIND_CUDA_KERNEL = "cuda_kernel"  # __global__
KIND_DEVICE_FUNCTION = "device_function"  # __device__ (not __global__)
KIND_FUNCTION = "function"  # C++ host function or Python function
KIND_METHOD = "method"  # C++ member function or Python method
KIND_TRITON_KERNEL = "triton_kernel"  # @triton.jit / @triton.autotune / @triton.heuristics
KIND_OP_SCHEMA = "op_schema"  # ops.def("name(...) -> ...") in a binding file
KIND_CLASS = "class"


def language_for_path(path: str) -> str | None:
    """``"cpp"`` for C/C++/CUDA, ``"python"`` for Python, ``None`` otherwise."""
    suffix = _suffix(path).lower()
    if suffix in CPP_SUFFIXES:
        return "cpp"
    if suffix in PYTHON_SUFFIXES:
        return "python"
    return None


def _suffix(path: str) -> str:
    """``PurePosixPath(path).suffix``, without building a path object (a scan asks for every file it sees)."""
    name = path.rstrip("/").rpartition("/")[2]
    if name in ("", "."):
        return PurePosixPath(path).suffix
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


@lru_cache(maxsize=None)
def _parser(language: str):
    import tree_sitter

    if language == "cpp":
        import tree_sitter_cuda as grammar
    elif language == "python":
        import tree_sitter_python as grammar
    else:  # pragma: no cover - guarded by language_for_path
        raise ValueError(f"no grammar for language {language!r}")
    return tree_sitter.Parser(tree_sitter.Language(grammar.language()))


def grammar(language: str):
    """The tree-sitter ``Language`` of ``language`` (for compiled queries)."""
    return _parser(language).language


def parse(source: bytes, language: str, previous=None):
    """Parse ``source`` and return the tree-sitter tree (no size bound here).

    ``previous`` is an optional earlier version: a ``SymbolTable`` of the same
    language with its tree and source. Its tree, edited to ``source``, lets
    tree-sitter reuse every subtree outside the changed bytes (an incremental
    parse, several times faster than a full one on a typical commit's edit).
    The tree is the one a fresh parse gives: a reparse that reports a syntax
    error, or a previous tree that had one, falls back to a full parse, so
    error recovery never depends on the file's history.

    C/C++ text that fails to parse is parsed again from ``readable.readable``'s
    copy when that copy differs (a preprocessor conditional inside a parameter
    or argument list, statements passed to a macro, rewritten in place with
    every byte offset and line kept); the tree is the copy's. ``masked_lines``
    says which lines that copy blanked: a tree built from it cannot show them.
    Python text that fails to parse is read the same way from
    ``readable.readable_python``'s copy (a starred item the grammar rejects,
    its ``*`` blanked; the line holding it is masked).
    """
    return parse_from(source, language, previous)[0]


def parse_from(source: bytes, language: str, previous=None):
    """``parse``, the edited tree of ``previous`` it reparsed (what
    ``Tree.changed_ranges`` compares the new tree with) and that edit
    (``source_edit``); both None after a fresh parse."""
    parser = _parser(language)
    edited = _edited_tree(previous, source, language)
    if edited is not None:
        base, edit = edited
        tree = parser.parse(source, base)
        if not tree.root_node.has_error:
            return tree, base, edit
    tree = parser.parse(source)
    if tree.root_node.has_error:
        copy = _readable(language, source)
        if copy.text is not source:
            _read_from_copy(source)
            return parser.parse(copy.text), None, None
    return tree, None, None


def _readable(language: str, source: bytes):
    return readable(source) if language == "cpp" else readable_python(source)


_READ_FROM_COPIES: set[bytes] = set()
"""Digests of the sources ``parse`` read from a rewritten copy: a tree of one of them is no tree of
its text, to edit incrementally or to read masked lines from (kept whole: a forgotten one would be
edited as if its tree were its text's)."""


def _digest(source: bytes) -> bytes:
    return hashlib.blake2b(source, digest_size=16).digest()


def _read_from_copy(source: bytes) -> None:
    _READ_FROM_COPIES.add(_digest(source))


def masked_lines(source: bytes, language: str | None, parsed: bool = False) -> tuple[tuple[int, int], ...]:
    """The line spans (1-based, inclusive) ``parse`` blanked in the copy it
    parsed ``source`` from: the directives and untaken branches of a
    preprocessor conditional inside parentheses. Their text is in no node of
    the tree, so a changed line among them is one the tree cannot read (for
    Python, a line whose starred tuple item lost its `*`).
    Empty where the source was parsed as written. ``parsed`` says the caller
    holds a tree ``parse`` built from ``source``: a source it did not read from
    a copy was then parsed as written, with no need to parse it again to tell."""
    if language not in ("cpp", "python") or source is None or len(source) > MAX_PARSE_BYTES:
        return ()
    if _digest(source) not in _READ_FROM_COPIES \
            and (parsed or not _parser(language).parse(source).root_node.has_error):
        return ()
    return _readable(language, source).masked


def source_edit(old: bytes, new: bytes) -> tuple[int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]:
    """The one edit that turns ``old`` into ``new``: the bytes between their
    common prefix and common suffix, as ``tree_sitter.Tree.edit`` takes it
    (start, old end and new end byte, then the same three as (row, byte
    column) points)."""
    shortest = min(len(old), len(new))
    prefix = _common_length(old, new, shortest, lambda a, n: a[:n])
    suffix = _common_length(old, new, shortest - prefix, lambda a, n: a[len(a) - n:])
    old_end, new_end = len(old) - suffix, len(new) - suffix
    start_point = _point(old, prefix)
    return (
        prefix, old_end, new_end, start_point,
        _point_after(old, prefix, old_end, start_point), _point_after(new, prefix, new_end, start_point),
    )


def _common_length(old: bytes, new: bytes, bound: int, part) -> int:
    """The largest ``n <= bound`` with ``part(old, n) == part(new, n)`` (a binary
    search of slice comparisons: memcmp, not a Python loop over bytes)."""
    low, high = 0, bound
    while low < high:
        middle = (low + high + 1) // 2
        if part(old, middle) == part(new, middle):
            low = middle
        else:
            high = middle - 1
    return low


def _point(data: bytes, offset: int) -> tuple[int, int]:
    return data.count(b"\n", 0, offset), offset - (data.rfind(b"\n", 0, offset) + 1)


def _point_after(data: bytes, start: int, offset: int, start_point: tuple[int, int]) -> tuple[int, int]:
    """The point of ``offset``, counting rows only from ``start`` (at ``start_point``)."""
    rows = data.count(b"\n", start, offset)
    if not rows:
        return start_point[0], start_point[1] + offset - start
    return start_point[0] + rows, offset - (data.rfind(b"\n", start, offset) + 1)


def _edited_tree(previous, source: bytes, language: str):
    """A copy of ``previous.tree`` edited to ``source`` and the edit, or None when it cannot serve."""
    if previous is None or previous.tree is None or previous.language != language:
        return None
    tree = previous.tree
    if tree.root_node.has_error:
        return None
    if _digest(previous.source) in _READ_FROM_COPIES:
        return None  # its tree may be a rewritten copy's (``parse``): not the previous text's
    edit = source_edit(previous.source, source)
    tree = tree.copy()  # the previous table's nodes stay valid
    tree.edit(*edit)
    return tree, edit


@dataclass(frozen=True)
class Definition:
    """One definition in a file. Lines are 1-based and inclusive.

    ``node`` is the tree-sitter node of the whole definition (for templates,
    the ``template_declaration``; for decorated Python functions, the
    ``decorated_definition``), so signature extraction can walk it.
    """

    name: str
    qualified_name: str
    kind: str
    language: str
    start_line: int
    end_line: int
    node: Any = field(default=None, compare=False, repr=False, hash=False)
    macro: str | None = field(default=None, compare=False, hash=False)  # the macro that declares it, if one does

    def contains(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line

    @property
    def span(self) -> int:
        return self.end_line - self.start_line


@dataclass
class SymbolTable:
    """The definitions of one blob, or the reason there are none."""

    language: str | None
    definitions: list[Definition]
    tree: Any = None
    source: bytes = b""
    fallback: str | None = None  # why hunks must map to line ranges instead
    _lookups: int = field(default=0, init=False, repr=False, compare=False)
    _innermost: tuple[int, list] | None = field(default=None, init=False, repr=False, compare=False)

    def enclosing(self, line: int) -> Definition | None:
        """The innermost definition containing ``line``, if any (of two as narrow, the later).

        A table asked many times (every call site of a file) answers from a
        map of every line, built once; a few questions scan the definitions.
        """
        if self._innermost is None:
            self._lookups += 1
            if self._lookups <= SCANS_BEFORE_LINE_MAP:
                best: Definition | None = None
                for definition in self.definitions:
                    if definition.contains(line) and (best is None or definition.span <= best.span):
                        best = definition
                return best
            self._innermost = _innermost_by_line(self.definitions)
        first, slots = self._innermost
        offset = line - first
        return slots[offset] if 0 <= offset < len(slots) else None

    def enclosing_symbols(self, lines: Iterable[int]) -> list[Definition]:
        """Innermost definitions touched by ``lines``, in source order, once each."""
        seen: dict[tuple[str, int], Definition] = {}
        for line in lines:
            definition = self.enclosing(line)
            if definition is not None:
                seen.setdefault((definition.qualified_name, definition.start_line), definition)
        return sorted(seen.values(), key=lambda d: d.start_line)

    def by_name(self, name: str) -> list[Definition]:
        return [d for d in self.definitions if d.name == name or d.qualified_name == name]


ADOPT_SOURCE_BYTES = 8_000_000
SPARE_SOURCE_BYTES = 2_000_000
"""Sources of trees handed over at paths ``also_adopts`` names (``SymbolTableCache``), the oldest dropped first."""
"""Sources whose handed-over trees a ``SymbolTableCache`` holds before it is
asked for their tables (a tree and its source take about 16 bytes of memory
per source byte: ~130 MB at most)."""

SCANS_BEFORE_LINE_MAP = 32
"""``SymbolTable.enclosing`` questions answered by a scan before a line map is built."""


def _innermost_by_line(definitions: list[Definition]) -> tuple[int, list]:
    """(first line, the innermost definition of each line from there): the
    scan's rule applied line by line, so both answer alike."""
    if not definitions:
        return 0, []
    first = min(d.start_line for d in definitions)
    slots: list[Definition | None] = [None] * (max(d.end_line for d in definitions) - first + 1)
    for definition in definitions:
        span = definition.span
        for offset in range(definition.start_line - first, definition.end_line - first + 1):
            current = slots[offset]
            if current is None or span <= current.span:
                slots[offset] = definition
    return first, slots


def symbol_table(source: bytes, path: str, previous: SymbolTable | None = None) -> SymbolTable:
    """Parse ``source`` (the blob at ``path``) into a symbol table.

    ``previous``, the table of an earlier version of the file (with its tree),
    makes the parse incremental; the definitions are the same as without it.
    """
    language = language_for_path(path)
    if language is None:
        return SymbolTable(None, [], fallback="not a C/C++/CUDA or Python file")
    if len(source) > MAX_PARSE_BYTES:
        return SymbolTable(
            language,
            [],
            source=source,
            fallback=f"file is {len(source)} bytes, over the {MAX_PARSE_BYTES}-byte parse bound",
        )
    try:
        tree = parse(source, language, previous)
    except Exception as error:  # tree-sitter raises plain exceptions on bad input
        return SymbolTable(language, [], source=source, fallback=f"parse failed: {error}")
    return table_of_tree(tree, source, language)


def table_of_tree(tree, source: bytes, language: str) -> SymbolTable:
    """The full table of ``source`` from its tree (``parse``'s, of at most ``MAX_PARSE_BYTES``)."""
    definitions = macro_declared(definitions_in(tree.root_node, language), tree.root_node, source, language)
    table = SymbolTable(language, definitions, tree=tree, source=source)
    if tree.root_node.has_error and not definitions:
        table.fallback = "tree-sitter reported syntax errors and found no definitions"
    return table


def definitions_of_child(child, language: str, scope: tuple[str, ...] = ()) -> list[Definition]:
    """The definitions a file's walk finds in one child of its root, or of a
    namespace at ``scope`` (the walk goes child by child, so a file's
    definitions are those of its root's children, in order)."""
    return list((_cpp_child if language == "cpp" else _python_child)(child, scope))


def namespace_body(node, scope: tuple[str, ...]):
    """(body, the scope inside it) of a C++ namespace definition, as the walk
    enters it; None for any other node (or a namespace without a body)."""
    if node.type != "namespace_definition":
        return None
    body = node.child_by_field_name("body")
    if body is None:
        return None
    return body, scope + ("ns:" + (_text(node.child_by_field_name("name")) or "<anonymous>"),)


_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")


@lru_cache(maxsize=64)
def macro_extents(source: bytes) -> dict[str, tuple[int, int]]:
    """``#define`` name -> (first, last line, 1-based), read as the C
    preprocessor reads them: a line ending in a backslash (trailing blanks
    allowed, as GCC and Clang allow them) continues the macro. tree-sitter's
    recovery can cut a multi-line macro short (a block comment among its
    continuation lines is enough), leaving its tail as top-level code; this
    extent does not depend on the parse."""
    extents: dict[str, tuple[int, int]] = {}
    lines = source.split(b"\n")
    number = 0
    while number < len(lines):
        match = _DEFINE.match(lines[number])
        first = number
        while lines[number].rstrip().endswith(b"\\") and number + 1 < len(lines):
            number += 1
        if match is not None:
            extents.setdefault(match.group(1).decode("ascii"), (first + 1, number + 1))
        number += 1
    return extents


def definitions_in(root, language: str) -> list[Definition]:
    """The definitions below an already parsed tree-sitter node (a file's root)."""
    collect = _cpp_definitions if language == "cpp" else _python_definitions
    return list(collect(root, ()))


class SymbolTableCache:
    """Symbol tables keyed by blob SHA: a blob is parsed once per process.

    A blob is parsed from the tree of the latest table parsed at its path
    (or at the path it was renamed from): callers that walk a range in order
    get incremental parses, with the same definitions as fresh ones.

    A blob someone else already parsed can be handed over as its tree
    (``adopt``): the scan's mapping parses every version of an owned file
    before the classifier asks for the tables of the anchored ones, so those
    are built from the mapping's trees (``table_of_tree``, what a parse here
    gives) instead of reading and parsing the blob again. ``adopts(path)``
    says which paths are worth handing over; at most ``adopt_bytes`` (``ADOPT_SOURCE_BYTES``) of
    sources are held that way (the rest is parsed when asked, as before).
    ``also_adopts(path)`` names paths the classifier may ask about too (the
    other files a commit changes): their trees are held in a room of their own,
    ``spare_bytes`` (``SPARE_SOURCE_BYTES``), the oldest dropped first when it
    is full, so they never crowd out the trees of anchored paths.
    """

    def __init__(self, adopts=None, adopt_bytes: int | None = None, also_adopts=None,
                 spare_bytes: int | None = None) -> None:
        self._tables: dict[tuple[str, str], SymbolTable] = {}
        self._latest: dict[tuple[str, str], SymbolTable] = {}  # (path, language) -> last table parsed there
        self._adopted: dict[tuple[str, str], tuple[Any, bytes]] = {}  # (blob, language) -> (tree, source)
        self._adopts = adopts
        self._adopt_room = 0 if adopts is None else ADOPT_SOURCE_BYTES if adopt_bytes is None else adopt_bytes
        self._also_adopts = also_adopts
        self._spare: dict[tuple[str, str], tuple[Any, bytes]] = {}  # the same, of ``also_adopts`` paths, oldest first
        self._spare_room = 0 if also_adopts is None else SPARE_SOURCE_BYTES if spare_bytes is None else spare_bytes
        self._spare_bytes = self._spare_room
        self.adopted = 0  # tables built from a handed-over tree rather than parsed

    def adopts(self, path: str) -> bool:
        """Whether a tree of a blob at ``path`` is worth handing over (``adopt``)."""
        return (self._adopt_room > 0 and bool(self._adopts(path))) or \
            (self._spare_bytes > 0 and bool(self._also_adopts(path)))

    def adopt(self, blob_sha: str, path: str, tree, source: bytes, previous_path: str | None = None) -> None:
        """Keep ``tree`` (``parse``'s of ``source``, the blob at ``path``, renamed from
        ``previous_path`` if it was; never edited afterwards) to build the blob's table
        from when it is asked for."""
        key = (blob_sha, language_for_path(path) or "")
        if not key[1] or key in self._tables or key in self._adopted or key in self._spare:
            return
        if self._adopts is not None and (self._adopts(path) or (previous_path and self._adopts(previous_path))):
            if len(source) <= self._adopt_room:
                self._adopted[key] = (tree, source)
                self._adopt_room -= len(source)
            return
        if self._also_adopts is None or len(source) > self._spare_bytes or not self._also_adopts(path):
            return
        while len(source) > self._spare_room:  # the oldest spare trees make room
            oldest = next(iter(self._spare))
            self._spare_room += len(self._spare.pop(oldest)[1])
        self._spare[key] = (tree, source)
        self._spare_room -= len(source)

    def has(self, blob_sha: str, path: str) -> bool:
        """Whether the table of ``blob_sha`` is already parsed."""
        return (blob_sha, language_for_path(path) or "") in self._tables

    def get(self, blob_sha: str, path: str, load, previous_path: str | None = None) -> SymbolTable:
        """The table of ``blob_sha``; ``load()`` returns its bytes on a miss.

        The path is part of the key only through its language (a blob's
        definitions do not depend on where it lives).
        """
        language = language_for_path(path) or ""
        key = (blob_sha, language)
        table = self._tables.get(key)
        if table is None and (key in self._adopted or key in self._spare):
            if key in self._adopted:
                tree, source = self._adopted.pop(key)
            else:
                tree, source = self._spare.pop(key)
                self._spare_room += len(source)
            table = table_of_tree(tree, source, language)
            self._tables[key] = table
            self.adopted += 1
        elif table is None:
            previous = self._latest.get((path, language))
            if previous is None and previous_path:
                previous = self._latest.get((previous_path, language))
            table = symbol_table(load(), path, previous)
            self._tables[key] = table
        else:
            return table
        if table.tree is not None:
            self._latest[(path, language)] = table
        return table


# --- C / C++ / CUDA -------------------------------------------------------

_CPP_RECORDS = {"class_specifier", "struct_specifier", "union_specifier"}
_CPP_BODIES = {"declaration_list", "field_declaration_list"}
_OP_SCHEMA_NAME = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:\(|$)")


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def _cpp_declarator_name(declarator) -> str | None:
    """The function name inside a (possibly nested) declarator."""
    node = declarator
    while node is not None:
        if node.type == "function_declarator":
            inner = node.child_by_field_name("declarator")
            if inner is None:
                return None
            if inner.type in ("identifier", "field_identifier", "operator_name", "destructor_name"):
                return _text(inner)
            if inner.type == "qualified_identifier":
                return _text(inner).split("::")[-1].strip()
            node = inner
            continue
        node = node.child_by_field_name("declarator")
    return None


def function_declarator(declarator):
    """The ``function_declarator`` a C/C++ declarator holds (through pointer, reference and nested
    declarators), where the name and the parameter list sit; None when it holds none."""
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _cpp_qualifier(declarator) -> str:
    """``ns::Cls`` of an out-of-line definition ``void ns::Cls::f()``."""
    node = function_declarator(declarator)
    if node is None:
        return ""
    inner = node.child_by_field_name("declarator")
    if inner is not None and inner.type == "qualified_identifier":
        parts = _text(inner).split("::")
        return "::".join(p.strip() for p in parts[:-1])
    return ""


def _empty_bodied_function(declaration) -> bool:
    """Whether a ``declaration`` is a function with an empty body before a stray ``;`` (``void f(T a) {};``),
    which tree-sitter reads as one function declarator given the initialiser ``{}``: a declaration of a
    function takes no initialiser, so the braces can only be its body. Every parameter must name a type and
    a parameter (``Tile t(rows, cols){};``, an object built from two values, is not a function)."""
    declarators = [c for c in declaration.named_children if c.type == "init_declarator"]
    if len(declarators) != 1 or len([c for c in declaration.named_children
                                     if c.type in ("init_declarator", "identifier", "function_declarator")]) != 1:
        return False
    inner, value = (declarators[0].child_by_field_name(f) for f in ("declarator", "value"))
    if inner is None or inner.type != "function_declarator" or value is None \
            or value.type != "initializer_list" or value.named_children:
        return False
    parameters = inner.child_by_field_name("parameters")
    return parameters is not None and all(
        p.type == "parameter_declaration" and p.child_by_field_name("type") is not None
        and p.child_by_field_name("declarator") is not None
        for p in parameters.named_children if p.type != "comment")


def _cpp_function(node, scope: tuple[str, ...], outer) -> Definition | None:
    declarator = node.child_by_field_name("declarator")
    name = _cpp_declarator_name(declarator)
    if not name:
        return None
    specifiers = {child.type for child in node.children}
    if "__global__" in specifiers:
        kind = KIND_CUDA_KERNEL
    elif "__device__" in specifiers:
        kind = KIND_DEVICE_FUNCTION
    elif scope and scope[-1].startswith("class:"):
        kind = KIND_METHOD
    else:
        kind = KIND_FUNCTION
    qualifier = _cpp_qualifier(declarator)
    names = [s.split(":", 1)[-1] for s in scope]
    if qualifier:
        names.append(qualifier)
        if kind == KIND_FUNCTION:
            kind = KIND_METHOD if qualifier[:1].isupper() else KIND_FUNCTION
    qualified = "::".join(names + [name])
    return Definition(
        name=name,
        qualified_name=qualified,
        kind=kind,
        language="cpp",
        start_line=outer.start_point[0] + 1,
        end_line=outer.end_point[0] + 1,
        node=outer,
    )


def _op_schemas(node) -> Iterable[Definition]:
    """``ops.def("name(Tensor a, ...) -> ()")`` registrations inside ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "call_expression":
            function = current.child_by_field_name("function")
            if function is not None and function.type == "field_expression":
                field_name = function.child_by_field_name("field")
                if field_name is not None and _text(field_name) == "def":
                    arguments = current.child_by_field_name("arguments")
                    literal = next(
                        (c for c in (arguments.named_children if arguments else [])
                         if c.type in ("string_literal", "concatenated_string", "raw_string_literal")),
                        None,
                    )
                    if literal is not None:
                        content = "".join(
                            _text(c) for c in _descendants(literal) if c.type in ("string_content", "raw_string_content")
                        )
                        match = _OP_SCHEMA_NAME.match(content)
                        if match:
                            yield Definition(
                                name=match.group(1).split(".")[0],
                                qualified_name="schema::" + match.group(1),
                                kind=KIND_OP_SCHEMA,
                                language="cpp",
                                start_line=current.start_point[0] + 1,
                                end_line=current.end_point[0] + 1,
                                node=current,
                            )
                    continue
        stack.extend(reversed(current.children))


def _descendants(node) -> Iterable:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _cpp_record(node, scope: tuple[str, ...], outer, alias: str | None) -> Iterable[Definition]:
    """A ``struct``/``class``/``union`` with a body is a definition (kind
    ``class``) spanning ``outer`` (its template or typedef when it has one);
    its members follow, qualified by its name. A forward declaration is not."""
    body = node.child_by_field_name("body")
    if body is None:
        return
    name = alias or _text(node.child_by_field_name("name")) or "<anonymous>"
    names = [s.split(":", 1)[-1] for s in scope]
    yield Definition(
        name=name,
        qualified_name="::".join(names + [name]),
        kind=KIND_CLASS,
        language="cpp",
        start_line=outer.start_point[0] + 1,
        end_line=outer.end_point[0] + 1,
        node=outer,
    )
    yield from _cpp_definitions(body, scope + ("class:" + name,))


def _cpp_definitions(node, scope: tuple[str, ...]) -> Iterable[Definition]:
    for child in node.children:
        yield from _cpp_child(child, scope)


def _cpp_child(child, scope: tuple[str, ...]) -> Iterable[Definition]:
    kind = child.type
    if kind == "function_definition":
        definition = _cpp_function(child, scope, child)
        if definition is not None:
            yield definition
            # Walking every body for ops.def(...) dominates parse time;
            # only bodies whose text can hold a registration are walked.
            if b".def(" in child.text:
                yield from _op_schemas(child)
    elif kind == "template_declaration":
        inner = next((c for c in child.named_children if c.type == "function_definition"), None)
        record = next((c for c in child.named_children if c.type in _CPP_RECORDS), None)
        if inner is not None:
            definition = _cpp_function(inner, scope, child)
            if definition is not None:
                yield definition
        elif record is not None:
            yield from _cpp_record(record, scope, child, None)
        else:
            yield from _cpp_definitions(child, scope)
    elif kind == "namespace_definition":
        inside = namespace_body(child, scope)
        if inside is not None:
            yield from _cpp_definitions(*inside)
    elif kind in _CPP_RECORDS:
        yield from _cpp_record(child, scope, child, None)
    elif kind == "type_definition":
        # typedef struct { ... } Name;
        record = next((c for c in child.named_children if c.type in _CPP_RECORDS), None)
        alias = next((c for c in child.named_children if c.type == "type_identifier"), None)
        if record is not None:
            yield from _cpp_record(record, scope, child, _text(alias) if alias is not None else None)
    elif kind in _CPP_BODIES or kind in ("linkage_specification", "preproc_if", "preproc_ifdef",
                                        "preproc_else", "preproc_elif"):
        yield from _cpp_definitions(child, scope)
    elif kind == "declaration":
        # struct S { ... } instance;  (a definition of S and a variable)
        record = child.child_by_field_name("type")
        if record is not None and record.type in _CPP_RECORDS:
            yield from _cpp_record(record, scope, record, None)
        elif _empty_bodied_function(child):
            # void f(T a) {};  read as a function declarator given the initialiser {}
            definition = _cpp_function(child, scope, child)
            if definition is not None:
                yield definition
        # Top-level ops.def(...) outside a registration function body is rare
        # but legal inside macros; only function bodies are searched above.


# --- Python ---------------------------------------------------------------

_TRITON_DECORATORS = re.compile(r"^@\s*(triton\.)?(jit|autotune|heuristics)\b|^@\s*tl\.")


def _python_function(node, outer, scope: tuple[str, ...], decorators: list[str]) -> Definition:
    name = _text(node.child_by_field_name("name"))
    if any(_TRITON_DECORATORS.match(d) for d in decorators):
        kind = KIND_TRITON_KERNEL
    elif scope and scope[-1].startswith("class:"):
        kind = KIND_METHOD
    else:
        kind = KIND_FUNCTION
    return _python_definition(name, kind, outer, scope)


def _python_definition(name: str, kind: str, outer, scope: tuple[str, ...]) -> Definition:
    """``outer`` (the decorated definition where there is one) spans the lines; ``scope`` qualifies the name."""
    qualified = ".".join([s.split(":", 1)[-1] for s in scope] + [name])
    return Definition(
        name=name,
        qualified_name=qualified,
        kind=kind,
        language="python",
        start_line=outer.start_point[0] + 1,
        end_line=outer.end_point[0] + 1,
        node=outer,
    )


def _python_definitions(node, scope: tuple[str, ...]) -> Iterable[Definition]:
    for child in node.children:
        yield from _python_child(child, scope)


def _python_child(child, scope: tuple[str, ...]) -> Iterable[Definition]:
    outer = child
    decorators: list[str] = []
    target = child
    if child.type == "decorated_definition":
        decorators = [_text(d) for d in child.children if d.type == "decorator"]
        target = child.child_by_field_name("definition")
        if target is None:
            return
    if target.type == "function_definition":
        definition = _python_function(target, outer, scope, decorators)
        yield definition
        body = target.child_by_field_name("body")
        # A nested definition's text holds ``def`` or ``class``: a body
        # without either holds none, and walking it is most of the time.
        if body is not None and (b"def" in body.text or b"class" in body.text):
            yield from _python_definitions(body, scope + ("def:" + definition.name,))
    elif target.type == "class_definition":
        name = _text(target.child_by_field_name("name"))
        yield _python_definition(name, KIND_CLASS, outer, scope)
        body = target.child_by_field_name("body")
        if body is not None:
            yield from _python_definitions(body, scope + ("class:" + name,))
    elif target.type in ("if_statement", "try_statement", "with_statement", "block",
                         "else_clause", "elif_clause", "except_clause", "finally_clause"):
        yield from _python_definitions(target, scope)


# --- definitions a function-like macro declares ------------------------------------

_FUNCTION_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)(.*)$", re.DOTALL)
_FUNCTION_DEFINE_BYTES = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+[A-Za-z_]\w*\(", re.MULTILINE)
_OBJECT_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[ \t]+(.*))?$", re.DOTALL)
_DECLARED_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\([^()]*\)\s*$")
_WORD = re.compile(r"[A-Za-z_]\w*")
PARAMETER_QUALIFIERS = frozenset({"__grid_constant__", "const", "volatile", "__restrict__", "__restrict"})
"""Words a macro may stand for in a declaration without changing what the declared definition computes."""


def macro_definitions(source: bytes) -> list[tuple[str, int]]:
    """Every ``#define`` of ``source`` as one line of text (continuations joined), with its first line."""
    found = []
    text = source.decode("utf-8", errors="replace")
    lines = text.split("\n")
    number = 0
    while number < len(lines):
        first = number
        while lines[number].rstrip().endswith("\\") and number + 1 < len(lines):
            number += 1
        joined = " ".join(line.rstrip().rstrip("\\") for line in lines[first:number + 1])
        if _DEFINE.match(joined.encode("utf-8", errors="replace")):
            found.append((joined, first + 1))
        number += 1
    return found


@lru_cache(maxsize=64)
def declaring_macros(source: bytes) -> tuple[dict[str, tuple[tuple[str, ...], str]], dict[str, str]]:
    """The function-like macros of ``source`` whose expansion is the head of a
    function declaration named by one of their parameters (``#define
    DEFINE_K(name, ...) template<...> __global__ void name(P p)``): name ->
    (parameters, replacement); and the object-like macros whose every
    definition stands only for parameter qualifiers (or nothing): name -> the
    first non-empty one. A replacement that pastes or stringises tokens, or
    holds a body or a statement, declares nothing this reading can place."""
    declaring: dict[str, tuple[tuple[str, ...], str]] = {}
    qualifiers: dict[str, str] = {}
    others: set[str] = set()
    for text, _ in macro_definitions(source):
        match = _FUNCTION_DEFINE.match(text)
        if match is not None:
            parameters = tuple(p.strip() for p in match.group(2).split(","))
            replacement = match.group(3).strip()
            named = _DECLARED_NAME.search(replacement)
            if named and named.group(1) in parameters and not any(c in replacement for c in "#;{}"):
                declaring.setdefault(match.group(1), (parameters, replacement))
            continue
        match = _OBJECT_DEFINE.match(text)
        if match is None:
            continue
        words = (match.group(2) or "").split()
        if all(w in PARAMETER_QUALIFIERS for w in words) and match.group(1) not in others:
            if words and not qualifiers.get(match.group(1)):
                qualifiers[match.group(1)] = " ".join(words)
            else:
                qualifiers.setdefault(match.group(1), "")
        else:
            others.add(match.group(1))
            qualifiers.pop(match.group(1), None)
    return declaring, qualifiers


def _arguments(text: str) -> list[str] | None:
    """The arguments of a macro invocation's ``( ... )`` text, split as the
    preprocessor splits them (at commas outside nested parentheses)."""
    if not text.startswith("(") or not text.endswith(")"):
        return None
    parts, depth, current = [], 0, []
    for character in text[1:-1]:
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        if character == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(character)
    parts.append("".join(current).strip())
    return parts


def _expansion(parameters: tuple[str, ...], replacement: str, arguments: list[str],
               qualifiers: dict[str, str]) -> str | None:
    """``replacement`` with each parameter replaced by its argument (``...``
    by the rest, as ``__VA_ARGS__``) and each qualifier macro by its words."""
    variadic = parameters and parameters[-1] == "..."
    named = parameters[:-1] if variadic else parameters
    if len(arguments) < len(named) or (not variadic and len(arguments) != len(named)):
        return None
    bound = dict(zip(named, arguments))
    if variadic:
        bound["__VA_ARGS__"] = ", ".join(arguments[len(named):])
    return _WORD.sub(lambda m: bound.get(m.group(0), qualifiers.get(m.group(0), m.group(0))), replacement)


def _invocations(node, declaring, outer=None) -> Iterable:
    """``(definition, its first line)`` of each function definition below
    ``node`` (outside function bodies) whose declarator is an invocation of a
    declaring macro; the first line is its template's when one wraps it."""
    for child in node.children:
        if child.type == "function_definition":
            declarator = child.child_by_field_name("declarator")
            inner = declarator.child_by_field_name("declarator") if declarator is not None \
                and declarator.type == "function_declarator" else None
            if inner is not None and inner.type == "identifier" and _text(inner) in declaring \
                    and child.child_by_field_name("body") is not None and not child.child_by_field_name("type"):
                yield child, (outer or child).start_point[0] + 1
        elif child.type == "template_declaration" and outer is None:
            yield from _invocations(child, declaring, child)
        elif child.type in ("namespace_definition", "declaration_list", "linkage_specification", "preproc_if",
                            "preproc_ifdef", "preproc_else", "preproc_elif") and outer is None:
            yield from _invocations(child, declaring)


def macro_declared(definitions: list[Definition], root, source: bytes, language: str | None) -> list[Definition]:
    """``definitions`` with each one a function-like macro declares read as
    the definition it expands to: ``DEFINE_K(fwd, bool Flag) { body }``,
    where ``#define DEFINE_K(name, ...) template<typename T, __VA_ARGS__>
    __global__ void name(const P p)`` is a macro of the same source, is the
    kernel ``fwd`` (its template, parameters and kind from the expansion, its
    body from the braces after the invocation, its lines the invocation's).
    Its ``node`` comes from a parse of the source with the invocation's head
    replaced by the expansion (lines kept), so signatures and tokens read the
    expanded declaration. An invocation whose expansion does not parse as a
    definition of that name stays what tree-sitter read."""
    if language != "cpp" or root is None or not _FUNCTION_DEFINE_BYTES.search(source):
        return definitions
    declaring, qualifiers = declaring_macros(source)
    if not declaring or not any(d.name in declaring for d in definitions):
        return definitions
    pieces, cursor, expanded = [], 0, {}
    for invocation, first in _invocations(root, declaring):
        declarator = invocation.child_by_field_name("declarator")
        name = _text(declarator.child_by_field_name("declarator"))
        arguments = _arguments(_text(declarator.child_by_field_name("parameters")).strip())
        body = invocation.child_by_field_name("body")
        text = _expansion(*declaring[name], arguments, qualifiers) if arguments is not None else None
        declared = _DECLARED_NAME.search(text) if text is not None else None
        if declared is None:
            continue
        head = source[invocation.start_byte:body.start_byte]
        pieces += [source[cursor:invocation.start_byte], text.encode("utf-8") + b"\n" * head.count(b"\n") + b" "]
        cursor = body.start_byte
        expanded[first] = (name, declared.group(1))
    if not expanded:
        return definitions
    synthetic = b"".join(pieces) + source[cursor:]
    tree = _parser("cpp").parse(synthetic)
    found = {(d.start_line, d.name): d for d in definitions_in(tree.root_node, "cpp")}
    light = all(d.node is None for d in definitions)
    kept: list[Definition] = []
    for definition in definitions:
        macro, declared_name = expanded.get(definition.start_line, (None, None))
        replacement = found.get((definition.start_line, declared_name)) if definition.name == macro else None
        if replacement is None:
            kept.append(definition)
        else:
            kept.append(Definition(replacement.name, replacement.qualified_name, replacement.kind, "cpp",
                                   replacement.start_line, replacement.end_line,
                                   None if light else replacement.node, macro=macro))
    return kept
