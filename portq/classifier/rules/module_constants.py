"""Module constants: a definition that writes an expression as an element of a module-level table the upstream tree defines (DESIGN §5, form without meaning).

Upstream keeps small tables of constants in a module (``axis = [tl.constexpr(i)
for i in range(3)]``) and a later commit spells a literal argument through one
(``tl.constexpr(1)`` becoming ``lang.axis[1]``). The element is the same
expression, so the definition computes what it did.

* ``module-constant-element``: a Python definition whose old and new ``ast``
  are the same once each ``NAME[k]`` or ``mod.NAME[k]`` (``k`` an integer
  literal, the head name not bound inside the definition) is written as the
  element it names: ``NAME`` bound exactly once, at module level, in the module
  the definition's own import of ``mod`` leads to (followed through modules
  that only re-export it, ``from .constant import *`` included) or in its own
  module, by a list or tuple literal or by ``[ELT for V in range(N)]`` (``N``
  an integer literal, no condition), and named nowhere else in that module's
  code; element ``k`` is the ``k``-th item, or ``ELT`` with ``V`` written as
  ``k``. The element holds only literals, names and attributes of names, and,
  in a ``@triton.jit`` definition (where such a call is a compile-time
  constant), calls of those with literal arguments; each name it reads is bound
  in the table's module by the same import as in the definition's module.
  Cosmetic. Another index, a table bound or changed again, an element reading a
  name the two modules bind differently, or any other change stays flagged.

Example diff (cosmetic; ``lang/consts.py`` holds ``axis = [triton.language.constexpr(i) for i in
range(3)]`` and ``lang/__init__.py`` ``from .consts import *``)::

    -    res = lang.max(x, triton.language.constexpr(1))
    +    res = lang.max(x, lang.axis[1])

The code: ``table_element`` reads a module's source for the element; ``respelled`` compares a
definition's two sides with each such subscript written as its element; ``ModuleConstantRules`` holds the
method of the verdict table (``portq.classifier.verdicts.SymbolClassifier``) that reads the upstream files
at each side's commit and applies the rule. It must not import the verdict table or anything after it, and
a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from collections.abc import Callable

from portq.classifier.imports import import_bindings, reexport_target, relative_module_path
from portq.classifier.rules import Rule
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE

RULES = (
    Rule("module-constant-element", ("NOT_APPLICABLE",),
         "A Python definition whose whole change writes expressions as elements `NAME[k]`/`mod.NAME[k]` (k an "
         "integer literal) of a module-level table bound once, by a list or tuple literal or `[ELT for V in "
         "range(N)]`, in its own module or the module its import of `mod` leads to (through re-exports), named "
         "nowhere else there, where the element (the k-th item, or ELT with V as k) is the old expression, holds "
         "only literals, names and attributes (calls with literal arguments only in a @triton.jit definition), "
         "and reads names the two modules bind by the same import: cosmetic. Another index, a table bound or "
         "changed again, a name bound differently, or any other change stays flagged.",
         "-    res = lang.max(x, triton.language.constexpr(1))\n+    res = lang.max(x, lang.axis[1])\n"
         "    (lang/consts.py: axis = [triton.language.constexpr(i) for i in range(3)])",
         "classifier.rules.module_constants.table_element, classifier.rules.module_constants.respelled, "
         "classifier.rules.module_constants.ModuleConstantRules._module_constant_elements"),
)


def _parsed(source: bytes | str | None):
    """The ``ast`` module of ``source``; None when it does not parse."""
    if source is None:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _plain(node, calls: bool) -> bool:
    """Whether ``node`` is a literal, a name, an attribute of a plain expression, or (with ``calls``) a call
    of one with literal arguments only."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Attribute):
        return _plain(node.value, False)
    if isinstance(node, ast.Call) and calls:
        return _plain(node.func, False) and all(isinstance(a, ast.Constant) for a in node.args) \
            and all(k.arg is not None and isinstance(k.value, ast.Constant) for k in node.keywords)
    return False


class _Substitute(ast.NodeTransformer):
    def __init__(self, name: str, value: int):
        self.name, self.value = name, value

    def visit_Name(self, node):
        return ast.copy_location(ast.Constant(self.value), node) if node.id == self.name else node


