"""Deltas: what an upstream change did to a definition, proven on its syntax
tree, before any verdict is taken.

Questions the verdict table needs answered from the tree rather than from
a guess: is the change a semantic no-op (locals renamed consistently, unused
locals renamed, import statements that bind the same names); is it confined
to what a not-carried declaration sets aside; which module-level names does
a change of imports make resolve differently; is a value upstream now passes
to a kernel derived only from what the launching function already has
(shapes, strides, constants, values the kernel already receives), or is it a
new input a caller supplies; and, item by item (``compare``), where each
structural delta of a signature (parameters, launches, grid and block as
canonical expressions, program-id use) leaves a port: a typed ``Delta``
whose ``Status`` the verdict table decides from.

This module reads tree-sitter nodes and signatures handed to it, and the
in-tree index only to name what a port's launch binds to; it reads no blobs
and decides no verdict.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from portq.classifier.rules import equivalence
from portq.core.evidence import Evidence, Kind, Location, Side
from portq.language.signatures import (
    Signature,
    Use,
    bare_name,
    UNRESOLVED,
    bind_arguments,
    comment_free_tokens,
    definition_tokens,
    nodes_of,
    is_docstring,
    node_text,
    normalise_kernel_name,
    normalise_name,
)
from portq.language.memo import STRINGS, per_definition
from portq.language.signatures_python import PythonLocals
from portq.language.symbols import KIND_CUDA_KERNEL, KIND_TRITON_KERNEL
from portq.classifier.delta import Delta, Status, _ruled

if TYPE_CHECKING:
    from portq.tree.tree_index import TreeIndex


# --- semantic no-ops -----------------------------------------------------------

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


# --- changes confined to a declared scope -------------------------------------------


def forwarding_call(function, excluded: set[str]):
    """``(callee, argument names)`` when the carried path of Python
    ``function`` is one call that forwards bare names: a body that is
    ``if NAME: A(...) else: B(x, y, ...)`` with NAME in ``excluded`` (a
    kernel turned dispatcher), or just ``B(x, y, ...)``. Else None."""
    body = function.child_by_field_name("body")
    statements = [c for c in (body.named_children if body is not None else []) if c.type != "comment"
                  and not (c.type == "expression_statement" and is_docstring(c.named_children[0]))]
    if len(statements) == 1 and statements[0].type == "if_statement":
        branch = statements[0]
        condition = branch.child_by_field_name("condition")
        clauses = [c for c in branch.children if c.type in ("elif_clause", "else_clause")]
        if condition is None or condition.type != "identifier" or normalise_name(node_text(condition)) not in excluded \
                or len(clauses) != 1 or clauses[0].type != "else_clause":
            return None
        statements = [c for c in clauses[0].child_by_field_name("body").named_children if c.type != "comment"]
    if len(statements) != 1 or statements[0].type != "expression_statement" \
            or statements[0].named_children[0].type != "call":
        return None
    call = statements[0].named_children[0]
    callee, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    names = [a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"]
    if callee is None or callee.type != "identifier" or any(a.type != "identifier" for a in names):
        return None
    return node_text(callee), [node_text(a) for a in names]


def _assigned_once(body) -> dict[str, list]:
    """name -> the assignment nodes binding it (identifier or tuple targets) in ``body``."""
    assigned: dict[str, list] = {}
    for current in _walk(body):
        if current.type == "assignment" and current.child_by_field_name("left") is not None:
            for target in _target_identifiers(current.child_by_field_name("left")):
                assigned.setdefault(node_text(target), []).append(current)
    return assigned


def dispatch_locals(function, excluded: set[str]) -> dict[str, int]:
    """Locals that only select a declared not-carried path: ``L`` assigned
    once, tested by a top-level ``if L:`` (no ``return`` before it, no
    ``else``) whose branch launches with a declared parameter set to
    ``True`` and ends in ``return``. Every path with ``L`` true ends there,
    so what ``L`` selects anywhere is that path. name -> line of the ``if``."""
    body = function.child_by_field_name("body")
    if body is None:
        return {}
    assigned = _assigned_once(body)
    found: dict[str, int] = {}
    for statement in body.named_children:
        if statement.type == "if_statement":
            condition = statement.child_by_field_name("condition")
            consequence = statement.child_by_field_name("consequence")
            name = node_text(condition) if condition is not None and condition.type == "identifier" else None
            last = consequence.named_children[-1] if consequence is not None and consequence.named_children else None
            declared_true = any(
                c.type == "keyword_argument" and normalise_name(node_text(c.child_by_field_name("name"))) in excluded
                and c.child_by_field_name("value") is not None and c.child_by_field_name("value").type == "true"
                for c in _walk(consequence)) if consequence is not None else False
            if name and len(assigned.get(name, [])) == 1 and last is not None and last.type == "return_statement" \
                    and declared_true and not any(c.type in ("elif_clause", "else_clause") for c in statement.children):
                found[name] = statement.start_point[0] + 1
                continue
        if any(c.type == "return_statement" for c in _walk(statement)):
            break  # a path may leave before any later test
    return found


def carried_path_rewrites(function, selectors: set[str]) -> dict:
    """What the carried path of ``function`` does not need once the
    ``selectors`` (``dispatch_locals``) are false: their assignments and
    those of locals read only there are dropped, and a copy
    ``x = y if L else z`` (once ``L`` is set aside, ``x = z``) of a local
    bound once is folded into ``z``'s binding, ``z`` read as ``x``."""
    body = function.child_by_field_name("body")
    assigned = _assigned_once(body)
    replaced: dict = {}
    targets = {t.id for nodes in assigned.values() for a in nodes
               for t in _target_identifiers(a.child_by_field_name("left"))}
    dead = set(selectors)
    while True:  # locals read only by dead assignments are dead too
        statements = [a for name in dead for a in assigned.get(name, [])]
        everywhere: dict[str, int] = {}
        outside: dict[str, int] = {}
        for current in _walk(body):
            if current.type != "identifier" or current.id in targets:
                continue
            everywhere[node_text(current)] = everywhere.get(node_text(current), 0) + 1
            if not any(a.start_byte <= current.start_byte < a.end_byte for a in statements):
                outside[node_text(current)] = outside.get(node_text(current), 0) + 1
        more = {name for name, nodes in assigned.items() if name not in dead and len(nodes) == 1
                and nodes[0].child_by_field_name("left").type == "identifier"
                and everywhere.get(name, 0) and not outside.get(name, 0)}
        if not more:
            break
        dead |= more
    for name in dead:
        for assignment in assigned.get(name, []):
            if assignment.parent is not None and assignment.parent.type == "expression_statement" \
                    and assignment.child_by_field_name("left").type == "identifier":
                replaced[assignment.parent.id] = []
    for name, nodes in assigned.items():
        if len(nodes) != 1 or nodes[0].parent is None or nodes[0].parent.id in replaced:
            continue
        right = nodes[0].child_by_field_name("right")
        if right is None or right.type != "conditional_expression" or len(right.named_children) != 3:
            continue
        kept, test = right.named_children[2], right.named_children[1]
        if test.type != "identifier" or node_text(test) not in selectors or kept.type != "identifier" \
                or len(assigned.get(node_text(kept), [])) != 1:
            continue
        source = node_text(kept)
        replaced[nodes[0].parent.id] = []
        for current in _walk(body):
            if current.type == "identifier" and node_text(current) == source:
                replaced[current.id] = [name]
    return replaced


def inlined_locals(old_body, new_body) -> dict:
    """Locals of ``old_body`` that ``new_body`` writes in place: ``x = E``
    read exactly once, as a whole argument, and absent from ``new_body``
    (``n = (a + b) // c; range(n)`` → ``range((a + b) // c)``). Maps the
    assignment statement and the read to what stands for them."""
    reads: dict[str, list] = {}
    assigned: dict[str, list] = {}
    for current in _walk(old_body):
        parent = current.parent
        if current.type != "identifier" or parent is None:
            continue
        if parent.type == "assignment" and parent.child_by_field_name("left") == current:
            assigned.setdefault(node_text(current), []).append(parent)
        elif not (parent.type == "attribute" and parent.child_by_field_name("attribute") == current
                  or parent.type == "keyword_argument" and parent.child_by_field_name("name") == current):
            reads.setdefault(node_text(current), []).append(current)
    present = {node_text(c) for c in _walk(new_body) if c.type == "identifier"}
    replaced: dict = {}
    for name, assignments in assigned.items():
        uses = reads.get(name, [])
        if len(assignments) != 1 or len(uses) != 1 or name in present:
            continue
        statement, use = assignments[0].parent, uses[0]
        right = assignments[0].child_by_field_name("right")
        if statement.type != "expression_statement" or right is None or use.parent is None \
                or use.parent.type != "argument_list" or use.start_byte < assignments[0].end_byte:
            continue
        replaced[statement.id] = []
        replaced[use.id] = [right]
    return replaced


