"""Guard rules: a test that only decides whether a no-op runs decides nothing (DESIGN §5, provable no-ops).

* ``identity-shortcut`` (Python): a block guarded by a test that is false
  only where a value ``g`` is one (``g != 1``, ``torch.ne(g, one)``, ``not
  torch.equal(g, one)``, ``not (g == 1)``, ``(g != 1).any()``) and that only
  scales memory in place by ``g`` is the identity wherever the guard skips
  it: the guard is a short-cut around a multiplication by one. Rewriting
  the guard between two such tests changes when the no-op is skipped, never
  what the definition leaves behind, on every input the old test accepted
  (``torch.ne`` of a many-element tensor raises where ``torch.equal`` answers;
  the new form runs the same scaling there). The two sides must be the same
  token for token but for that one condition, with no ``else``/``elif``; and
  the block may only
    - bind locals that nothing outside it reads, from expressions whose
      calls read sizes or compute with them (``x.shape``, ``x.stride(-1)``,
      ``min``, ``triton.next_power_of_2``, a query with no arguments such as
      ``is_hip()``),
    - branch on call-free tests (``if w is not None:``) into blocks of the
      same kind, and
    - launch a Triton kernel (of the same file, or imported, at the same
      commit) that is passed ``g`` only as one parameter, and whose every
      store writes back, to the address and under the mask it loaded from,
      the loaded value times ``tl.load(that parameter)``, calling nothing but
      ``tl`` functions and ``.to`` and storing nothing else.
  Multiplying a value by one gives it back exactly (a float times ``1.0`` is
  that float, through any widening and the store's cast back), so every
  such store leaves memory as it was. A test false anywhere else (``g >
  1``), a constant other than one, a kernel that adds or writes elsewhere,
  any other statement in the block, or a local read after it stays flagged.

Example diff (NOT_APPLICABLE/cosmetic)::

    -    if torch.ne(g, torch.tensor(1.0, device=g.device)):
    +    if not torch.equal(g, torch.tensor(1.0, device=g.device)):
             scale_rows_kernel[(rows,)](grad_x, grad_x.stride(-2), g, n, BLOCK=block)

    (scale_rows_kernel: s = tl.load(g_ptr); v = tl.load(x_ptr + offs, mask=m); tl.store(x_ptr + offs, v * s, mask=m))

* ``lacked-guard`` (Python): a change confined to what the ``with`` statements
  of a definition enter (their context-manager expressions; the blocks and the
  names they bind unchanged), where the port's definition has no ``with`` at
  all, lies in a statement the port does not have: NOT_APPLICABLE/not-carried.

Example diff (NOT_APPLICABLE/not-carried for a port that launches unguarded)::

    -    with torch.cuda.device(x.device):
    +    with device_fn.device(x.device):
             k[grid](x, n)

This module states the rules and holds their proofs on syntax trees; ``GuardRules``
(a part of the verdict table ``portq.classifier.verdicts.SymbolClassifier``)
reads the two sides and the kernels' files through the table. It imports no
verdict table, reads no git itself, and never names a corpus symbol, path or
commit.
"""

from __future__ import annotations

from collections.abc import Callable

from portq.classifier.imports import import_bindings, reexport_target
from portq.classifier.reading import _if_bodies
from portq.classifier.rules import Rule
from portq.core.model import TouchedSymbol
from portq.language.signatures import comment_free_tokens, node_text, walk

RULES = (
    Rule("identity-shortcut", ("NOT_APPLICABLE",),
         "A Python definition whose only change is the test of one `if` (no `else`), where each side's test is "
         "false only where a value `g` is one (`g != 1`, `torch.ne(g, one)`, `not torch.equal(g, one)`) and the "
         "block only binds locals nothing else reads, branches on call-free tests and launches Triton kernels "
         "that store back each loaded value times `tl.load` of the parameter passed `g`, skips only a "
         "multiplication by one either way: the same result on every input the old test accepted, cosmetic.",
         "-    if torch.ne(g, torch.tensor(1.0, device=g.device)):\n"
         "+    if not torch.equal(g, torch.tensor(1.0, device=g.device)):\n"
         "         scale_rows_kernel[(rows,)](x, x.stride(-2), g, n, BLOCK=block)",
         "classifier.rules.guards.shortcut_guard, classifier.rules.guards.GuardRules._identity_shortcut"),
    Rule("lacked-guard", ("NOT_APPLICABLE",),
         "A Python definition whose only change is the context managers of `with` statements (what they enter, "
         "never what they bind) around unchanged blocks, whose port has no `with` statement at all, changed a "
         "statement the port does not have: NOT_APPLICABLE/not-carried. A port with a guard, a changed block, or "
         "a guard binding another name stays flagged.",
         "-    with torch.cuda.device(x.device):\n+    with device_fn.device(x.device):\n"
         "         k[grid](x, n)   (the port launches k without a guard)",
         "classifier.rules.guards.guard_only_change, classifier.rules.guards.GuardRules._lacked_guard"),
)

