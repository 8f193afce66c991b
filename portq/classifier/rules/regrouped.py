"""A returned tuple regrouped across a caller and its one callee (DESIGN §5, form without meaning).

A method that returns what a helper of its class returns (``return
Cls.__backward(g, x)``) may take over the helper's constant slots: the helper
stops returning ``None`` at some positions (``return dx, None`` becomes
``return dx``) and the caller unpacks the shorter tuple into fresh names and
returns them with ``None`` put back at the same positions (``dx =
Cls.__backward(g, x)`` then ``return dx, None``). When the helper is called
nowhere else in its module, on both sides, and ends in a ``return`` (no path
falls off its end with an implicit ``None``), the caller returns the same
values as before.

* ``regrouped-return``: a Python method ``C`` of class ``K`` and the method
  ``F`` of ``K`` it called as ``return K.F(args)`` change, in the same commit,
  only as follows (once tracing calls, see ``tracing-calls``, are left out of
  both, and ``torch.f((a, b), ...)`` is read as ``torch.f(a, b, ...)`` for
  the size-taking factories ``empty``, ``zeros``, ``ones``, ``rand`` and
  ``randn`` of the module ``import torch`` binds): ``C``'s ``return K.F(args)``
  becomes ``n1, ..., nm = K.F(args)`` followed directly by ``return`` of
  ``n1..nm`` in order with the constant ``None`` at a set ``P`` of positions
  (fresh names, read nowhere else); every ``return`` of ``F`` returned a tuple
  holding ``None`` at ``P`` and now returns it without them (the one element
  alone when one is left); ``F`` is private to ``K`` (``__name``, which
  Python mangles, so no other module calls it as ``K.F``), ends in a
  ``return``, yields nothing, and is referenced only by that call in the
  module on both sides.
  Both symbols are cosmetic. Any other change, a second caller, another
  position or a non-``None`` element dropped stays flagged.

Example diff (cosmetic)::

     def backward(ctx, *grad_outputs):
    -    return Norm.__backward(grad_outputs[0], ctx.x)
    +    grad_input = Norm.__backward(grad_outputs[0], ctx.x)
    +    return grad_input, None
     def __backward(grad_output, x):
         ...
    -    return grad_input, None
    +    return grad_input

The code: ``regrouped_pair`` checks one caller/callee pair on the two sides' modules; ``RegroupRules``
holds the verdict-table method (``portq.classifier.verdicts.SymbolClassifier``) that applies it. It must not
import the verdict table or anything after it, and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable

from portq.classifier.rules import Rule
from portq.classifier.rules.module_constants import _dotted, _parsed, module_at_commit
from portq.classifier.rules.tracing import drop_trace_statements
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE

RULES = (
    Rule("regrouped-return", ("NOT_APPLICABLE",),
         "A Python method whose `return K.F(args)` becomes `n1, ..., nm = K.F(args)` then `return` of the names "
         "with `None` put at positions P, while F (a private `__name` method of the same class, referenced only by that call in "
         "the module on both sides, ending in a return, yielding nothing) stops returning the `None`s at P from "
         "every return, returns the same values: both cosmetic (tracing calls left out, `torch.empty((a, b))` "
         "read as `torch.empty(a, b)` for the size-taking factories). Any other change, caller or position stays "
         "flagged.",
         "-    return Norm.__backward(g, x)\n+    dx = Norm.__backward(g, x)\n+    return dx, None\n"
         "   (in __backward) -    return dx, None\n+    return dx",
         "classifier.rules.regrouped.regrouped_pair, classifier.rules.regrouped.RegroupRules._regrouped_return"),
)

_SIZE_FACTORIES = frozenset({"empty", "zeros", "ones", "rand", "randn"})
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _normalised(function, is_trace: Callable[[str], bool], torch_bound: bool):
    """A copy of ``function`` less statement calls of tracing helpers (literal arguments), with
    ``torch.f((a, b), ...)`` written ``torch.f(a, b, ...)`` for the size-taking factories."""
    tree = copy.deepcopy(function)

    class Normalise(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if torch_bound and _dotted(node.func) in {f"torch.{f}" for f in _SIZE_FACTORIES} \
                    and len(node.args) == 1 and isinstance(node.args[0], ast.Tuple) and node.args[0].elts \
                    and not any(isinstance(e, ast.Starred) for e in node.args[0].elts):
                node.args = list(node.args[0].elts)
            return node

        def generic_visit(self, node):
            super().generic_visit(node)
            return drop_trace_statements(node, is_trace)

    return Normalise().visit(tree)


def _own_nodes(function):
    """The nodes of ``function``'s body outside nested functions, lambdas and classes."""
    stack = [n for n in function.body if not isinstance(n, _NESTED)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _NESTED))