def scoped_tokens(node, excluded: set[str], replaced: dict | None = None) -> list[str]:
    """The definition's tokens with what a not-carried declaration sets aside
    left out: parameters, keyword arguments and bare arguments named in
    ``excluded`` (normalised names), and the branches only such a name
    selects (``if SHUFFLED: A elif B: C`` keeps ``if B: C``; ``x if FP4 else
    y`` keeps ``y``). Two sides with equal lists differ only inside the
    declared scope. Python definitions; others are returned whole."""

    def excluded_name(expression) -> bool | None:
        """True for ``NAME``, False for ``not NAME`` (NAME excluded), else None."""
        if expression is None:
            return None
        if expression.type == "identifier" and normalise_name(node_text(expression)) in excluded:
            return True
        if expression.type == "not_operator":
            inner = expression.child_by_field_name("argument")
            return False if excluded_name(inner) is True else None
        if expression.type == "parenthesized_expression" and expression.named_child_count == 1:
            return excluded_name(expression.named_children[0])
        return None

    def expand(current):
        if replaced and current.id in replaced:
            return replaced[current.id]
        kind = current.type
        parent = current.parent
        if kind == "keyword_argument":
            return [] if normalise_name(node_text(current.child_by_field_name("name"))) in excluded else None
        if parent is not None and parent.type == "parameters" and _parameter_name(current) in excluded:
            return []
        if kind == "identifier" and parent is not None and parent.type == "argument_list" \
                and normalise_name(node_text(current)) in excluded:
            return []
        if kind == "if_statement":
            selected = excluded_name(current.child_by_field_name("condition"))
            if selected is None:
                return None
            clauses = [c for c in current.children if c.type in ("elif_clause", "else_clause")]
            if selected is False:  # `if not NAME:` is the carried path
                return [current.child_by_field_name("consequence")]
            if not clauses:
                return []
            if clauses[0].type == "else_clause":
                return [clauses[0].child_by_field_name("body")]
            first = clauses[0]
            return ["if"] + [c for c in first.children if c.type != "elif"] + clauses[1:]
        if kind == "conditional_expression" and len(current.named_children) == 3:
            selected = excluded_name(current.named_children[1])
            if selected is not None:
                return [current.named_children[2] if selected else current.named_children[0]]
        return None

    if not excluded and not replaced:
        return comment_free_tokens(node)
    # A constexpr alias the carried path binds once (``CHUNK_STRIDE:
    # tl.constexpr = ScaleKGranularity`` once the not-carried branch is gone)
    # is the name it aliases: constexprs are never rebound.
    seen: list = []
    comment_free_tokens(node, expand=lambda current: seen.append(current) or expand(current))
    targets: dict[str, list] = {}
    for current in seen:
        if current.type == "assignment" and current.child_by_field_name("left") is not None:
            left = current.child_by_field_name("left")
            targets.setdefault(node_text(left), []).append(current)
    aliases = {}
    for name, assignments in targets.items():
        if len(assignments) != 1:
            continue
        assignment = assignments[0]
        annotation, right = assignment.child_by_field_name("type"), assignment.child_by_field_name("right")
        if annotation is not None and "constexpr" in node_text(annotation) and right is not None \
                and right.type == "identifier" and right.start_byte != 0:
            aliases[name] = (node_text(right), assignment.parent)

    def expand_aliases(current):
        if any(current == statement for _, statement in aliases.values()):
            return []
        if current.type == "identifier" and node_text(current) in aliases:
            return [aliases[node_text(current)][0]]
        return expand(current)

    return comment_free_tokens(node, expand=expand_aliases) if aliases else comment_free_tokens(node, expand=expand)


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


def rebound_names(old_root, new_root, moved: dict[str, str] | None = None) -> list[str]:
    """Module-level names whose import binding differs between the two trees.

    ``moved`` maps a dotted module to the one it was renamed to, unchanged
    (a file move): an import that follows the move still binds the same code."""
    old, new = import_bindings(old_root), import_bindings(new_root)

    def target(bindings, name):
        found = bindings[name].target if name in bindings else None
        for before, after in (moved or {}).items():
            if found is not None and (found == before or found.startswith(before + ".")):
                return after + found[len(before):]
        return found

    return sorted(n for n in set(old) | set(new) if target(old, n) != target(new, n))


# --- derivations of launch arguments --------------------------------------------

_SHAPE_READS = frozenset({"shape", "stride", "size", "dim", "ndim", "numel", "dtype", "device",
                          "element_size", "itemsize", "is_contiguous"})
_PURE_CALLS = frozenset({"next_power_of_2", "next_pow2", "_next_pow2", "cdiv", "ceil_div", "div_ceil", "min",
                         "max", "int", "abs", "len", "round", "math.ceil", "math.floor", "math.log2"})


Step = Use
"""One assignment a derivation goes through: its line and the quoted source line."""


@dataclass(frozen=True)
class Derivation:
    """How a launch argument is computed: the assignments followed, and the
    terminals reached (shapes of parameters, constants, arguments the kernel
    already receives). ``derived`` is False when a terminal is a value a
    caller supplies (a parameter read as itself) or a name that cannot be resolved."""

    argument: str
    derived: bool
    steps: tuple[Step, ...]
    terminals: tuple[str, ...]
    reason: str = ""
    path: str = ""  # the file of the launching function, where the steps are


def _launch_calls(function, kernel: str):
    """``kernel[grid](...)`` calls in a Python function."""
    for current in nodes_of(function, ("call",), "python"):
        callee = current.child_by_field_name("function")
        if callee is None or callee.type != "subscript":
            continue
        value = callee.child_by_field_name("value")
        if value is not None and node_text(value).split(".")[-1] == kernel:
            yield current


def launch_argument(function, kernel: str, slot: str, position: int | None):
    """The expression a Python launch of ``kernel`` passes for parameter
    ``slot`` (normalised keyword) or at ``position``; and the launch's other
    argument texts (what the kernel already receives)."""
    for call in _launch_calls(function, kernel):
        arguments = call.child_by_field_name("arguments")
        if arguments is None:
            continue
        positional = [a for a in arguments.named_children if a.type not in ("keyword_argument", "comment")]
        chosen, others = None, []
        for argument in arguments.named_children:
            if argument.type == "keyword_argument":
                name = argument.child_by_field_name("name")
                value = argument.child_by_field_name("value")
                if name is not None and normalise_name(node_text(name)) == slot:
                    chosen = value
                elif value is not None:
                    others.append(node_text(value))
            elif argument.type != "comment":
                others.append(node_text(argument))
        if chosen is None and position is not None and position < len(positional):
            chosen = positional[position]
            others = [t for t in others if t != node_text(chosen)]
        if chosen is not None:
            return chosen, set(others)
    return None, set()


def launch_argument_texts(function, kernel: str, slot: str) -> list[str]:
    """The text each Python launch of ``kernel`` in ``function`` passes by keyword for ``slot``."""
    texts = []
    for call in _launch_calls(function, kernel):
        arguments = call.child_by_field_name("arguments")
        for argument in arguments.named_children if arguments is not None else ():
            name = argument.child_by_field_name("name") if argument.type == "keyword_argument" else None
            if name is not None and normalise_name(node_text(name)) == slot:
                texts.append(node_text(argument.child_by_field_name("value")))
    return texts


def derive(function, expression, received: set[str], depth: int = 8) -> Derivation:
    """Follow ``expression`` (a node inside ``function``) through local
    assignments to its terminals."""
    parameters = _python_parameters(_function_node(function))
    assignments = PythonLocals(_function_node(function))
    steps: list[Step] = []
    terminals: list[str] = []
    problems: list[str] = []
    seen: set[str] = set()

    def visit(node, level: int) -> None:
        if level > depth:
            problems.append(f"{node_text(node)} is derived too deeply to follow")
            return
        kind = node.type
        if kind in ("integer", "float", "true", "false", "none", "string"):
            terminals.append(node_text(node))
            return
        if kind == "attribute":
            attribute = node.child_by_field_name("attribute")
            obj = node.child_by_field_name("object")
            if attribute is not None and node_text(attribute) in _SHAPE_READS and obj is not None \
                    and obj.type == "identifier" and node_text(obj) in parameters:
                terminals.append(node_text(node))
                return
            problems.append(f"{node_text(node)} is read from outside the function")
            return
        if kind == "call":
            callee = node.child_by_field_name("function")
            name = node_text(callee) if callee is not None else ""
            if callee is not None and callee.type == "attribute":
                attribute = node_text(callee.child_by_field_name("attribute"))
                obj = callee.child_by_field_name("object")
                if attribute in _SHAPE_READS and obj is not None and obj.type == "identifier" \
                        and node_text(obj) in parameters:
                    terminals.append(node_text(node))
                    return
                name = f"{node_text(obj)}.{attribute}" if obj is not None else attribute
            if name.split(".")[-1] not in _PURE_CALLS and name not in _PURE_CALLS:
                problems.append(f"{name}(...) is not a known pure helper")
                return
            arguments = node.child_by_field_name("arguments")
            for argument in arguments.named_children if arguments is not None else ():
                visit(argument, level + 1)
            return
        if kind == "subscript":
            value = node.child_by_field_name("value")
            if value is not None:
                visit(value, level + 1)
            for index in node.children_by_field_name("subscript"):
                visit(index, level + 1)
            return
        if kind == "identifier":
            name = node_text(node)
            if name in received and level > 0:
                terminals.append(f"{name} (already passed to the kernel)")
                return
            reaching, _ = assignments.reaching(name, node)
            if reaching:
                if name in seen:
                    return
                seen.add(name)
                for statement, right in reaching:  # every assignment that can reach this read
                    steps.append(Step(statement.start_point[0] + 1, node_text(statement).strip()))
                    if right is None:
                        problems.append(f"{name} is updated in place ({node_text(statement).strip()})")
                    else:
                        visit(right, level + 1)
                return
            if name in parameters:
                problems.append(f"{name} is a parameter a caller supplies")
                return
            problems.append(f"{name} cannot be resolved in the launching function")
            return
        named = [c for c in node.named_children if c.type != "comment"]
        if not named:
            problems.append(f"{node_text(node)} cannot be followed")
            return
        for child in named:
            visit(child, level + 1)

    visit(expression, 0)
    steps.sort(key=lambda s: s.line)
    return Derivation(node_text(expression), not problems, tuple(steps), tuple(dict.fromkeys(terminals)),
                      "; ".join(problems[:2]))


