"""Deltas: what an upstream change did to a definition, proven on its syntax
tree, before any verdict is taken.

Three questions the verdict table needs answered from the tree rather than
from a guess: is the change a semantic no-op (locals renamed consistently,
unused locals renamed, import statements that bind the same names); which
module-level names does a change of imports make resolve differently; and is
a value upstream now passes to a kernel derived only from what the launching
function already has (shapes, strides, constants, values the kernel already
receives), or is it a new input a caller supplies.

This module reads tree-sitter nodes handed to it; it must not read blobs,
know about anchors or the tree, or decide a verdict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum

from portq.signatures import Use, comment_free_tokens, node_text, normalise_name


class Status(str, Enum):
    """Where one delta leaves the port."""

    BEHIND = "behind"  # the port still has the old shape
    SYNC = "sync"  # the port already has the new shape
    UNDECIDED = "undecided"  # the comparison cannot place the port
    NOT_CARRIED = "not-carried"  # the delta lies in a surface the tree declares out of scope


@dataclass
class Delta:
    """One structural change upstream made, placed against one port: the
    verdict table (``portq.verdicts``) decides from these, never from prose."""

    status: Status
    layer: str  # signature | launch: the decided_by of a verdict this delta decides
    message: str
    evidence: list = field(default_factory=list)  # portq.evidence.Evidence records, both sides' locations
    geometry: bool = False  # a grid or block delta: what a launch rewrite turns on, so named first

    def __post_init__(self) -> None:
        self.status = Status(self.status)


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


def local_names(node, language: str) -> set[str]:
    """Names a definition binds as its own locals (not parameters, globals or fields)."""
    function = _function_node(node)
    names: set[str] = set()
    if language == "python":
        declared_outer: set[str] = set()
        for current in _walk(function):
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
    for current in _walk(body):
        if current.type in ("init_declarator", "declaration", "for_range_loop"):
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


def scoped_tokens(node, excluded: set[str]) -> list[str]:
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

    if not excluded:
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


def alpha_hash(node, language: str) -> str:
    return hashlib.sha1("\x1f".join(alpha_tokens(node, language)).encode()).hexdigest()


def renamed_locals(old_node, new_node, language: str) -> list[tuple[str, str]] | None:
    """The (old, new) local renamings that make the two definitions equal, or
    None when they differ by more than a consistent renaming of locals."""
    if alpha_tokens(old_node, language) != alpha_tokens(new_node, language):
        return None
    old_tokens, new_tokens = comment_free_tokens(old_node), comment_free_tokens(new_node)
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


def rebound_names(old_root, new_root) -> list[str]:
    """Module-level names whose import binding differs between the two trees."""
    old, new = import_bindings(old_root), import_bindings(new_root)
    return sorted(n for n in set(old) | set(new)
                  if (old.get(n).target if n in old else None) != (new.get(n).target if n in new else None))


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


def _python_assignments(function) -> dict[str, list]:
    """name -> the right-hand sides assigned to it (tuple unpacks map each name to the whole right side)."""
    found: dict[str, list] = {}
    for current in _walk(function):
        if current.type != "assignment":
            continue
        left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
        if left is None or right is None:
            continue
        for identifier in _target_identifiers(left):
            found.setdefault(node_text(identifier), []).append((current, right))
    return found


def _launch_calls(function, kernel: str):
    """``kernel[grid](...)`` calls in a Python function."""
    for current in _walk(function):
        if current.type != "call":
            continue
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


def derive(function, expression, received: set[str], depth: int = 8) -> Derivation:
    """Follow ``expression`` (a node inside ``function``) through local
    assignments to its terminals."""
    parameters = _python_parameters(_function_node(function))
    assignments = _python_assignments(_function_node(function))
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
            if name in assignments:
                if name in seen:
                    return
                seen.add(name)
                for statement, right in assignments[name]:
                    steps.append(Step(statement.start_point[0] + 1, node_text(statement).strip()))
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
