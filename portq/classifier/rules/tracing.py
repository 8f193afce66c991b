"""Tracing calls: statements added around a definition's work that only mark a profiler range (DESIGN §5, form without meaning).

Upstream adds profiler ranges around host code and kernel launches through a
helper of its own (``util.range_begin("ops.scale_rows")`` before the
launch, ``util.range_end()`` after it), whose body does nothing but, under a
flag, call a range-marking API. A range mark annotates the profiler's
timeline; it reads no tensor and writes none, so the definition computes
what it did.

* ``tracing-calls``: a Python definition whose old and new ``ast`` are the
  same once every expression statement that calls a tracing helper is left
  out. A tracing helper is a call ``f(...)`` or ``mod.f(...)`` whose arguments
  are literals, with ``f`` resolving, through the definition's module's import
  (and modules that only re-export it, star imports included) at the commit,
  to a module-level function whose body holds only a docstring, ``if`` tests
  that read names, attributes and constants (no call), and statement calls of
  a range-marking API with literal or parameter arguments. The range-marking
  APIs are a small table, each name bound by ``import nvtx`` or ``import
  torch`` in the helper's module: NVIDIA's ``nvtx`` package's ``push_range``,
  ``pop_range``, ``start_range``, ``end_range`` and ``mark`` (they annotate
  the Nsight timeline), and ``torch.cuda.nvtx.range_push``, ``range_pop`` and
  ``mark`` (PyTorch's wrappers of the same). Cosmetic. A helper that does
  anything else (a synchronisation, a log of a value), a call whose arguments
  compute something, or any other change stays flagged.

Example diff (cosmetic; ``util.range_begin`` is ``if config.profiling: nvtx.push_range(message)``)::

    +    util.range_begin("ops.scale_rows")
         ops.scale_rows[grid](output, input, ...)
    +    util.range_end()

The code: ``untraced`` compares a definition's two sides without the tracing statements;
``TracingRules`` holds the method of the verdict table (``portq.classifier.verdicts.SymbolClassifier``)
that reads the helpers at the commit and applies the rule. It must not import the verdict table or
anything after it, and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from collections.abc import Callable

from portq.classifier.imports import import_bindings
from portq.classifier.rules import Rule
from portq.classifier.rules.module_constants import _dotted, _parsed, binding_module, module_at_commit
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE

RULES = (
    Rule("tracing-calls", ("NOT_APPLICABLE",),
         "A Python definition whose whole change adds (or drops) statement calls, with literal arguments, of "
         "module-level helpers (resolved through its module's imports and re-exports at the commit) whose bodies "
         "only test call-free conditions and call a range-marking profiler API (nvtx push_range/pop_range/"
         "start_range/end_range/mark, torch.cuda.nvtx range_push/range_pop/mark) with literal or parameter "
         "arguments: the marks compute nothing, so cosmetic. A helper doing anything else, an argument that "
         "computes, or any other change stays flagged.",
         '+    util.range_begin("ops.scale_rows")\n     ops.scale_rows[grid](...)\n'
         "+    util.range_end()\n    (def range_begin(message): if config.profiling: nvtx.push_range(message))",
         "classifier.rules.tracing.untraced, classifier.rules.tracing.TracingRules._tracing_calls"),
)

_MARKS = {
    "nvtx": {"push_range", "pop_range", "start_range", "end_range", "mark"},
    "torch.cuda.nvtx": {"range_push", "range_pop", "mark"},
}
"""Module (as its import binds it) -> the range-marking functions it offers."""


def _call_free(node) -> bool:
    return not any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda))
                   for n in ast.walk(node))


def marks_only(function, bindings: dict[str, str]) -> bool:
    """Whether a helper's body is only a docstring, call-free ``if`` tests and calls of a range-marking API
    (``_MARKS``, each name resolved through ``bindings``: name -> the dotted module its import binds) whose
    arguments are literals or the helper's parameters."""
    parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}

    def simple(value) -> bool:
        return isinstance(value, ast.Constant) or isinstance(value, ast.Name) and value.id in parameters

    def marks(statements) -> bool:
        for index, statement in enumerate(statements):
            if index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
                    and isinstance(statement.value.value, str):
                continue
            if isinstance(statement, ast.If):
                if not _call_free(statement.test) or not marks(statement.body) or not marks(statement.orelse):
                    return False
                continue
            if isinstance(statement, ast.Pass):
                continue
            call = statement.value if isinstance(statement, ast.Expr) else None
            if not isinstance(call, ast.Call):
                return False
            dotted = _dotted(call.func)
            if dotted is None or "." not in dotted:
                return False
            head, _, rest = dotted.partition(".")
            if head not in bindings:
                return False
            module, _, name = f"{bindings[head]}.{rest}".rpartition(".")
            if name not in _MARKS.get(module, ()):
                return False
            if not all(simple(a) for a in call.args) or not all(k.arg is not None and simple(k.value)
                                                                for k in call.keywords):
                return False
        return True

    return bool(function.body) and marks(function.body)