def _derivation_words(derived: Derivation) -> str:
    """``(ARG) via `step`; `step` (from terminals)``: the derivation quoted."""
    return (f"({derived.argument})"
            + (f" via {'; '.join(f'`{s.quote}`' for s in derived.steps[:3])}" if derived.steps else "")
            + f" (from {', '.join(derived.terminals[:3])})")


def _derivation_evidence(derived: Derivation, name: str, what: str, path: str | None, symbol: str | None,
                         line: int | None = None) -> Evidence:
    """The record of a derived argument: the assignments it goes through on upstream's new side
    (``path``/``line`` where the derivation has no file or steps of its own)."""
    return Evidence(kind=Kind.DERIVATION, message=f"{what} computes {derived.argument} from "
                    + ", ".join(derived.terminals[:4]), side="upstream-new", path=derived.path or path,
                    line=derived.steps[0].line if derived.steps else line,
                    end_line=derived.steps[-1].line if derived.steps else None,
                    quote="; ".join(s.quote for s in derived.steps[:4]) or derived.argument,
                    symbol=symbol, subject=name, derived_from=derived.terminals)


# --- structural comparison against a port ------------------------------------------


def compare(old: Signature, new: Signature, port: Signature, index: TreeIndex | None = None,
            param_scope: Iterable[str] = (), derivation=None, upstream: str | None = None) -> list[Delta]:
    """Every structural delta of ``old`` → ``new``, placed against ``port``.
    ``derivation(name)`` says how upstream's launches compute a new parameter."""
    scope = _scope_names(param_scope)
    set_aside = {a.bare_symbol for a in index.anchors if a.kind == "not-carried" and not a.param
                 and (upstream is None or a.upstream == upstream)} if index is not None else set()
    items: list[Delta] = []
    items += [_both_sides(item, old, new) for item in _parameter_items(old, new, port, scope, derivation)]
    items += _launch_items(old, new, port, index, scope, derivation)
    items += _ruled(_program_id_items(old, new, port, set_aside), "program-decomposition")
    return items


_PARAMETER_KINDS = frozenset({Kind.PARAM_ADDED, Kind.PARAM_REMOVED, Kind.PARAM_DEAD, Kind.DEFAULT_CHANGED})


def _both_sides(item: Delta, old: Signature, new: Signature) -> Delta:
    """A parameter delta's upstream records carry both locations: the
    parameter's line on each side where it exists, else the signature's."""
    def located(record: Evidence) -> Evidence:
        if record.kind not in _PARAMETER_KINDS or record.before is not None or record.subject is None:
            return record
        before, after = old.param(normalise_name(record.subject)), new.param(normalise_name(record.subject))
        return replace(record, before=Location(Side.OLD, old.path, before.line if before else old.start_line,
                                               quote=before.quote if before else None),
                       after=Location(Side.NEW, new.path, after.line if after else new.start_line,
                                      quote=after.quote if after else None))

    return replace(item, evidence=[located(e) for e in item.evidence])


def _scope_changes(old_node, new_node) -> set[str]:
    """Normalised identifiers whose count differs between the two sides: the
    names a change confined to a declared scope is about."""
    from collections import Counter

    def names(node):
        return Counter(normalise_name(t) for t in comment_free_tokens(node) if re.fullmatch(r"[A-Za-z_]\w*", t))

    before, after = names(old_node), names(new_node)
    return {name for name in before | after if before[name] != after[name]}


def _scope_names(param_scope: Iterable[str]) -> set[str]:
    """The normalised parameter names ``[PARAM]`` declarations set aside."""
    return {normalise_name(p) for p in param_scope} | {normalise_name(re.split(r"[=\s]", p)[0]) for p in param_scope}


def _returned_instead(new: Signature, port: Signature, name: str) -> tuple[str, ...] | None:
    """The fields upstream writes through out-parameter ``name`` when a
    Python port returns every one of them (``return found, req_id, ...``):
    Triton has no out-pointers to structs, so returning them is the port's
    form of the same parameter, not a missing one."""
    fields = new.out_params.get(name)
    if fields and port.language == "python" and set(fields) <= set(port.returned):
        return fields
    return None


def _out_param_evidence(new: Signature, port: Signature, name: str) -> Evidence:
    return _upstream_param_evidence(
        new, name, "upstream-new", Kind.OUT_PARAM,
        f"upstream writes {', '.join(new.out_params[name])} through out-parameter {name}; "
        f"the port {port.name} returns {', '.join(port.returned)}")


def _upstream_param_evidence(signature: Signature, name: str, side: str, kind: str, message: str) -> Evidence:
    param = signature.param(name)
    return Evidence(kind=kind, message=message, side=side, path=signature.path,
                    line=param.line if param else signature.start_line, quote=param.quote if param else None,
                    symbol=signature.name, subject=param.name if param else name)


def _tree_param_evidence(port: Signature, name: str, message: str) -> list[Evidence]:
    param = port.param(name)
    found = [Evidence(kind=Kind.TREE_PARAM, message=message, side="tree", path=port.path,
                      line=param.line if param else port.start_line, quote=param.quote if param else None,
                      symbol=port.name, subject=param.name if param else name)]
    use = port.first_use.get(name)
    if use is not None:
        found.append(Evidence(kind=Kind.TREE_USE, message=f"the port still reads {name}", side="tree",
                              path=port.path, line=use.line, quote=use.quote, symbol=port.name,
                              subject=param.name if param else name))
    return found