_PURE_FUNCTIONS = frozenset({"min", "max", "len", "int", "float", "abs", "round", "range"})
"""Builtins that compute a value from their arguments and touch nothing else."""

_PURE_METHODS = frozenset({"next_power_of_2", "cdiv", "stride", "size", "numel", "dim", "element_size",
                           "is_contiguous"})
"""Methods and module functions that read a size or compute with sizes (``x.stride(-2)``,
``triton.next_power_of_2(n)``)."""

_QUERY_PREFIXES = ("is_", "has_")
"""A call with no arguments of a helper so named asks a question of the environment (``is_hip()``)."""

_DIFFERS = frozenset({"ne", "not_equal"})
_EQUALS = frozenset({"eq", "equal"})
_STORE_OPTIONS = frozenset({"mask", "eviction_policy", "cache_modifier"})


def _unwrapped(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _arguments(call) -> tuple[list, dict]:
    """A call's positional arguments and keyword name -> value node (comments left out)."""
    arguments = call.child_by_field_name("arguments")
    positional, keywords = [], {}
    for argument in arguments.named_children if arguments is not None else ():
        if argument.type == "comment":
            continue
        if argument.type == "keyword_argument":
            keywords[node_text(argument.child_by_field_name("name"))] = argument.child_by_field_name("value")
        else:
            positional.append(argument)
    return positional, keywords


def _is_one(node) -> bool:
    """``1``, ``1.0`` or ``torch.tensor(1.0, device=..., dtype=...)``: the multiplicative identity."""
    node = _unwrapped(node)
    if node is None:
        return False
    if node.type in ("integer", "float"):
        try:
            return float(node_text(node)) == 1.0
        except ValueError:
            return False
    if node.type == "call" and node_text(node.child_by_field_name("function")) == "torch.tensor":
        positional, keywords = _arguments(node)
        return len(positional) == 1 and set(keywords) <= {"device", "dtype"} and _is_one(positional[0])
    return False


def _operand_against_one(left, right) -> str | None:
    """The identifier compared with one, in either order; None otherwise."""
    left, right = _unwrapped(left), _unwrapped(right)
    for value, constant in ((left, right), (right, left)):
        if value is not None and value.type == "identifier" and _is_one(constant):
            return node_text(value)
    return None


def _comparison(node, names: frozenset[str], operator: str) -> str | None:
    """The operand ``g`` of ``node`` when it compares ``g`` with one by ``operator`` (``!=`` or ``==``), written
    as the operator, ``torch.NAME(g, one)`` or ``g.NAME(one)`` for a ``NAME`` of ``names``."""
    node = _unwrapped(node)
    if node is None:
        return None
    if node.type == "comparison_operator":
        operators = [c for c in node.children if not c.is_named]
        if len(operators) == 1 and node_text(operators[0]) == operator and node.named_child_count == 2:
            return _operand_against_one(*node.named_children)
        return None
    if node.type != "call":
        return None
    function = node.child_by_field_name("function")
    positional, keywords = _arguments(node)
    if function is None or function.type != "attribute" or keywords:
        return None
    method = node_text(function.child_by_field_name("attribute"))
    owner = function.child_by_field_name("object")
    if method not in names:
        return None
    if node_text(owner) == "torch" and len(positional) == 2:
        return _operand_against_one(*positional)
    if owner.type == "identifier" and len(positional) == 1:
        return _operand_against_one(owner, positional[0])
    return None


def differs_from_one(condition) -> str | None:
    """The identifier ``g`` when ``condition`` is false only where ``g`` is one (every element of it): ``g !=
    1``, ``torch.ne(g, one)``, ``g.ne(one)``, ``not torch.equal(g, one)``, ``not (g == one)``, ``(g !=
    one).any()``, ``torch.any(g != one)``; None for anything else."""
    condition = _unwrapped(condition)
    if condition is None:
        return None
    if condition.type == "not_operator":
        return _comparison(condition.child_by_field_name("argument"), _EQUALS, "==")
    direct = _comparison(condition, _DIFFERS, "!=")
    if direct is not None or condition.type != "call":
        return direct
    function = condition.child_by_field_name("function")
    positional, keywords = _arguments(condition)
    if function is None or function.type != "attribute" or keywords \
            or node_text(function.child_by_field_name("attribute")) != "any":
        return None
    if node_text(function.child_by_field_name("object")) == "torch" and len(positional) == 1:
        return _comparison(positional[0], _DIFFERS, "!=")
    if not positional:
        return _comparison(function.child_by_field_name("object"), _DIFFERS, "!=")
    return None


def _pure(expression) -> bool:
    """True when evaluating ``expression`` only reads: its calls are size reads, builtins that compute, or
    queries with no arguments."""
    for node in walk(expression):
        if node.type in ("lambda", "await", "yield", "named_expression"):
            return False
        if node.type != "call":
            continue
        function = node.child_by_field_name("function")
        positional, keywords = _arguments(node)
        if function is None:
            return False
        if function.type == "identifier":
            name = node_text(function)
            if name in _PURE_FUNCTIONS or (name.startswith(_QUERY_PREFIXES) and not positional and not keywords):
                continue
            return False
        if function.type == "attribute":
            name = node_text(function.child_by_field_name("attribute"))
            if name in _PURE_METHODS or (name.startswith(_QUERY_PREFIXES) and not positional and not keywords):
                continue
        return False
    return True


def _stored_names(target) -> list[str] | None:
    """The identifiers an assignment target binds (``a``, ``a, b``, ``(a, b)``); None for anything else."""
    target = _unwrapped(target)
    if target is None:
        return None
    if target.type == "identifier":
        return [node_text(target)]
    if target.type in ("pattern_list", "tuple_pattern"):
        names = [_stored_names(c) for c in target.named_children]
        return None if any(n is None for n in names) else [n for group in names for n in group]
    return None


def _identifiers(node) -> set[str]:
    return {node_text(n) for n in walk(node) if n.type == "identifier"} if node is not None else set()


def _launched(statement):
    """``(kernel name, call node)`` of an expression statement ``K[grid](...)``; None otherwise."""
    call = statement.named_children[0] if statement.named_child_count == 1 else None
    if call is None or call.type != "call":
        return None
    function = call.child_by_field_name("function")
    if function is None or function.type != "subscript":
        return None
    kernel = function.child_by_field_name("value")
    if kernel is None or kernel.type != "identifier":
        return None
    grid = [c for c in function.named_children if c.id != kernel.id]
    if not all(_pure(g) for g in grid):
        return None
    return node_text(kernel), call


def _kernel_parameters(kernel) -> list[str]:
    parameters = kernel.child_by_field_name("parameters")
    names = []
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type == "identifier":
            names.append(node_text(parameter))
        elif parameter.type in ("typed_parameter", "default_parameter", "typed_default_parameter"):
            name = parameter.child_by_field_name("name") or next(
                (c for c in parameter.named_children if c.type == "identifier"), None)
            names.append(node_text(name))
        else:
            return []
    return names


def _function(node):
    return node.child_by_field_name("definition") if node is not None and node.type == "decorated_definition" \
        else node


def scales_in_place(kernel, parameter: str) -> bool:
    """True when a Triton kernel's every store writes back, to the address and under the mask it loaded from,
    the loaded value times ``tl.load(parameter)``, and it calls nothing but ``tl`` functions and ``.to`` (no
    atomics, no other store), never rebinding ``parameter``. With that parameter pointing at a one, it leaves
    memory as it was."""
    kernel = _function(kernel)
    body = kernel.child_by_field_name("body") if kernel is not None else None
    if body is None or parameter not in _kernel_parameters(kernel):
        return False
    scales: set[str] = set()
    assigned: dict[str, int] = {}
    for node in walk(body):
        if node.type in ("assignment", "augmented_assignment"):
            names = _stored_names(node.child_by_field_name("left")) or ["<target>"]
            for name in names:
                assigned[name] = assigned.get(name, 0) + 1
            value = _unwrapped(node.child_by_field_name("right"))
            if node.type == "assignment" and len(names) == 1 and value is not None and value.type == "call" \
                    and node_text(value.child_by_field_name("function")) == "tl.load":
                positional, keywords = _arguments(value)
                if len(positional) == 1 and not keywords and node_text(positional[0]) == parameter:
                    scales.add(names[0])
        elif node.type in ("global_statement", "nonlocal_statement", "delete_statement"):
            return False
    if parameter in assigned:
        return False
    scales = {name for name in scales if assigned.get(name) == 1}
    stores = 0
    for node in walk(body):
        if node.type != "call":
            continue
        function = node_text(node.child_by_field_name("function"))
        if function == "tl.store":
            if not _stores_back_scaled(node, scales):
                return False
            stores += 1
        elif not (function.startswith("tl.") and not function.startswith("tl.atomic")) \
                and not function.endswith(".to") and function not in ("range", "min", "max"):
            return False
    return stores > 0


def _stores_back_scaled(store, scales: set[str]) -> bool:
    """``tl.store(p, v * s, mask=m)`` where ``s`` is a scale and ``v`` was last bound, in the same block and with
    nothing ``p`` or ``m`` reads rebound since, to ``tl.load(p, mask=m[, other=...])``."""
    positional, keywords = _arguments(store)
    names = ("pointer", "value", "mask")
    bound = dict(zip(names, positional))
    for key, value in keywords.items():
        if key in bound or key not in set(names) | _STORE_OPTIONS:
            return False
        bound[key] = value
    pointer, value, mask = bound.get("pointer"), _unwrapped(bound.get("value")), bound.get("mask")
    if pointer is None or value is None or value.type != "binary_operator" \
            or node_text(value.child_by_field_name("operator")) != "*":
        return False
    left, right = (_unwrapped(value.child_by_field_name(side)) for side in ("left", "right"))
    if left is None or right is None or left.type != "identifier" or right.type != "identifier":
        return False
    if node_text(right) in scales:
        loaded = node_text(left)
    elif node_text(left) in scales:
        loaded = node_text(right)
    else:
        return False
    statement = store.parent
    if statement is None or statement.type != "expression_statement" or statement.parent is None:
        return False
    block = [s for s in statement.parent.named_children if s.type != "comment"]
    read = _identifiers(pointer) | (_identifiers(mask) if mask is not None else set())
    for earlier in reversed(block[:block.index(statement)] if statement in block else []):
        if earlier.type != "expression_statement" or earlier.named_child_count != 1:
            return False  # a loop or branch between the load and the store: not followed
        assignment = earlier.named_children[0]
        if assignment.type not in ("assignment", "augmented_assignment"):
            continue
        stored = set(_stored_names(assignment.child_by_field_name("left")) or ["<target>"])
        if stored == {loaded} and assignment.type == "assignment":
            load = _unwrapped(assignment.child_by_field_name("right"))
            if load is None or load.type != "call" or node_text(load.child_by_field_name("function")) != "tl.load":
                return False
            load_positional, load_keywords = _arguments(load)
            load_pointer = load_positional[0] if load_positional else load_keywords.get("pointer")
            load_mask = load_positional[1] if len(load_positional) > 1 else load_keywords.get("mask")
            return load_pointer is not None and node_text(load_pointer) == node_text(pointer) \
                and node_text(load_mask) == node_text(mask)
        if stored & (read | {loaded}) or "<target>" in stored:
            return False
    return False


def _guarded_ifs(node) -> list:
    return [n for n in walk(node) if n.type == "if_statement"]


def shortcut_guard(old, new) -> tuple[object, object, str] | None:
    """``(old if, new if, g)`` when two Python definitions differ only in the test of one ``if`` with no
    ``else``/``elif``, and each side's test is false only where ``g`` is one (``differs_from_one``); None
    otherwise."""
    old, new = _function(old), _function(new)
    if old is None or new is None or old.has_error or new.has_error:
        return None
    before, after = _guarded_ifs(old), _guarded_ifs(new)
    if len(before) != len(after):
        return None
    changed = [(a, b) for a, b in zip(before, after)
               if comment_free_tokens(a.child_by_field_name("condition"))
               != comment_free_tokens(b.child_by_field_name("condition"))]
    if len(changed) != 1:
        return None
    was, now = changed[0]
    if any(c.type in ("elif_clause", "else_clause") for statement in (was, now) for c in statement.children):
        return None
    operand = differs_from_one(was.child_by_field_name("condition"))
    if operand is None or operand != differs_from_one(now.child_by_field_name("condition")):
        return None

    def without(condition):
        return lambda current: ["<guard>"] if current.id == condition.id else None

    if comment_free_tokens(old, expand=without(was.child_by_field_name("condition"))) \
            != comment_free_tokens(new, expand=without(now.child_by_field_name("condition"))):
        return None
    return was, now, operand


def identity_at_one(function, guard, operand: str, kernel_of: Callable[[str], object | None]) -> list[str] | None:
    """The kernels the block of ``guard`` (an ``if`` of ``function``) launches, when that block leaves memory and
    every name read outside it as they were wherever ``operand`` is one (see the module); None otherwise."""
    function = _function(function)
    block = guard.child_by_field_name("consequence")
    if block is None:
        return None
    outside: set[str] = set()
    stack = [function.child_by_field_name("body")]
    while stack:
        current = stack.pop()
        if current.id == block.id:
            continue
        if current.type == "identifier":
            outside.add(node_text(current))
        stack.extend(current.children)
    writes = [n for n in walk(function) if n.type in ("assignment", "augmented_assignment", "for_statement")
              and operand in _identifiers(n.child_by_field_name("left"))]
    if writes:
        return None
    launched: list[str] = []
    return launched if _block_is_identity(block, operand, outside, kernel_of, launched) else None


def _block_is_identity(block, operand: str, outside: set[str], kernel_of, launched: list[str]) -> bool:
    for statement in block.named_children:
        if statement.type in ("comment", "pass_statement"):
            continue
        if statement.type == "if_statement":
            condition = statement.child_by_field_name("condition")
            if any(n.type == "call" for n in walk(condition)) or not _pure(condition):
                return False
            bodies = _if_bodies(statement)
            if any(c.type == "elif_clause" and any(n.type == "call" for n in walk(c.child_by_field_name("condition")))
                   for c in statement.children):
                return False
            if not all(body is not None and _block_is_identity(body, operand, outside, kernel_of, launched)
                       for body in bodies):
                return False
            continue
        if statement.type != "expression_statement" or statement.named_child_count != 1:
            return False
        inner = statement.named_children[0]
        if inner.type == "string":
            continue
        if inner.type == "assignment":
            names = _stored_names(inner.child_by_field_name("left"))
            value = inner.child_by_field_name("right")
            if names is None or value is None or operand in names or set(names) & outside or not _pure(value):
                return False
            continue
        launch = _launched(statement)
        if launch is None:
            return False
        name, call = launch
        kernel = kernel_of(name)
        parameters = _kernel_parameters(_function(kernel)) if kernel is not None else []
        positional, keywords = _arguments(call)
        if not parameters or len(positional) > len(parameters) \
                or any(a.type in ("list_splat", "dictionary_splat") for a in positional):
            return False
        bound = dict(zip(parameters, positional))
        bound.update(keywords)
        scaled = [p for p, value in bound.items() if operand in _identifiers(value)]
        if len(scaled) != 1 or node_text(_unwrapped(bound[scaled[0]])) != operand:
            return False
        if not all(_pure(value) for p, value in bound.items() if p != scaled[0]):
            return False
        if not scales_in_place(kernel, scaled[0]):
            return False
        launched.append(name)
    return True


def module_definition(root, name: str):
    """The module-level function ``name`` of a syntax tree's root (decorated or not), or None."""
    for statement in root.named_children if root is not None else ():
        function = _function(statement)
        if function is not None and function.type == "function_definition" \
                and node_text(function.child_by_field_name("name")) == name:
            return statement
    return None


def _parsed_definition(text: str):
    import ast
    import textwrap

    try:
        return ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None


def guard_only_change(old_text: str, new_text: str, port_text: str) -> tuple[str, str] | None:
    """``(old items, new items)`` of the first ``with`` whose context managers differ, when a definition's
    change is confined to the context-manager expressions of its ``with`` statements (the blocks, the names
    they bind and everything else the same ``ast``) and its port's definition holds no ``with`` statement
    (``lacked-guard``); None otherwise."""
    import ast

    old, new, port = (_parsed_definition(t) for t in (old_text, new_text, port_text))
    if old is None or new is None or port is None or any(isinstance(n, (ast.With, ast.AsyncWith))
                                                         for n in ast.walk(port)):
        return None

    def withs(tree):
        return [n for n in ast.walk(tree) if isinstance(n, (ast.With, ast.AsyncWith))]

    def without_managers(tree):
        tree = ast.parse(ast.unparse(tree))
        for node in withs(tree):
            for item in node.items:
                item.context_expr = ast.Constant(value=None)
        return ast.dump(tree)

    before, after = withs(old), withs(new)
    if not before or len(before) != len(after) or without_managers(old) != without_managers(new):
        return None
    changed = [(b, a) for b, a in zip(before, after)
               if [ast.dump(i.context_expr) for i in b.items] != [ast.dump(i.context_expr) for i in a.items]]
    if not changed:
        return None
    was, now = changed[0]
    return ", ".join(ast.unparse(i) for i in was.items), ", ".join(ast.unparse(i) for i in now.items)


class GuardRules:
    """The verdict table's decisions for ``identity-shortcut`` and ``lacked-guard`` (see the module)."""

    def _lacked_guard(self, symbol: TouchedSymbol, definition) -> tuple[str, str] | None:
        """``guard_only_change`` of a modified Python symbol against its Python port; None when it does not hold."""
        from portq.language.symbols import language_for_path

        if language_for_path(symbol.path) != "python" or language_for_path(definition.file) != "python":
            return None
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        mine = self._port_node(definition)
        if before is None or after is None or before.node is None or after.node is None or mine is None:
            return None
        # A method's node starts at its column: indent its first line as the rest are, so it parses alone.
        return guard_only_change(*(" " * n.start_point[1] + n.text.decode("utf-8", errors="replace")
                                   for n in (before.node, after.node, mine)))

    def _identity_shortcut(self, entry, symbol: TouchedSymbol) -> tuple[str, str, str, list[str]] | None:
        """``(old test, new test, g, kernels)`` when the symbol's change is a guard rewritten between two tests
        for one around a block that only scales by ``g`` (``shortcut_guard``, ``identity_at_one``) on both
        sides; else None."""
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return None
        before, after = sides
        found = shortcut_guard(before.node, after.node)
        if found is None:
            return None
        was, now, operand = found
        commits = (entry.commit.parents[0] if entry.commit.parents else None, entry.commit.sha)
        launched: list[str] = []
        for commit, blob, path, definition, guard in (
                (commits[0], symbol.old_blob, symbol.old_path or symbol.path, before, was),
                (commits[1], symbol.new_blob, symbol.path, after, now)):
            table = self._table(blob, path)
            if table is None or table.tree is None or commit is None:
                return None
            kernels = identity_at_one(definition.node, guard, operand,
                                      self._kernel_reader(table.tree.root_node, path, commit))
            if kernels is None:
                return None
            launched = kernels
        return (node_text(was.child_by_field_name("condition")), node_text(now.child_by_field_name("condition")),
                operand, list(dict.fromkeys(launched)))

    def _kernel_reader(self, root, path: str, commit: str) -> Callable[[str], object | None]:
        """``kernel_of(name)``: the module-level definition a name of the file at ``root`` calls, in that file or
        where its import leads (through modules that only re-export it), read at ``commit``."""

        def read_root(other: str):
            table = self._parsed_table(f"{commit}:{other}", other)
            return table.tree.root_node if table is not None else None

        def kernel_of(name: str):
            own = module_definition(root, name)
            if own is not None:
                return own
            binding = import_bindings(root).get(name)
            if binding is None:
                return None
            stem, _, target = reexport_target(binding.target, path, read_root).rpartition(":")
            if not stem:
                return None
            for candidate in (stem + ".py", stem + "/__init__.py"):
                found = read_root(candidate)
                if found is not None:
                    return module_definition(found, target)
            return None

        return kernel_of
