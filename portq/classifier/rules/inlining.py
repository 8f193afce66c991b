"""Inlining rules: an expression moved verbatim into a helper that returns it (DESIGN §5, form without meaning).

A commit may replace an expression in a definition by a call of a
definition that does nothing but return that expression (an autotune config
list written inline in two decorators, moved into one function both call).
Python evaluates the call where the expression stood, and the helper's
``return`` evaluates the expression then, so the two are the same program
when, and only when:

* the call passes nothing and the helper takes nothing (no parameter, no
  ``*args``/``**kwargs``), carries no decorator (``functools.lru_cache``
  would hand back one shared object) and is not ``async``; its body is one
  ``return EXPR`` (a docstring before it aside);
* the name called is bound once at the top of the caller's module, by the
  helper's own ``def`` there or by one ``from MODULE import NAME`` whose
  module resolves (relative imports against the caller's package) to a file
  of the same commit holding exactly one top-level ``def`` of that name;
  neither the caller's definition nor anything nested binds the name;
* every name ``EXPR`` reads freely (comprehension and lambda variables are
  its own) is bound in the helper's module exactly as the caller's module
  bound it before the commit: the same ``import`` (``import triton`` in both
  names one module object) or, unbound in both, a builtin. A module-level
  assignment, ``def`` or ``class`` of that name in either module is another
  binding, so a helper reading its own module's constant stays flagged
  (another commit may change one and not the other); a walrus in ``EXPR``
  binds in the caller's scope and stops the rule;
* the caller is a top-level definition that binds none of those names.

``inlined-helper``: each such call written back as ``EXPR`` makes the new
definition the same ``ast`` as the old one: NOT_APPLICABLE/cosmetic. An
expression that differs in one literal, a helper that reads a global of its
own, takes a parameter or is decorated stays flagged.

Example diff (cosmetic)::

    +from .utils import warp_configs
     @triton.autotune(
    -    configs=[triton.Config({}, num_warps=2**i) for i in range(6)],
    +    configs=warp_configs(),
         key=['n'])
    # utils.py (new):  def warp_configs(): return [triton.Config({}, num_warps=2**i) for i in range(6)]

This module reads Python syntax trees of the texts handed to it and asks a
callback for a module's source by path; it reads no git and no tree index,
imports no verdict table, and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Callable

from portq.classifier.rules import Rule
from portq.classifier.rules.form import _parse

RULES = (
    Rule("inlined-helper", ("NOT_APPLICABLE",),
         "A Python definition whose only change replaces an expression by a call, with no arguments, of a "
         "definition (in its own module or imported from one of the same commit) that takes no parameters, has "
         "no decorator and whose body is `return EXPR`: with each call written back as EXPR the definition is the "
         "same ast as before, and every name EXPR reads freely is bound in the helper's module exactly as in the "
         "caller's module before the commit (the same import, or a builtin unbound in both; never a module-level "
         "assignment, def or class), so it evaluates the same expression: cosmetic.",
         "+from .utils import warp_configs\n-    configs=[triton.Config({}, num_warps=2**i) for i in range(6)],\n"
         "+    configs=warp_configs(),\n  (utils.py: def warp_configs(): return [triton.Config({}, "
         "num_warps=2**i) for i in range(6)])",
         "classifier.rules.inlining.inlined_helpers, classifier.verdicts.SymbolClassifier._inlined_helpers"),
)

_OTHER = ("other",)  # a binding that is not an import: never the same as another module's


def _module_of(path: str) -> str:
    """The dotted module a file path names (``a/b/__init__.py`` is ``a.b``)."""
    stem = path[:-3] if path.endswith(".py") else path
    parts = stem.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p)


def _absolute(path: str, node: ast.ImportFrom) -> str | None:
    """The absolute module of ``from ... import`` written in the file at ``path``; None past the root."""
    if not node.level:
        return node.module
    package = _module_of(path).split(".")
    if not path.endswith("/__init__.py") and path != "__init__.py":
        package = package[:-1]  # a module's own package
    drop = node.level - 1
    if drop > len(package):
        return None
    base = package[: len(package) - drop]
    return ".".join(base + ([node.module] if node.module else []))


def _top_bindings(module: ast.Module, path: str, name: str) -> list[tuple]:
    """How the module's top level binds ``name``: ``("import", dotted)`` for ``import dotted [as name]``,
    ``("from", module, attr)`` for a from-import, ``_OTHER`` for anything else (an assignment, a def, a class,
    a star import, a binding under a compound statement); empty where it never does."""
    found: list[tuple] = []
    for statement in module.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound == name:
                    found.append(("import", alias.name if alias.asname else alias.name.split(".")[0]))
            continue
        if isinstance(statement, ast.ImportFrom):
            source = _absolute(path, statement)
            for alias in statement.names:
                if alias.name == "*":
                    found.append(_OTHER)
                elif (alias.asname or alias.name) == name:
                    found.append(("from", source, alias.name) if source is not None else _OTHER)
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name == name:
                found.append(_OTHER)
            nodes = list(statement.decorator_list)
            if isinstance(statement, ast.ClassDef):
                nodes += statement.bases + [k.value for k in statement.keywords]
            else:
                nodes += [d for d in statement.args.defaults + statement.args.kw_defaults if d is not None]
        else:
            nodes = [statement]
        for node in nodes:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)) and inner.id == name:
                    found.append(_OTHER)
                elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and inner.name == name:
                    found.append(_OTHER)
                elif isinstance(inner, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
                    if any((getattr(a, "asname", None) or getattr(a, "name", a)).split(".")[0] == name
                           for a in getattr(inner, "names", [])):
                        found.append(_OTHER)
                elif isinstance(inner, ast.ExceptHandler) and inner.name == name:
                    found.append(_OTHER)
    return found


def _free_names(expr: ast.AST) -> set[str] | None:
    """The names ``expr`` reads from its enclosing scope; None where it binds one there (a walrus)."""
    free: set[str] = set()

    def visit(node: ast.AST, bound: frozenset[str]) -> bool:
        if isinstance(node, ast.NamedExpr):
            return False
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in bound:
                free.add(node.id)
            return True
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = set(bound)
            for number, generator in enumerate(node.generators):
                # the first iterable is evaluated in the enclosing scope
                if not visit(generator.iter, bound if number == 0 else frozenset(inner)):
                    return False
                inner |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
                if not all(visit(c, frozenset(inner)) for c in generator.ifs):
                    return False
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            return all(visit(p, frozenset(inner)) for p in parts)
        if isinstance(node, ast.Lambda):
            arguments = node.args
            names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
            names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
            defaults = [d for d in arguments.defaults + arguments.kw_defaults if d is not None]
            return all(visit(d, bound) for d in defaults) and visit(node.body, bound | names)
        return all(visit(child, bound) for child in ast.iter_child_nodes(node))

    return free if visit(expr, frozenset()) else None


def _returned(definition: ast.AST) -> ast.expr | None:
    """``EXPR`` of a plain helper ``def f(): [docstring] return EXPR``; None for anything else."""
    if not isinstance(definition, ast.FunctionDef) or definition.decorator_list:
        return None
    arguments = definition.args
    if arguments.posonlyargs or arguments.args or arguments.kwonlyargs or arguments.vararg or arguments.kwarg:
        return None
    body = list(definition.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    return body[0].value


def _single_def(module: ast.Module, name: str) -> ast.AST | None:
    found = [s for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name]
    return found[0] if len(found) == 1 else None


def _bound_inside(definition: ast.AST) -> set[str]:
    """Every name the definition (with its decorators and nested scopes) binds."""
    names: set[str] = set()
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not definition:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names |= set(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _module_files(module: str) -> tuple[str, str]:
    stem = module.replace(".", "/")
    return f"{stem}.py", f"{stem}/__init__.py"


def inlined_helpers(old_text: str, new_text: str, old_source: str, new_source: str, path: str,
                    read: Callable[[str], str | None]) -> list[str]:
    """Rule ``inlined-helper``: the helpers (``NAME`` or ``MODULE.NAME``) whose calls in the new definition,
    each written back as the expression the helper returns, make it the same ``ast`` as the old one, with
    every name that expression reads bound alike (see the module docstring); empty when they do not, or when
    no call was written back. ``path`` is the caller's file (both sides), ``read(path)`` the source of
    another file of the same commit, or None."""
    old, new = _parse(old_text), _parse(new_text)
    old_module, new_module = _parse(old_source), _parse(new_source)
    if None in (old, new, old_module, new_module) or len(new.body) != 1 or len(old.body) != 1:
        return []
    definition = new.body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    called = {n.func.id for n in ast.walk(definition)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.args and not n.keywords}
    inside = _bound_inside(definition)
    helpers: dict[str, tuple[ast.expr, str]] = {}
    for name in sorted(called - inside):
        binding = _top_bindings(new_module, path, name)
        if len(binding) != 1:
            continue
        how = binding[0]
        if how == _OTHER:
            helper_module, helper_path, label = new_module, path, name
            helper = _single_def(new_module, name)
        elif how[0] == "from" and how[1]:
            helper_module = helper_path = None
            for candidate in _module_files(how[1]):
                text = read(candidate)
                if text is not None:
                    helper_module, helper_path = _parse(text), candidate
                    break
            if helper_module is None:
                continue
            helper, label = _single_def(helper_module, how[2]), f"{how[1]}.{how[2]}"
            if helper is not None and len(_top_bindings(helper_module, helper_path, how[2])) != 1:
                continue
        else:
            continue
        expr = _returned(helper) if helper is not None else None
        free = _free_names(expr) if expr is not None else None
        if free is None or free & inside:
            continue
        alike = True
        for read_name in free:
            there = set(_top_bindings(helper_module, helper_path, read_name))
            before = set(_top_bindings(old_module, path, read_name))
            if there != before or _OTHER in there or len(there) > 1:
                alike = False
            elif not there and not hasattr(builtins, read_name):
                alike = False
            if not alike:
                break
        if alike:
            helpers[name] = (expr, label)
    if not helpers:
        return []

    class _WriteBack(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call):
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id in helpers and not node.args and not node.keywords:
                return copy.deepcopy(helpers[node.func.id][0])
            return node

    written = _WriteBack().visit(copy.deepcopy(new))
    if ast.dump(written) != ast.dump(old):
        return []
    if ast.dump(new) == ast.dump(old):
        return []
    return sorted(label for _, label in helpers.values())