def _parameter_items(old: Signature, new: Signature, port: Signature, scope: set[str],
                     derivation=None) -> list[Delta]:
    items: list[Delta] = []
    derived_params: list = []  # (label, derivation, evidence) of added parameters upstream computes itself
    # Triton to Triton, constexpr parameters compare too; across languages a
    # C++ template parameter and a tl.constexpr need not correspond.
    same_language = old.language == new.language == port.language
    old_names = old.param_names if same_language else old.runtime_param_names
    new_names = new.param_names if same_language else new.runtime_param_names
    for name in old_names:
        if name in new_names:
            continue
        kind = _param_kind(old.param(name))
        upstream = _upstream_param_evidence(old, name, "upstream-old", Kind.PARAM_REMOVED, f"upstream removed {kind} {name}")
        if name in scope:
            items.append(Delta("not-carried", "signature", name, [upstream]))
        elif port.param(name) is not None and old.param(name).heuristic:
            items.append(Delta("undecided", "signature", f"upstream removed {kind} {name}, which its @triton.heuristics "
                               "decorator computed from the kernel's own arguments; no caller passed it, so the "
                               "port still taking it is an implementation detail for a reader",
                               [upstream] + _tree_param_evidence(port, name, f"the port still takes {name}"),
                               rule="heuristic-parameter"))
        elif port.param(name) is not None:
            items.append(Delta("behind", "signature", f"{kind} {name} was removed upstream, the port still takes it",
                                    [upstream] + _tree_param_evidence(port, name, f"the port still takes {name}")))
        else:
            items.append(Delta("sync", "signature", f"the port does not take removed {kind} {name}", [upstream]))
    for name in new_names:
        if name in old_names:
            continue
        param = new.param(name)
        label = f"{name}{'=default' if param and param.has_default else ''}"
        upstream = _upstream_param_evidence(new, name, "upstream-new", Kind.PARAM_ADDED,
                                            f"upstream added {_param_kind(param)} {label}")
        if name in scope:
            items.append(Delta("not-carried", "signature", name, [upstream]))
        elif port.param(name) is not None:
            items.append(Delta("sync", "signature", f"the port already takes {label}",
                                    [upstream] + _tree_param_evidence(port, name, f"the port takes {name}")[:1]))
        elif _returned_instead(new, port, name):
            items.append(Delta("sync", "signature", f"the port returns what out-parameter {name} carries",
                                    [upstream, _out_param_evidence(new, port, name)]))
        else:
            lacks = Evidence(kind=Kind.TREE_SIGNATURE, message=f"the port's parameters lack {name}", side="tree",
                             path=port.path, line=port.start_line, quote=_signature_line(port), symbol=port.name)
            shared = len(set(old_names) & set(port.param_names))
            derived = derivation(name) if derivation and not (param is not None and param.heuristic) else None
            if derived is not None and derived.derived:
                # An argument computed only from shapes, constants and values
                # the kernel already receives is how upstream implements the
                # kernel, not an input the port's callers must now supply:
                # typed as derived, never as something the port lacks.
                mine = Evidence(kind=Kind.TREE_SIGNATURE, message=f"the port's own parameters, compared: {name} is "
                                "derived upstream, not an input its callers supply", side="tree", path=port.path,
                                line=port.start_line, quote=_signature_line(port), symbol=port.name)
                derived_params.append((f"{_param_kind(param)} {label}", derived,
                                       [upstream, mine, _derivation_evidence(derived, name, "upstream", new.path, new.name)]))
            elif old_names and shared * 2 < len(old_names):
                # A port that shares under half of upstream's parameters is a
                # redesign (a different tiling, a fused kernel): that it lacks
                # a new upstream parameter says nothing about its shape.
                items.append(Delta("undecided", "signature",
                                        f"upstream added {_param_kind(param)} {label}; the port shares only {shared} of "
                                        f"upstream's {len(old_names)} parameters (a redesign), so whether it needs "
                                        f"{name} is for a reader", [upstream, lacks], rule="redesigned-port"))
            elif param is not None and param.heuristic:
                # No launch passes it: the decorator derives it from
                # arguments the kernel already receives.
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which a @triton.heuristics decorator "
                                   "computes from the kernel's own arguments; no caller passes it, so it is an "
                                   "implementation detail for a reader to judge", [upstream, lacks],
                                   rule="heuristic-parameter"))
            else:
                items.append(Delta("behind", "signature",
                                        f"upstream added {_param_kind(param)} {label}, the port lacks it", [upstream, lacks]))
    if derived_params:
        # One record for them all, quoting each derivation: that the values
        # are computed from what the kernel receives is the whole argument.
        how = "; ".join(f"{label} {_derivation_words(derived)}" for label, derived, _ in derived_params)
        items.append(Delta("undecided", "signature",
                           f"upstream added {len(derived_params)} parameter{'s' if len(derived_params) > 1 else ''} "
                           f"computed only from what the kernel already receives, {how}; an implementation detail "
                           "for a reader to judge (at most NEEDS_REVIEW)",
                           [e for *_, evidence in derived_params for e in evidence], rule="derived-parameter"))
    defaults = len(items)
    for name in new_names:
        if name not in old_names:
            continue
        before, after = old.param(name), new.param(name)
        if before and after and before.has_default != after.has_default and name not in scope:
            mine = port.param(name)
            message = f"{name} {'gained' if after.has_default else 'lost'} its default upstream"
            upstream = _upstream_param_evidence(new, name, "upstream-new", Kind.DEFAULT_CHANGED, message)
            if mine is None:
                items.append(Delta("undecided", "signature", f"{message} and the port has no {name}", [upstream]))
            elif mine.has_default == after.has_default:
                items.append(Delta("sync", "signature", f"the port's {name} already matches", [upstream]))
            else:
                items.append(Delta("behind", "signature", f"{message}, the port's has not",
                                        [upstream] + _tree_param_evidence(port, name, f"the port's {name}")[:1]))
    _ruled(items[defaults:], "parameter-default")
    if not same_language:
        items += _ruled(_cross_language_constexpr_items(old, new, port, scope), "compile-time-parameter")
    dead = len(items)
    newly_dead = [n for n in new.dead_params if n not in old.dead_params and n in old_names]
    for name in newly_dead:
        use = old.first_use.get(name)
        written = new.param(name).name if new.param(name) else name
        upstream = [Evidence(kind=Kind.PARAM_DEAD, message=f"upstream now leaves {name} unused", side="upstream-new",
                             path=new.path, line=new.param(name).line if new.param(name) else new.start_line,
                             quote=new.param(name).quote if new.param(name) else None, symbol=new.name,
                             subject=written)]
        if use is not None:
            upstream.append(Evidence(kind=Kind.PARAM_USE_REMOVED, message=f"upstream used {name} here before",
                                     side="upstream-old", path=old.path, line=use.line, quote=use.quote,
                                     symbol=old.name, subject=written))
        if name in scope:
            items.append(Delta("not-carried", "signature", name, upstream))
        elif port.param(name) is None:
            items.append(Delta("sync", "signature", f"the port already dropped dead parameter {name}", upstream))
        elif name in port.dead_params:
            items.append(Delta("sync", "signature", f"the port also leaves {name} unused", upstream))
        else:
            items.append(Delta("behind", "signature", f"{name} is dead upstream, the port still takes and uses it",
                                    upstream + _tree_param_evidence(port, name, f"the port still takes {name}")))
    _ruled(items[dead:], "dead-input")
    return _ruled(items, "parameter-change")


def _cross_language_constexpr_items(old: Signature, new: Signature, port: Signature, scope: set[str]) -> list[Delta]:
    """C++ non-type template parameters against ``tl.constexpr`` (or the
    other way round). Both specialise a kernel at compile time, but a port
    in another language tiles its own way, so only a match by name decides
    (IN_SYNC); a template parameter the port lacks, or one upstream dropped
    that the port still takes, is for a reader, never a gap by itself."""
    items: list[Delta] = []
    was = {p.normalised for p in old.params if p.constexpr}
    now = {p.normalised for p in new.params if p.constexpr}
    for name in sorted(now - was - scope):
        param = new.param(name)
        upstream = _upstream_param_evidence(new, name, "upstream-new", Kind.PARAM_ADDED,
                                            f"upstream added constexpr parameter {name}")
        if port.param(name) is not None:
            items.append(Delta("sync", "signature", f"the port already takes constexpr {name}",
                                    [upstream] + _tree_param_evidence(port, name, f"the port takes {name}")[:1]))
        elif (own := equivalence.port_input_for_flag(name, old, port)) is not None:
            items.append(Delta("sync", "signature", f"upstream added the flag {name}, which the port already takes as "
                               f"its input {own} (the flag's name without its prefix, an input upstream did not have)",
                               [upstream] + _tree_param_evidence(port, own, f"the port takes {own}")[:1],
                               rule="port-has-flag"))
        else:
            items.append(Delta("undecided", "signature",
                                    f"upstream added {'template' if new.language == 'cpp' else 'constexpr'} parameter "
                                    f"{name}{'=default' if param and param.has_default else ''}; the "
                                    f"{port.language} port has no parameter of that name, and across languages a "
                                    "compile-time specialisation need not correspond, so it is for a reader",
                                    [upstream]))
    for name in sorted(was - now - scope):
        if port.param(name) is not None:
            items.append(Delta("undecided", "signature",
                                    f"upstream dropped constexpr parameter {name}; the port still takes {name}",
                                    [_upstream_param_evidence(old, name, "upstream-old", Kind.PARAM_REMOVED,
                                                              f"upstream removed constexpr parameter {name}")]
                                    + _tree_param_evidence(port, name, f"the port still takes {name}")[:1]))
    return items


def _param_kind(param) -> str:
    """How a message names a parameter: constexpr ones (``tl.constexpr``, C++
    non-type template parameters) are flagged, they specialise the kernel."""
    return "constexpr parameter" if param is not None and param.constexpr else "parameter"


def _signature_line(signature: Signature) -> str | None:
    return signature.params[0].quote if signature.params else None


def _first_line_quote(definition, signature) -> str | None:
    if signature is not None and signature.params:
        return signature.params[0].quote
    return None


def _launched_names(port: Signature, index: TreeIndex | None) -> dict[str, set[str]]:
    """kernel as written -> the names it stands for: its normalised name and
    the upstream symbols its in-tree definition ports."""
    names: dict[str, set[str]] = {}
    for launch in port.launches:
        bare = bare_name(launch.kernel)
        stands_for = {launch.kernel_normalised}
        if index is not None:
            stands_for |= {normalise_kernel_name(n) for n in index.upstream_symbols_ported_by(bare)}
        names[launch.kernel] = stands_for
    return names


