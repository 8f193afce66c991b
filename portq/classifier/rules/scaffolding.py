"""Scaffolding rules: what an extracted helper carries of the anchored definition, and what upstream wraps around it (DESIGN §5, §6).

When upstream extracts part of an anchored definition into a helper the
definition now calls, the helper carries the port's code and later changes
to it are the port's (``moved-definition``). What it carries are the
statements that came out of the anchored definition; the helper's own
decorators, and code upstream later puts around those statements, were
never in the definition the port mirrors (the port runs its copy of the
statements inline, with its own glue):

* ``extracted-scaffold`` (Python): a helper that carries a body extracted
  out of an anchored definition, that no anchor names itself, whose change
  keeps its parameters and every carried statement (the same syntax tree,
  in the same order) and changes only its scaffolding: its decorators (each
  a name, or a call of one given literals only, on both sides), and
  whether the carried statements are the body itself or the body of a
  closure handed to a keyed call (``def _build(): <statements>`` then
  ``return cache(key, _build)``, with ``key = (...)`` built from the
  parameters by plain assignments that call nothing and bind no name the
  carried statements read, nor a parameter), where the definition it was
  extracted out of calls it once and passes every parameter itself (so no
  decorator supplies an input of its own). The port's copy of the
  statements is unchanged, and the rest is upstream's own code:
  NOT_APPLICABLE/not-ported. Module-level imports whose rebound names
  only such scaffolding reads (every other reader a definition nothing
  ports or carries, nothing at module level) are not-ported with it.

  A carried statement changed (inside the closure or not), a parameter
  added, removed or renamed, a closure that takes parameters or is also
  called or read elsewhere, a key statement that calls something or
  rebinds a name the carried statements read, a parameter the caller leaves
  to a decorator, a decorator given anything but literals (an autotuner's
  configs, which may feed the helper's inputs), a keyed call given anything
  but the closure and key names, a helper that carries a body renamed or
  moved whole (its decorators are then the anchored definition's own), and
  a helper the tree anchors itself, all stay with the other rules.

Example diff (NOT_APPLICABLE/not-ported; ``_compile_fwd`` was extracted out
of the anchored ``fwd`` earlier in the range)::

     @lru_cache(maxsize=None)
     def _compile_fwd(dtype, N):
    -    x_fake = fake(dtype, N)
    -    return compile_kernel(Kernel(dtype, N), x_fake)
    +    key = ("fwd", dtype, N)
    +
    +    def _build():
    +        x_fake = fake(dtype, N)
    +        return compile_kernel(Kernel(dtype, N), x_fake)
    +
    +    return memoised(key, _build)

This module states the rule and holds the proof on Python syntax trees (the
standard ``ast``, which reads a module the definition reader may misread);
the proof reads no git, no tree index and no verdict table, and the rule
never names a corpus symbol, path or commit.

The code: ``ScaffoldRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply the rule. It reads the in-tree index and the upstream side through the
table it is part of; it must not import the verdict table or anything after
it.
"""

from __future__ import annotations

import ast
import re

from portq.classifier.imports import import_lines, rebound_names
from portq.classifier.reading import RangeFacts, _unchanged_moves
from portq.classifier.rules import Rule
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.symbols import language_for_path
from portq.tree.anchors import Anchor

RULES = (
    Rule("extracted-scaffold", ("NOT_APPLICABLE",),
         "A helper carrying a body extracted out of an anchored definition (`moved-definition`), anchored by "
         "nothing itself, whose change keeps its parameters and every carried statement (the same syntax tree, in "
         "order) and changes only its decorators (names, or calls given literals only) or whether those statements "
         "are handed, as a parameterless "
         "closure, to a keyed call (`return cache(key, _build)`, the key built from the parameters by plain "
         "assignments that call nothing and bind nothing the statements read): the port's copy of the statements "
         "is unchanged and the scaffolding is upstream's own, never in the anchored definition: "
         "NOT_APPLICABLE/not-ported, and so are imports only that scaffolding reads. A carried statement changed, "
         "a parameter changed, a closure taking parameters, a key rebinding what the statements read, a body "
         "moved whole, or a helper the tree anchors stays flagged.",
         " @lru_cache(maxsize=None)\n def _compile_fwd(dtype, N):\n-    return compile_kernel(Kernel(dtype, N))\n"
         "+    key = (\"fwd\", dtype, N)\n+    def _build():\n+        return compile_kernel(Kernel(dtype, N))\n"
         "+    return memoised(key, _build)",
         "classifier.rules.scaffolding.carried_statements, classifier.rules.scaffolding.scaffold_only, "
         "classifier.rules.scaffolding.ScaffoldRules"),
)