def table_element(source: bytes | str | None, name: str, index: int) -> ast.expr | None:
    """Element ``index`` of the table ``name`` the module ``source`` binds once at module level (a list or
    tuple literal, or ``[ELT for V in range(N)]``) and names nowhere else in its code; None otherwise."""
    module = _parsed(source)
    if module is None:
        return None
    named = [n for n in ast.walk(module) if isinstance(n, ast.Name) and n.id == name]
    named += [n for n in ast.walk(module) if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names]
    bound = [s for s in module.body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    if len(bound) != 1 or len(named) != 1 or named[0] is not bound[0].targets[0]:
        return None
    value = bound[0].value
    if isinstance(value, (ast.List, ast.Tuple)):
        items = value.elts
        if any(isinstance(i, ast.Starred) for i in items) or not 0 <= index < len(items):
            return None
        return copy.deepcopy(items[index])
    if not isinstance(value, ast.ListComp) or len(value.generators) != 1:
        return None
    loop = value.generators[0]
    ranged = loop.iter
    if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name) or not isinstance(ranged, ast.Call) \
            or not isinstance(ranged.func, ast.Name) or ranged.func.id != "range" or ranged.keywords \
            or len(ranged.args) != 1 or not isinstance(ranged.args[0], ast.Constant) \
            or type(ranged.args[0].value) is not int:
        return None
    if any(isinstance(n, ast.Name) and n.id == "range" and not isinstance(n.ctx, ast.Load) for n in ast.walk(module)) \
            or any(isinstance(s, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
                   and "range" in _binds(s) for s in module.body):
        return None
    if not 0 <= index < ranged.args[0].value:
        return None
    return _Substitute(loop.target.id, index).visit(copy.deepcopy(value.elt))


def _binds(statement) -> set[str]:
    if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
        return {statement.name}
    return {(a.asname or a.name).split(".")[0] for a in statement.names}


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head is not None else None
    return None


def _definition(text: str):
    module = _parsed(textwrap.dedent(text))
    if module is None or len(module.body) != 1 or not isinstance(module.body[0], (ast.FunctionDef,
                                                                                   ast.AsyncFunctionDef)):
        return None
    return module.body[0]


def _jit(function) -> bool:
    return any((_dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1] == "jit"
               for d in function.decorator_list)


def _written(function, element_of: Callable[[str, int], ast.expr | None]) -> tuple[object, list[tuple[str, str]]]:
    """``function`` with each subscript a table element names written as that element, and the
    ``(spelling, element)`` pairs written."""
    own = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    own |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    calls = _jit(function)
    done: list[tuple[str, str]] = []

    class Writer(ast.NodeTransformer):
        def visit_Subscript(self, node):
            self.generic_visit(node)
            dotted = _dotted(node.value)
            index = node.slice
            if dotted is None or not isinstance(node.ctx, ast.Load) or dotted.split(".")[0] in own \
                    or not isinstance(index, ast.Constant) or type(index.value) is not int:
                return node
            element = element_of(dotted, index.value)
            if element is None or not all(_plain(n, calls) for n in [element]):
                return node
            done.append((ast.unparse(node), ast.unparse(element)))
            return ast.copy_location(element, node)

    return Writer().visit(copy.deepcopy(function)), done


def respelled(old_text: str, new_text: str, old_element: Callable[[str, int], ast.expr | None],
              new_element: Callable[[str, int], ast.expr | None]) -> list[tuple[str, str]]:
    """The ``(spelling, element)`` pairs of the new side that make a definition's two sides (their texts) the
    same ``ast`` once each side's table subscripts are written as their elements (``*_element(dotted,
    index)``); empty when the sides differ otherwise, nothing was written, or nothing changed."""
    old, new = _definition(old_text), _definition(new_text)
    if old is None or new is None or ast.dump(old) == ast.dump(new):
        return []
    spelled = {ast.unparse(n) for n in ast.walk(old) if isinstance(n, ast.Subscript)}
    if not any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and ast.unparse(n) not in spelled
               for n in ast.walk(new)):
        return []  # no table element the new side spells anew: nothing to read
    old_written, _ = _written(old, old_element)
    new_written, done = _written(new, new_element)
    if not done or ast.dump(old_written) != ast.dump(new_written):
        return []
    return list(dict.fromkeys(done))


