"""Declared-scope rule: a change confined to what the tree declares it does not carry (DESIGN §6).

A ``not-carried UPSTREAM::PATH::NAME[PARAM]`` declaration says the port
leaves out one input of an upstream definition (a flag, a mode) and every
path it selects. A change that only touches that surface (the parameter,
the arguments passing it, the branches and locals it selects, a helper
those moved into) is the declaration's business, not the port's.

Example diff (NOT_APPLICABLE/not-carried with ``not-carried ...::k[use_fp4]``)::

    +    if use_fp4:
    +        k_fp4[grid](x, scale)
    +        return

This module states the rule and holds the proofs on syntax trees that a
change is so confined (tokens with the declared surface left out, locals
that select a branch, calls that only forward); ``ScopeRules`` is the part
of the verdict table (``portq.classifier.verdicts.SymbolClassifier``) that
asks them. It reads no git, imports no verdict table, and never names a
corpus symbol, path or commit.
"""

from __future__ import annotations

import re
from typing import Iterable

from portq.classifier.reading import _anchor_evidence, _changed_lines, _file_change, _is_code_line, _walk_nodes
from portq.classifier.rules import Rule
from portq.classifier.rules.cosmetic import _function_body, _parameter_name, _target_identifiers, _walk
from portq.core.evidence import Evidence, Kind
from portq.core.model import TouchedSymbol
from portq.language.signatures import Signature, comment_free_tokens, is_docstring, node_text, normalise_name
from portq.language.symbols import language_for_path

