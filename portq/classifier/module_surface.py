"""Module surface: what a Python module binds at module level, and who imports it.

A ported definition reads more than its own lines: an alias (``exp =
tl.exp``), a flag (``IS_HOPPER = cc >= 9``) or a constant bound at module
level, in its own file or in a module it imports them from, and the
module's import-time code (a global setting flipped when it is imported).
These helpers say which module-level names a change rebinds
(``changed_bindings``: compared as Python ``ast`` statements, so formatting
never counts), which of a change's lines are import-time code
(``import_time_statements``), and under which local names a module imports
another's names or the module itself (``imported_from``: absolute, relative
and aliased imports).

This module reads parsed symbol tables handed to it; it decides no verdict
and reads no blobs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from portq.classifier.imports import rebound_names, relative_module_path

_DEFINITIONS = ("function_definition", "class_definition", "decorated_definition")


def _dump(text: str) -> str:
    try:
        return ast.dump(ast.parse(text))
    except SyntaxError:
        return " ".join(text.split())


def _targets(node) -> list[str]:
    """Names a module-level statement binds (assignment targets, definitions)."""
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition")
    if node is not None and node.type in ("function_definition", "class_definition"):
        name = node.child_by_field_name("name")
        return [name.text.decode()] if name is not None else []
    if node is None or node.type != "expression_statement" or not node.named_children:
        return []
    inner = node.named_children[0]
    found = []
    while inner is not None and inner.type in ("assignment", "augmented_assignment"):
        left = inner.child_by_field_name("left")
        if left is not None:
            found += [n.text.decode() for n in ([left] if left.type == "identifier" else left.named_children)
                      if n.type == "identifier"]
        inner = inner.child_by_field_name("right")
    return found


def module_bindings(table) -> dict[str, str]:
    """name -> the ``ast`` of every module-level assignment binding it, or ``def`` for a
    name only function or class definitions bind, at top level or in the branches of a
    module-level ``if`` (imports aside)."""
    bound: dict[str, list[str]] = {}
    if table is None or table.tree is None:
        return {}
    for node in table.tree.root_node.named_children:
        names = _targets(node)
        if names:
            dumped = "def" if node.type in _DEFINITIONS else _dump(node.text.decode("utf-8", errors="replace"))
            for name in names:
                bound.setdefault(name, []).append(dumped)
        elif node.type == "if_statement":
            # Definitions in the branches of a module-level ``if`` (one per version or platform) bind
            # their names too; each is its own touched symbol, like a top-level definition.
            for name in _branch_definitions(node):
                bound.setdefault(name, []).append("def")
    # A name bound only by definitions is "def" however many branches define it.
    return {name: "def" if set(dumps) == {"def"} else "\n".join(dumps) for name, dumps in bound.items()}


def _branch_definitions(node) -> list[str]:
    """Names the function and class definitions of a module-level ``if``'s branches bind (nested ``if``s
    followed), each once per definition."""
    found: list[str] = []
    for child in node.named_children:
        if child.type in ("block", "elif_clause", "else_clause"):
            for statement in (child.named_children if child.type == "block" else
                              [g for c in child.named_children if c.type == "block" for g in c.named_children]):
                if statement.type in _DEFINITIONS:
                    found += _targets(statement)
                elif statement.type == "if_statement":
                    found += _branch_definitions(statement)
    return found


def changed_bindings(old_table, new_table, moved: dict[str, str] | None = None) -> set[str]:
    """Module-level names bound differently after the change: an assignment's value, a name
    bound by another kind of statement (an alias become a function), added or removed, or an
    import of another target. A definition changed in its body is not rebound: its own
    touched symbol stands for it. ``moved`` maps a dotted module to where it moved unchanged
    (an import that follows the move binds the same code)."""
    old, new = module_bindings(old_table), module_bindings(new_table)
    changed = {n for n in set(old) | set(new) if old.get(n) != new.get(n)}
    if old_table is not None and new_table is not None and old_table.tree is not None and new_table.tree is not None:
        changed |= set(rebound_names(old_table.tree.root_node, new_table.tree.root_node, moved))
    return changed


def import_time_statements(table, lines: set[int]) -> list[tuple[int, str]]:
    """Module-level statements on ``lines`` that run code at import rather than bind a name:
    calls and stores into attributes or items (``triton.knobs.x = False``, ``torch.set_flag(...)``)."""
    found = []
    if table is None or table.tree is None:
        return found
    for node in table.tree.root_node.named_children:
        if node.type != "expression_statement" or not node.named_children:
            continue
        if not any(node.start_point[0] + 1 <= line <= node.end_point[0] + 1 for line in lines):
            continue
        inner = node.named_children[0]
        if inner.type == "string":
            continue  # a docstring
        if inner.type in ("assignment", "augmented_assignment"):
            left = inner.child_by_field_name("left")
            if left is None or left.type not in ("attribute", "subscript"):
                continue
        elif inner.type not in ("call", "await"):
            continue
        found.append((node.start_point[0] + 1, node.text.decode("utf-8", errors="replace").splitlines()[0].strip()))
    return found


@dataclass
class Imported:
    """How one module reaches another's module-level names."""

    names: dict[str, str] = field(default_factory=dict)  # local name -> the other module's name
    modules: set[str] = field(default_factory=set)  # local names bound to the other module itself


def _module_files(importer: str, module: str) -> list[str]:
    """Path suffixes a module spec of ``importer`` may name (``.utils``, ``pkg.ops.utils``)."""
    stem = relative_module_path(importer, module)
    if stem is not None:
        return [stem + ".py", stem + "/__init__.py"]
    stem = "/".join(p for p in module.split(".") if p)
    return [stem + ".py", stem + "/__init__.py"] if stem else []


def _names(path: str, candidates: list[str], relative: bool) -> bool:
    return any(path == c or (not relative and path.endswith("/" + c)) for c in candidates)


def imported_from(table, importer: str, target: str) -> Imported:
    """The names ``importer`` imports from the module at ``target`` (upstream paths), and
    the local names it binds to that module itself (``from pkg.ops import utils as u``,
    ``import pkg.ops.utils as u``, ``from . import utils``)."""
    found = Imported()
    if table is None or table.tree is None:
        return found
    stack = [table.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "import_from_statement":
            module_node = node.child_by_field_name("module_name")
            module = module_node.text.decode() if module_node is not None else ""
            relative = module.startswith(".")
            into = _names(target, _module_files(importer, module), relative)
            for name_node in node.children_by_field_name("name"):
                aliased = name_node.type == "aliased_import"
                original = (name_node.child_by_field_name("name") if aliased else name_node).text.decode()
                local = (name_node.child_by_field_name("alias") if aliased else name_node).text.decode()
                if into:
                    found.names[local] = original.split(".")[-1]
                joined = module + ("" if module.endswith(".") else ".") + original if module else original
                if _names(target, _module_files(importer, joined), relative):
                    found.modules.add(local)
        elif node.type == "import_statement":
            for name_node in node.named_children:
                aliased = name_node.type == "aliased_import"
                dotted = (name_node.child_by_field_name("name") if aliased else name_node).text.decode()
                if aliased and _names(target, _module_files(importer, dotted), False):
                    found.modules.add(name_node.child_by_field_name("alias").text.decode())
                elif not aliased and _names(target, _module_files(importer, dotted), False):
                    found.modules.add(dotted)
        elif node.type in ("module", "block", "if_statement", "try_statement", "else_clause", "except_clause",
                           "with_statement", "function_definition", "decorated_definition", "class_definition"):
            stack.extend(node.named_children)
    return found