def _launch_items(old: Signature, new: Signature, port: Signature, index: TreeIndex | None,
                  scope: set[str] = frozenset(), derivation=None) -> list[Delta]:
    if not old.launches and not new.launches:
        return []
    items: list[Delta] = []
    old_kernels = {l.kernel_normalised for l in old.launches}
    new_kernels = {l.kernel_normalised for l in new.launches}
    launched = _launched_names(port, index)
    port_stands_for = set().union(*launched.values()) if launched else set()
    cross = old.language != port.language
    pairs = _pair_launches(old.launches, new.launches)
    replaced = {(before.kernel_normalised, after.kernel_normalised): added for before, after in pairs
                if (added := _replaced_in_place(before, after)) is not None}
    # Kernels launched: added (a new sibling dispatched from the wrapper) and removed (a renamed kernel).
    for kernel in sorted(new_kernels - old_kernels):
        launch = next(l for l in new.launches if l.kernel_normalised == kernel)
        upstream = Evidence(kind=Kind.LAUNCH_KERNEL, message=f"upstream now launches {kernel}", side="upstream-new",
                            path=new.path, line=launch.line, quote=launch.quote, symbol=new.name)
        if kernel in port_stands_for:
            mine = next((l for l in port.launches if kernel in launched.get(l.kernel, set())), None)
            items.append(_new_kernel_grid_item(kernel, launch, mine, port, new, upstream))
        elif (swap := next(((was, added) for (was, now), added in replaced.items() if now == kernel), None)):
            items.append(Delta("undecided", "launch", _replacement_message(swap[0], kernel, swap[1]), [upstream]))
        else:
            tree = [_tree_launch_evidence(port, l, "the port launches this instead") for l in port.launches[:2]]
            if not tree:
                tree = [Evidence(kind=Kind.TREE_LAUNCH, message="the port launches no kernel", side="tree",
                                 path=port.path, line=port.start_line, symbol=port.name)]
            items.append(Delta("behind", "launch", f"upstream now launches {kernel}, the port does not", [upstream] + tree))
    for kernel in sorted(old_kernels - new_kernels):
        launch = next(l for l in old.launches if l.kernel_normalised == kernel)
        upstream = Evidence(kind=Kind.LAUNCH_KERNEL, message=f"upstream no longer launches {kernel}", side="upstream-old",
                            path=old.path, line=launch.line, quote=launch.quote, symbol=old.name)
        still = [l for l in port.launches if kernel in launched.get(l.kernel, set())]
        swap = next(((now, added) for (was, now), added in replaced.items() if was == kernel), None)
        if still and swap:
            items.append(Delta("undecided", "launch", _replacement_message(kernel, swap[0], swap[1]),
                               [upstream, _tree_launch_evidence(port, still[0], f"the port still launches {kernel}")]))
        elif still:
            items.append(Delta("behind", "launch", f"upstream stopped launching {kernel}, the port still launches it",
                                    [upstream] + [_tree_launch_evidence(port, l, f"the port still launches {kernel}") for l in still[:1]]))
        elif port.launches or new_kernels:
            items.append(Delta("sync", "launch", f"the port does not launch {kernel}", [upstream]))
    _ruled(items, "launch-kernel")
    # Launch geometry of a paired launch.
    for before, after in pairs:
        mine = _port_launch(port, launched, before, after)
        found = _ruled(_geometry_items(old, new, port, before, after, mine, cross, len(port.launches), index, scope,
                                       derivation), "launch-geometry")
        if (before.kernel_normalised, after.kernel_normalised) in replaced:
            # The replacement kernel's own parameter order is not the port's interface.
            found = [Delta("undecided", i.layer, f"{i.message}; {before.kernel_normalised} was replaced in place, "
                           "so this is for a reader", i.evidence, rule=i.rule) if i.status is Status.BEHIND else i
                     for i in found]
        items += found
    if not port.launches:
        # Same-module helpers are followed by the signature; a port that still
        # shows no launch launches through another module's helper: absence of
        # a launch here is not evidence of the old shape.
        items = [Delta("undecided", i.layer, f"{i.message.split(',')[0]}; the port launches no kernel itself "
                            "(a helper in another module may), so its launch cannot be compared", i.evidence,
                       rule=i.rule)
                 if i.status is Status.BEHIND else i for i in items]
    return items


def _new_kernel_grid_item(kernel: str, launch, mine, port: Signature, new: Signature, upstream: Evidence) -> Delta:
    """A kernel upstream now launches that the port already launches: the
    same only when the grids agree as canonical forms; otherwise the record
    says how they differ, with both sides' lines."""
    if mine is None or not launch.grid_form or not mine.grid_form:
        return Delta("sync", "launch", f"the port already launches {kernel}", [upstream])
    have = _renamed_form(mine.grid_form, _parameter_binding(port, new))
    if have == launch.grid_form:
        return Delta("sync", "launch", f"the port already launches {kernel}, with upstream's grid "
                     f"{launch.grid_text} modulo naming", [upstream])
    theirs = Evidence(kind=Kind.LAUNCH_GRID, message=f"upstream launches {kernel} with grid {launch.grid_text} "
                      f"(≡ {launch.grid_form})", side="upstream-new", path=new.path, line=launch.grid_line,
                      quote=launch.grid_quote, symbol=new.name, subject=launch.grid_text)
    ours = _tree_launch_evidence(port, mine, f"the port launches it with grid {mine.grid_text} (≡ {mine.grid_form})")
    ours = replace(ours, line=mine.grid_line, quote=mine.grid_quote)
    opaque = [o for o in mine.grid_opaque + launch.grid_opaque if o]
    how = f"goes through {', '.join(opaque[:2])}, which could not be resolved" if opaque else "differs"
    def shown(launched) -> str:  # the canonical form where it is short enough to read, else the source
        return launched.grid_form if len(launched.grid_form) <= 80 else launched.grid_text

    return Delta("undecided", "launch",
                 f"upstream now launches {kernel} with grid {shown(launch)} ({new.path}:{launch.grid_line}); the port "
                 f"launches it with grid {shown(mine)} ({port.path}:{mine.grid_line}), which {how}",
                 [upstream, theirs, ours])


def _replaced_in_place(before, after) -> tuple[str, ...] | None:
    """The arguments ``after`` adds when it launches another kernel from the
    same site as ``before`` with the same grid and every input ``before``
    passed; None when it is not such a replacement. Added arguments must be
    constants or computed from what ``before`` already passed: they carry
    nothing new from a caller, so such a swap changes no interface."""
    if before.kernel_normalised == after.kernel_normalised or not before.grid_form \
            or before.grid_form != after.grid_form or not set(before.texts) <= set(after.texts):
        return None
    added = tuple(t for t in after.texts if t not in before.texts)
    received = set().union(*(_names_read(t) or set() for t in before.texts))
    return added if all((names := _names_read(t)) is not None and names <= received for t in added) else None


# Callees an argument may use and still be computed from received values alone.
_PURE_ARGUMENT_CALLS = frozenset({"min", "max", "int", "bool", "abs", "len", "triton.cdiv", "triton.next_power_of_2"})