def drop_trace_statements(node: ast.AST, is_trace: Callable[[str], bool], dropped: list[str] | None = None) \
        -> ast.AST:
    """``node`` with the statements of its own blocks (``body``, ``orelse``, ``finalbody``) that only call a
    tracing helper (``is_trace(dotted)``) with literal arguments left out, a block left empty holding ``pass``;
    each left-out callee's spelling is appended to ``dropped``."""
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(node, field, None)
        if not isinstance(statements, list) or not statements or not isinstance(statements[0], ast.stmt):
            continue
        kept = []
        for statement in statements:
            call = statement.value if isinstance(statement, ast.Expr) else None
            dotted = _dotted(call.func) if isinstance(call, ast.Call) else None
            if dotted is not None and all(isinstance(a, ast.Constant) for a in call.args) \
                    and all(k.arg is not None and isinstance(k.value, ast.Constant) for k in call.keywords) \
                    and is_trace(dotted):
                if dropped is not None:
                    dropped.append(dotted)
                continue
            kept.append(statement)
        setattr(node, field, kept or [ast.Pass()])
    return node


def untraced(old_text: str, new_text: str, old_trace: Callable[[str], bool],
             new_trace: Callable[[str], bool]) -> list[str]:
    """The tracing calls (their callee's spelling) whose statements, left out of both sides of a definition
    (its texts), make the two the same ``ast``; empty when nothing changed, no such statement was left out,
    or the sides differ otherwise. ``old_trace(dotted)`` and ``new_trace(dotted)`` say whether a callee is a
    tracing helper on each side."""
    sides = [_parsed(textwrap.dedent(t)) for t in (old_text, new_text)]
    if any(s is None or len(s.body) != 1 for s in sides) or ast.dump(sides[0]) == ast.dump(sides[1]):
        return []
    dropped: list[str] = []

    class Strip(ast.NodeTransformer):
        def __init__(self, is_trace):
            self.is_trace = is_trace

        def generic_visit(self, node):
            super().generic_visit(node)
            return drop_trace_statements(node, self.is_trace, dropped)

    if len({ast.dump(Strip(lambda _: True).visit(copy.deepcopy(s))) for s in sides}) != 1:
        return []  # necessary: equal once the real tracing calls are left out, equal once every candidate is
    dropped.clear()
    stripped = [Strip(t).visit(copy.deepcopy(s)) for s, t in zip(sides, (old_trace, new_trace))]
    if not dropped or ast.dump(stripped[0]) != ast.dump(stripped[1]):
        return []
    return list(dict.fromkeys(dropped))


class TracingRules:
    """The verdict-table method that applies ``tracing-calls``."""

    def _tracing_calls(self, entry, symbol) -> list[str]:
        """``untraced`` for a modified Python symbol, each side's callees resolved at that side's commit."""
        read = self._python_sides_read(entry, symbol, self._trace_predicate)
        return untraced(*read) if read is not None else []

    def _trace_predicate(self, commit: str, path: str, blob: str | None):
        """``is_trace(dotted)`` for calls in the file ``path`` (its ``blob``) at ``commit`` (``_traces``; another
        file is read only for a call that may be a tracing helper's); None where the file cannot be read."""
        opened = module_at_commit(self._parsed_table, commit, path, blob)
        if opened is None:
            return None
        read, own, mine = opened
        known: dict[str, bool] = {}

        def is_trace(dotted: str) -> bool:
            if dotted not in known:
                known[dotted] = self._traces(dotted, path, own, mine, read)
            return known[dotted]

        return is_trace

    @staticmethod
    def _traces(dotted: str, path: str, own, mine, read) -> bool:
        """Whether ``dotted``, called in the module at ``path`` (its table ``own``, its imports ``mine``), is a
        module-level function whose body only marks a profiler range (``marks_only``)."""
        head, _, rest = dotted.partition(".")
        if not rest:
            found, name = own, head
        elif head in mine and "." not in rest:
            found, name = binding_module(head, rest, path, mine, read)
        else:
            return False
        module = _parsed(found.source) if found is not None else None
        if module is None:
            return False
        functions = [s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == name]
        rebound = [n for n in ast.walk(module) if isinstance(n, ast.Name) and n.id == name
                   and not isinstance(n.ctx, ast.Load)]
        if len(functions) != 1 or functions[0].decorator_list or rebound:
            return False
        bindings = {n: b.target for n, b in import_bindings(found.tree.root_node).items()}
        return marks_only(functions[0], bindings)

    def _tracing_verdict(self, symbol, found, evidence):
        return self._base("tracing-calls", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{symbol.name} changes only by calls of helpers that mark a profiler range "
                          f"({', '.join(found[:3])}), which compute nothing: cosmetic rather than a change the "
                          "port must follow",
                          evidence + [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                               symbol=symbol.name, message=f"tracing calls: {', '.join(found[:3])}")])

