"""Check rules: an assertion upstream drops that the port never had (DESIGN §5: the port already has it).

An upstream definition that stops asserting something (``tl.device_assert(BLOCK
>= N, ...)``, ``assert x.is_cuda``) accepts what it used to stop; nothing it
computes for the inputs it accepted before changes. A port that never asserted
it is already in upstream's new form for that line:

* ``port-lacks-check`` (Python): a definition whose whole change removes
  assertions (``assert`` statements, and call statements of a function whose
  name ends in ``assert``), everything else the same ``ast`` and no
  assertion of those kinds left in it, ported by a definition with no
  assertion of any of those kinds and no ``raise`` (a check written ``if
  ...: raise``): IN_SYNC, upstream now checks what the port checks, the
  touched lines already in the port's form. An assertion added, one of the
  same kind kept, a removed statement that asserts nothing, a change
  besides the removal, or a port that asserts or raises, is compared as
  before.

Example diff (IN_SYNC; the port loops over the row and asserts nothing)::

     def _scale_kernel(X, Y, N, BLOCK: tl.constexpr):
    -    tl.device_assert(BLOCK >= N, "one block must cover N")
         cols = tl.arange(0, BLOCK)

This module states the rule and holds the proof on Python syntax trees; it
reads no git and no tree index, imports no verdict table, and never names a
corpus symbol, path or commit. ``CheckRules`` holds the method of the verdict
table (``portq.classifier.verdicts.SymbolClassifier``) that applies it; it must
not import the verdict table or anything after it.
"""

from __future__ import annotations

import ast
from collections import Counter

from portq.classifier.rules import Rule
from portq.classifier.rules.form import _one_definition
from portq.core.model import TouchedSymbol
from portq.language.signatures import definition_text
from portq.language.symbols import language_for_path

RULES = (
    Rule("port-lacks-check", ("IN_SYNC",),
         "A Python definition whose only change removes every assertion of a kind (`assert` statements, call "
         "statements of a function named `...assert`), ported by a definition with no assertion of those kinds "
         "and no `raise`, is a change the port already has: IN_SYNC. An added or kept assertion, another change, "
         "or a port that asserts or raises is compared.",
         "     def _scale_kernel(X, Y, N, BLOCK: tl.constexpr):\n-    tl.device_assert(BLOCK >= N, \"one block\")\n"
         "     cols = tl.arange(0, BLOCK)  (the port loops over N and asserts nothing)",
         "classifier.rules.checks.removed_checks, classifier.rules.checks.CheckRules._port_lacks_check"),
)


def _check_kind(statement: ast.stmt) -> str | None:
    """``assert`` for an assert statement, the called name for a call statement of a function named
    ``...assert``; else None."""
    if isinstance(statement, ast.Assert):
        return "assert"
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name is not None and name.endswith("assert"):
            return name
    return None


class _WithoutChecks(ast.NodeTransformer):
    def __init__(self) -> None:
        self.removed: Counter = Counter()

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and all(isinstance(s, ast.stmt) for s in statements):
                kept = []
                for statement in statements:
                    if _check_kind(statement) is not None:
                        self.removed[(_check_kind(statement), ast.dump(statement))] += 1
                    else:
                        kept.append(statement)
                setattr(node, field, kept or [ast.Pass()])
        return node


def _checks_apart(text: str) -> tuple[str, Counter] | None:
    function = _one_definition(text)
    if function is None:
        return None
    stripper = _WithoutChecks()
    stripped = stripper.visit(function)
    return ast.dump(stripped), stripper.removed


def removed_checks(old_text: str, new_text: str) -> list[str] | None:
    """The kinds (``assert`` or the called name) of the assertions whose removal is ``new_text``'s whole change
    from ``old_text``; None where it is not."""
    old, new = _checks_apart(old_text), _checks_apart(new_text)
    if old is None or new is None or old[0] != new[0]:
        return None
    gone = old[1] - new[1]
    if not gone or new[1] - old[1]:
        return None
    kinds = sorted({kind for kind, _ in gone})
    if any(kind in kinds for kind, _ in new[1]):
        return None  # upstream still asserts something of that kind: the two do not agree yet
    return kinds


def port_checks(text: str) -> set[str] | None:
    """The kinds of assertion a definition's text makes anywhere in it (``raise`` for a ``raise`` statement: a
    check written as ``if ...: raise``); None where it cannot be read."""
    function = _one_definition(text)
    if function is None:
        return None
    if any(isinstance(node, ast.Raise) for node in ast.walk(function)):
        return {"raise"}
    return {kind for node in ast.walk(function) if isinstance(node, ast.stmt)
            for kind in [_check_kind(node)] if kind is not None}


class CheckRules:
    """The port-lacks-check rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _port_lacks_check(self, symbol: TouchedSymbol, definition) -> list[str] | None:
        """``port-lacks-check``: the kinds of assertion the symbol's whole change removes, when the port at
        ``definition`` makes none of them; else None."""
        if language_for_path(definition.file) != "python":
            return None
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return None
        kinds = removed_checks(definition_text(sides[0].node), definition_text(sides[1].node))
        mine = self._port_node(definition)
        made = port_checks(definition_text(mine)) if kinds and mine is not None else None
        if made is None or set(kinds) & made or "raise" in made:
            return None
        return kinds


