"""Integer-value rule: an expression rewritten to one that computes the same integer (DESIGN §5).

A Python definition whose parameters are annotated ``int`` or ``bool`` computes, in an expression built only
from those parameters, integer literals, ``+``, ``-``, unary ``-``, ``*``, ``int(flag)`` and a conditional
``a if flag else b`` (``not flag`` too) on a ``bool`` parameter, a polynomial in the ``int`` parameters with
integer coefficients once each ``bool`` parameter is given a value: Python's integers are exact and ``bool``
is an ``int`` that is 0 or 1, so two such expressions whose polynomials are equal, for every value of the
``bool`` parameters they read, return the same integer for every input the annotations admit. The rule
compares the two sides of a definition node by node: each place they differ must be such a pair of
expressions (the rest of the definition the same ``ast``), and no parameter read there may be bound again
anywhere in the body (an assignment, a loop, a ``with`` target, a walrus, ``global``/``nonlocal``, a nested
definition's parameter or an import).

Example diff (NOT_APPLICABLE/cosmetic, ``def size(stages: int, extra: bool)``)::

    -    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2
    +    barrier = (stages + int(extra)) * 8 * 2

A name no annotation types (or one typed ``float``: rounding), a local, a call other than ``int`` of a
``bool`` parameter, ``/``, ``//``, ``%``, ``**``, a comparison, or any other difference keeps the body
change flagged.

This module reads Python source text handed to it; it reads no git and no tree index, imports no verdict
table, and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast as _ast
import itertools as _itertools
import textwrap as _textwrap

from portq.classifier.rules import Rule

RULES = (
    Rule("equal-integer-value", ("NOT_APPLICABLE",),
         "A Python definition whose every change replaces an expression by one that computes the same integer: "
         "both read only parameters annotated `int` or `bool` (a default, if any, a constant of that type) that "
         "the body never binds again, integer "
         "literals, `+`, `-`, `*`, `int(flag)` and conditionals on a `bool` parameter, and for each value of "
         "the `bool` parameters they read the two sides are the same polynomial in the `int` parameters "
         "(integers are exact; a `bool` is 0 or 1). The rest of the definition has the same AST: cosmetic. "
         "An unannotated or `float` name, a local, another call, `/`, `//`, `%`, `**`, a comparison or any "
         "other difference stays flagged.",
         "-    barrier = stages * 8 * 2 if not extra else (stages + 1) * 8 * 2\n"
         "+    barrier = (stages + int(extra)) * 8 * 2   (def size(stages: int, extra: bool))",
         "classifier.rules.integer_values.equal_integer_values, "
         "classifier.verdicts.SymbolClassifier._equal_integer_values"),
)

_MAX_FLAGS = 4  # at most 2**4 assignments of the bool parameters an expression pair reads
_MAX_TERMS = 64  # a polynomial with more monomials is not expanded further


class _Unknown(Exception):
    """An expression the rule does not read as an integer polynomial."""


def _function(text: str):
    try:
        module = _ast.parse(_textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    if len(module.body) != 1 or not isinstance(module.body[0], (_ast.FunctionDef, _ast.AsyncFunctionDef)):
        return None
    return module.body[0]


def _typed_parameters(function) -> tuple[set[str], set[str]]:
    """The ``int`` and the ``bool`` parameters of ``function`` by annotation (a bare name), each whose default,
    if any, is a constant of that type (``x: int = None`` admits ``None``: no integer)."""
    ints, flags = set(), set()
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    for argument in positional + arguments.kwonlyargs:
        annotation = argument.annotation
        default = defaults.get(argument.arg)
        if not isinstance(annotation, _ast.Name):
            continue
        if annotation.id == "int" and (default is None or (isinstance(default, _ast.Constant)
                                                           and type(default.value) is int)):
            ints.add(argument.arg)
        elif annotation.id == "bool" and (default is None or (isinstance(default, _ast.Constant)
                                                              and type(default.value) is bool)):
            flags.add(argument.arg)
    return ints, flags


def _bound_in_body(function) -> set[str]:
    """Every name a statement of ``function``'s body binds (parameters of nested definitions too)."""
    bound: set[str] = set()
    for statement in function.body:
        for node in _ast.walk(statement):
            if isinstance(node, _ast.Name) and isinstance(node.ctx, (_ast.Store, _ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (_ast.Global, _ast.Nonlocal)):
                bound.update(node.names)
            elif isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef, _ast.Lambda)):
                if not isinstance(node, _ast.Lambda):
                    bound.add(node.name)
                if not isinstance(node, _ast.ClassDef):
                    a = node.args
                    bound.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
                    bound.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
            elif isinstance(node, (_ast.Import, _ast.ImportFrom)):
                bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, _ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, (_ast.MatchAs, _ast.MatchStar)) and node.name:
                bound.add(node.name)
    return bound


def _add(a: dict, b: dict, sign: int = 1) -> dict:
    out = dict(a)
    for monomial, coefficient in b.items():
        out[monomial] = out.get(monomial, 0) + sign * coefficient
        if out[monomial] == 0:
            del out[monomial]
    return out