def defined(source: bytes | str | None, qualified_name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The one function of the Python module ``source`` whose qualified name (``Class.method``,
    ``outer.inner``) is ``qualified_name``; None when the module does not parse or it is not found once."""
    if source is None:
        return None
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    found = None
    for part in qualified_name.split("."):
        matches = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                   and s.name == part]
        if len(matches) != 1:
            return None
        found = matches[0]
        body = found.body
    return found if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return set(names)


def _read(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def carried_statements(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """``(statements, scaffolding)`` of a helper: the statements it runs for its caller — its body, or,
    when the body is key assignments, one parameterless closure and ``return CALL(key, closure)``, the
    closure's body — and the nodes around them (decorators, the key assignments, the return). None when
    the body holds a closure handed to a call in any other way (``extracted-scaffold``'s limits)."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    closures = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not closures:
        return body, list(function.decorator_list)
    last = body[-1] if body else None
    if len(closures) != 1 or not isinstance(last, ast.Return) or not isinstance(last.value, ast.Call):
        return None
    closure = closures[0]
    arguments = closure.args
    if isinstance(closure, ast.AsyncFunctionDef) or closure.decorator_list or arguments.posonlyargs \
            or arguments.args or arguments.kwonlyargs or arguments.vararg or arguments.kwarg:
        return None
    keys = [s for s in body[:-1] if s is not closure]
    parameters = _parameters(function)
    carried_reads = _read(closure.body)
    bound: set[str] = set()
    for statement in keys:
        if not isinstance(statement, ast.Assign) or not all(isinstance(t, ast.Name) for t in statement.targets):
            return None
        if any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda))
               for n in ast.walk(statement.value)):
            return None
        if not _read([statement.value]) <= parameters:
            return None
        targets = {t.id for t in statement.targets}
        if targets & (carried_reads | parameters | {closure.name}):
            return None
        bound |= targets
    call = last.value
    handed = [*call.args, *(k.value for k in call.keywords)]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if not all(isinstance(a, ast.Name) and a.id in bound | {closure.name} for a in handed) \
            or sum(isinstance(a, ast.Name) and a.id == closure.name for a in handed) != 1:
        return None
    uses = sum(isinstance(n, ast.Name) and n.id == closure.name for s in body if s is not closure for n in ast.walk(s))
    if uses != 1 or closure.name in _read([call.func]):
        return None
    return list(closure.body), [*function.decorator_list, *keys, last]


def plain_decorators(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True when every decorator of ``function`` is a (dotted) name, or a call of one given literals only
    (``@lru_cache(maxsize=None)``): none carries a search space or a table it could feed the function's
    inputs from (an autotuner's configs)."""
    def dotted(node) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name)

    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call):
            if not dotted(decorator.func) or any(k.arg is None for k in decorator.keywords) \
                    or not all(isinstance(a, ast.Constant) for a in [*decorator.args,
                                                                     *(k.value for k in decorator.keywords)]):
                return False
        elif not dotted(decorator):
            return False
    return True


def _dump(statements) -> str:
    return "\n".join(ast.dump(s, include_attributes=False) for s in statements)


