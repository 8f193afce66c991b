"""Selector rules: a dispatch on an input the tree declares not carried runs the one backend the port mirrors
(DESIGN §5 and §6: branches the port does not have).

An upstream host function that serves several backends compares a selector
parameter with one key per branch, or looks the function to call up in a
module-level table keyed the same way. A tree that declares the selector not
carried (``[PARAM]``) runs one backend, and its code mirrors that backend's
branch and no other:

* ``declared-selector`` (Python): a definition the port anchors (or carries)
  that dispatches on a parameter the tree declares not carried, by tests
  ``P == KEY`` of an ``if``/``elif`` chain or by a lookup ``TABLE[P]`` in a
  table the module binds once to a dict display, the keys literals or
  members of one class, distinct within each chain and table, and reads
  ``P`` nowhere else but in the branches of other keys. The port's
  key is the one whose branch (or table entry) calls, launches or names a
  definition the tree ports (an anchor's upstream name, or a definition
  carrying an anchored body upstream moved there), when exactly one key on
  each side does, the same on both. With ``P`` fixed to it, each chain is
  replaced by that key's branch and each lookup by that key's table entry;
  the two sides equal, the change lies only in backends the port does not
  run: NOT_APPLICABLE/not-carried. A change in the port's branch or outside
  the dispatch, a table entry for the port's key that names another
  function, a selector used any other way, two keys reaching ported code,
  or a selector the tree does not declare, is compared as before. Distinct
  keys are taken to be distinct values (an enum's members, literals).

Example diff (not-carried; the tree declares ``backend`` not carried and ports
``triton_scale``)::

    +_KERNELS = {Backend.cuda: cuda_scale, Backend.triton: triton_scale}
     def scale_rows(x, backend, BLOCK):
    -    if backend == Backend.cuda:
    -        assert x.is_cuda
    -        cuda_scale(x=x, BLOCK=BLOCK)
    -    elif backend == Backend.triton:
    -        triton_scale(x=x, BLOCK=BLOCK)
    +    _KERNELS[backend](x=x, BLOCK=BLOCK)

This module states the rule and holds the proof on Python syntax trees; it
reads no git and no tree index, imports no verdict table, and never names a
corpus symbol, path or commit. ``SelectorRules`` holds the method of the
verdict table (``portq.classifier.verdicts.SymbolClassifier``) that applies
it; it must not import the verdict table or anything after it.
"""

from __future__ import annotations

import ast
import copy

from portq.classifier.rules import Rule
from portq.classifier.rules.form import _one_definition, _parse
from portq.core.model import TouchedSymbol
from portq.tree.anchors import NOT_CARRIED, PORTS

