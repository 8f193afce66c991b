"""Reachability: who calls an in-tree port, and is any of them production code.

A REAL_GAP needs one non-test caller of the port; an INERT verdict lists the
callers it found (tests only). Callers are found by name across the whole
in-tree source with tree-sitter (DESIGN §6): direct calls ``f(...)``, attribute
calls ``module.f(...)``/``self.f(...)``, Triton launches ``kernel[grid](...)``,
a Python name passed as a call argument (``launch(kernel, ...)``), C++ calls
``ns::f(...)`` and CUDA launches ``k<<<...>>>(...)``.

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
    form: str  # call | attribute | launch
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


def call_sites(table: SymbolTable, file: str) -> list[CallSite]:
    """Every call site of a parsed file, with its enclosing definition."""
    if table.tree is None:
        return []
    source_lines = table.source.decode("utf-8", errors="replace").splitlines()
    sites: list[CallSite] = []
    for node in call_nodes(table):
        found = _python_callee(node) if table.language == "python" else _cpp_callee(node)
        if found is None:
            continue
        references = _python_references(node) if table.language == "python" else []
        for callee, form in [found, *references]:
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
    ``run(fn=kernel)``): a kernel passed to a launch helper is reached there."""
    arguments = call.child_by_field_name("arguments")
    found = []
    for argument in arguments.named_children if arguments is not None else ():
        if argument.type == "keyword_argument":
            argument = argument.child_by_field_name("value")
        if argument is not None and argument.type == "identifier":
            found.append((_text(argument), "reference"))
    return found


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


@dataclass
class CallerChains:
    """Non-test call chains of one port (hops from the port outwards) and the test call sites met."""

    chains: list[tuple[CallSite, ...]] = field(default_factory=list)
    test: list[CallSite] = field(default_factory=list)
    truncated: bool = False


class Reachability:
    """Caller queries over the call sites of an in-tree index.

    ``sites_by_callee`` maps a bare name to its call sites; ``is_port(file,
    qualified_name)`` says whether a definition is anchored as a port.
    """

    MAX_DEPTH = 4

    def __init__(self, sites_by_callee: dict[str, list[CallSite]], is_port) -> None:
        self.sites_by_callee = sites_by_callee
        self.is_port = is_port

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
                for site in self.sites_by_callee.get(callee, ()):
                    if site.file == callee_file and site.caller == callee_qualified:
                        continue  # recursion inside the definition itself
                    if (site.file, site.line) in seen_sites:
                        continue
                    seen_sites.add((site.file, site.line))
                    if is_test_path(site.file):
                        result.test.append(site)
                        continue
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
            for site in self.sites_by_callee.get(callee, ()):
                if site.file == callee_file and site.caller == callee_qualified:
                    continue  # recursion inside the definition itself
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
                for site in self.sites_by_callee.get(callee, ()):
                    if site.file == callee_file and site.caller == callee_qualified:
                        continue
                    if is_test_file(site.file):
                        found.append(site)
                    elif site.caller is not None and (site.file, site.caller) not in seen:
                        seen.add((site.file, site.caller))
                        following.append((bare_name(site.caller), site.file, site.caller))
            if found:
                return found
            frontier = following
        return found