def scaffold_only(old: ast.FunctionDef | ast.AsyncFunctionDef, new: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Rule ``extracted-scaffold``: the two sides of a helper take the same parameters and run the same
    carried statements (``carried_statements``), and differ, so only their scaffolding changed."""
    if type(old) is not type(new) or ast.dump(old.args) != ast.dump(new.args):
        return False
    sides = carried_statements(old), carried_statements(new)
    if None in sides or _dump(sides[0][0]) != _dump(sides[1][0]):
        return False
    if _dump(old.decorator_list) != _dump(new.decorator_list) \
            and not (plain_decorators(old) and plain_decorators(new)):
        return False
    return ast.dump(old) != ast.dump(new)


def scaffold_reads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The names (``Name`` reads and the heads of dotted ones) a helper reads only in its scaffolding, not
    in its carried statements; None when ``carried_statements`` does not read it."""
    split = carried_statements(function)
    if split is None:
        return None
    statements, scaffolding = split
    return _read(scaffolding) - _read(statements)


def passes_every_parameter(caller: ast.AST, helper: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True when ``caller`` calls ``helper`` (by its bare name or as an attribute) exactly once, and that call
    passes every one of the helper's parameters itself (no ``*``/``**`` on either side): no decorator of the
    helper is left an input of its own to supply (an autotuner's configs), so the decorators can only wrap
    what the caller's arguments compute."""
    arguments = helper.args
    if arguments.vararg is not None or arguments.kwarg is not None:
        return False
    parameters = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    calls = [n for n in ast.walk(caller) if isinstance(n, ast.Call)
             and ((isinstance(n.func, ast.Name) and n.func.id == helper.name)
                  or (isinstance(n.func, ast.Attribute) and n.func.attr == helper.name))]
    if len(calls) != 1:
        return False
    (call,) = calls
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    positional = len(arguments.posonlyargs) + len(arguments.args)
    if len(call.args) > positional:
        return False
    named = set(parameters[:len(call.args)]) | {k.arg for k in call.keywords}
    return len(named) == len(call.args) + len(call.keywords) and named == set(parameters)


class ScaffoldRules:
    """The scaffolding rule, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _fed_by_caller(self, entry: EntryChanges, move, facts: RangeFacts, sides: tuple[ast.AST, ast.AST]) -> bool:
        """Rule ``extracted-scaffold``: on both sides of the commit, the definition the helper was extracted out
        of (where it is now: the anchored one, or a carrier of its body) calls the helper once, passing every
        parameter (``passes_every_parameter``). False when that caller cannot be found once on a side."""
        callers = {move.old, move.origin} | {key for key, m in facts.moves.carriers.items()
                                             if m.origin == move.origin and m.how != "extracted"
                                             and facts.moves.carrying(key, entry.position) is not None}
        if not entry.commit.parents:
            return False
        for sha, function in zip((entry.commit.parents[0], entry.commit.sha), sides):
            found = []
            for path, qualified in sorted(callers):
                table = self._table(f"{sha}:{path}", path)
                caller = defined(table.source, qualified) if table is not None else None
                if caller is not None and caller is not function:
                    found.append(caller)
            if len(found) != 1 or not passes_every_parameter(found[0], function):
                return False
        return True

    def _extracted_scaffold(self, entry: EntryChanges, symbol: TouchedSymbol, move, origin: str, since: str,
                            facts: RangeFacts) -> SymbolVerdict | None:
        """Rule ``extracted-scaffold`` on a helper carrying a body extracted out of the anchored ``origin``
        (``move``): NOT_APPLICABLE/not-ported when only its scaffolding changed. None otherwise."""
        if move.how != "extracted" or symbol.change != "modified" or language_for_path(symbol.path) != "python":
            return None
        tables = (self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path))
        if any(t is None or t.source is None for t in tables):
            return None
        old, new = (defined(t.source, symbol.qualified_name) for t in tables)
        if old is None or new is None or not scaffold_only(old, new) \
                or not self._fed_by_caller(entry, move, facts, (old, new)):
            return None
        return self._base(("moved-definition", "extracted-scaffold"), symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"{symbol.name} carries statements extracted from the ported {origin} {since}; this change "
                          "keeps its parameters and every carried statement and changes only the decorators or the "
                          "keyed call it hands them to, code the anchored definition never had, so not-ported "
                          "rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.COSMETIC, message="carried statements unchanged; only the scaffolding "
                                    "around them changed", side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=origin)])

    def _scaffold_imports(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], anchors: list[Anchor],
                          code: list[tuple[str, int, str]], facts: RangeFacts | None) -> SymbolVerdict | None:
        """Rule ``extracted-scaffold`` on a module's changed import lines: every name they rebind is read only
        in the scaffolding of helpers carrying extracted bodies (on each side where the helper exists), or by
        definitions nothing ports or carries, and never at module level. None otherwise."""
        if facts is None or symbol.name != "<toplevel>" or symbol.change != "modified" \
                or language_for_path(symbol.path) != "python" or not code:
            return None
        tables = (self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path))
        if any(t is None or t.tree is None or t.source is None for t in tables):
            return None
        lines = {"old": import_lines(tables[0].tree.root_node), "new": import_lines(tables[1].tree.root_node)}
        if not all(line in lines[side] for side, line, _ in code):
            return None
        rebound = rebound_names(tables[0].tree.root_node, tables[1].tree.root_node, _unchanged_moves(entry))
        readers = self._import_readers(symbol, paths, rebound) if rebound else None
        if not readers or not readers[0]:
            return None
        heads = {name.split(".")[0] for name in rebound}
        scaffolded = []
        for reader in readers[0]:
            bare = re.split(r"::|\.", reader)[-1]
            if any(a.matches_name(bare, reader) for a in anchors):
                return None
            move = facts.moves.carrying((symbol.path, reader), entry.position)
            if move is None:
                continue  # a definition nothing ports or carries
            if move.how != "extracted":
                return None
            functions = [defined(table.source, reader) for table in tables]
            for function in functions:
                if function is None:
                    continue
                only = scaffold_reads(function)
                if only is None or (heads & _read([function])) - only or not plain_decorators(function):
                    return None
            if None in functions or not self._fed_by_caller(entry, move, facts, tuple(functions)):
                return None
            scaffolded.append(reader)
        if not scaffolded:
            return None
        side, line, text = code[0]
        return self._base("extracted-scaffold", symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"the changed imports rebind {', '.join(rebound[:4])}, which only the scaffolding of "
                          f"{', '.join(scaffolded[:3])} reads (the decorators or keyed call around statements it "
                          "carries from a ported definition, which are unchanged), so not-ported rather than "
                          "NEEDS_REVIEW",
                          [Evidence(kind=Kind.TOPLEVEL, message=f"{rebound[0]} is read only by the scaffolding of "
                                    f"{scaffolded[0]}", side=f"upstream-{side}", path=symbol.path, line=line,
                                    quote=text.strip(), symbol=symbol.name, subject=rebound[0])])