RULES = (
    Rule("declared-selector", ("NOT_APPLICABLE",),
         "A Python definition whose every use of a parameter the tree declares not carried is an `if P == KEY` "
         "chain or a lookup in a module-level table keyed the same way, same before and after once the selector "
         "is fixed to the one key whose branch reaches what the tree ports, changed only backends the port does "
         "not run: not-carried. A change in that branch, a re-pointed table entry, another use of the selector "
         "or two keys reaching ported code is compared.",
         "+_KERNELS = {Backend.cuda: cuda_scale, Backend.triton: triton_scale}\n def scale_rows(x, backend, BLOCK):\n"
         "-    if backend == Backend.cuda:\n-        assert x.is_cuda\n-        cuda_scale(x=x, BLOCK=BLOCK)\n"
         "-    elif backend == Backend.triton:\n-        triton_scale(x=x, BLOCK=BLOCK)\n"
         "+    _KERNELS[backend](x=x, BLOCK=BLOCK)",
         "classifier.rules.selectors.selected_key, classifier.rules.selectors.SelectorRules._declared_selector"),
    Rule("declared-source-selector", ("NOT_APPLICABLE",),
         "A Python definition that dispatches by an `if L == KEY` chain on a local bound once, at its top level, "
         "from a call of a definition of the same file the tree declares not carried as a whole (a device or "
         "capability probe), same before and after once that binding is set aside and the local fixed to the one "
         "key whose branch reaches what the tree ports, changed only backends the port does not run: not-carried. "
         "A change in that branch or outside the dispatch, a key that stops reaching ported code, another use of "
         "the local or an undeclared probe is compared.",
         " def scale_rows(x, BLOCK):\n     arch = device_arch()[x.device.index]\n     if arch == \"sm80\":\n"
         "         cuda_scale(x, BLOCK)\n     elif arch == \"sm86\":\n         triton_scale(x, BLOCK)\n"
         "+    elif arch == \"sm100\":\n+        cuda_scale_wide(x, BLOCK)",
         "classifier.rules.selectors.source_selected_key, "
         "classifier.rules.selectors.SelectorRules._declared_source_selector"),
    Rule("pinned-source-selector", ("NOT_APPLICABLE",),
         "A Python definition whose port is a pinned copy that names no probe of upstream's module, and that "
         "dispatches by an `if L == KEY` chain on a local bound once, at its top level, from a call of such a probe "
         "(a module-level definition nothing in the tree ports), same before and after once that binding is set "
         "aside and the local fixed to the one key whose branch reaches what the tree ports (directly, through "
         "definitions of the module that reach it, or through a name imported as one it ports), changed only "
         "backends the copy never had: not-carried. An unpinned port, a copy that names the probe, a change in "
         "that branch or outside the dispatch, or two keys reaching ported code is compared.",
         " def scale_rows(x, BLOCK):\n     arch = device_arch()[x.device.index]\n     if arch == \"sm80\":\n"
         "         return _cuda_path(x, BLOCK)\n     elif arch == \"sm86\":\n         return _triton_path(x, BLOCK)\n"
         "+    elif arch == \"sm100\":\n+        return _cuda_path(x, BLOCK, wide=True)",
         "classifier.rules.selectors.pinned_source_selected_key, "
         "classifier.rules.selectors.SelectorRules._pinned_source_selector"),
)


def _module_tables(module: ast.Module) -> dict[str, dict[str, ast.expr]]:
    """Top-level names bound once, to a dict display with distinct keys: name -> key dump -> value."""
    bound: dict[str, int] = {}
    displays: dict[str, ast.Dict] = {}
    for statement in module.body:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[statement.name] = bound.get(statement.name, 0) + 1
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                name = (alias.asname or alias.name).split(".")[0]
                bound[name] = bound.get(name, 0) + 1
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    bound[node.id] = bound.get(node.id, 0) + 1
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Dict):
            displays[statement.targets[0].id] = statement.value
    tables = {}
    for name, display in displays.items():
        if bound.get(name) != 1 or any(k is None or not _key(k) for k in display.keys):
            continue
        keys = [ast.dump(k) for k in display.keys]
        if len(set(keys)) == len(keys):
            tables[name] = dict(zip(keys, display.values))
    return tables


def _key(node: ast.expr) -> bool:
    """A literal, or a member of a class written ``Class.member``."""
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))


