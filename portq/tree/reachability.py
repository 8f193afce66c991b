"""Reachability: who calls an in-tree port, and is any of them production code.

A REAL_GAP needs one non-test caller of the port; an INERT verdict lists the
callers it found (tests only). Callers are found by name across the whole
in-tree source with tree-sitter (DESIGN §6): direct calls ``f(...)``, attribute
calls ``module.f(...)``/``self.f(...)``, Triton launches ``kernel[grid](...)``,
a Python name passed as a call argument (``launch(kernel, ...)``), C++ calls
``ns::f(...)``, CUDA launches ``k<<<...>>>(...)`` and a function's address
taken for a launch (``auto kernel = &k<T>;``).

A caller is a *test caller* when its file is a test by location: under a
``tests/``/``test/`` directory, named ``test_*.py``/``conftest.py``, or
``*_test.*``; a caller under ``benchmarks/`` counts with the tests (a port
only a benchmark runs is not reached by production). Everything else is a
*non-test caller*. Two choices, written down because they decide REAL_GAP
against INERT:

* Location, not transitive reachability, decides test versus non-test: a
  helper in ``kernels/`` that only tests call is still a non-test caller. We do
  not try to prove that production code reaches it, because a name-based call
  graph cannot prove absence and a gap that is one refactor away from
  production is still a gap.
* The one exception is a caller that is itself a port (an anchored
  definition, such as a host wrapper launching the ported kernel): a kernel
  and its wrapper are one port unit, so the kernel is reached exactly when the
  wrapper is, and we follow the wrapper's callers instead (transitively through
  ports only).

Reports tell reachability as a reviewer checks it (``caller_chains``): every
chain of non-test calls from the port up to an *entry point* (a definition no
non-test in-tree code calls, or module scope), each hop a call site named by
the definition that encloses it; test call sites along the way are counted,
not listed.

How a caller names a port never decides REAL_GAP against INERT (rule
``reach-bound-names``). A definition is also reached under every name bound to it:
an import alias (``from .chunk_o import kernel as _k``, relative or absolute,
in a package ``__init__.py`` re-export or anywhere else) and a module-level
binding (``op = Function.apply``, ``exp = helpers.exp``), followed through
chains of such names. The methods Python and torch call for a class —
``__init__``, ``__call__``, and ``forward``/``backward``, which
``torch.autograd.Function.apply`` and ``nn.Module.__call__`` run — are reached
wherever the class is: built (``Norm(...)``), applied (``Op.apply(...)``) or
handed on. Port hops are followed up to ``MAX_DEPTH`` levels, enough for a
kernel behind a launcher, an autograd function and a module. Example::

    # kernels/__init__.py      from .xent import XentFunction as xent
    # engine/loss.py           from kernels import xent as _x
    #                          loss = _x.apply(logits, labels)
    # XentFunction.forward, and the kernel it launches, are reached from engine/loss.py

This module extracts call sites from parsed files and answers caller queries
over an index; it does not decide verdicts and does not read the disk itself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from portq.core.paths import is_benchmark_path, is_test_file, is_test_path  # noqa: F401  (re-exported)
from portq.language.signatures import bare_name
from portq.language.signatures import node_text as _text
from portq.language.symbols import SymbolTable, _parser


@dataclass(frozen=True)
class CallSite:
    """One call of ``callee`` (a bare name) in the tree."""

    callee: str
    file: str
    line: int
    quote: str
    form: str  # call | attribute | launch | reference | apply
    caller: str | None = None  # qualified name of the enclosing definition
    caller_line: int | None = None  # its start line

    @property
    def cite(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_CALL_NODE_TYPES = {"python": "call", "cpp": "call_expression"}


@lru_cache(maxsize=None)
def _call_query(language: str):
    import tree_sitter

    return tree_sitter.Query(_parser(language).language, f"({_CALL_NODE_TYPES[language]}) @call")


def call_nodes(table: SymbolTable) -> list:
    """The call nodes of a parsed file in source order (outer before inner), as walking
    every node would visit them, found by a tree-sitter query rather than in Python
    (about three times faster on this repository's tree)."""
    import tree_sitter

    found = tree_sitter.QueryCursor(_call_query(table.language)).captures(table.tree.root_node).get("call", [])
    return sorted(found, key=lambda node: (node.start_byte, -node.end_byte))


@lru_cache(maxsize=None)
def _address_query():
    import tree_sitter

    return tree_sitter.Query(_parser("cpp").language, "(pointer_expression) @address")


def _cpp_addresses(table: SymbolTable) -> list:
    """``&f`` / ``&ns::f<T>`` stored in a local of a C/C++ file: a kernel whose address a
    launcher keeps (``auto kernel = &fwd<T>; kernel<<<...>>>(...)``) is launched there. An
    address handed to a registration (``m.impl("op", &f)``) is not a call: the op's own
    callers are."""
    import tree_sitter

    found = tree_sitter.QueryCursor(_address_query()).captures(table.tree.root_node).get("address", [])
    return [node for node in found if node.parent is not None
            and node.parent.type in ("init_declarator", "assignment_expression")
            and node.child_by_field_name("operator") is not None
            and _text(node.child_by_field_name("operator")) == "&"
            and node.child_by_field_name("argument") is not None
            and node.child_by_field_name("argument").type in ("identifier", "qualified_identifier", "template_function")]


def call_sites(table: SymbolTable, file: str) -> list[CallSite]:
    """Every call site of a parsed file, with its enclosing definition."""
    if table.tree is None:
        return []
    source_lines = table.source.decode("utf-8", errors="replace").splitlines()
    sites: list[CallSite] = []
    addresses = _cpp_addresses(table) if table.language == "cpp" else []
    nodes = sorted([*call_nodes(table), *addresses], key=lambda node: (node.start_byte, -node.end_byte))
    for node in nodes:
        if node.type == "pointer_expression":
            found = bare_name(_text(node.child_by_field_name("argument"))), "reference"
        else:
            found = _python_callee(node) if table.language == "python" else _cpp_callee(node)
        if found is None:
            continue
        references = _python_references(node) if table.language == "python" else []
        applied = _python_applied(node) if table.language == "python" else None
        for callee, form in [found, *references, *([applied] if applied else [])]:
            line = node.start_point[0] + 1
            enclosing = table.enclosing(line)
            sites.append(
                CallSite(
                    callee=callee,
                    file=file,
                    line=line,
                    quote=source_lines[line - 1].strip() if line <= len(source_lines) else "",
                    form=form,
                    caller=enclosing.qualified_name if enclosing else None,
                    caller_line=enclosing.start_line if enclosing else None,
                )
            )
    return sites


def _python_references(call) -> list[tuple[str, str]]:
    """Names handed to a call as arguments (``launch(kernel, ...)``,
    ``run(fn=kernel)``, a bound method ``timed(op.forward, args)``): a kernel
    passed to a launch helper is reached there."""
    arguments = call.child_by_field_name("arguments")
    found = []
    for argument in arguments.named_children if arguments is not None else ():
        if argument.type == "keyword_argument":
            argument = argument.child_by_field_name("value")
        if argument is not None and argument.type == "identifier":
            found.append((_text(argument), "reference"))
        elif argument is not None and argument.type == "attribute" and argument.child_by_field_name("attribute"):
            found.append((_text(argument.child_by_field_name("attribute")), "reference"))
    return found


def _python_applied(call) -> tuple[str, str] | None:
    """The class of ``Cls.apply(...)`` (``pkg.Cls.apply(...)``): applying a
    ``torch.autograd.Function`` runs its ``forward`` (and ``backward``)."""
    function = call.child_by_field_name("function")
    if function is None or function.type != "attribute" or _text(function.child_by_field_name("attribute")) != "apply":
        return None
    owner = function.child_by_field_name("object")
    if owner is None or owner.type not in ("identifier", "attribute"):
        return None
    return bare_name(_text(owner)), "apply"


IMPLICIT_METHODS = frozenset({"__init__", "__call__", "forward", "backward"})
"""Methods run for a class without being named at the call: construction and
instance calls, and torch's ``Function.apply`` / ``Module.__call__``."""


def name_bindings(table: SymbolTable) -> list[tuple[str, str]]:
    """``(alias, original)`` for every name a Python file binds to another
    definition's name: ``from M import A as B`` (anywhere in the file),
    module-level ``B = A``, ``B = mod.A`` or ``B = A.apply`` (the class), a
    class attribute ``B = A`` or ``B = staticmethod(A)`` in a class body (called
    as ``obj.B(...)`` like a method of that name), and an instance attribute
    ``self.B = self.A`` in a method: also ``(Cls, A)`` when ``B`` is a method
    Python or torch runs implicitly (``forward``, ``__call__``), so building or
    calling the class runs ``A``."""
    if table.tree is None or table.language != "python":
        return []
    found: list[tuple[str, str]] = []
    stack = [(table.tree.root_node, None)]
    while stack:
        node, owner = stack.pop()
        if node.type == "import_from_statement":
            for name_node in node.children_by_field_name("name"):
                if name_node.type == "aliased_import":
                    original = bare_name(_text(name_node.child_by_field_name("name")))
                    found.append((_text(name_node.child_by_field_name("alias")), original))
            continue
        if node.type == "expression_statement":
            assignment = node.named_children[0] if node.named_children else None
            if assignment is not None and assignment.type == "assignment":
                found.extend(_assignment_binding(assignment, node.parent, owner))
            continue
        if node.type in _STATEMENT_CONTAINERS:
            inner = owner
            if node.type == "class_definition" and node.child_by_field_name("name") is not None:
                inner = _text(node.child_by_field_name("name"))
            stack.extend((child, inner) for child in reversed(node.named_children))
    return found


_WRAPPING_DECORATORS = frozenset({"staticmethod", "classmethod"})


def _assignment_binding(assignment, parent, owner: str | None) -> list[tuple[str, str]]:
    """The bindings one assignment statement makes (``name_bindings``): at module
    level or in a class body ``B = A`` (``A.apply``: the class; ``staticmethod(A)``
    in a class body: ``A``); in a method of a class, ``self.B = self.A``."""
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    if left is None or right is None or parent is None:
        return []
    in_class_body = parent.type == "block" and parent.parent is not None and parent.parent.type == "class_definition"
    if parent.type == "module" or in_class_body:
        if left.type != "identifier":
            return []
        if right.type == "attribute" and _text(right.child_by_field_name("attribute")) == "apply":
            right = right.child_by_field_name("object")
        elif in_class_body and right.type == "call":
            function, arguments = right.child_by_field_name("function"), right.child_by_field_name("arguments")
            values = arguments.named_children if arguments is not None else []
            if function is None or _text(function) not in _WRAPPING_DECORATORS or len(values) != 1:
                return []
            right = values[0]
        if right is not None and right.type in ("identifier", "attribute"):
            original = bare_name(_text(right))
            if original != _text(left):
                return [(_text(left), original)]
        return []
    if owner is None or left.type != "attribute" or right.type != "attribute":
        return []
    target, value = left.child_by_field_name("object"), right.child_by_field_name("object")
    if target is None or value is None or _text(target) != "self" or _text(value) != "self":
        return []
    alias, original = _text(left.child_by_field_name("attribute")), _text(right.child_by_field_name("attribute"))
    if alias == original:
        return []
    return [(alias, original), *([(owner, original)] if alias in IMPLICIT_METHODS else [])]


_STATEMENT_CONTAINERS = frozenset({
    "module", "block", "function_definition", "class_definition", "decorated_definition", "if_statement",
    "elif_clause", "else_clause", "try_statement", "except_clause", "finally_clause", "with_statement",
})


def _python_callee(node) -> tuple[str, str] | None:
    if node.type != "call":
        return None
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        return _text(function), "call"
    if function.type == "attribute":
        return _text(function.child_by_field_name("attribute")), "attribute"
    if function.type == "subscript":
        value = function.child_by_field_name("value")
        if value is not None and value.type in ("identifier", "attribute"):
            return bare_name(_text(value)), "launch"
    return None


def _cpp_callee(node) -> tuple[str, str] | None:
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    if function is None:
        return None
    form = "launch" if any(c.type == "kernel_call_syntax" for c in node.children) else "call"
    if function.type == "field_expression":
        return bare_name(_text(function.child_by_field_name("field"))), "attribute"
    if function.type in ("identifier", "qualified_identifier", "template_function"):
        return bare_name(_text(function)), form
    return None


@dataclass
class Callers:
    """The callers of one port, split by location."""

    non_test: list[CallSite] = field(default_factory=list)
    test: list[CallSite] = field(default_factory=list)
    through: list[str] = field(default_factory=list)  # ports followed on the way ("file:line name")
    bound: list[str] = field(default_factory=list)  # other names it was reached under (aliases, its class)


@dataclass
class CallerChains:
    """Non-test call chains of one port (hops from the port outwards) and the test call sites met."""

    chains: list[tuple[CallSite, ...]] = field(default_factory=list)
    test: list[CallSite] = field(default_factory=list)
    truncated: bool = False


class Reachability:
    """Caller queries over the call sites of an in-tree index.

    ``sites_by_callee`` maps a bare name to its call sites; ``is_port(file,
    qualified_name)`` says whether a definition is anchored as a port;
    ``bindings_of`` maps a bare name to the names bound to it
    (``name_bindings``), read the same way.
    """

    MAX_DEPTH = 8
    MAX_NAMES = 32

    def __init__(self, sites_by_callee: dict[str, list[CallSite]], is_port, bindings_of=None) -> None:
        self.sites_by_callee = sites_by_callee
        self.is_port = is_port
        self.bindings_of = bindings_of if bindings_of is not None else {}

    def names_reaching(self, name: str, qualified_name: str | None = None) -> list[tuple[str, str | None]]:
        """``(callee, owner)`` for every name whose call reaches the definition
        (rule reach-bound-names): its own name, the class that runs it implicitly
        (``owner``: the class's qualified name, else None), and every name bound
        to either, transitively."""
        parts = (qualified_name or name).split(".")
        start: list[tuple[str, str | None]] = [(name, None)]
        if len(parts) >= 2 and parts[-1] in IMPLICIT_METHODS:
            start.append((parts[-2], ".".join(parts[:-1])))
        found: dict[str, str | None] = {}
        frontier = start
        while frontier and len(found) < self.MAX_NAMES:
            following = []
            for callee, owner in frontier:
                if callee in found:
                    continue
                found[callee] = owner
                following.extend((alias, owner) for alias in self.bindings_of.get(callee, ()))
            frontier = following
        return list(found.items())

    def _sites(self, name: str, file: str | None, qualified_name: str | None):
        """Call sites of the definition under every name that reaches it, without
        its own recursion and the class's calls of itself."""
        seen: set[tuple[str, int, str]] = set()
        for callee, owner in self.names_reaching(name, qualified_name):
            for site in self.sites_by_callee.get(callee, ()):
                if site.file == file and (site.caller == qualified_name or (
                        owner is not None and site.caller is not None and site.caller.startswith(owner + "."))):
                    continue  # recursion inside the definition (or its class) itself
                key = (site.file, site.line, site.callee)
                if key not in seen:
                    seen.add(key)
                    yield site

    def callers(self, name: str, file: str | None = None, qualified_name: str | None = None) -> Callers:
        """Callers of the definition ``name`` (defined in ``file``), following
        callers that are themselves ports up to ``MAX_DEPTH`` levels."""
        result = Callers()
        seen_defs: set[tuple[str | None, str | None]] = {(file, qualified_name)}
        seen_sites: set[tuple[str, int]] = set()
        frontier = [(name, file, qualified_name)]
        for _ in range(self.MAX_DEPTH):
            following = []
            for callee, callee_file, callee_qualified in frontier:
                for site in self._sites(callee, callee_file, callee_qualified):
                    if (site.file, site.line) in seen_sites:
                        continue
                    seen_sites.add((site.file, site.line))
                    if is_test_path(site.file):
                        result.test.append(site)
                        continue
                    if site.callee != callee and site.callee not in result.bound:
                        result.bound.append(site.callee)
                    if site.caller is not None and self.is_port(site.file, site.caller):
                        key = (site.file, site.caller)
                        if key not in seen_defs:
                            seen_defs.add(key)
                            result.through.append(f"{site.file}:{site.caller_line} {site.caller}")
                            following.append((bare_name(site.caller), site.file, site.caller))
                        continue
                    result.non_test.append(site)
            frontier = following
            if not frontier:
                break
        return result

    MAX_CHAIN_HOPS = 8
    MAX_CHAINS = 24

    def caller_chains(self, name: str, file: str | None = None, qualified_name: str | None = None) -> "CallerChains":
        """Every non-test call chain from the definition ``name`` up to its entry points.

        A chain lists its hops from the port outwards: the call of the port,
        then the call of the definition enclosing that call, and so on, until
        a hop whose enclosing definition has no non-test caller (or is module
        scope). Cycles end a chain where they would repeat a definition;
        ``MAX_CHAIN_HOPS`` bounds a chain and ``MAX_CHAINS`` their number
        (``truncated`` says when either cut). Test call sites of any
        definition on a chain are collected in ``test``.
        """
        result = CallerChains()
        seen_tests: set[tuple[str, int]] = set()

        def sites_of(callee: str, callee_file: str | None, callee_qualified: str | None) -> list[CallSite]:
            found = []
            for site in self._sites(callee, callee_file, callee_qualified):
                if is_test_path(site.file):
                    if (site.file, site.line) not in seen_tests:
                        seen_tests.add((site.file, site.line))
                        result.test.append(site)
                    continue
                found.append(site)
            return sorted(found, key=lambda s: (s.file, s.line))

        def extend(chain: list[CallSite], visited: frozenset) -> None:
            if len(result.chains) >= self.MAX_CHAINS:
                result.truncated = True
                return
            last = chain[-1]
            if last.caller is None or len(chain) >= self.MAX_CHAIN_HOPS:
                result.truncated |= last.caller is not None
                result.chains.append(tuple(chain))
                return
            key = (last.file, last.caller)
            following = [s for s in sites_of(bare_name(last.caller), last.file, last.caller)
                         if (s.file, s.caller) not in visited]
            if not following:
                result.chains.append(tuple(chain))
                return
            for site in following:
                extend([*chain, site], visited | {key})

        for site in sites_of(name, file, qualified_name):
            extend([site], frozenset({(file, qualified_name)}))
        return result

    def reached_by_tests(self, name: str, file: str | None = None, qualified_name: str | None = None) -> list[CallSite]:
        """Test call sites that reach ``name`` through any chain of in-tree
        callers (up to ``MAX_DEPTH`` levels): a kernel its wrapper launches
        through a private helper is tested when the wrapper is.

        This answers "do the tests exercise this port", not "does production
        reach it" (that is :meth:`callers`, which only looks through ports).
        """
        found: list[CallSite] = []
        seen: set[tuple[str | None, str | None]] = {(file, qualified_name)}
        frontier = [(name, file, qualified_name)]
        for _ in range(self.MAX_DEPTH):
            following = []
            for callee, callee_file, callee_qualified in frontier:
                for site in self._sites(callee, callee_file, callee_qualified):
                    if is_test_file(site.file):
                        found.append(site)
                    elif site.caller is not None and (site.file, site.caller) not in seen:
                        seen.add((site.file, site.caller))
                        following.append((bare_name(site.caller), site.file, site.caller))
            if found:
                return found
            frontier = following
        return found
