"""Returned-value rules: a change to what a definition returns that the port already returns (DESIGN §5, §8).

``port-has-change`` and ``port-has-renamed-change`` pair each touched
assignment or call statement with the port's; a ``return`` statement is
neither (it assigns no target and is no call statement), so a change
confined to what a small function returns, such as a partial revert that
puts back a line the port already has, always asked for review.

* ``port-has-returned-change``: upstream's old and new definition are the
  same ``ast`` (docstrings aside) but for the value of their one ``return``
  (the definition's own scope; a nested function or lambda is its own), and
  the port's one ``return`` reads as the new value while the old value does
  not. "Reads as" compares the two expressions node for node: attributes,
  literals and operators verbatim; each of upstream's parameters as the
  port's parameter at the same position (both take as many); a name
  upstream's definition binds as itself, bound in the port too; any other
  name (a module-level function or constant) as itself, or as one name of
  the port's the tree anchors as the port of that upstream definition of the
  same file (``sigmoid`` read as ``sigmoid_f`` where ``# portq: ports
  ...::sigmoid`` sits on ``sigmoid_f``), one port name for each upstream
  name throughout. IN_SYNC, citing the port's ``return``.

Example diff (IN_SYNC for a port ``def tanh_f(y): return 2 * sigmoid_f(2 * y) - 1``
whose ``sigmoid_f`` carries the anchor of upstream's ``sigmoid``)::

    -    return tl.math.tanh(input)
    +    return 2 * sigmoid(2 * input) - 1

A port whose ``return`` differs in an operator or a literal, calls a helper
anchored to another definition, reads a local where upstream reads a
parameter, or returns in more than one place stays flagged.

This module reads Python syntax trees of the texts handed to it and a
callback naming the tree's ports of an upstream definition; it reads no git
and no tree index, imports no verdict table, and never names a corpus
symbol, path or commit.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from portq.classifier.rules import Rule
from portq.classifier.rules.form import _one_definition

RULES = (
    Rule("port-has-returned-change", ("IN_SYNC",),
         "A Python definition whose only change is the value of its one return, where the port's one return "
         "reads as the new value and not as the old: node for node, attributes, literals and operators "
         "verbatim, upstream's parameters as the port's at the same position, upstream's locals as themselves, "
         "and a module-level name as itself or as the one port name the tree anchors to that upstream "
         "definition of the same file: the port already has the change, IN_SYNC.",
         "-    return tl.math.tanh(input)\n+    return 2 * sigmoid(2 * input) - 1  (the port: def tanh_f(y): "
         "return 2 * sigmoid_f(2 * y) - 1, sigmoid_f anchored to sigmoid)",
         "classifier.rules.returns.port_has_returned_change, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
)


def _own_nodes(definition: ast.AST):
    """Every node of the definition's own scope (nested functions, lambdas and classes left out)."""
    stack = list(ast.iter_child_nodes(definition))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _one_return(definition: ast.FunctionDef) -> ast.Return | None:
    found = [n for n in _own_nodes(definition) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))]
    return found[0] if len(found) == 1 and isinstance(found[0], ast.Return) and found[0].value is not None \
        else None


def _without_docstring(definition: ast.FunctionDef) -> list[ast.stmt]:
    body = list(definition.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _parameters(definition: ast.FunctionDef) -> list[str]:
    arguments = definition.args
    return [a.arg for a in arguments.posonlyargs + arguments.args]


def _bound(definition: ast.FunctionDef) -> set[str]:
    """Every name the definition binds (parameters, targets, nested definitions, imports)."""
    names = {a.arg for a in ast.walk(definition.args) if isinstance(a, ast.arg)}
    for node in ast.walk(definition):
        if node is definition:
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names |= set(node.names)
    return names


def _reads_as(theirs: ast.AST, mine: ast.AST, read: Callable[[str, str], bool]) -> bool:
    """``theirs`` and ``mine`` the same expression node for node, each name pair accepted by ``read``."""
    if type(theirs) is not type(mine):
        return False
    if isinstance(theirs, ast.Name):
        return type(theirs.ctx) is type(mine.ctx) and read(theirs.id, mine.id)
    for field in theirs._fields:
        a, b = getattr(theirs, field, None), getattr(mine, field, None)
        if isinstance(a, ast.AST) or isinstance(b, ast.AST):
            if not (isinstance(a, ast.AST) and isinstance(b, ast.AST) and _reads_as(a, b, read)):
                return False
        elif isinstance(a, list) or isinstance(b, list):
            if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)):
                return False
            for x, y in zip(a, b):
                if isinstance(x, ast.AST) and isinstance(y, ast.AST):
                    if not _reads_as(x, y, read):
                        return False
                elif isinstance(x, ast.AST) or isinstance(y, ast.AST) or x != y or type(x) is not type(y):
                    return False
        elif a != b or type(a) is not type(b):
            return False
    return True


def port_has_returned_change(old_text: str, new_text: str, port_text: str,
                             ported_as: Callable[[str], set[str]]) -> tuple[str, str] | None:
    """Rule ``port-has-returned-change``: ``(upstream's new return, the port's return)`` as source text when
    the change is confined to the value of upstream's one ``return`` and the port's one ``return`` reads as
    the new value and not the old (see the module docstring); None otherwise. ``ported_as(name)`` is the
    set of the tree's names for upstream definition ``name`` of the symbol's file."""
    old, new, port = (_one_definition(text, (ast.FunctionDef,)) for text in (old_text, new_text, port_text))
    if old is None or new is None or port is None:
        return None
    old_return, new_return, port_return = _one_return(old), _one_return(new), _one_return(port)
    if old_return is None or new_return is None or port_return is None:
        return None
    if ast.dump(old.args) != ast.dump(new.args) or ast.dump(ast.Module(old.decorator_list, [])) \
            != ast.dump(ast.Module(new.decorator_list, [])) or old.name != new.name:
        return None
    old_body, new_body = _without_docstring(old), _without_docstring(new)
    if len(old_body) != len(new_body) or ast.dump(old_return.value) == ast.dump(new_return.value):
        return None
    placeholder = ast.Constant(value=None)
    saved = old_return.value, new_return.value
    old_return.value = new_return.value = placeholder
    try:
        if any(ast.dump(a) != ast.dump(b) for a, b in zip(old_body, new_body)):
            return None
    finally:
        old_return.value, new_return.value = saved
    upstream_parameters, port_parameters = _parameters(new), _parameters(port)
    if len(upstream_parameters) != len(port_parameters) or len(set(port_parameters)) != len(port_parameters):
        return None
    positional = dict(zip(upstream_parameters, port_parameters))

    def reading(definition: ast.FunctionDef):
        upstream_bound, port_bound = _bound(definition), _bound(port)
        chosen: dict[str, str] = {}

        def read(theirs: str, mine: str) -> bool:
            if theirs in positional:
                return mine == positional[theirs]
            if mine in positional.values():
                return False
            if theirs in upstream_bound:
                return mine == theirs and mine in port_bound
            if mine in port_bound:
                return False
            if theirs in chosen:
                return chosen[theirs] == mine
            if mine == theirs or mine in ported_as(theirs):
                chosen[theirs] = mine
                return True
            return False
        return read

    if not _reads_as(new_return.value, port_return.value, reading(new)):
        return None
    if _reads_as(old_return.value, port_return.value, reading(old)):
        return None
    return ast.unparse(new_return), ast.unparse(port_return)