def _class(module, name: str):
    found = [s for s in module.body if isinstance(s, ast.ClassDef) and s.name == name]
    return found[0] if len(found) == 1 else None


def _method(cls, name: str):
    found = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name]
    return found[0] if len(found) == 1 else None


def _references(module, name: str) -> list:
    """Every ``X.name`` and ``name`` load in the module."""
    return [n for n in ast.walk(module) if isinstance(n, ast.Attribute) and n.attr == name
            or isinstance(n, ast.Name) and n.id == name]


def _dump(node) -> str:
    return ast.dump(node, annotate_fields=True, include_attributes=False)


def _caller_call(function, cls_name: str):
    """The one ``return K.F(...)`` in ``function``'s own statements, as ``F``; None if not exactly one."""
    found = [n for n in _own_nodes(function) if isinstance(n, ast.Return) and isinstance(n.value, ast.Call)
             and isinstance(n.value.func, ast.Attribute) and isinstance(n.value.func.value, ast.Name)
             and n.value.func.value.id == cls_name]
    return found[0].value.func.attr if len(found) == 1 else None


def _folded_caller(new_caller, callee: str, cls_name: str):
    """``(new caller with its unpacking and return folded back into return K.F(...), P, m)``, or None."""
    for node in ast.walk(new_caller):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            for index, statement in enumerate(statements[:-1]):
                call = statement.value if isinstance(statement, ast.Assign) else None
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr == callee and isinstance(call.func.value, ast.Name)
                        and call.func.value.id == cls_name and len(statement.targets) == 1):
                    continue
                target = statement.targets[0]
                names = [target] if isinstance(target, ast.Name) else list(target.elts) \
                    if isinstance(target, ast.Tuple) else []
                if not names or not all(isinstance(n, ast.Name) for n in names) \
                        or len({n.id for n in names}) != len(names):
                    return None
                following = statements[index + 1]
                value = following.value if isinstance(following, ast.Return) else None
                elements = value.elts if isinstance(value, ast.Tuple) else None
                if elements is None:
                    return None
                positions, taken = set(), []
                for at, element in enumerate(elements):
                    if isinstance(element, ast.Constant) and element.value is None:
                        positions.add(at)
                    elif isinstance(element, ast.Name):
                        taken.append(element.id)
                    else:
                        return None
                if taken != [n.id for n in names] or not positions:
                    return None
                uses = [n for n in ast.walk(new_caller) if isinstance(n, ast.Name) and n.id in set(taken)]
                if len(uses) != 2 * len(taken):
                    return None  # each name bound by the unpacking and read by the return, nowhere else
                folded = copy.deepcopy(new_caller)
                # the same place in the copy: found by walking it in the same order
                for twin in ast.walk(folded):
                    if twin.__class__ is node.__class__ and _dump(twin) == _dump(node):
                        listed = getattr(twin, field)
                        listed[index:index + 2] = [ast.Return(value=copy.deepcopy(call))]
                        return folded, positions, len(taken)
                return None
    return None


def _returns_regrouped(old_callee, new_callee, positions: set[int], kept: int) -> bool:
    """Whether every ``return`` of the old callee returns a tuple with ``None`` at ``positions`` and the new
    one is the old one with each such return less those elements (the one left alone when one is)."""
    if not old_callee.body or not isinstance(old_callee.body[-1], ast.Return):
        return False
    for function in (old_callee, new_callee):
        if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in _own_nodes(function)):
            return False
    returns = [n for n in _own_nodes(old_callee) if isinstance(n, ast.Return)]
    rewritten = copy.deepcopy(old_callee)
    for node in [n for n in _own_nodes(rewritten) if isinstance(n, ast.Return)]:
        value = node.value
        if not isinstance(value, ast.Tuple) or len(value.elts) != kept + len(positions) \
                or any(not (isinstance(value.elts[p], ast.Constant) and value.elts[p].value is None)
                       for p in positions if p < len(value.elts)) or max(positions) >= len(value.elts):
            return False
        left = [e for at, e in enumerate(value.elts) if at not in positions]
        node.value = left[0] if len(left) == 1 else ast.Tuple(elts=left, ctx=ast.Load())
    return bool(returns) and _dump(rewritten) == _dump(new_callee)