def _tested(test: ast.expr, selector: str) -> ast.expr | None:
    """``KEY`` of a test ``selector == KEY`` (or ``KEY == selector``)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Name) and left.id == selector and _key(right):
        return right
    if isinstance(right, ast.Name) and right.id == selector and _key(left):
        return left
    return None


def _chain(node: ast.If, selector: str):
    """The branches (key dump, body), the final ``else`` and the selector's uses in the tests of an
    ``if``/``elif`` chain on ``selector``; None for any other ``if``."""
    branches: list[tuple[str, list[ast.stmt]]] = []
    uses: list[ast.Name] = []
    current: ast.stmt = node
    while True:
        key = _tested(current.test, selector)
        if key is None:
            return None
        branches.append((ast.dump(key), current.body))
        uses.append(current.test.left if current.test.left is not key else current.test.comparators[0])
        if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If) \
                and _tested(current.orelse[0].test, selector) is not None:
            current = current.orelse[0]
            continue
        keys = [k for k, _ in branches]
        return (branches, current.orelse, uses) if len(set(keys)) == len(keys) else None


def _reached(nodes: list[ast.AST]) -> set[str]:
    """The names ``nodes`` call or launch (``f(...)``, ``m.f(...)``, ``k[grid](...)``), or that stand alone as a
    table entry, an attribute by its last part."""
    def named(node) -> str | None:
        if isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Name):
            return node.id
        return node.attr if isinstance(node, ast.Attribute) else None

    names = set()
    for top in nodes:
        if isinstance(top, (ast.Name, ast.Attribute)):
            names.add(named(top))
        for node in ast.walk(top):
            if isinstance(node, ast.Call) and named(node.func) is not None:
                names.add(named(node.func))
    return names


class _Fixed(ast.NodeTransformer):
    """A function with ``selector`` fixed to the key dumped ``chosen``: each chain on it replaced by that key's
    branch, each ``TABLE[selector]`` by that key's entry; ``failed`` where a lookup has no such entry."""

    def __init__(self, selector: str, chosen: str, tables: dict[str, dict[str, ast.expr]]) -> None:
        self.selector, self.chosen, self.tables, self.failed = selector, chosen, tables, False

    def visit_If(self, node: ast.If):
        found = _chain(node, self.selector)
        if found is None:
            return self.generic_visit(node)
        branches, orelse, _ = found
        body = next((b for k, b in branches if k == self.chosen), orelse)
        return [self.visit(copy.deepcopy(s)) for s in body] or [ast.Pass()]

    def visit_Subscript(self, node: ast.Subscript):
        if isinstance(node.value, ast.Name) and node.value.id in self.tables and isinstance(node.slice, ast.Name) \
                and node.slice.id == self.selector:
            entry = self.tables[node.value.id].get(self.chosen)
            if entry is None:
                self.failed = True
                return node
            return copy.deepcopy(entry)
        return self.generic_visit(node)


def _dispatches(function: ast.AST, selector: str, tables) -> dict[str, list[ast.AST]] | None:
    """Key dump -> what its branches and table entries hold, over every dispatch on ``selector`` (``""`` for a
    chain's final ``else``); None where the selector is rebound or nothing dispatches on it."""
    keyed: dict[str, list[ast.AST]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.If):
            found = _chain(node, selector)
            if found is None:
                continue
            for key, body in found[0]:
                keyed.setdefault(key, []).extend(body)
            keyed.setdefault("", []).extend(found[1])
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in tables \
                and isinstance(node.slice, ast.Name) and node.slice.id == selector:
            for key, value in tables[node.value.id].items():
                keyed.setdefault(key, []).append(value)
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == selector]
    if not keyed or any(not isinstance(n.ctx, ast.Load) for n in uses):
        return None
    return keyed


def _parameters(function) -> set[str]:
    arguments = function.args
    return {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}


def _selected(old, new, selector: str, tables, ported: set[str]) -> str | None:
    """The key as written that, ``selector`` fixed to it (the one key whose branch reaches a name among
    ``ported`` on each side, the same on both), makes ``old`` and ``new`` the same; else None."""
    chosen = []
    for function, table in ((old, tables[0]), (new, tables[1])):
        keyed = _dispatches(function, selector, table)
        reaching = [k for k, held in (keyed or {}).items() if _reached(held) & ported]
        chosen.append(reaching[0] if keyed is not None and len(reaching) == 1 and reaching[0] else None)
    if chosen[0] is None or chosen[0] != chosen[1]:
        return None
    fixed = []
    for function, table in ((old, tables[0]), (new, tables[1])):
        fixer = _Fixed(selector, chosen[0], table)
        result = fixer.visit(copy.deepcopy(function))
        left = any(isinstance(n, ast.Name) and n.id == selector for n in ast.walk(result))
        fixed.append(None if fixer.failed or left else ast.dump(result))
    if fixed[0] is None or fixed[0] != fixed[1]:
        return None
    key = next((k for k in ast.walk(old) if isinstance(k, ast.expr) and ast.dump(k) == chosen[0]), None)
    return ast.unparse(key) if key is not None else "its key"


