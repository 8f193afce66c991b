"""Callees: what a Python function does for one value of an argument its
caller sees, followed into the helpers it calls.

A ported wrapper can stay token-for-token the same while the helper it calls
gains a path: ``rotate_style == NEOX`` used to raise and now launches a
kernel. Neither a signature nor a launch list says so; walking the wrapper
with that argument fixed does. ``outcomes`` walks a function's statements
with some parameters bound to values (the rest unknown), evaluates the
conditions it can (literals, module constants, enum members, ``==``, ``!=``,
``is``, ``in``, ``not``, ``and``/``or``), explores both branches of those it
cannot, follows calls to functions of the same module or imported from a
sibling module, and records where each path can end: a kernel launch
(``k[grid](...)``) or a ``raise``.

``callee_deltas`` turns that into typed deltas for the verdict table: a
value of a caller-visible argument that used to reach no launch through the
helper and now reaches one is a new path; the port walked the same way with
its counterpart argument fixed to that value either launches a kernel of its
own there, one it does not launch for the helper's other values (``sync``),
certainly raises (``behind``), or cannot be placed (``undecided``, saying
why: no counterpart argument, only the kernel it launches for every value,
only conditional ends, a tree that did not parse).

This module reads tree-sitter nodes of the symbol tables handed to it; it
reads no blobs and decides no verdict.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import Callable

from portq.core.evidence import Evidence, Kind, Location, Side
from portq.language.signatures import node_text as _text
from portq.language.signatures import normalise_name
from portq.classifier.delta import Delta

UNKNOWN = object()
"""A value the walk cannot know (a caller's argument, a shape, a local computed at run time)."""

_MAYBE = object()  # a statement that ends some of the paths through it, not all

_MAX_DEPTH = 3  # calls followed below the function walked


def _function(node):
    if node is not None and node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    return node


def _body_nodes(function):
    """Every node of a function's body, depth first (the order the searches below report in)."""
    stack = [_function(function).child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        yield node
        stack.extend(node.children)


@dataclass(frozen=True)
class Outcome:
    """Where one path through the walked code ends: ``launch`` of a kernel or ``raise`` of an exception."""

    kind: str  # launch | raise
    name: str  # the kernel launched or the exception raised
    path: str
    line: int
    quote: str
    function: str  # the definition the statement is in
    certain: bool  # reached on every path the bound values allow
    decided: tuple[str, ...] = ()  # the conditions decided true on the way, as written


@dataclass(frozen=True)
class Selector:
    """A helper's parameter a ported caller passes one of its own parameters to, and a value the helper
    compares it with: ``rotate_style == RotateStyle.NEOX`` in the helper, fed by the caller's
    ``rotate_style``."""

    caller_param: str  # the ported caller's parameter
    param: str  # the helper's parameter
    value: object  # the compared value, evaluated (UNKNOWN when it could not be)
    value_text: str  # as written
    call_line: int  # the caller's call of the helper
    call_quote: str


class Module:
    """One Python module's top-level functions, literal constants and enum-like class members."""

    def __init__(self, path: str, table, resolve_import: Callable[[str, str], "Module | None"] | None = None) -> None:
        self.path = path
        self.lines = table.source.decode("utf-8", errors="replace").splitlines()
        self.functions: dict[str, object] = {}
        self.constants: dict[str, object] = {}
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module as written, name there)
        self._resolve_import = resolve_import
        self._called: dict[str, set[str]] = {}
        root = table.tree.root_node if getattr(table, "tree", None) is not None else None
        for definition in table.definitions:
            if definition.node is not None and definition.qualified_name == definition.name:
                function = _function(definition.node)
                if function is not None and function.type == "function_definition":
                    self.functions[definition.name] = function
        if root is not None:
            self._read_top_level(root)

    def _read_top_level(self, root) -> None:
        for child in root.named_children:
            if child.type == "expression_statement" and child.named_children \
                    and child.named_children[0].type == "assignment":
                self._constant(child.named_children[0], "")
            elif child.type == "class_definition":
                name = _text(child.child_by_field_name("name"))
                bases = _text(child.child_by_field_name("superclasses"))
                body = child.child_by_field_name("body")
                for statement in body.named_children if body is not None else ():
                    if statement.type == "expression_statement" and statement.named_children \
                            and statement.named_children[0].type == "assignment":
                        self._constant(statement.named_children[0], name + ".", enum="Enum" in bases)
            elif child.type == "import_from_statement":
                module = _text(child.child_by_field_name("module_name"))
                for name in child.children_by_field_name("name"):
                    if name.type == "aliased_import":
                        original = _text(name.child_by_field_name("name"))
                        self.imports[_text(name.child_by_field_name("alias"))] = (module, original)
                    else:
                        self.imports[_text(name)] = (module, _text(name))

    def _constant(self, assignment, prefix: str, enum: bool = False) -> None:
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier":
            return
        try:
            value = ast.literal_eval(_text(right))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return
        if enum and isinstance(value, tuple) and len(value) == 1:
            value = value[0]  # an Enum member's ``NEOX = (0,)`` is the value 0
        self.constants[prefix + _text(left)] = value

    def function(self, name: str):
        """``(module, node)`` of a function this module defines or imports from a sibling module."""
        if name in self.functions:
            return self, self.functions[name]
        if name in self.imports and self._resolve_import is not None:
            module, original = self.imports[name]
            other = self._resolve_import(self.path, module)
            if other is not None and original in other.functions:
                return other, other.functions[original]
        return None

    def calls(self, caller: str, name: str) -> bool:
        """Whether the module's function ``caller`` calls ``name(...)`` directly (its body walked once, on
        the first question about it: only the functions a port could be asked about are walked)."""
        called = self._called.get(caller)
        if called is None:
            called = self._called[caller] = set()
            for node in _body_nodes(self.functions[caller]):
                if node.type == "call":
                    callee = node.child_by_field_name("function")
                    if callee is not None and callee.type == "identifier":
                        called.add(_text(callee))
        return name in called

    def quote(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


def parameters(function) -> list[tuple[str, object]]:
    """The parameters of a Python function in order, with their default's node (None without one)."""
    found = []
    params = _function(function).child_by_field_name("parameters")
    for child in params.named_children if params is not None else ():
        if child.type == "identifier":
            found.append((_text(child), None))
        elif child.type in ("default_parameter", "typed_default_parameter"):
            found.append((_text(child.child_by_field_name("name")), child.child_by_field_name("value")))
        elif child.type == "typed_parameter":
            name = next((c for c in child.named_children if c.type == "identifier"), None)
            if name is not None:
                found.append((_text(name), None))
        elif child.type in ("list_splat_pattern", "dictionary_splat_pattern"):
            break
    return found


def calls_of(function, name: str):
    """Direct calls ``name(...)`` in a function's body."""
    for node in _body_nodes(function):
        if node.type == "call" and _text(node.child_by_field_name("function")) == name:
            yield node


def bind(function, call, evaluate) -> dict[str, object] | None:
    """The callee's parameters bound to a call's arguments (``evaluate`` maps an argument node to a value);
    None when a splat makes the binding unknown."""
    names = parameters(function)
    bound: dict[str, object] = {}
    arguments = call.child_by_field_name("arguments")
    positional = 0
    for argument in arguments.named_children if arguments is not None else ():
        if argument.type == "comment":
            continue
        if argument.type in ("list_splat", "dictionary_splat"):
            return None
        if argument.type == "keyword_argument":
            bound[_text(argument.child_by_field_name("name"))] = evaluate(argument.child_by_field_name("value"))
            continue
        if positional >= len(names):
            return None
        bound[names[positional][0]] = evaluate(argument)
        positional += 1
    for name, default in names:
        if name not in bound:
            bound[name] = evaluate(default) if default is not None else UNKNOWN
    return bound


def argument_nodes(function, call) -> dict[str, object] | None:
    """The callee's parameters bound to the call's argument nodes (what is passed, unevaluated)."""
    return bind(function, call, lambda node: node)


def selectors(caller_module: Module, caller, helper_module: Module, helper, helper_name: str) -> list[Selector]:
    """The helper's parameters a call in ``caller`` passes the caller's own parameters to, each with every
    value the helper compares it with by ``==`` (or ``in``)."""
    caller_params = {name for name, _ in parameters(caller)}
    found: list[Selector] = []
    for call in calls_of(caller, helper_name):
        passed = argument_nodes(helper, call)
        if passed is None:
            continue
        fed = {param: _text(node) for param, node in passed.items()
               if node is not None and node.type == "identifier" and _text(node) in caller_params}
        for param, value_node in _compared_values(helper, set(fed)):
            value = _Walk(helper_module, 0).evaluate(value_node, {})
            found.append(Selector(fed[param], param, value, _text(value_node), call.start_point[0] + 1,
                                  caller_module.quote(call.start_point[0] + 1)))
    unique: dict[tuple, Selector] = {}
    for selector in found:
        value = selector.value_text if selector.value is UNKNOWN else repr(selector.value)
        unique.setdefault((selector.caller_param, value), selector)  # ``== 0`` and ``== Style.NEOX`` are one
    return list(unique.values())


def _compared_values(function, params: set[str]):
    for node in _body_nodes(function):
        if node.type == "comparison_operator":
            operands = [c for c in node.named_children]
            operators = [_text(c) for c in node.children if not c.is_named]
            if len(operands) == 2 and operators in (["=="], ["!="]):
                left, right = operands
                if left.type == "identifier" and _text(left) in params and right.type != "identifier":
                    yield _text(left), right
                elif right.type == "identifier" and _text(right) in params and left.type != "identifier":
                    yield _text(right), left


def outcomes(module: Module, function, bound: dict[str, object]) -> list[Outcome]:
    """Where the function's paths can end with ``bound`` parameters fixed (the others unknown)."""
    walk = _Walk(module, 0)
    env = {name: UNKNOWN for name, _ in parameters(function)}
    env.update(bound)
    walk.block(_function(function).child_by_field_name("body"), env, True, _function_name(function))
    return walk.found


def _function_name(function) -> str:
    return _text(_function(function).child_by_field_name("name"))


class _Walk:
    def __init__(self, module: Module, depth: int) -> None:
        self.module = module
        self.depth = depth
        self.found: list[Outcome] = []
        self.decided: list[str] = []  # conditions decided true around the statement being walked

    # -- values

    def evaluate(self, node, env: dict):
        if node is None:
            return UNKNOWN
        kind = node.type
        if kind in ("integer", "float", "string", "true", "false", "none"):
            try:
                return ast.literal_eval(_text(node))
            except (ValueError, SyntaxError):
                return UNKNOWN
        if kind == "identifier":
            name = _text(node)
            if name in env:
                return env[name]
            return self.module.constants.get(name, UNKNOWN)
        if kind == "attribute":
            return self.module.constants.get(_text(node).replace(" ", ""), UNKNOWN)
        if kind == "parenthesized_expression" and node.named_children:
            return self.evaluate(node.named_children[0], env)
        if kind == "not_operator":
            value = self.evaluate(node.child_by_field_name("argument"), env)
            return UNKNOWN if value is UNKNOWN else not value
        if kind == "boolean_operator":
            left = self.evaluate(node.child_by_field_name("left"), env)
            right = self.evaluate(node.child_by_field_name("right"), env)
            if _text(node.child_by_field_name("operator")) == "and":
                if left is False or right is False:
                    return False
                return UNKNOWN if UNKNOWN in (left, right) else bool(left and right)
            if left is True or right is True:
                return True
            return UNKNOWN if UNKNOWN in (left, right) else bool(left or right)
        if kind == "comparison_operator":
            operands = node.named_children
            operators = [_text(c) for c in node.children if not c.is_named]
            if len(operands) != 2 or len(operators) not in (1, 2):
                return UNKNOWN
            left, right = (self.evaluate(o, env) for o in operands)
            operator = " ".join(operators)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            try:
                return {"==": lambda: left == right, "!=": lambda: left != right, "is": lambda: left is right,
                        "is not": lambda: left is not right, "in": lambda: left in right,
                        "not in": lambda: left not in right}[operator]()
            except (KeyError, TypeError):
                return UNKNOWN
        if kind in ("tuple", "list"):
            values = [self.evaluate(c, env) for c in node.named_children]
            return UNKNOWN if any(v is UNKNOWN for v in values) else tuple(values)
        return UNKNOWN

    # -- statements; each returns True when every path through it ends (raise or return)

    def block(self, node, env: dict, certain: bool, where: str):
        """True when every path through the block ends, ``_MAYBE`` when some do, else False."""
        some = False
        for statement in node.named_children if node is not None else ():
            ended = self.statement(statement, env, certain, where)
            if ended is True:
                return True
            if ended is _MAYBE:
                some, certain = True, False  # what follows runs only on the paths that did not end
        return _MAYBE if some else False

    def statement(self, node, env: dict, certain: bool, where: str) -> bool:
        kind = node.type
        if kind == "if_statement":
            return self._if(node, env, certain, where)
        if kind == "raise_statement":
            self._calls(node, env, certain, where)
            raised = node.named_children[0] if node.named_children else None
            name = _text(raised.child_by_field_name("function") if raised is not None and raised.type == "call"
                         else raised) or "(re-raise)"
            self._record("raise", name, node, certain, where)
            return True
        if kind == "return_statement":
            self._calls(node, env, certain, where)
            return True
        if kind == "expression_statement":
            ended = self._calls(node, env, certain, where)
            for child in node.named_children:
                if child.type == "assignment":
                    self._assign(child, env)
                elif child.type == "augmented_assignment":
                    target = child.child_by_field_name("left")
                    if target is not None and target.type == "identifier":
                        env[_text(target)] = UNKNOWN
            return ended
        if kind in ("for_statement", "while_statement", "with_statement", "try_statement"):
            inner = dict(env)
            for child in node.named_children:
                if child.type == "block":
                    self.block(child, inner, False, where)
                elif child.type in ("except_clause", "finally_clause", "else_clause", "with_clause"):
                    for block in (c for c in child.named_children if c.type == "block"):
                        self.block(block, inner, False, where)
            for name in set(inner) | set(env):
                if inner.get(name, UNKNOWN) is not env.get(name, UNKNOWN):
                    env[name] = UNKNOWN
            return False
        return False

    def _if(self, node, env: dict, certain: bool, where: str) -> bool:
        branches = [(node.child_by_field_name("condition"), node.child_by_field_name("consequence"))]
        otherwise = None
        for clause in node.children_by_field_name("alternative"):
            if clause.type == "elif_clause":
                branches.append((clause.child_by_field_name("condition"), clause.child_by_field_name("consequence")))
            else:
                otherwise = clause.child_by_field_name("body")
        envs, ended, decided = [], [], certain
        for condition, body in branches:
            value = self.evaluate(condition, env)
            if value is UNKNOWN:
                inner = dict(env)
                ended.append(self.block(body, inner, False, where))
                envs.append(inner)
                decided = False
                continue
            if value:
                inner = dict(env)
                self.decided.append(_text(condition))
                ended.append(self.block(body, inner, decided, where))
                self.decided.pop()
                envs.append(inner)
                break
        else:
            inner = dict(env)
            ended.append(self.block(otherwise, inner, decided, where) if otherwise is not None else False)
            envs.append(inner)
        for name in set().union(*envs):
            values = [e.get(name, UNKNOWN) for e, end in zip(envs, ended) if end is not True]
            if values:
                env[name] = values[0] if all(v is values[0] for v in values) else UNKNOWN
        return True if all(e is True for e in ended) else _MAYBE if any(e is not False for e in ended) else False

    def _assign(self, node, env: dict) -> None:
        left = node.child_by_field_name("left")
        value = self.evaluate(node.child_by_field_name("right"), env)
        if left is not None and left.type == "identifier":
            env[_text(left)] = value
            return
        stack = [left]
        while stack:
            current = stack.pop()
            if current is None:
                continue
            if current.type == "identifier":
                env[_text(current)] = UNKNOWN
            elif current.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list"):
                stack.extend(current.named_children)

    def _calls(self, node, env: dict, certain: bool, where: str):
        """Launches and followed calls in a statement, in source order; True when a followed call always
        ends in a raise, ``_MAYBE`` when one raises on some paths."""
        ended = False
        stack = [node]
        calls = []
        while stack:
            current = stack.pop()
            if current.type in ("lambda", "function_definition"):
                continue
            if current.type == "call":
                calls.append(current)
            stack.extend(current.children)
        for call in sorted(calls, key=lambda c: c.start_byte):
            callee = call.child_by_field_name("function")
            if callee is not None and callee.type == "subscript":
                kernel = _text(callee.child_by_field_name("value")).split(".")[-1]
                self._record("launch", kernel, call, certain, where)
                continue
            if callee is None or callee.type != "identifier" or self.depth >= _MAX_DEPTH:
                continue
            found = self.module.function(_text(callee))
            if found is None:
                continue
            module, function = found
            walk = _Walk(module, self.depth + 1)
            walk.decided = list(self.decided)
            bound = bind(function, call, lambda n: self.evaluate(n, env))
            inner = {name: UNKNOWN for name, _ in parameters(function)}
            inner.update(bound or {})
            through = walk.block(_function(function).child_by_field_name("body"), inner, certain,
                                 _function_name(function))
            if through is True and _always_raises(walk.found):
                ended = True
            elif ended is False and any(o.kind == "raise" for o in walk.found):
                ended = _MAYBE  # the call raises on some paths
            self.found.extend(walk.found)
        return ended

    def _record(self, kind: str, name: str, node, certain: bool, where: str) -> None:
        line = node.start_point[0] + 1
        self.found.append(Outcome(kind, name, self.module.path, line, self.module.quote(line), where, certain,
                                  tuple(self.decided)))


def _always_raises(found: list[Outcome]) -> bool:
    return bool(found) and all(o.kind == "raise" for o in found)


# --- deltas: a new path one call down, against the port -----------------------------


def counterpart(upstream_function, port_function, name: str) -> str | None:
    """The port's parameter standing for upstream's ``name``: the same normalised name, else the one at
    the same position when the two names share a word (``rotate_style`` and ``style``)."""
    ours = [n for n, _ in parameters(port_function)]
    theirs = [n for n, _ in parameters(upstream_function)]
    wanted = normalise_name(name)
    same = [n for n in ours if normalise_name(n) == wanted]
    if same:
        return same[0]
    if name in theirs and theirs.index(name) < len(ours):
        candidate = ours[theirs.index(name)]
        if set(wanted.split("_")) & set(normalise_name(candidate).split("_")):
            return candidate
    return None


def callee_deltas(helper: str, caller: str, old: Module | None, new: Module, port: Module, port_function,
                  scope: set[str] = frozenset()) -> list[Delta]:
    """Deltas of ``caller`` (a ported upstream function) through its call of ``helper``: every value of a
    caller parameter the helper compares that now reaches a launch where it reached none, placed against
    the port's ``port_function`` walked with its counterpart parameter set to that value."""
    new_caller = new.functions.get(caller)
    old_caller = old.functions.get(caller) if old is not None else None
    target = new.function(helper)
    if new_caller is None or old_caller is None or target is None:
        return []
    items: list[Delta] = []
    found = selectors(new, new_caller, target[0], target[1], helper)
    for selector in found:
        if selector.value is UNKNOWN or normalise_name(selector.caller_param) in scope:
            continue
        bound = {selector.caller_param: selector.value}
        before = outcomes(old, old_caller, bound)
        after = outcomes(new, new_caller, bound)
        if any(o.kind == "launch" for o in before):
            continue  # a launch changed for this value: the launch comparison's question, not a new path
        added = [o for o in after if o.kind == "launch" and o.function != caller]
        if not added:
            continue
        others = [o.value for o in found if o.caller_param == selector.caller_param and o.value is not UNKNOWN
                  and o.value != selector.value]
        items.append(_placed(selector, helper, caller, before, added, new, port, port_function, others))
    old_target = old.function(helper) if old is not None else None
    broken = [name for name, node in ((caller, new_caller), (caller, old_caller), (helper, target[1]),
                                      (helper, old_target[1] if old_target else None),
                                      (_function_name(port_function), port_function))
              if node is not None and node.has_error]
    if broken:
        # Structure read from a broken tree decides nothing: the reader gets the walk's finding.
        items = [replace(item, status="undecided", message=f"{item.message}; but {', '.join(dict.fromkeys(broken))} "
                         "did not parse cleanly, so the walk decides nothing") for item in items]
    for item in items:
        item.rule = "callee-path"
    return items


def _placed(selector: Selector, helper: str, caller: str, before: list[Outcome], added: list[Outcome],
            new: Module, port: Module, port_function, others: list) -> Delta:
    value = f"{selector.caller_param} == {selector.value_text} ({selector.value!r})"
    was = next((o for o in before if o.kind == "raise" and _selected(o, selector.param)), None) \
        or next((o for o in before if o.kind == "raise"), None)
    launch = added[0]
    was_words = f"raised {was.name}" if was is not None else "launched nothing"
    upstream = [
        Evidence(kind=Kind.CALLEE_PATH, message=f"for {value}, {helper} {was_words}", side=Side.OLD,
                 path=was.path if was else new.path, line=was.line if was else None, quote=was.quote if was else None,
                 symbol=was.function if was else helper, subject=selector.caller_param),
        Evidence(kind=Kind.CALLEE_PATH, message=f"for {value}, {helper} now launches {launch.name}", side=Side.NEW,
                 path=launch.path, line=launch.line, quote=launch.quote, symbol=launch.function,
                 subject=selector.caller_param,
                 before=Location(Side.OLD, was.path, was.line, quote=was.quote) if was else None,
                 after=Location(Side.NEW, launch.path, launch.line, quote=launch.quote), through=(helper,)),
        Evidence(kind=Kind.CALLEE_PATH, message=f"{caller} passes its {selector.caller_param} to {helper} here",
                 side=Side.NEW, path=new.path, line=selector.call_line, quote=selector.call_quote, symbol=caller,
                 subject=selector.caller_param),
    ]
    name = _function_name(port_function)
    mine = counterpart(new.functions[caller], port_function, selector.caller_param)
    if mine is None:
        return Delta("undecided", "launch",
                     f"upstream's {caller} now reaches a launch of {launch.name} for {value} through {helper}; "
                     f"no parameter of the port's {name} stands for {selector.caller_param}, so what the port does "
                     "there could not be resolved", upstream)
    found = outcomes(port, port_function, {mine: selector.value})
    launches = [o for o in found if o.kind == "launch" and o.certain]
    raises = [o for o in found if o.kind == "raise" and o.certain]
    elsewhere = {o.name for value in others for o in outcomes(port, port_function, {mine: value})
                 if o.kind == "launch"}
    own = [o for o in launches if o.name not in elsewhere]
    if own:
        where = own[0]
        return Delta("sync", "launch", f"the port's {name} already launches {where.name} for {mine} = "
                     f"{selector.value!r}", upstream + [_tree_path(where, mine, selector.value,
                                                                    f"the port launches {where.name} there")])
    if launches:
        where = launches[0]
        return Delta("undecided", "launch",
                     f"upstream's {caller} now reaches a launch of {launch.name} for {value} through {helper}; "
                     f"the port's {name} launches {where.name} for {mine} = {selector.value!r} as for its other "
                     "values, so whether that kernel covers the new path is for a reader",
                     upstream + [_tree_path(where, mine, selector.value, f"the port launches {where.name} there")])
    if raises and not any(o.kind == "launch" for o in found):
        where = next((o for o in raises if _selected(o, mine)), raises[0])
        inside = f" (in {where.function})" if where.function != name else ""
        return Delta("behind", "launch",
                     f"upstream's {caller} now launches {launch.name} for {value} through {helper}, where it "
                     f"{was_words}; the port's {name}{inside} still raises {where.name} for {mine} = "
                     f"{selector.value!r}",
                     upstream + [_tree_path(where, mine, selector.value,
                                            f"the port's {where.function} still raises {where.name} for "
                                            f"{mine} = {selector.value!r}")])
    return Delta("undecided", "launch",
                 f"upstream's {caller} now reaches a launch of {launch.name} for {value} through {helper}; "
                 f"walking the port's {name} with {mine} = {selector.value!r} reaches "
                 + ("launches or raises only under conditions it could not decide" if found
                    else "no launch and no raise")
                 + ", so what the port does there could not be resolved", upstream)


def _selected(outcome: Outcome, param: str) -> bool:
    """The outcome lies in a branch a condition on ``param`` chose."""
    return any(re.search(rf"(?<![\w.]){re.escape(param)}(?!\w)", condition) for condition in outcome.decided)


def _tree_path(where: Outcome, param: str, value, message: str) -> Evidence:
    return Evidence(kind=Kind.TREE_PATH, message=message, side=Side.TREE, path=where.path, line=where.line,
                    quote=where.quote, symbol=where.function, subject=param)
