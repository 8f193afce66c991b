"""What a Python module's imports bind, and where a module spec leads.

The names module-level imports bind (``import_bindings``), which of them a change
of imports makes resolve differently (``rebound_names``), the repository path a
module spec names (``relative_module_path``), and where a name leads through
modules that only re-export it (``reexport_target``, which reads other files only
through the reader handed to it). Rules and the module surface both read imports
this way; it sits below both, reads only the syntax trees handed to it, and
imports no rule and no verdict table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from portq.language.signatures import node_text, nodes_of


@dataclass(frozen=True)
class Binding:
    name: str  # the name the module binds
    target: str  # the dotted thing it resolves to
    line: int


def import_bindings(root) -> dict[str, Binding]:
    """Module-level names bound by Python import statements, with what they
    resolve to: ``import a.b.c as c`` and ``from a.b import c`` both bind
    ``c`` to ``a.b.c``. Imports inside functions and classes are not module bindings."""
    bindings: dict[str, Binding] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "decorated_definition"):
            continue
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "aliased_import":
                    target = node_text(child.child_by_field_name("name"))
                    alias = node_text(child.child_by_field_name("alias"))
                    bindings[alias] = Binding(alias, target, node.start_point[0] + 1)
                elif child.type == "dotted_name":
                    target = node_text(child)
                    head = target.split(".")[0]
                    bindings[head] = Binding(head, head, node.start_point[0] + 1)
                    if "." in target:  # importing a submodule also loads it as an attribute
                        bindings[target] = Binding(target, target, node.start_point[0] + 1)
            continue
        if node.type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            base = node_text(module) if module is not None else ""
            for child in node.named_children:
                if module is not None and child.id == module.id:
                    continue
                if child.type == "aliased_import":
                    target = node_text(child.child_by_field_name("name"))
                    alias = node_text(child.child_by_field_name("alias"))
                elif child.type == "dotted_name":
                    target = alias = node_text(child)
                elif child.type == "wildcard_import":
                    target = alias = "*"
                else:
                    continue
                full = f"{base}.{target}" if not base.endswith(".") else f"{base}{target}"
                bindings[alias] = Binding(alias, full, node.start_point[0] + 1)
            continue
        stack.extend(node.children)
    return bindings


def import_lines(root) -> set[int]:
    """1-based lines covered by module-level import statements."""
    lines: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition", "decorated_definition"):
            continue
        if node.type in ("import_statement", "import_from_statement", "future_import_statement"):
            lines |= set(range(node.start_point[0] + 1, node.end_point[0] + 2))
            continue
        stack.extend(node.children)
    return lines


def rebound_names(old_root, new_root, moved: dict[str, str] | None = None,
                  follow: Callable[[str, str], str] | None = None) -> list[str]:
    """Module-level names whose import binding differs between the two trees.

    ``moved`` maps a dotted module to the one it was renamed to, unchanged
    (a file move): an import that follows the move still binds the same code.
    ``follow(side, target)`` (``"old"``/``"new"``), when given, names where a target
    resolves once re-exports are followed (``reexport_target``)."""
    old, new = import_bindings(old_root), import_bindings(new_root)

    def target(bindings, name, side):
        found = bindings[name].target if name in bindings else None
        for before, after in (moved or {}).items():
            if found is not None and (found == before or found.startswith(before + ".")):
                found = after + found[len(before):]
                break
        return follow(side, found) if found is not None and follow is not None else found

    return sorted(n for n in set(old) | set(new) if target(old, n, "old") != target(new, n, "new"))


# --- imports through a module that re-exports the name ------------------------------


def relative_module_path(importer: str, module: str) -> str | None:
    """The repository path, without ``.py``/``/__init__.py``, of the module a relative spec of ``importer``
    names (``.utils``, ``..ops.utils``, ``.``: the folders up from ``importer``'s own, then the parts);
    None for an absolute spec."""
    dots = len(module) - len(module.lstrip("."))
    if not dots:
        return None
    parts = [p for p in module.lstrip(".").split(".") if p]
    base = PurePosixPath(importer).parent
    for _ in range(dots - 1):
        base = base.parent
    return str(base.joinpath(*parts)) if parts else str(base)


def _module_stem(module: str, importer: str) -> str | None:
    """The repository path, without ``.py``/``/__init__.py``, of the module a dotted spec of ``importer``
    names (``.helpers.math`` or ``pkg.helpers.math``); an absolute spec is placed under the directory of
    ``importer`` that holds its first part (a ``src/`` layout), else at the repository root."""
    stem = relative_module_path(importer, module)
    if stem is not None:
        return None if stem in (".", "") else stem
    parts = [p for p in module.split(".") if p]
    if not parts:
        return None
    folders = PurePosixPath(importer).parent.parts
    prefix = folders[:folders.index(parts[0])] if parts[0] in folders else ()
    return "/".join((*prefix, *parts))


def _sole_import(root, name: str):
    """The one module-level import statement binding ``name`` in ``root``, when the module binds it by
    that import alone and its code names it nowhere else (``__all__``'s strings are not code); else None."""
    found = []
    for node in nodes_of(root, ("identifier", "import_statement", "import_from_statement"), "python"):
        binds = node.type != "identifier" and name in import_bindings(_Wrapper(node))
        if node.type == "identifier" and node_text(node) != name or node.type != "identifier" and not binds:
            continue
        inside, nested = node.parent, False
        while inside is not None:
            nested = nested or inside.type in ("function_definition", "class_definition", "lambda")
            if inside.type in ("import_statement", "import_from_statement"):
                break
            inside = inside.parent
        if nested or (node.type == "identifier" and inside is None):
            return None  # bound, rebound or read outside a module-level import: not only a re-export
        if binds:
            found.append(node)
    return found[0] if len(found) == 1 else None


@dataclass
class _Wrapper:
    """One statement seen as a module root by ``import_bindings``."""

    node: object

    @property
    def type(self) -> str:
        return "module"

    @property
    def children(self) -> list:
        return [self.node]


def _star_source(root, name: str, path: str, read_root: Callable[[str], object | None]) -> str | None:
    """The module path (no suffix) that hands ``name`` to the module at ``path`` through its one module-level
    ``from X import *``, when the module names ``name`` nowhere in its code and no other import binds it, and
    X exports it: listed in X's ``__all__``, or, without one, a public name X binds at module level."""
    if any(node_text(n) == name for n in nodes_of(root, ("identifier",), "python")):
        return None
    stars = [s for s in root.named_children if s.type == "import_from_statement"
             and any(c.type == "wildcard_import" for c in s.named_children)]
    if len(stars) != 1:
        return None
    module = stars[0].child_by_field_name("module_name")
    stem = _module_stem(node_text(module), path) if module is not None else None
    source = next((r for p in (stem + ".py", stem + "/__init__.py") for r in (read_root(p),) if r is not None),
                  None) if stem is not None else None
    if source is None:
        return None
    listed = _all_names(source)
    if listed is not None:
        return stem if name in listed else None
    bound = {node_text(n) for statement in source.named_children for n in _bound_identifiers(statement)}
    return stem if not name.startswith("_") and (name in bound or name in import_bindings(source)) else None


def _all_names(root) -> set[str] | None:
    """The strings a module-level ``__all__ = [...]`` (or tuple) lists; None without one, or one built
    any other way (an empty set: nothing can be said to be exported)."""
    for statement in root.named_children:
        inner = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_children else None
        if inner is None or inner.type not in ("assignment", "augmented_assignment"):
            continue
        left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
        if left is None or node_text(left) != "__all__":
            continue
        if inner.type != "assignment" or right is None or right.type not in ("list", "tuple"):
            return set()
        items = [c for c in right.named_children if c.type != "comment"]
        if any(c.type != "string" for c in items):
            return set()
        return {node_text(c).strip("\"'") for c in items}
    return None


def _bound_identifiers(statement) -> list:
    """The name nodes a module-level ``def``, ``class`` or plain assignment binds."""
    if statement.type == "decorated_definition":
        statement = statement.child_by_field_name("definition")
    if statement is not None and statement.type in ("function_definition", "class_definition"):
        return [statement.child_by_field_name("name")]
    inner = statement.named_children[0] if statement is not None and statement.type == "expression_statement" \
        and statement.named_children else None
    if inner is not None and inner.type == "assignment" and inner.child_by_field_name("left") is not None \
            and inner.child_by_field_name("left").type == "identifier":
        return [inner.child_by_field_name("left")]
    return []


def reexport_target(target: str, importer: str, read_root: Callable[[str], object | None], depth: int = 8) -> str:
    """Where a dotted import target of ``importer`` (``pkg.sub.f``, ``.sub.f``) resolves, as
    ``path/of/module:name``: followed through each module that only re-exports the name (``_sole_import``)
    to the module that binds it otherwise. ``read_root(path)`` is the syntax tree of a file at the side's
    commit, or None where it does not exist. A target it cannot place is returned unchanged."""
    module, _, name = target.rpartition(".")
    if not name or name == "*" or not module.strip("."):
        return target
    stem = _module_stem(module, importer)
    if stem is None:
        return target
    for _ in range(depth):
        path, root = next(((p, r) for p in (stem + ".py", stem + "/__init__.py") for r in (read_root(p),)
                           if r is not None), (None, None))
        if root is None:
            return f"{stem}:{name}"
        statement = _sole_import(root, name)
        binding = import_bindings(_Wrapper(statement)).get(name) if statement is not None else None
        if binding is None:
            star = _star_source(root, name, path, read_root)
            if star is None:
                return f"{stem}:{name}"
            stem = star
            continue
        if binding.target.endswith(".*"):
            return f"{stem}:{name}"
        module, _, name = binding.target.rpartition(".")
        if not module.strip("."):
            return f"{stem}:{name}"  # ``from . import name``: a submodule, not a re-exported object
        following = _module_stem(module, path)
        if following is None:
            return f"{stem}:{name}"
        stem = following
    return f"{stem}:{name}"