def _mul(a: dict, b: dict) -> dict:
    out: dict = {}
    for (ma, ca), (mb, cb) in _itertools.product(a.items(), b.items()):
        monomial = tuple(sorted(ma + mb))
        out[monomial] = out.get(monomial, 0) + ca * cb
        if out[monomial] == 0:
            del out[monomial]
    if len(out) > _MAX_TERMS:
        raise _Unknown
    return out


def _constant(value: int) -> dict:
    return {(): value} if value else {}


def _truth(node, ints: set, flags: dict) -> bool:
    """The value of a conditional's test: a ``bool`` parameter or ``not`` of one."""
    if isinstance(node, _ast.Name) and node.id in flags:
        return flags[node.id]
    if isinstance(node, _ast.UnaryOp) and isinstance(node.op, _ast.Not):
        return not _truth(node.operand, ints, flags)
    raise _Unknown


def _polynomial(node, ints: set, flags: dict) -> dict:
    """``node`` as {sorted tuple of int parameter names: coefficient}, each ``bool`` parameter ``flags`` holds
    read as its value; ``_Unknown`` for anything else."""
    if isinstance(node, _ast.Constant) and type(node.value) in (int, bool):
        return _constant(int(node.value))
    if isinstance(node, _ast.Name):
        if node.id in ints:
            return {(node.id,): 1}
        if node.id in flags:
            return _constant(int(flags[node.id]))
        raise _Unknown
    if isinstance(node, _ast.BinOp):
        left, right = _polynomial(node.left, ints, flags), _polynomial(node.right, ints, flags)
        if isinstance(node.op, _ast.Add):
            return _add(left, right)
        if isinstance(node.op, _ast.Sub):
            return _add(left, right, -1)
        if isinstance(node.op, _ast.Mult):
            return _mul(left, right)
        raise _Unknown
    if isinstance(node, _ast.UnaryOp):
        if isinstance(node.op, _ast.USub):
            return _add({}, _polynomial(node.operand, ints, flags), -1)
        if isinstance(node.op, _ast.UAdd):
            return _polynomial(node.operand, ints, flags)
        raise _Unknown
    if isinstance(node, _ast.IfExp):
        chosen = node.body if _truth(node.test, ints, flags) else node.orelse
        return _polynomial(chosen, ints, flags)
    if isinstance(node, _ast.Call) and isinstance(node.func, _ast.Name) and node.func.id == "int" \
            and len(node.args) == 1 and not node.keywords:
        argument = node.args[0]
        if isinstance(argument, _ast.Name) and argument.id in flags:
            return _constant(int(flags[argument.id]))
        raise _Unknown
    raise _Unknown


def _names(node) -> set[str]:
    return {n.id for n in _ast.walk(node) if isinstance(n, _ast.Name)}


def _same_integer(old, new, ints: set, flags: set) -> bool:
    read = (_names(old) | _names(new)) - {"int"}
    if not read <= ints | flags:
        return False
    chosen = sorted(read & flags)
    if len(chosen) > _MAX_FLAGS:
        return False
    try:
        for values in _itertools.product((False, True), repeat=len(chosen)):
            given = dict(zip(chosen, values))
            if _polynomial(old, ints, given) != _polynomial(new, ints, given):
                return False
    except _Unknown:
        return False
    return True


def _differing(old, new, pairs: list) -> bool:
    """Walk ``old`` and ``new`` together; each place they differ that is an expression on both sides is
    put in ``pairs``. False where they differ in anything else."""
    if type(old) is not type(new):
        if isinstance(old, _ast.expr) and isinstance(new, _ast.expr):
            pairs.append((old, new))
            return True
        return False
    if isinstance(old, _ast.AST):
        if _ast.dump(old) == _ast.dump(new):
            return True
        if isinstance(old, _ast.expr):
            pairs.append((old, new))
            return True
        for field in old._fields:
            if not _differing(getattr(old, field, None), getattr(new, field, None), pairs):
                return False
        return True
    if isinstance(old, list):
        return len(old) == len(new) and all(_differing(a, b, pairs) for a, b in zip(old, new))
    return old == new


def equal_integer_values(old_text: str, new_text: str) -> list[tuple[str, str]] | None:
    """``equal-integer-value``: the (old, new) expressions that differ between two sides of a Python
    definition, when every difference is an expression pair that computes the same integer for every input
    the ``int``/``bool`` annotations admit and the rest is the same ``ast``; None otherwise."""
    old, new = _function(old_text), _function(new_text)
    if old is None or new is None or _ast.dump(old.args) != _ast.dump(new.args):
        return None
    ints, flags = _typed_parameters(old)
    rebound = _bound_in_body(old) | _bound_in_body(new)
    a = old.args
    if "int" in rebound or "int" in {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}:
        return None  # ``int`` is no longer the builtin there
    ints, flags = ints - rebound, flags - rebound
    pairs: list = []
    if not _differing(old, new, pairs) or not pairs:
        return None
    if not all(_same_integer(a, b, ints, flags) for a, b in pairs):
        return None
    return [(_ast.unparse(a), _ast.unparse(b)) for a, b in pairs]