def regrouped_pair(modules, cls_name: str, caller: str, callee: str, normalise) -> bool:
    """Whether ``caller`` and ``callee`` (methods of ``cls_name``) changed only by regrouping the callee's
    returned tuple into the caller (see the module); ``modules`` the two sides' module ``ast``s,
    ``normalise(side, function)`` a side's function with tracing calls left out and factories read alike."""
    if not callee.startswith("__") or callee.endswith("__"):
        return False  # only a private (name-mangled) helper cannot be called from another module as K.F
    sides = []
    for module in modules:
        if any(isinstance(n, (ast.Attribute, ast.Name)) and (getattr(n, "attr", None) or getattr(n, "id", None))
               == f"_{cls_name.lstrip('_')}{callee}" for n in ast.walk(module)):
            return False
        cls = _class(module, cls_name)
        methods = (_method(cls, caller), _method(cls, callee)) if cls is not None else (None, None)
        if None in methods or len(_references(module, callee)) != 1 \
                or len([n for n in ast.walk(methods[0]) if isinstance(n, ast.Attribute) and n.attr == callee]) != 1:
            return False
        sides.append(methods)
    (old_caller, old_callee), (new_caller, new_callee) = sides
    old_caller, old_callee = normalise(0, old_caller), normalise(0, old_callee)
    new_caller, new_callee = normalise(1, new_caller), normalise(1, new_callee)
    if _caller_call(old_caller, cls_name) != callee:
        return False
    folded = _folded_caller(new_caller, callee, cls_name)
    if folded is None or _dump(folded[0]) != _dump(old_caller):
        return False
    return _returns_regrouped(old_callee, new_callee, folded[1], folded[2])


class RegroupRules:
    """The verdict-table method that applies ``regrouped-return``."""

    def _regrouped_return(self, entry, symbol) -> str | None:
        """The other method of the regrouped pair when a modified Python method ``K.m`` is its caller or its
        callee (``regrouped_pair``); None otherwise."""
        parts = symbol.qualified_name.split(".") if symbol.qualified_name else []
        if len(parts) != 2 or symbol.change != "modified" or not entry.commit.parents \
                or not symbol.path.endswith(".py"):
            return None
        cls_name, method = parts
        opened = [module_at_commit(self._parsed_table, commit, path, blob) for commit, path, blob in
                  ((entry.commit.parents[0], symbol.old_path or symbol.path, symbol.old_blob),
                   (entry.commit.sha, symbol.path, symbol.new_blob))]
        if None in opened:
            return None
        modules = [_parsed(o[1].source) for o in opened]
        if None in modules:
            return None
        traces = [self._trace_predicate(commit, path, blob) for commit, path, blob in
                  ((entry.commit.parents[0], symbol.old_path or symbol.path, symbol.old_blob),
                   (entry.commit.sha, symbol.path, symbol.new_blob))]
        if None in traces:
            return None
        bound = [o[2].get("torch") is not None and o[2]["torch"].target == "torch" for o in opened]

        def normalise(side: int, function):
            return _normalised(function, traces[side], bound[side])

        old_cls = _class(modules[0], cls_name)
        old_method = _method(old_cls, method) if old_cls is not None else None
        if old_method is None:
            return None
        callee = _caller_call(normalise(0, old_method), cls_name)
        if callee is not None and regrouped_pair(modules, cls_name, method, callee, normalise):
            return callee
        new_cls = _class(modules[1], cls_name)
        callers = [m.name for m in (new_cls.body if new_cls is not None else [])
                   if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and any(isinstance(n, ast.Attribute) and n.attr == method for n in ast.walk(m))]
        if len(callers) == 1 and callers[0] != method and regrouped_pair(modules, cls_name, callers[0], method,
                                                                         normalise):
            return callers[0]
        return None

    def _regrouped_verdict(self, symbol, partner: str, evidence):
        return self._base("regrouped-return", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{symbol.name} and {partner} only move the constant None slots of the tuple one returns "
                          "through the other (the caller unpacks the shorter tuple and puts None back at the same "
                          "positions; the callee has no other reference and ends in a return), so the caller "
                          "returns the same values: cosmetic rather than a change the port must follow",
                          evidence + [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                               symbol=symbol.name, message=f"returned tuple regrouped with {partner}")])
