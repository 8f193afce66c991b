"""Cosmetic rules: a change that provably does nothing a port could follow (DESIGN §6, "no-op proofs").

Each is a proof, not a guess: equal tokens, an equal Python AST, a
consistent renaming, or imports that bind the same names. Any of them
gives NOT_APPLICABLE/cosmetic; failing every proof, the change is compared.

The code: the proofs on syntax trees that locals were renamed consistently
(``renamed_locals``, ``alpha_tokens``) and which names a change of module-level
imports makes resolve differently (``rebound_names``), through modules that only
re-export a name (``reexport_target``, which reads other files only through the
reader handed to it). It reads the syntax trees handed to it; it reads no git,
imports no verdict table and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from portq.classifier.rules import Rule
from portq.language.memo import STRINGS, per_definition
from portq.language.signatures import comment_free_tokens, definition_tokens, node_text, nodes_of, normalise_name

RULES = (
    Rule("cosmetic-comments", ("NOT_APPLICABLE",),
         "Changed lines outside definitions that are only comments or blank change nothing ported.",
         "-# TODO: tune\n+# Tuned on MI300",
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("cosmetic-tokens", ("NOT_APPLICABLE",),
         "A ported definition whose tokens, comments dropped, are identical before and after is unchanged.",
         "-    x = a+b  # sum\n+    x = a+b",
         "classifier.verdicts.SymbolClassifier._against_port"),
    Rule("cosmetic-renaming", ("NOT_APPLICABLE",),
         "A definition that differs only by a consistent renaming of its locals is unchanged.",
         "-    acc = tl.zeros(...)\n+    accumulator = tl.zeros(...)  (every use renamed alike)",
         "classifier.verdicts.SymbolClassifier._against_port, classifier.rules.cosmetic.renamed_locals"),
    Rule("cosmetic-parameter-renaming", ("NOT_APPLICABLE",),
         "A definition that differs only by a consistent renaming of its locals and parameters, each parameter in "
         "its place, and that no call in its file or the commit's other owned files (before or after) binds by a "
         "renamed name, computes the same from the same arguments: every call binds the same values, so the renaming is form without meaning.",
         "-def k(x_ptr, r_ptr):\n-    tl.store(r_ptr, x)\n+def k(x_ptr, rstd_ptr):\n+    tl.store(rstd_ptr, x)  "
         "(k[grid](x, r) passes both by position)",
         "classifier.verdicts.SymbolClassifier._against_port, classifier.rules.cosmetic.renamed_names"),
    Rule("cosmetic-ast", ("NOT_APPLICABLE",),
         "A Python definition (or class body) with the same AST before and after changed only its formatting.",
         "-    return f(a,\n-             b)\n+    return f(a, b)",
         "classifier.verdicts.SymbolClassifier._against_port, "
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("cosmetic-imports", ("NOT_APPLICABLE",),
         "Changed import statements that bind the same names to the same modules change nothing.",
         "-from .a import x, y\n+from .a import y, x",
         "classifier.rules.attribution.AttributionRules._import_change"),
    Rule("reexported-import", ("NOT_APPLICABLE",),
         "Changed import statements whose names resolve to the same objects once each import from a module that "
         "only re-exports the name (binds it by exactly one import and names it nowhere else in its code, "
         "`__all__` aside; or names it nowhere and has one `from m import *` of a module `m` exporting it) is "
         "followed to where it comes from, each side read at its own commit, change nothing: "
         "every ported definition using the name gets the same object.",
         "-from pkg.sub.mod import f\n+from pkg.sub import f   (pkg/sub/__init__.py: from .mod import f)",
         "classifier.rules.cosmetic.reexport_target, classifier.rules.attribution.AttributionRules._import_change"),
)


# --- semantic no-ops: renamed locals ---------------------------------------------


_PY_TARGET_PARENTS = {
    "assignment": "left", "augmented_assignment": "left", "for_statement": "left",
    "for_in_clause": "left", "named_expression": "name", "as_pattern_target": None,
}


def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _python_parameters(function) -> set[str]:
    names: set[str] = set()
    params = function.child_by_field_name("parameters") if function is not None else None
    if params is None:
        return names
    for child in params.named_children:
        if child.type == "identifier":
            names.add(node_text(child))
            continue
        name = child.child_by_field_name("name")
        if name is None:
            name = next((c for c in child.named_children if c.type == "identifier"), None)
        if name is not None:
            names.add(node_text(name))
    return names


def _target_identifiers(target) -> list:
    """Identifiers a Python assignment target binds (not attributes or subscripts)."""
    found = []
    for node in _walk(target):
        if node.type != "identifier":
            continue
        parent = node.parent
        inside = False
        while parent is not None and parent.id != target.id:
            if parent.type in ("attribute", "subscript", "call"):
                inside = True
                break
            parent = parent.parent
        if not inside:
            found.append(node)
    if target.type == "identifier":
        found = [target]
    return found


def _function_node(node):
    if node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    if node.type == "template_declaration":
        return next((c for c in node.named_children if c.type == "function_definition"), node)
    return node


_PY_LOCAL_BINDERS = ("global_statement", "nonlocal_statement", *_PY_TARGET_PARENTS)


_CPP_LOCAL_BINDERS = ("init_declarator", "declaration", "for_range_loop")


def local_names(node, language: str) -> set[str]:
    """Names a definition binds as its own locals (not parameters, globals or fields)."""
    function = _function_node(node)
    names: set[str] = set()
    if language == "python":
        declared_outer: set[str] = set()
        for current in nodes_of(function, _PY_LOCAL_BINDERS, "python"):
            if current.type in ("global_statement", "nonlocal_statement"):
                declared_outer |= {node_text(c) for c in current.named_children if c.type == "identifier"}
            field = _PY_TARGET_PARENTS.get(current.type, "")
            if field == "" or current.type == "as_pattern_target":
                if current.type == "as_pattern_target":
                    names |= {node_text(i) for i in _target_identifiers(current)}
                continue
            target = current.child_by_field_name(field) if field else None
            if target is not None:
                names |= {node_text(i) for i in _target_identifiers(target)}
        return names - _python_parameters(function) - declared_outer
    body = function.child_by_field_name("body")
    if body is None:
        return names
    for current in nodes_of(body, _CPP_LOCAL_BINDERS, "cpp"):
        if current.type in _CPP_LOCAL_BINDERS:
            declarator = current.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "identifier":
                inner = declarator.child_by_field_name("declarator")
                if inner is None:
                    inner = next((c for c in declarator.named_children if c.type == "identifier"), None)
                declarator = inner
            if declarator is not None:
                names.add(node_text(declarator))
    return names


def _is_name_use(node, language: str) -> bool:
    """An identifier leaf that names a variable (not an attribute or a keyword argument's name)."""
    if node.type != "identifier":
        return False
    parent = node.parent
    if parent is None:
        return True
    if language == "python":
        if parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
            return False
        if parent.type == "keyword_argument" and parent.child_by_field_name("name") == node:
            return False
    return True


@per_definition("alpha-tokens", STRINGS)
def alpha_tokens(node, language: str) -> list[str]:
    """The definition's tokens without comments, with each local renamed to
    its order of first appearance: two definitions that differ only by a
    consistent renaming of locals (unused ones included) give equal lists."""
    locals_ = local_names(node, language)
    placeholders: dict[str, str] = {}

    def spell(leaf) -> str:
        text = node_text(leaf)
        if text in locals_ and _is_name_use(leaf, language):
            return placeholders.setdefault(text, f"\x00{len(placeholders)}")
        return text

    return comment_free_tokens(node, spell=spell)


def _parameter_name(parameter) -> str | None:
    if parameter.type == "identifier":
        return normalise_name(node_text(parameter))
    name = parameter.child_by_field_name("name") or next(
        (c for c in parameter.named_children if c.type == "identifier"), None)
    return normalise_name(node_text(name)) if name is not None else None


def renamed_locals(old_node, new_node, language: str) -> list[tuple[str, str]] | None:
    """The (old, new) local renamings that make the two definitions equal, or
    None when they differ by more than a consistent renaming of locals."""
    if alpha_tokens(old_node, language) != alpha_tokens(new_node, language):
        return None
    old_tokens, new_tokens = definition_tokens(old_node), definition_tokens(new_node)
    pairs = sorted({(a, b) for a, b in zip(old_tokens, new_tokens) if a != b})
    return pairs


def _alpha_with(node, language: str, names: set[str]) -> list[str]:
    """``alpha_tokens`` with ``names`` (parameters) renamed to placeholders too."""
    bound = local_names(node, language) | names
    placeholders: dict[str, str] = {}

    def spell(leaf) -> str:
        text = node_text(leaf)
        if text in bound and _is_name_use(leaf, language):
            return placeholders.setdefault(text, f"\x00{len(placeholders)}")
        return text

    return comment_free_tokens(node, spell=spell)


def keyword_names(root) -> set[str]:
    """The names Python calls under ``root`` pass keyword arguments by."""
    found: set[str] = set()
    for current in nodes_of(root, ("keyword_argument",), "python"):
        name = current.child_by_field_name("name")
        if name is not None:
            found.add(node_text(name))
    return found


def renamed_names(old_node, new_node, language: str, old_params: list[str], new_params: list[str],
                  keywords: set[str]) -> list[tuple[str, str]] | None:
    """The (old, new) renamings of locals and parameters that make the two
    definitions equal, with at least one parameter among them, or None. The
    parameters (as written, in order) must keep their places: equal counts,
    a renamed one renamed at its own position; and ``keywords`` (the names
    calls in the definition's file pass keyword arguments by, both sides)
    must hold no renamed parameter's old or new name, so that every call
    binds the same values after as before."""
    if len(old_params) != len(new_params):
        return None
    moved = [(a, b) for a, b in zip(old_params, new_params) if a != b]
    if not moved or any(a in keywords or b in keywords for a, b in moved):
        return None
    if _alpha_with(old_node, language, set(old_params)) != _alpha_with(new_node, language, set(new_params)):
        return None
    old_tokens, new_tokens = definition_tokens(old_node), definition_tokens(new_node)
    pairs = sorted({(a, b) for a, b in zip(old_tokens, new_tokens) if a != b})
    if not set(moved) <= set(pairs):
        return None  # a parameter swapped places with another rather than being renamed in its own
    return pairs


# --- what module-level imports bind ---------------------------------------------


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


def _module_stem(module: str, importer: str) -> str | None:
    """The repository path, without ``.py``/``/__init__.py``, of the module a dotted spec of ``importer``
    names (``.helpers.math`` or ``pkg.helpers.math``); an absolute spec is placed under the directory of
    ``importer`` that holds its first part (a ``src/`` layout), else at the repository root."""
    dots = len(module) - len(module.lstrip("."))
    parts = [p for p in module.lstrip(".").split(".") if p]
    if dots:
        base = PurePosixPath(importer).parent
        for _ in range(dots - 1):
            base = base.parent
        stem = str(base.joinpath(*parts)) if parts else str(base)
        return None if stem in (".", "") else stem
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