RULES = (
    Rule("declared-scope", ("NOT_APPLICABLE",),
         "Every change confined to parameters the tree declares not carried (`not-carried K[PARAM]`), the "
         "arguments passing them and the branches they select is NOT_APPLICABLE/not-carried.",
         "+    if use_fp4: k_fp4[grid](...); return  (`not-carried ...::k[use_fp4]`)",
         "classifier.rules.scope.ScopeRules._confined_to_scope, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
)


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


class ScopeRules:
    """The declared-scope rule, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _confined_to_scope(self, symbol: TouchedSymbol, old: Signature, new: Signature, param_scope: set[str]):
        """``(declared names, declaration records)`` when the old and new
        definitions are equal once what the tree declares not carried is set
        aside: this symbol's ``[PARAM]`` declarations and those of the kernels
        it launches. None when something else changed too."""
        declarations = [a for a in self.index.anchors if a.kind == "not-carried" and a.param
                        and a.upstream == self.upstream and (
            a.matches_name(symbol.name, symbol.qualified_name)
            or normalise_name(a.bare_symbol) in {l.kernel_normalised for l in old.launches + new.launches})]
        if not declarations or language_for_path(symbol.path) != "python":
            return None
        excluded = _scope_names({a.param for a in declarations} | set(param_scope))
        sides = self._both_sides(symbol, parsed=True)
        if sides is None:
            return None
        before, after = sides
        moved, selected = None, {}
        if scoped_tokens(before.node, excluded) != scoped_tokens(after.node, excluded):
            selected = self._selected_by_locals(before.node, after.node, excluded)
            if selected:
                excluded = excluded | {normalise_name(n) for n in selected}
            else:
                moved = self._moved_into_helper(symbol, before.node, after.node, excluded)
                if moved is None:
                    return None
        changes = _scope_changes(before.node, after.node) | ({normalise_name(moved[1])} if moved and moved[1] else set())
        touched = sorted({a.param for a in declarations if normalise_name(a.param) in excluded
                          and normalise_name(a.param) in changes})
        if not touched:
            return None
        used = [a for a in declarations if a.param in touched]
        records = [_anchor_evidence(a, f"not-carried declaration of {a.param}", Kind.NOT_CARRIED) for a in used[:4]]
        for name, line in sorted(selected.items()):
            records.append(Evidence(kind=Kind.NOT_CARRIED, side="upstream-new", path=symbol.path, line=line,
                                    symbol=symbol.name, subject=name,
                                    message=f"{name} selects only the branch at line {line}, which launches with "
                                    "a declared not-carried parameter set and returns: its other uses are that path"))
        if moved is not None:
            helper, _, inlined, line = moved
            note = f"the carried body moved into {helper} unchanged" + (
                f" but for the local {', '.join(inlined)} written in place" if inlined else "")
            records.append(Evidence(kind=Kind.COSMETIC, message=note, side="upstream-new", path=symbol.path, line=line,
                                    symbol=helper, subject=helper))
        return touched, records

    @staticmethod
    def _selected_by_locals(before, after, excluded: set[str]) -> dict[str, int]:
        """The new locals (``dispatch_locals``) that, set aside with what they
        select, leave ``after`` equal to ``before``; empty when there are none
        or something else changed too."""
        before = before.child_by_field_name("definition") if before.type == "decorated_definition" else before
        after = after.child_by_field_name("definition") if after.type == "decorated_definition" else after
        old_names = {node_text(c) for c in _walk_nodes(before) if c.type == "identifier"}
        selectors = {n: line for n, line in dispatch_locals(after, excluded).items() if n not in old_names}
        if not selectors:
            return {}
        wider = excluded | {normalise_name(n) for n in selectors}
        replaced = carried_path_rewrites(after, set(selectors))
        if scoped_tokens(before, wider) != scoped_tokens(after, wider, replaced):
            return {}
        return selectors

    def _moved_into_helper(self, symbol: TouchedSymbol, before, after, excluded: set[str]):
        """``(helper, dispatch condition or None, inlined locals, helper line)``
        when ``after`` only forwards its parameters to a function of the same
        file (behind a not-carried ``if NAME:``) whose body is ``before``'s,
        modulo what the declarations set aside and single-use locals written
        in place; None otherwise."""
        before = before.child_by_field_name("definition") if before.type == "decorated_definition" else before
        after = after.child_by_field_name("definition") if after.type == "decorated_definition" else after
        found = forwarding_call(after, excluded)
        if found is None or scoped_tokens(before.child_by_field_name("parameters"), excluded) \
                != scoped_tokens(after.child_by_field_name("parameters"), excluded):
            return None
        callee, forwarded = found
        helper = self._definition(symbol.new_blob, symbol.path, callee, None)
        node = helper.node if helper is not None else None
        node = node.child_by_field_name("definition") if node is not None and node.type == "decorated_definition" else node
        if node is None or node.has_error or node.child_by_field_name("body") is None:
            return None
        parameters = [_parameter_name(p) for p in node.child_by_field_name("parameters").named_children
                      if p.type != "comment"]
        own = {_parameter_name(p) for p in after.child_by_field_name("parameters").named_children if p.type != "comment"}
        if parameters != [normalise_name(n) for n in forwarded] or not set(parameters) <= own:
            return None  # the helper's parameters are the kernel's, bound to themselves
        old_body, new_body = before.child_by_field_name("body"), node.child_by_field_name("body")
        replaced = inlined_locals(old_body, new_body)
        if scoped_tokens(old_body, excluded, replaced) != scoped_tokens(new_body, excluded):
            return None
        inlined = sorted(node_text(c.child_by_field_name("left")) for c in _walk_nodes(old_body)
                         if c.type == "assignment" and c.parent is not None and c.parent.id in replaced)
        branch = after.child_by_field_name("body").named_children[0]
        condition = node_text(branch.child_by_field_name("condition")) if branch.type == "if_statement" else None
        return callee, condition, inlined, helper.start_line

    def _changes_only_mention(self, entry, symbol, names: set[str]) -> bool:
        change = _file_change(entry, symbol)
        changed = _changed_lines(change, symbol, None, None, outside_definitions=False)
        code = [text for _, _, text in changed if _is_code_line(text, symbol.path)]
        return bool(code) and all(any(name in text for name in names) for text in code)


def _literal_values(node) -> frozenset[str] | None:
    """The element texts of a list, set or tuple literal of numbers and strings; None for anything else."""
    if node is None or node.type not in ("list", "set", "tuple") or node.named_child_count == 0:
        return None
    if any(c.type not in ("integer", "float", "string") for c in node.named_children):
        return None
    return frozenset(node_text(c) for c in node.named_children)


def _membership(condition, operator: str):
    """``(name, values)`` for a condition ``NAME in LITERAL`` (``operator`` ``"in"``) or ``NAME not in
    LITERAL`` (``"not in"``); None for anything else."""
    if condition is None or condition.type != "comparison_operator" or condition.named_child_count != 2:
        return None
    operators = [c.type for c in condition.children if not c.is_named]
    name, literal = condition.named_children
    if operators != [operator] or name.type != "identifier":
        return None
    values = _literal_values(literal)
    return None if values is None else (node_text(name), values)


def _bound_counts(body) -> dict[str, int]:
    """How often each name is a target of an assignment, loop, walrus, ``with ... as`` or nested definition in
    ``body`` (every identifier inside a target counts, so a subscripted store counts its index too)."""
    counts: dict[str, int] = {}
    for current in _walk_nodes(body):
        targets = []
        if current.type in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
            targets = [current.child_by_field_name("left")]
        elif current.type == "named_expression":
            targets = [current.child_by_field_name("name")]
        elif current.type == "as_pattern_target":
            targets = [current]
        elif current.type in ("function_definition", "class_definition", "parameters", "lambda_parameters"):
            targets = [current.child_by_field_name("name")] if current.type.endswith("definition") else [current]
        for target in targets:
            for node in _walk_nodes(target) if target is not None else ():
                if node.type == "identifier":
                    counts[node_text(node)] = counts.get(node_text(node), 0) + 1
    return counts


def asserted_values(function, declared: set[str]) -> dict[str, frozenset[str]]:
    """Rule ``declared-off-read``: for each name ``declared`` (normalised) that a Python function binds at most
    once and asserts, in a statement of its own body, to lie in a literal (``assert NAME in {16, 32}``), the
    values it admits."""
    body = _function_body(function)
    if body is None:
        return {}
    bound = _bound_counts(body)
    found: dict[str, frozenset[str]] = {}
    for statement in body.named_children:
        if statement.type != "assert_statement" or not statement.named_children:
            continue
        test = _membership(statement.named_children[0], "in")
        if test is not None and normalise_name(test[0]) in declared and bound.get(test[0], 0) <= 1:
            found[test[0]] = found[test[0]] & test[1] if test[0] in found else test[1]
    return found


def off_path_reads(function, word: str, admitted: dict[str, frozenset[str]]) -> int | None:
    """Rule ``declared-off-read``: how many times a Python function reads the name ``word`` (an identifier
    not in attribute position), each inside the body of an ``if NAME not in LITERAL:`` whose ``NAME`` the
    function binds at most once and whose every value the port admits (``admitted``, from
    ``asserted_values``) lies in ``LITERAL``, so that for the port the branch is never taken. None when any
    read lies elsewhere."""
    body = _function_body(function)
    if body is None:
        return None
    bound = _bound_counts(body)
    if bound.get(word):
        return None  # a local of that name is not the module binding
    reads = 0
    for current in _walk_nodes(body):
        if current.type != "identifier" or node_text(current) != word:
            continue
        parent = current.parent
        if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") is not None \
                and parent.child_by_field_name("attribute").id == current.id:
            continue  # `tl.NAME` names a member, not the module binding
        guarded, node = False, current
        while node is not None and node.id != body.id:
            block = node
            node = node.parent
            if node is not None and node.type == "if_statement" \
                    and node.child_by_field_name("consequence") is not None \
                    and node.child_by_field_name("consequence").id == block.id:
                test = _membership(node.child_by_field_name("condition"), "not in")
                if test is not None and test[0] in admitted and bound.get(test[0], 0) <= 1 \
                        and admitted[test[0]] <= test[1]:
                    guarded = True
                    break
        if not guarded:
            return None
        reads += 1
    return reads
