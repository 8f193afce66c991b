"""Library-call rules: a call respelled as the call its library defines it to be (DESIGN §5).

A library often offers a named helper for one fixed use of a general call
(a fence with a fixed proxy kind and space); a commit that moves between the
helper and the general call with exactly those arguments issues the same
operation. Whether two spellings are equal is a fact of the library, not of
the syntax, so the rule reads a small table, each entry checked against the
library's own source and cited there:

* CuTe DSL (NVIDIA CUTLASS, ``python/CuTeDSL/cutlass/cute/arch/nvvm_wrappers.py``,
  re-exported as ``cutlass.cute.arch``): ``fence_view_async_shared()`` takes
  only ``loc``/``ip`` and its body is the one call
  ``fence_proxy(kind="async.shared", space="cta", loc=loc, ip=ip)``, where
  ``fence_proxy``'s first parameter is ``kind`` and ``space`` is keyword-only.
  So ``cute.arch.fence_view_async_shared()``,
  ``cute.arch.fence_proxy("async.shared", space="cta")`` and
  ``cute.arch.fence_proxy(kind="async.shared", space="cta")`` are one call.

* ``documented-equivalent-call`` (Python): a definition whose only change
  replaces calls by spellings one table entry lists as the same call (every
  argument a literal the entry names, nothing else passed), each callee read
  through its module's one top-level import binding of the name it starts
  with (``import cutlass.cute as cute``), never a name the module, the
  enclosing class or the definition itself binds otherwise.
  NOT_APPLICABLE/cosmetic.

Example diff (cosmetic)::

         if const_expr(self.cluster_n > 1):
    -        cute.arch.fence_proxy("async.shared", space="cta")
    +        cute.arch.fence_view_async_shared()

Another argument value (``space="cluster"``, ``"async.global"``), a callee
bound to a module of the project's own or shadowed by a local, a spelling
the table does not hold, or any other change beside the respelling stays
flagged. Spellings whose equality rests on an argument's run-time kind (a
helper that does one thing for a tensor and another for a layout), or on
values the library's generated bindings define rather than its source (an
enum member against a string), are not in the table.

This module reads Python syntax trees of the texts handed to it; it reads no
git and no tree index, imports no verdict table, and never names a corpus
symbol, path or commit.
"""

from __future__ import annotations

import ast

from portq.classifier.rules import Rule
from portq.classifier.rules.form import _one_definition
from portq.classifier.rules.spellings import _resolved

RULES = (
    Rule("documented-equivalent-call", ("NOT_APPLICABLE",),
         "A Python definition whose only change replaces calls by spellings its library's source defines as the "
         "same call (a small cited table: CuTe DSL's cute.arch.fence_view_async_shared() ≡ cute.arch.fence_proxy("
         "\"async.shared\", space=\"cta\")), every argument a literal the entry names and each callee read through "
         "its module's one import binding, never a local: the same operation, cosmetic. Another argument value, "
         "a callee of the project's own or any other change stays flagged.",
         "-        cute.arch.fence_proxy(\"async.shared\", space=\"cta\")\n"
         "+        cute.arch.fence_view_async_shared()",
         "classifier.rules.library_calls.equivalent_calls, "
         "classifier.verdicts.SymbolClassifier._equivalent_calls"),
)

Spelling = tuple[str, tuple[object, ...], tuple[tuple[str, object], ...]]
"""A call: the dotted callee, its positional literal arguments, its keyword literal arguments (sorted)."""

EQUIVALENT_CALLS: dict[str, tuple[Spelling, ...]] = {
    # NVIDIA CUTLASS python/CuTeDSL/cutlass/cute/arch/nvvm_wrappers.py: fence_view_async_shared(*, loc, ip)
    # calls fence_proxy(kind="async.shared", space="cta", loc=loc, ip=ip); fence_proxy(kind, *, space=None, ...)
    "async-shared proxy fence, CTA space": (
        ("cutlass.cute.arch.fence_view_async_shared", (), ()),
        ("cutlass.cute.arch.fence_proxy", ("async.shared",), (("space", "cta"),)),
        ("cutlass.cute.arch.fence_proxy", (), (("kind", "async.shared"), ("space", "cta"))),
    ),
}
"""The operation → the spellings of it the library's source makes equal; each entry read in that source."""

_SPELLED = {spelling: operation for operation, spellings in EQUIVALENT_CALLS.items() for spelling in spellings}


def _literal(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return True, node.value
    return False, None


def _spelling(call: ast.Call, resolve) -> Spelling | None:
    callee = resolve(call.func)
    if callee is None:
        return None
    positional = []
    for argument in call.args:
        ok, value = _literal(argument)
        if not ok:
            return None
        positional.append(value)
    keywords = []
    for keyword in call.keywords:
        ok, value = _literal(keyword.value)
        if keyword.arg is None or not ok:
            return None
        keywords.append((keyword.arg, value))
    return callee, tuple(positional), tuple(sorted(keywords))


def _locally_bound(function: ast.AST) -> set[str]:
    """Names the definition binds itself: its parameters and every name it stores, imports or defines."""
    bound: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            bound.add(node.name)
    return bound


class _Operations(ast.NodeTransformer):
    """Replaces each call the table lists by a marker naming its operation, recording the spellings seen."""

    def __init__(self, resolve):
        self.resolve = resolve
        self.seen: list[tuple[str, Spelling]] = []

    def visit_Call(self, node: ast.Call):
        spelling = _spelling(node, self.resolve)
        operation = _SPELLED.get(spelling) if spelling is not None else None
        if operation is None:
            return self.generic_visit(node)
        self.seen.append((operation, spelling))
        return ast.Call(func=ast.Name(id=f"<{operation}>", ctx=ast.Load()), args=[], keywords=[])


def _describe(spelling: Spelling) -> str:
    callee, positional, keywords = spelling
    arguments = [repr(v) for v in positional] + [f"{k}={v!r}" for k, v in keywords]
    return f"{callee}({', '.join(arguments)})"


def equivalent_calls(old_text: str, new_text: str, old_source: str, new_source: str, path: str,
                     qualified_name: str) -> list[str]:
    """Rule ``documented-equivalent-call``: ``old → new`` for each call respelled as the table's same call,
    when that is the definition's only change (see the module docstring); empty otherwise."""
    old, new = _one_definition(old_text), _one_definition(new_text)
    try:
        old_module, new_module = ast.parse(old_source), ast.parse(new_source)
    except (SyntaxError, ValueError):
        return []
    if old is None or new is None or ast.dump(old) == ast.dump(new):
        return []
    rewritten = []
    for definition, module in ((old, old_module), (new, new_module)):
        local = _locally_bound(definition)

        def resolve(node, module=module, local=local):
            head = node
            while isinstance(head, ast.Attribute):
                head = head.value
            if not isinstance(head, ast.Name) or head.id in local:
                return None
            return _resolved(node, module, path, qualified_name)

        operations = _Operations(resolve)
        tree = operations.visit(ast.parse(ast.unparse(definition)))
        rewritten.append((ast.dump(tree), operations.seen))
    (before, was), (after, now) = rewritten
    if before != after or [o for o, _ in was] != [o for o, _ in now]:
        return []
    return [f"{_describe(a)} → {_describe(b)}" for (_, a), (_, b) in zip(was, now) if a != b]