def selected_key(old_text: str, new_text: str, old_module: str, new_module: str, declared: set[str],
                 ported: set[str]) -> tuple[str, str] | None:
    """(the selector, its key as written) where fixing a parameter among ``declared`` to the one key whose
    branch reaches a name among ``ported`` makes the two definitions the same; else None."""
    old, new = _one_definition(old_text), _one_definition(new_text)
    old_tree, new_tree = _parse(old_module), _parse(new_module)
    if old is None or new is None or old_tree is None or new_tree is None:
        return None
    tables = (_module_tables(old_tree), _module_tables(new_tree))
    for selector in sorted(declared & _parameters(old) & _parameters(new)):
        key = _selected(old, new, selector, tables, ported)
        if key is not None:
            return selector, key
    return None


def _called(node: ast.expr) -> str | None:
    """The name a value computed as ``f(...)``, ``m.f(...)`` or ``f(...)[i]`` calls; else None."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _source_bindings(function, sources: set[str]) -> dict[str, tuple[int, str]]:
    """Locals of ``function`` stored exactly once, by an assignment at its body's top level whose value calls
    a definition among ``sources`` (``arch = probe()[x.device.index]``): name -> (statement index, source)."""
    stores: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            stores[node.arg] = stores.get(node.arg, 0) + 1
    found = {}
    for index, statement in enumerate(function.body):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            name, source = statement.targets[0].id, _called(statement.value)
            if source in sources and stores.get(name) == 1:
                found[name] = (index, source)
    return found


def source_selected_key(old_text: str, new_text: str, old_module: str, new_module: str, sources: set[str],
                        ported: set[str]) -> tuple[str, str, str] | None:
    """(the selector, its key as written, the definition it is read from) where a local bound once from a
    call of a definition among ``sources`` (declared not carried as a whole), its binding set aside and the
    local fixed to the one key whose branch reaches a name among ``ported``, makes the two definitions the
    same; else None (``declared-source-selector``)."""
    old, new = _one_definition(old_text), _one_definition(new_text)
    old_tree, new_tree = _parse(old_module), _parse(new_module)
    if old is None or new is None or old_tree is None or new_tree is None or not sources:
        return None
    return _source_fixed_key(old, new, (old_tree, new_tree), sources, ported - sources, same_source=False)


def _source_fixed_key(old, new, modules, sources: set[str], reaching: set[str], same_source: bool) \
        -> tuple[str, str, str] | None:
    """(the selector, its key, its source) for the first local both definitions bind once from a call of one of
    ``sources`` (the same one on both sides where ``same_source``) that, its binding set aside and the local
    fixed to the one key whose branch reaches ``reaching``, makes the two definitions the same; else None."""
    tables = (_module_tables(modules[0]), _module_tables(modules[1]))
    before, after = _source_bindings(old, sources), _source_bindings(new, sources)
    for selector in sorted(set(before) & set(after)):
        if same_source and before[selector][1] != after[selector][1]:
            continue
        sides = []
        for function, (index, _) in ((old, before[selector]), (new, after[selector])):
            side = copy.deepcopy(function)
            del side.body[index]
            if not side.body:
                side.body.append(ast.Pass())
            sides.append(side)
        key = _selected(sides[0], sides[1], selector, tables, reaching)
        if key is not None:
            return selector, key, after[selector][1]
    return None


def _reaching(module: ast.Module, ported: set[str]) -> set[str]:
    """``ported`` with the module's top-level functions whose bodies call or name one of them (followed until
    nothing changes) and the local names of imports of them (``from .m import f as g``: ``g``)."""
    names = set(ported)
    for statement in module.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                if alias.name.split(".")[-1] in ported:
                    names.add((alias.asname or alias.name).split(".")[0])
    functions = {s.name: s for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    grown = True
    while grown:
        grown = False
        for name, function in functions.items():
            if name not in names and _reached([function]) & names:
                names.add(name)
                grown = True
    return names


def _top_functions(module: ast.Module) -> set[str]:
    return {s.name for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _named(text: str) -> set[str]:
    """Every identifier ``text`` parses to (names, attributes, definitions); its words where it does not parse."""
    tree = _parse(text)
    if tree is None:
        import re
        return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def pinned_source_selected_key(old_text: str, new_text: str, old_module: str, new_module: str, port_module: str,
                               ported: set[str]) -> tuple[str, str, str] | None:
    """(the selector, its key as written, the probe it is read from) where a local bound once from a call of a
    top-level definition of upstream's module on both sides, one nothing among ``ported`` names and the port's
    module (a pinned copy) never names, its binding set aside and the local fixed to the one key whose branch
    reaches ``ported`` (through the module's own definitions and imported names too), makes the two definitions
    the same; else None (``pinned-source-selector``)."""
    old, new = _one_definition(old_text), _one_definition(new_text)
    old_tree, new_tree = _parse(old_module), _parse(new_module)
    if old is None or new is None or old_tree is None or new_tree is None or not ported:
        return None
    reaching = _reaching(old_tree, ported) | _reaching(new_tree, ported)
    sources = (_top_functions(old_tree) & _top_functions(new_tree)) - reaching - _named(port_module)
    if not sources:
        return None
    return _source_fixed_key(old, new, (old_tree, new_tree), sources, reaching, same_source=True)


class SelectorRules:
    """The declared-selector rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _ported_names(self, entry) -> set[str]:
        """The top-level upstream names the tree ports (its anchors') and those that carry an anchored body
        upstream moved there before ``entry``."""
        names = {a.bare_symbol for a in self.index.anchors
                 if a.kind == PORTS and a.upstream == self.upstream and not a.qualified}
        moves = getattr(self, "_range_moves", None)
        for key in (moves.carriers if moves is not None else {}):
            if "." not in key[1] and moves.carrying(key, entry.position) is not None:
                names.add(key[1])
        return names

    def _declared_selector(self, symbol: TouchedSymbol, declared: set[str], ported: set[str]) -> tuple[str, str] | None:
        """``declared-selector``: (the selector, the key the port runs) when the rule holds; else None."""
        if not declared or not ported:
            return None
        texts = self._python_sides(symbol, parsed=True) if symbol.change == "modified" else None
        return selected_key(*texts, declared, ported) if texts else None

    def _declared_source_selector(self, symbol: TouchedSymbol, ported: set[str]) -> tuple[str, str, str] | None:
        """``declared-source-selector``: (the local, the key the port runs, the declared definition it is read
        from) when the rule holds; else None."""
        if not ported:
            return None
        paths = {symbol.path, symbol.old_path or symbol.path}
        sources = {a.bare_symbol for a in self.index.anchors_for_path(self.upstream, paths, NOT_CARRIED)
                   if not a.param and not a.qualified}
        if not sources:
            return None
        texts = self._python_sides(symbol, parsed=True) if symbol.change == "modified" else None
        return source_selected_key(*texts, sources, ported) if texts else None

    def _pinned_source_selector(self, symbol: TouchedSymbol, anchor, definition,
                                ported: set[str]) -> tuple[str, str, str] | None:
        """``pinned-source-selector``: (the local, the key the copy runs, the probe it is read from) when the port
        is a pinned copy and the rule holds; else None."""
        if not ported or anchor is None or not anchor.pin or symbol.change != "modified":
            return None
        source = self.index.source(definition.file)
        if source is None:
            return None
        if isinstance(source, bytes):
            source = source.decode("utf-8", errors="replace")
        texts = self._python_sides(symbol, parsed=True)
        return pinned_source_selected_key(*texts, source, ported) if texts else None