def _names_read(text: str) -> set[str] | None:
    """The names a Python argument expression reads (attribute reads by their
    object, known pure calls left out); None when it calls anything else or
    does not parse as a Python expression."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if ast.unparse(node.func) not in _PURE_ARGUMENT_CALLS:
                return None
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return names - {"triton"} - _PURE_ARGUMENT_CALLS


def _replacement_message(was: str, now: str, added: tuple[str, ...]) -> str:
    extra = f"; what it adds ({', '.join(added[:3])}) is constant or computed from those" if added else ""
    return (f"upstream replaced {was} with {now} at the same launch site, with the same grid and every input "
            f"{was} received{extra}: no caller-visible change, a reader must judge the refactor")


def _pair_launches(old_launches, new_launches):
    """Old and new launch sites of the same kernel, most alike first.

    A commit that adds a second launch of a kernel (a new dispatch branch,
    such as an FP4 path) keeps the old launch paired with the new site whose
    arguments it shares most, not with whichever comes first in the file.
    """
    pairs = []
    unmatched_old = list(old_launches)
    unmatched_new = list(new_launches)
    candidates = sorted(
        ((len(set(o.texts) & set(n.texts)), i, j) for i, o in enumerate(old_launches)
         for j, n in enumerate(new_launches) if o.kernel_normalised == n.kernel_normalised),
        key=lambda c: (-c[0], c[1], c[2]),
    )
    for _, i, j in candidates:
        partner, launch = old_launches[i], new_launches[j]
        if partner in unmatched_old and launch in unmatched_new:
            pairs.append((partner, launch))
            unmatched_old.remove(partner)
            unmatched_new.remove(launch)
    if len(unmatched_old) == 1 and len(unmatched_new) == 1:
        pairs.append((unmatched_old[0], unmatched_new[0]))  # a renamed kernel, same launch site
    return pairs


def _port_launch(port: Signature, launched, before, after):
    if len(port.launches) == 1:
        return port.launches[0]
    for launch in port.launches:
        stands_for = launched.get(launch.kernel, set())
        if before.kernel_normalised in stands_for or after.kernel_normalised in stands_for:
            return launch
    return None


def _tree_launch_evidence(port: Signature, launch, message: str) -> Evidence:
    return Evidence(kind=Kind.TREE_LAUNCH, message=message, side="tree", path=port.path, line=launch.line,
                    quote=launch.quote, symbol=port.name)


def _geometry_items(old, new, port, before, after, mine, cross: bool, port_launch_count: int,
                    index: TreeIndex | None = None, scope=frozenset(), derivation=None) -> list[Delta]:
    items: list[Delta] = []
    if before.grid_form and after.grid_form:
        # Compared modulo naming: a commit that only renames the locals a grid
        # is computed from (or respells cdiv) leaves the launch as it was.
        grid_changed = before.grid_form != after.grid_form
    else:
        grid_changed = before.grid_text.replace(" ", "") != after.grid_text.replace(" ", "") \
            or before.grid_identifiers != after.grid_identifiers
    was_at = Location(Side.OLD, old.path, before.grid_line or before.line, quote=before.grid_quote or before.quote)
    now_at = Location(Side.NEW, new.path, after.grid_line or after.line, quote=after.grid_quote or after.quote)
    was_message, now_message = f"upstream grid was {before.grid_text}", f"upstream grid is now {after.grid_text}"
    through: tuple[str, ...] = ()
    changed = _binding_change(before.grid_bindings, after.grid_bindings, old.path, new.path) \
        if grid_changed and _same_text(was_at.quote, now_at.quote) else None
    if changed is not None:
        # The line that writes the grid reads the same on both sides: the
        # change is the binding it resolves through, and the launch is context.
        through, was_at, now_at = changed
        names = ", ".join(through)
        was_message += f", through {names} ({_quoted(was_at)}); launch at {old.path}:{before.line}"
        now_message += f", through {names} ({_quoted(now_at)}); launch at {new.path}:{after.line}"
    upstream = [
        # The record cites the launch (reports quote its geometry lines from
        # there); the delta's two locations are the lines that changed: the
        # ones that write the grid, or the binding it changed through.
        Evidence(kind=Kind.LAUNCH_GRID, message=was_message, side="upstream-old",
                 path=old.path, line=before.line, quote=before.quote, symbol=old.name, subject=before.grid_text,
                 before=was_at, through=through),
        Evidence(kind=Kind.LAUNCH_GRID, message=now_message, side="upstream-new",
                 path=new.path, line=after.line, quote=after.quote, symbol=new.name, subject=after.grid_text,
                 before=was_at, after=now_at, through=through),
    ]
    if grid_changed:
        if mine is None:
            items.append(Delta("undecided", "launch",
                                    f"upstream changed the grid of {after.kernel_normalised} and the port has "
                                    f"{port_launch_count} launches none of which maps to it", upstream))
        else:
            items.append(replace(_grid_item(before, after, mine, port, cross, upstream, new), geometry=True))
    if before.grid_shape != after.grid_shape and before.grid_shape and after.grid_shape and mine is not None:
        tree = [_tree_launch_evidence(port, mine, f"the port's grid has {mine.grid_shape} axes")]
        if mine.grid_shape == after.grid_shape:
            items.append(Delta("sync", "launch", f"the port's grid already has {after.grid_shape} axes", upstream + tree))
        elif mine.grid_shape == before.grid_shape:
            items.append(Delta("behind", "launch",
                                    f"upstream grid went from {before.grid_shape} to {after.grid_shape} axes, the port's has "
                                    f"{before.grid_shape}", upstream + tree))
    for attribute in ("block", "num_warps", "num_stages"):
        was, now = getattr(before, attribute), getattr(after, attribute)
        have = getattr(mine, attribute) if mine is not None else None
        if attribute == "block" and (was is None or now is None) and before.block_form and after.block_form:
            # Threads per block through locals (``const int threads = 64``):
            # the canonical forms compare where a literal cannot be read.
            was, now = before.block_form, after.block_form
            have = (mine.block_form or None) if mine is not None else None
        if was == now or was is None or now is None or mine is None:
            continue
        if cross or have is None:
            continue  # CUDA threads and Triton warps do not compare
        was_at = Location(Side.OLD, old.path, before.line, quote=before.quote)
        now_at = Location(Side.NEW, new.path, after.line, quote=after.quote)
        through = ()
        changed = _binding_change(getattr(before, f"{attribute}_bindings"), getattr(after, f"{attribute}_bindings"),
                                  old.path, new.path) if _same_text(before.quote, after.quote) else None
        if changed is not None:  # threads per block (or warps, stages) changed in a local the launch line names
            through, was_at, now_at = changed
        tree = [Evidence(kind=Kind.LAUNCH_BLOCK, message=f"upstream {attribute} was {was}", side="upstream-old",
                         path=old.path, line=before.line, quote=before.quote, symbol=old.name, subject=attribute,
                         before=was_at if through else None, through=through),
                Evidence(kind=Kind.LAUNCH_BLOCK, message=f"upstream {attribute} is now {now}"
                         + (f", through {', '.join(through)}; launch at {new.path}:{after.line}" if through else ""),
                         side="upstream-new", path=new.path, line=after.line, quote=after.quote, symbol=new.name,
                         subject=attribute, before=was_at, after=now_at, through=through),
                _tree_launch_evidence(port, mine, f"the port's {attribute} is {have}")]
        if have == now:
            items.append(Delta("sync", "launch", f"the port's {attribute} is already {now}", tree))
        elif have == was:
            items.append(Delta("behind", "launch", f"upstream {attribute} went {was} → {now}, the port's is still {was}",
                                    tree, geometry=True))
    if mine is not None:
        launch = [Evidence(kind=Kind.LAUNCH_ARGUMENT, message=f"upstream's launch of {after.kernel_normalised}, whose "
                           "arguments changed",
                           side="upstream-new", path=new.path, line=after.line, quote=after.quote, symbol=new.name,
                           before=Location(Side.OLD, old.path, before.line, quote=before.quote),
                           after=Location(Side.NEW, new.path, after.line, quote=after.quote))]
        derived = (lambda name: derivation(name, after.kernel)) if derivation else None
        items += _ruled(_argument_items(before, after, mine, port, cross, launch, index,
                                        scope | _kernel_scope(index, after.kernel_normalised), derived),
                        "launch-arguments")
    return items


def _same_text(a: str | None, b: str | None) -> bool:
    return (a or "").replace(" ", "") == (b or "").replace(" ", "")


def _quoted(at: Location | None) -> str:
    return f"{at.path}:{at.line}: {at.quote}" if at is not None else "(no such binding on this side)"


def _binding_change(was, now, old_path: str, new_path: str):
    """The bindings (``Launch.grid_bindings``) whose value text differs
    between upstream's sides, and the old and new lines of the first of them
    that differ (None for a side the binding is absent from); None when no
    binding changed. Values compare as text without whitespace, so neither
    layout nor a comment on the line is a change."""
    before = {name: (line, quotes, text) for name, line, quotes, text in was}
    after = {name: (line, quotes, text) for name, line, quotes, text in now}
    names = [name for name in dict.fromkeys([*before, *after])
             if before.get(name, (0, (), None))[2] != after.get(name, (0, (), None))[2]]
    if not names:
        return None
    first = names[0]
    (old_line, old_quotes, _), (new_line, new_quotes, _) = before.get(first, (0, (), None)), after.get(first, (0, (), None))
    # The first line that differs, on each side, of a value that may span several.
    import difflib  # here: only a changed binding needs it, and most scans reach none

    i = j = 0
    opcode = next((o for o in difflib.SequenceMatcher(None, [q.replace(" ", "") for q in old_quotes],
                                                      [q.replace(" ", "") for q in new_quotes],
                                                      autojunk=False).get_opcodes() if o[0] != "equal"), None)
    if opcode is not None:
        i, j = min(opcode[1], len(old_quotes) - 1), min(opcode[3], len(new_quotes) - 1)
    was_at = Location(Side.OLD, old_path, old_line + i, quote=old_quotes[i]) if old_quotes else None
    now_at = Location(Side.NEW, new_path, new_line + j, quote=new_quotes[j]) if new_quotes else None
    return tuple(names), was_at, now_at


def _kernel_scope(index: TreeIndex | None, kernel: str) -> set[str]:
    """Parameters of the launched upstream kernel that in-tree ``not-carried
    ...::KERNEL[PARAM]`` declarations set aside: a launch passing them is
    passing a feature the port does not carry."""
    if index is None:
        return set()
    return {normalise_name(a.param) for a in index.anchors
            if a.kind == "not-carried" and a.param and normalise_name(a.bare_symbol) == kernel}


def _argument_items(before, after, mine, port, cross: bool, upstream, index, scope=frozenset(),
                    derivation=None) -> list[Delta]:
    """A launch gaining or losing an argument, placed against the port's launch.

    When both upstream launches' kernels are known, an argument is the kernel
    parameter it binds to (positional by index, keyword by name), so
    ``valid_counts.stride(0)`` appended to a launch is ``valid_counts_stride``
    even though ``valid_counts`` was already passed. Otherwise arguments
    compare by their first identifier, keyword names and normalised text.
    Arguments a ``[PARAM]`` not-carried declaration sets aside (``scope``) are
    not compared: the port does not carry that feature on purpose.
    """
    tree = _tree_launch_evidence(port, mine, "the port's launch")
    if before.bound is not None and after.bound is not None:
        have = _port_binding(mine, index)
        if have is not None:
            return _bound_items(before, after, mine, port, cross, upstream, have, scope, derivation)
    items: list[Delta] = []
    if not cross:
        added_keywords = set(_normalised_keywords(after)) - set(_normalised_keywords(before)) - scope
        derived = _derived_arguments(sorted(added_keywords - set(_normalised_keywords(mine))), derivation)
        if derived:
            added_keywords -= set(derived)
            items.append(_derived_arguments_item(derived, after.kernel_normalised, mine, port, upstream))
        if added_keywords:
            present = added_keywords & set(_normalised_keywords(mine))
            status = "sync" if present == added_keywords else "behind" if not present else "undecided"
            items.append(Delta(status, "launch",
                                    f"upstream's launch now passes {', '.join(sorted(added_keywords))}"
                                    + ("" if status == "behind" else "; the port passes it"), upstream + [tree]))
    removed_arguments = set(before.arguments) - set(after.arguments) - scope
    added_arguments = set(after.arguments) - set(before.arguments) - scope
    have = set(mine.arguments) | set(_normalised_keywords(mine))
    if removed_arguments or added_arguments:
        still = sorted(removed_arguments & have)
        if still and not (added_arguments & have):
            items.append(Delta("behind", "launch",
                                    f"upstream stopped passing {', '.join(still)} to the kernel, the port still passes it",
                                    upstream + [_tree_launch_evidence(port, mine, f"the port still passes {still[0]}")]))
        elif added_arguments and added_arguments <= have and not still:
            items.append(Delta("sync", "launch", f"the port already passes {', '.join(sorted(added_arguments))}",
                                    upstream))
    elif not cross and not items:
        # Same identifiers, different arguments (``x.stride(0)`` added next to
        # ``x``): the port passing the same expression is in sync; not passing
        # it is undecided, since the port may spell it differently.
        def texts(launch):  # a keyword a [PARAM] declaration sets aside passes nothing the port carries
            return [text for slot, text in zip(launch.slots, launch.texts) if slot not in scope]

        added_texts = sorted(set(texts(after)) - set(texts(before)))
        if added_texts and len(texts(after)) != len(texts(before)):
            present = [t for t in added_texts if t in mine.texts]
            status = "sync" if len(present) == len(added_texts) else "undecided"
            items.append(Delta(status, "launch", f"upstream's launch now passes {', '.join(added_texts)}"
                                    + ("; the port passes it too" if status == "sync" else
                                       "; the port's launch does not pass the same expression"), upstream + [tree]))
    return items


def _bound_items(before, after, mine, port, cross: bool, upstream, have: tuple[str, ...],
                 scope=frozenset(), derivation=None) -> list[Delta]:
    """Argument delta by the kernel parameters the arguments bind to."""
    items: list[Delta] = []
    removed = [p for p in before.bound if p not in after.bound and p not in scope and p != UNRESOLVED]
    added = [p for p in after.bound if p not in before.bound and p not in scope and p != UNRESOLVED]
    kernel = after.kernel_normalised
    renamed = _renamed_arguments(before, after, removed, added)
    if renamed:
        removed = [p for p in removed if p not in renamed]
        added = [p for p in added if p not in renamed.values()]
        pairs = ", ".join(f"{old} to {new}" for old, new in renamed.items())
        items.append(Delta("sync", "launch",
                                f"upstream renamed the parameter {pairs} of {kernel} and passes the same value; "
                                "a name alone asks nothing of the port's launch", upstream))
    still = [p for p in removed if p in have]
    if still:
        items.append(Delta("behind", "launch",
                                f"upstream stopped passing {', '.join(still)} to {kernel}, the port still passes it",
                                upstream + [_tree_launch_evidence(port, mine, f"the port still passes {still[0]}")]))
    elif removed:
        items.append(Delta("sync", "launch", f"the port does not pass {', '.join(removed)} either", upstream))
    present = [p for p in added if p in have]
    missing = [p for p in added if p not in have]
    derived = _derived_arguments(missing, derivation)
    if derived:
        missing = [p for p in missing if p not in derived]
        items.append(_derived_arguments_item(derived, kernel, mine, port, upstream))
    if present:
        items.append(Delta("sync", "launch", f"the port's launch already passes {', '.join(present)}",
                                upstream + [_tree_launch_evidence(port, mine, f"the port passes {present[0]}")]))
    if missing and UNRESOLVED in have:
        # A splat of unknown length: which parameter each later argument
        # fills is unknown, so the port may well pass it.
        splats = ", ".join(t for slot, t in zip(mine.slots, mine.texts) if slot in ("*", "**"))
        items.append(Delta("undecided", "launch",
                                f"upstream's launch now passes {', '.join(missing)} to {kernel}; the port's launch "
                                f"binds through {splats}, whose length could not be determined, so whether it "
                                "passes them is unresolved",
                                upstream + [_tree_launch_evidence(port, mine, f"the port's launch binds through {splats}")]))
    elif missing:
        # Across languages the port may pass it under another name: not
        # evidence of the old shape.
        status = "undecided" if cross else "behind"
        items.append(Delta(status, "launch",
                                f"upstream's launch now passes {', '.join(missing)} to {kernel}, the port's does not",
                                upstream + [_tree_launch_evidence(port, mine, f"the port's launch lacks {missing[0]}")]))
    return items


def _derived_arguments(names, derivation) -> dict:
    """The added launch arguments upstream computes only from shapes, constants and values the kernel
    already receives (normalised parameter -> Derivation)."""
    found = {}
    for name in names if derivation else ():
        derived = derivation(name)
        if derived is not None and derived.derived:
            found[name] = derived
    return found


def _derived_arguments_item(derived: dict, kernel: str, mine, port, upstream) -> Delta:
    """Added launch arguments that are implementation detail: for a reader, with each derivation quoted."""
    how = "; ".join(f"{name} {_derivation_words(d)}" for name, d in derived.items())
    launch = upstream[0] if upstream else None
    records = [_derivation_evidence(d, name, "upstream's launch", launch and launch.path, launch and launch.symbol,
                                    launch and launch.line) for name, d in derived.items()]
    tree = _tree_launch_evidence(port, mine, "the port's launch, compared: "
                                 f"{', '.join(derived)} {'is' if len(derived) == 1 else 'are'} derived upstream, "
                                 "not an input its callers supply")
    return Delta("undecided", "launch",
                 f"upstream's launch now passes {', '.join(derived)} to {kernel}, computed only from shapes, "
                 f"constants and values the kernel already receives, {how}; an implementation detail for a "
                 "reader to judge (at most NEEDS_REVIEW)", upstream + records + [tree], rule="derived-parameter")


def _renamed_arguments(before, after, removed, added) -> dict[str, str]:
    """Kernel parameters upstream renamed at the launch: a keyword that went
    away and one that came, passed the same argument text (``SEQ_LEN=t`` →
    ``T=t``); only pairs the text makes unique."""
    was = {slot: text for slot, text in zip(before.slots, before.texts) if slot in removed}
    now = {slot: text for slot, text in zip(after.slots, after.texts) if slot in added}
    renamed = {}
    for old, text in was.items():
        same = [new for new, other in now.items() if other == text]
        if len(same) == 1 and list(was.values()).count(text) == 1:
            renamed[old] = same[0]
    return renamed


def _port_binding(launch, index) -> tuple[str, ...] | None:
    """The parameters the port's launch binds to: from its own file, else
    from the in-tree definition of the launched kernel."""
    if launch.bound is not None:
        return launch.bound
    if index is None:
        return None
    bare = bare_name(launch.kernel)
    for definition in index.definitions_by_name.get(bare, []):
        if definition.kind not in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL):
            continue
        signature = index.signature_of(definition)
        if signature is not None:
            params = [p.normalised for p in signature.params
                      if not p.name.startswith("*") and (signature.language == "python" or not p.constexpr)]
            return bind_arguments(launch.slots, params)
    return None


def _normalised_keywords(launch):
    return [normalise_name(k) for k in launch.keywords]


def _grid_item(before, after, mine, port, cross: bool, upstream, new=None) -> Delta:
    tree = [_tree_launch_evidence(port, mine, f"the port's grid is {mine.grid_text}")]
    if before.grid_form and after.grid_form and mine.grid_form:
        decided = _grid_form_item(before, after, mine, port, new, upstream + tree)
        if decided is not None:
            return decided
    if not cross and mine.grid_text.replace(" ", "") == after.grid_text.replace(" ", ""):
        return Delta("sync", "launch", f"the port's grid is already {after.grid_text}", upstream + tree)
    if not cross and mine.grid_text.replace(" ", "") == before.grid_text.replace(" ", ""):
        return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}, the port's is "
                          f"still {mine.grid_text}", upstream + tree)
    if before.grid_form and after.grid_form and mine.grid_form:
        binding = _parameter_binding(port, new)
        added = set(after.grid_leaves) - set(before.grid_leaves)
        removed = set(before.grid_leaves) - set(after.grid_leaves)
        have = {binding.get(leaf, leaf) for leaf in mine.grid_leaves}
        before_terms = set(before.grid_leaves)
    else:
        added = set(after.grid_identifiers) - set(before.grid_identifiers)
        removed = set(before.grid_identifiers) - set(after.grid_identifiers)
        have = set(mine.grid_identifiers)
        before_terms = set(before.grid_identifiers)
    if not added and not removed:
        return Delta("undecided", "launch",
                          f"upstream grid went {before.grid_text} → {after.grid_text} with the same identifiers, and the "
                          f"port's grid {mine.grid_text} cannot be matched to either", upstream + tree)
    if added <= have and not (removed & have):
        return Delta("sync", "launch", f"the port's grid already uses {', '.join(sorted(added)) or 'the new terms'}",
                          upstream + tree)
    if not (added & have) and removed <= have and have & before_terms:
        what = ", ".join(sorted(added)) if added else "the new terms"
        return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}; the port's grid "
                          f"{mine.grid_text} lacks {what}", upstream + tree)
    return Delta("undecided", "launch",
                      f"upstream grid went {before.grid_text} → {after.grid_text} and the port's grid {mine.grid_text} "
                      "shares terms with both", upstream + tree)


def _parameter_binding(port: Signature, upstream: Signature | None) -> dict[str, str]:
    """The port's parameter names mapped to upstream's at the same position,
    where the names differ: the port mirrors upstream's interface, so a
    parameter it calls ``cu`` where upstream says ``cu_seq_lens`` is the
    same input, not a different grid term."""
    if upstream is None or len(port.params) != len(upstream.params):
        return {}
    theirs = set(upstream.param_names)
    return {mine.normalised: other.normalised for mine, other in zip(port.params, upstream.params)
            if mine.normalised != other.normalised and mine.normalised not in theirs}


def _renamed_form(form: str, binding: dict[str, str]) -> str:
    if not binding:
        return form
    return re.sub(r"[A-Za-z_]\w*", lambda m: binding.get(m.group(0), m.group(0)), form)


def _grid_form_item(before, after, mine, port, new, evidence) -> Delta | None:
    """The grid compared as canonical expressions (``portq.language.expressions``):
    equal to upstream's new form is IN_SYNC, equal to its old form is behind,
    whatever the locals are called; a form the port computes through
    something unresolved cannot be placed. None: let the terms decide."""
    binding = _parameter_binding(port, new)
    have = _renamed_form(mine.grid_form, binding)
    shown = f"{mine.grid_text} (≡ {mine.grid_form})" if mine.grid_form != mine.grid_text and not mine.grid_opaque \
        and len(mine.grid_form) <= 80 else mine.grid_text
    unknown = before.grid_form.startswith("?") or after.grid_form.startswith("?")  # which value reaches depends on the path
    if have == after.grid_form and not unknown:
        return Delta("sync", "launch", f"the port's grid {shown} is upstream's new grid {after.grid_text} modulo "
                          "naming", evidence)
    if have == before.grid_form and not unknown:
        return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}, the port's "
                          f"grid {shown} is still the old one", evidence)
    if "oneof(" in have:  # a helper that returns different grids: the set, never one member's identifiers
        return Delta("undecided", "launch",
                     f"upstream grid went {before.grid_text} → {after.grid_text} (≡ {after.grid_form}); the port's grid "
                     f"{mine.grid_text} ({port.path}:{mine.grid_line}) is one of several forms, {have}, by path",
                     evidence)
    shared = _shared_unresolved(before, after) if not unknown else []
    if shared:
        old_form, new_form = _set_aside(before.grid_form, shared), _set_aside(after.grid_form, shared)
        aside = f"leaving aside {', '.join(shared[:2])}, unresolved but the same on both upstream sides"
        if old_form != new_form and _fits(new_form, have, mine.grid_opaque):
            return Delta("sync", "launch", f"upstream grid went {before.grid_text} → {after.grid_text}; {aside}, the "
                         f"port's grid {shown} is upstream's new grid modulo naming", evidence)
        if old_form != new_form and _fits(old_form, have, mine.grid_opaque):
            return Delta("behind", "launch", f"upstream grid went {before.grid_text} → {after.grid_text} (≡ "
                         f"{before.grid_form} → {after.grid_form}); {aside}, the port's grid {shown} is still the old one",
                         evidence)
    opaque = [o for o in mine.grid_opaque + after.grid_opaque + (before.grid_opaque if unknown else ()) if o]
    if opaque:
        unresolved = Evidence(kind=Kind.UNRESOLVED, side="tree" if mine.grid_opaque else "upstream-new",
                              path=port.path if mine.grid_opaque else new.path if new else None,
                              line=mine.grid_line if mine.grid_opaque else after.grid_line,
                              quote=mine.grid_quote if mine.grid_opaque else after.grid_quote,
                              message=f"the grid goes through {', '.join(opaque[:3])}, which could not be resolved",
                              subject=", ".join(opaque[:3]))
        return Delta("undecided", "launch",
                          f"upstream grid went {before.grid_text} → {after.grid_text}; the port's grid {shown} goes through "
                          f"{', '.join(opaque[:2])}, which could not be resolved, so it cannot be compared",
                          evidence + [unresolved])
    return None


_HOLE = "\x00"


def _shared_unresolved(before, after) -> list[str]:
    """The unresolved sub-expressions of upstream's grid (as its canonical
    form spells them) that are the same on both sides: what changed lies
    elsewhere, in the resolved part, where it can be compared. Empty when
    either side has none, or when what could not be resolved changed too."""
    if not before.grid_opaque or set(before.grid_opaque) != set(after.grid_opaque):
        return []
    units: list[str] = []
    for opaque in dict.fromkeys(before.grid_opaque):
        unit_before, unit_after = _unit_in(before.grid_form, opaque), _unit_in(after.grid_form, opaque)
        if unit_before is None or unit_before != unit_after \
                or before.grid_form.count(unit_before) != after.grid_form.count(unit_after):
            return []
        units.append(unit_before)
    return units


def _unit_in(form: str, opaque: str) -> str | None:
    """The text of an unresolved call or leaf inside a canonical form: its
    name with the argument list that follows it."""
    name = opaque[:-len("(...)")] if opaque.endswith("(...)") else opaque
    start = form.find(name)
    if not name or start < 0:
        return None
    end = start + len(name)
    if end < len(form) and form[end] == "(":
        depth = 0
        for position in range(end, len(form)):
            depth += {"(": 1, ")": -1}.get(form[position], 0)
            if depth == 0:
                return form[start:position + 1]
        return None
    return form[start:end]


def _set_aside(form: str, units: list[str]) -> str:
    for unit in sorted(units, key=len, reverse=True):
        form = form.replace(unit, _HOLE)
    return form


def _fits(template: str, form: str, port_opaque) -> bool:
    """``form`` is ``template`` with every hole filled by one and the same
    operand (balanced, one argument): the port's own value where upstream's
    could not be resolved. What the port could not resolve must sit in it."""
    pieces = template.split(_HOLE)
    pattern = re.escape(pieces[0]) + "".join(("(.+?)" if i == 0 else r"\1") + re.escape(piece)
                                             for i, piece in enumerate(pieces[1:]))
    match = re.fullmatch(pattern, form, flags=re.DOTALL)
    if match is None or len(pieces) < 2:
        return False
    filling = match.group(1)
    depth = 0
    for character in filling:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(character, 0)
        if depth < 0 or (depth == 0 and character == ","):
            return False
    names = [o[:-len("(...)")] if o.endswith("(...)") else o for o in port_opaque if o]
    return depth == 0 and all(name in filling for name in names)


def _program_id_items(old: Signature, new: Signature, port: Signature, set_aside=frozenset()) -> list[Delta]:
    """Program-id decomposition, num_programs and early exits. What upstream
    does inside a helper the tree declares not carried (``set_aside``: an
    MXFP4 implementation the kernel dispatches to) is not the port's concern."""
    items: list[Delta] = []

    def carried(decomposition) -> bool:
        return not (set(decomposition.via.split(" > ")) & set_aside) if decomposition.via else True

    before = {(d.axis, d.operator, d.operand) for d in old.decomposition if carried(d)}
    after = {(d.axis, d.operator, d.operand) for d in new.decomposition if carried(d)}
    have = {(d.axis, d.operator, d.operand) for d in port.decomposition}
    if before != after:
        evidence = [Evidence(kind=Kind.PROGRAM_ID, message=f"upstream decomposes program_id({d.axis}) {d.operator} {d.operand}",
                             side="upstream-new", path=new.path, line=d.line, quote=d.quote, symbol=new.name)
                    for d in new.decomposition if carried(d) and (d.axis, d.operator, d.operand) not in before][:2]
        evidence += [Evidence(kind=Kind.PROGRAM_ID, message=f"the port decomposes program_id({d.axis}) {d.operator} {d.operand}",
                              side="tree", path=port.path, line=d.line, quote=d.quote, symbol=port.name)
                     for d in port.decomposition][:2]
        added, removed = after - before, before - after
        if have == after or (added and added <= have and not (removed & have)):
            items.append(Delta("sync", "launch", "the port already decomposes the program id the new way", evidence))
        elif have == before or (not (added & have) and removed <= have and have & before):
            items.append(Delta("behind", "launch",
                                    "upstream changed how the work is packed into program_id (" +
                                    ", ".join(f"{o} {x}" for _, o, x in sorted(added)) + "), the port still decomposes it the old way",
                                    evidence))
        else:
            items.append(Delta("undecided", "launch",
                                    "upstream changed the program-id decomposition and the port's matches neither side",
                                    evidence))
    for attribute, label in (("num_programs_axes", "num_programs"), ("program_id_axes", "program_id axes")):
        was, now, mine = set(getattr(old, attribute)), set(getattr(new, attribute)), set(getattr(port, attribute))
        if was == now or old.language != new.language:
            continue
        if mine == now:
            items.append(Delta("sync", "launch", f"the port's {label} already match", []))
        elif mine == was:
            items.append(Delta("behind", "launch", f"upstream {label} went {sorted(was)} → {sorted(now)}, the port's are "
                                    f"{sorted(mine)}", []))
    guards_added = set(new.early_exit_guards) - set(old.early_exit_guards)
    if guards_added and new.is_kernel:
        exit_line = new.early_exits[-1] if new.early_exits else None
        line_evidence = [Evidence(kind=Kind.EARLY_EXIT, message=f"upstream kernel now returns early on {', '.join(sorted(guards_added))}",
                                  side="upstream-new", path=new.path, line=exit_line.line if exit_line else new.start_line,
                                  quote=exit_line.quote if exit_line else None, symbol=new.name)]
        if guards_added & set(port.early_exit_guards):
            items.append(Delta("sync", "launch", "the port has the same early-exit guard", line_evidence))
        elif not before ^ after:
            items.append(Delta("undecided", "launch", f"upstream added an early exit on {', '.join(sorted(guards_added))}",
                                    line_evidence))
    return items