class ModuleConstantRules:
    """The verdict-table method that applies ``module-constant-element``."""

    def _module_constant_elements(self, entry, symbol) -> list[tuple[str, str]]:
        """``respelled`` for a modified Python symbol, each side's table read at that side's commit."""
        read = self._python_sides_read(entry, symbol, self._table_elements)
        return respelled(*read) if read is not None else []

    def _module_constant_verdict(self, symbol, found, evidence):
        spelled = ", ".join(f"{s} is {e}" for s, e in found[:3])
        return self._base("module-constant-element", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{symbol.name} changes only by writing constants through a module-level table upstream "
                          f"defines ({spelled}), the same expressions, so it computes the same: cosmetic rather "
                          "than a change the port must follow",
                          evidence + [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                               symbol=symbol.name, message=f"table elements: {spelled}")])

    def _table_elements(self, commit: str, path: str, blob: str | None):
        """``element_of(dotted, index)`` for the file ``path`` (its ``blob``) at ``commit``: the element of the
        table the dotted name leads to, when every name the element reads is bound alike in both modules; None
        where the file cannot be read. Another file is read only for a subscript that may name a table."""
        opened = module_at_commit(self._parsed_table, commit, path, blob)
        if opened is None:
            return None
        read, own, mine = opened

        def element_of(dotted: str, index: int):
            head, _, rest = dotted.partition(".")
            if not rest:
                source, theirs = own.source, mine
            elif head in mine:
                found, name = binding_module(head, rest, path, mine, read)
                if found is None or "." in name:
                    return None
                source, theirs, dotted = found.source, import_bindings(found.tree.root_node), name
            else:
                return None
            element = table_element(source, dotted.rsplit(".", 1)[-1], index)
            if element is None:
                return None
            for node in ast.walk(element):
                if isinstance(node, ast.Name) and (node.id not in theirs or node.id not in mine
                                                   or theirs[node.id].target != mine[node.id].target):
                    return None
            return element

        return element_of


def _module_binds(module, name: str) -> bool:
    """Whether a parsed module binds ``name`` at module level, by assignment, definition or import."""
    for statement in module.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            return True
        if isinstance(statement, (ast.Import, ast.ImportFrom)) and name in {(a.asname or a.name).split(".")[0]
                                                                             for a in statement.names}:
            return True
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                isinstance(n, ast.Name) and n.id == name for t in ([statement.target] if not isinstance(
                    statement, ast.Assign) else statement.targets) for n in ast.walk(t)):
            return True
    return False


def _located(stem: str, read):
    """``(table, path)`` of the module ``stem`` names (``stem.py``, else ``stem/__init__.py``); Nones where
    neither can be read."""
    return next(((t, p) for p in (stem + ".py", stem + "/__init__.py") for t in (read(p),) if t is not None),
                (None, None))


def module_at_commit(parsed_table, commit: str, path: str, blob: str | None):
    """``(read, own, imports)`` for the file ``path`` (its ``blob``) at ``commit``: ``read(other, blob=None)``
    gives any file's clean parse at that commit (``parsed_table``), ``own`` is the file's, ``imports`` its import
    bindings; None where the file cannot be read."""
    def read(other: str, blob: str | None = None):
        return parsed_table(blob or f"{commit}:{other}", other)

    own = read(path, blob)
    return None if own is None else (read, own, import_bindings(own.tree.root_node))


def binding_module(head: str, rest: str, path: str, imports, read):
    """``(table, name)``: the module that binds ``head.rest`` as read in the module at ``path`` (its import
    bindings ``imports``, ``head`` among them), followed through re-exports and star imports, and the name it
    binds there; the table is None where no one module does."""
    target = reexport_target(f"{imports[head].target}.{rest}", path,
                             lambda p: (read(p).tree.root_node if read(p) is not None else None))
    stem, _, name = target.rpartition(":")
    found, _ = _through_stars(stem, name, read) if stem else (None, None)
    return found, name


def _through_stars(stem: str, name: str, read, depth: int = 4):
    """``(table, stem)`` of the module that binds ``name`` for the module at ``stem``: itself when it binds the
    name, else the one module its ``from X import *`` lines name that binds it (public, or listed in its
    ``__all__``), followed further; ``(None, None)`` when none or several do."""
    for _ in range(depth):
        found, path = _located(stem, read)
        module = _parsed(found.source) if found is not None else None
        if module is None:
            return None, None
        if _module_binds(module, name):
            return found, stem
        sources = []
        for statement in module.body:
            if not isinstance(statement, ast.ImportFrom) or [a.name for a in statement.names] != ["*"]:
                continue
            other = relative_module_path(path, "." * statement.level + (statement.module or "")) \
                if statement.level else "/".join((statement.module or "").split("."))
            table, _ = _located(other, read) if other else (None, None)
            inner = _parsed(table.source) if table is not None else None
            listed = next((s.value for s in (inner.body if inner is not None else ()) if isinstance(s, ast.Assign)
                           and any(isinstance(t, ast.Name) and t.id == "__all__" for t in s.targets)), None)
            if inner is not None and _module_binds(inner, name) and (
                    name in {e.value for e in listed.elts if isinstance(e, ast.Constant)}
                    if isinstance(listed, (ast.List, ast.Tuple)) else not name.startswith("_")):
                sources.append(other)
        if len(sources) != 1:
            return None, None
        stem = sources[0]
    return None, None
