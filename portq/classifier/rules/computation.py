"""Computation rules: what a Triton kernel computes, read apart from how it is spelled (DESIGN §5, §6).

A ``@triton.jit`` body is straight-line arithmetic on tensors most of the
way, and two rewrites of it keep every value it computes exactly:

* **Commutative operands.** IEEE-754 addition and multiplication are
  commutative (so are integer ones), and Triton promotes and broadcasts both
  operands of a binary operator alike, so ``a * b`` and ``b * a`` compute the
  same bits. ``*`` is swapped freely; ``+`` only where one operand is
  evidently a number (a literal, a ``tl.`` call, a ``.to(...)`` cast, an
  arithmetic or comparison result, or a local only ever bound to one of
  those), since two tuples or strings joined by ``+`` concatenate in order.
  Nothing is re-associated (``(a + b) + c`` and ``a + (b + c)`` round
  differently), and ``-``, ``/``, ``@``, ``tl.dot`` and every call keep their
  operands in place. Each ``+``/``*`` node orders its two operands by a key
  that ignores the names of locals and parameters (so a port's renaming
  cannot change the order), ties kept as written.
* **Single-use locals inlined.** A local bound by a plain ``name = value``,
  read once afterwards (each re-binding a new local, as ``weights = weights -
  zeros`` binds one), whose value calls nothing but known-pure ``tl``
  functions and ``.to``, is replaced by its value at its one read, provided
  no statement between writes memory or calls what may (``tl.store``,
  ``tl.atomic_*``, ``tl.debug_barrier``, any call of the module's own: where
  the value loads, inlining stops there), no name it reads is bound again in
  between, and the read is not inside a compound statement, a lambda or a
  comprehension (any of which stops it). A local read twice stays a local.
  The value is written into later values (``values``); the ``effects`` form
  writes it into the store or call that reads it as well.

Both are applied only inside ``@triton.jit`` definitions: in host Python an
operator may call a user's ``__add__``/``__mul__`` (with side effects, or on
lists and strings where order matters) and any call may write, so nothing
there is rewritten.

Three rules read the normal form:

* ``port-has-computed-change``: upstream's old definition, its new one and
  the port, each put in normal form, are handed to the port-has-change
  reading (``equivalence.port_has_change`` and ``port_has_renamed_change``,
  the same touched-statement comparison modulo the port's renaming), and
  each statement it pairs must then read, whole, as the port's (parameters
  by position where both take as many, otherwise only by their own names;
  locals renamed one to one). IN_SYNC, citing the port's statements.

Example diff (IN_SYNC for a port whose kernel stores
``s * (q - z).to(tl.float32)``, its loads into ``q``, ``z``, ``s`` each read once)::

    -    weights = weights - zeros
    -    weights = weights.to(tl.float16)
    -    weights = scales * weights
    +    weights = (weights - zeros).to(tl.float32) * scales

* ``cosmetic-computation``: a ``@triton.jit`` definition whose old and new
  bodies have the same normal form computes the same values in the same
  order of memory effects: NOT_APPLICABLE/cosmetic.

Example diff (cosmetic)::

    -    t = x.to(tl.float32)
    -    y = t * w
    +    y = w * x.to(tl.float32)

* ``port-has-retyped-value``: where the normal forms of upstream's two sides differ only in constants or
  ``tl.`` dtypes inside the value of their one ``tl.store`` (a statement of the body), the port's one store
  is walked to each such place: the same node types, operators and called names on the way, each operand
  beside the way the same with names left out and each load read as the pointer parameters it goes through
  (paired in order among the pointers), and the new constant there, never the old: IN_SYNC.

This module rewrites Python syntax trees handed to it and reparses the
result; it reads no git and no tree index, imports no verdict table, and
never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast as _ast
import copy as _copy
import textwrap as _textwrap

from portq.classifier.rules import Rule
from portq.classifier.rules import equivalence
from portq.language.symbols import parse

RULES = (
    Rule("port-has-computed-change", ("IN_SYNC",),
         "A @triton.jit definition whose change the port already has once both are read as what they compute: "
         "each `+`/`*` with its operands in a name-independent order (`+` only on evident numbers; never "
         "re-associated, `-`, `/`, `@`, `tl.dot` untouched) and each local bound once and read once replaced by "
         "its value where nothing between writes memory or calls code that may (loads never moved across a "
         "store, an atomic, a barrier or a call of the module's own). The port-has-change reading on the three "
         "normal forms pairs every touched statement with the port's, each then read whole as the port's "
         "(parameters by position, or each as itself where the two take different numbers; locals renamed one "
         "to one), and the old form as none: IN_SYNC.",
         "-    w = w - z\n-    w = w.to(tl.float16)\n-    w = s * w\n+    w = (w - z).to(tl.float32) * s  "
         "(the port: tl.store(dst + i, s * (q - z).to(tl.float32)), q, z, s each read once)",
         "classifier.rules.computation.port_has_computed_change, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("cosmetic-computation", ("NOT_APPLICABLE",),
         "A @triton.jit definition whose old and new bodies have the same normal form (commutative operands "
         "ordered, single-use locals inlined where nothing between writes memory, as port-has-computed-change "
         "reads them) computes the same values with the same memory effects: cosmetic.",
         "-    t = x.to(tl.float32)\n-    y = t * w\n+    y = w * x.to(tl.float32)",
         "classifier.rules.computation.same_computation, classifier.verdicts.SymbolClassifier._against_port"),
    Rule("port-has-retyped-value", ("IN_SYNC",),
         "A @triton.jit definition whose change, read as what it computes, only replaces constants or `tl.` dtypes "
         "inside the one value it stores, is IN_SYNC when the port's one store writes a value with the same "
         "operations on the way to each replaced part, the operands beside them loaded through the same pointers "
         "(pointer parameters paired in order), and the new constant there, never the old. Another change, "
         "another operation on the way, an operand loaded through another pointer or the old constant anywhere "
         "there is compared.",
         "-    s = tl.load(s_ptr + g, None).to(tl.float16)\n+    s = tl.load(s_ptr + g, None).to(tl.float32)\n"
         "-    w = (w - z).to(tl.float16) * s\n+    w = (w - z).to(tl.float32) * s",
         "classifier.rules.computation.port_has_retyped_value, "
         "classifier.rules.definitions.DefinitionRules._port_has_retyped_value"),
)

# ``tl`` functions that compute a value from their arguments and write nothing (``load`` reads memory).
_PURE = frozenset({
    "abs", "arange", "argmax", "argmin", "broadcast", "broadcast_to", "cast", "cat", "cdiv", "ceil", "clamp",
    "cos", "cumprod", "cumsum", "div_rn", "dot", "erf", "exp", "exp2", "expand_dims", "fdiv", "floor", "fma",
    "full", "interleave", "join", "load", "log", "log2", "max", "max_constancy", "max_contiguous", "maximum",
    "min", "minimum", "multiple_of", "num_programs", "permute", "program_id", "ravel", "reshape",
    "rsqrt", "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn", "sum", "trans", "umulhi", "view",
    "where", "xor_sum", "zeros", "zeros_like", "full_like", "flip", "to",
    "randint", "rand", "randn",
})
# ``tl`` calls that write nothing, though they are statements (a check, a print).
_NO_WRITE = frozenset({"device_assert", "static_assert", "device_print", "static_print"})
_TL_ROOTS = ("tl", "triton")
_TL_MODULES = ("language", "math", "libdevice", "extra", "cuda")


def _tl_name(func) -> str | None:
    """``f`` for a call of ``tl.f`` (``triton.language.f``, ``tl.math.f``), else None."""
    if not isinstance(func, _ast.Attribute):
        return None
    root = func.value
    while isinstance(root, _ast.Attribute):
        if root.attr not in _TL_MODULES:
            return None
        root = root.value
    return func.attr if isinstance(root, _ast.Name) and root.id in _TL_ROOTS else None


def _call_kind(call: _ast.Call) -> str:
    """``read`` (a load), ``pure``, ``quiet`` (writes nothing, a check) or ``effect``."""
    name = _tl_name(call.func)
    if name == "load":
        return "effect" if any(k.arg == "volatile" for k in call.keywords) else "read"
    if name in _PURE:
        return "pure"
    if name in _NO_WRITE:
        return "quiet"
    if name is None and isinstance(call.func, _ast.Attribute) and call.func.attr in ("to", "cast"):
        return "pure"
    return "effect"


def _kinds(node) -> set[str]:
    """The kinds (``_call_kind``) of every call inside ``node``."""
    return {_call_kind(n) for n in _ast.walk(node) if isinstance(n, _ast.Call)}


_SCOPED = (_ast.Lambda, _ast.ListComp, _ast.SetComp, _ast.DictComp, _ast.GeneratorExp, _ast.NamedExpr,
           _ast.Yield, _ast.YieldFrom, _ast.Await)


def _bound(statement) -> set[str]:
    """The names a statement binds anywhere in it."""
    names = {n.id for n in _ast.walk(statement) if isinstance(n, _ast.Name) and isinstance(n.ctx, (_ast.Store, _ast.Del))}
    for node in _ast.walk(statement):
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (_ast.Import, _ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, _ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (_ast.Global, _ast.Nonlocal)):
            names |= set(node.names)
    return names


def _reads(statement) -> list[str]:
    """The names a statement reads, once per read (an augmented assignment reads its target too)."""
    found = [n.id for n in _ast.walk(statement) if isinstance(n, _ast.Name) and isinstance(n.ctx, _ast.Load)]
    if isinstance(statement, _ast.AugAssign) and isinstance(statement.target, _ast.Name):
        found.append(statement.target.id)
    return found


def _candidate(statement) -> str | None:
    """The local a plain ``name = value`` statement binds, when its value may move: it calls only pure
    ``tl`` functions, loads and casts, and opens no scope of its own."""
    if not isinstance(statement, _ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], _ast.Name) or statement.type_comment:
        return None
    if any(isinstance(n, _SCOPED) for n in _ast.walk(statement.value)) or _kinds(statement.value) - {"pure", "read"}:
        return None
    return statement.targets[0].id


class _Substitute(_ast.NodeTransformer):
    """Replaces each read of a pending single-use local by (a copy of) its value."""

    def __init__(self, current: dict[str, int], pending: dict[int, tuple[int, _ast.expr]]):
        self.current, self.pending, self.used = current, pending, []

    def visit_Name(self, node):
        if isinstance(node.ctx, _ast.Load):
            version = self.current.get(node.id)
            if version in self.pending:
                self.used.append(version)
                return _copy.deepcopy(self.pending[version][1])
        return node


def _inline(body: list, into_effects: bool) -> list:
    """``(line, statement)`` for ``body``'s top-level statements with each single-use local inlined (see the
    module), a local that stays written back at its own line."""
    # First pass: number every binding of a name (a new local each time) and count the reads of each.
    counter = iter(range(1, 1 << 30))
    current: dict[str, int] = {}
    reads: dict[int, int] = {}
    for statement in body:
        for name in _reads(statement):
            if name in current:
                reads[current[name]] = reads.get(current[name], 0) + 1
        for name in sorted(_bound(statement)):
            current[name] = next(counter)
    # Second pass, in the same order and numbering: each single-use local pending until its one read.
    counter = iter(range(1, 1 << 30))
    current = {}
    slots: list[list] = [[] for _ in body]
    pending: dict[int, tuple[int, _ast.expr]] = {}
    names_of: dict[int, str] = {}

    def keep(versions) -> None:
        for version in list(versions):
            if version in pending:
                index, value = pending.pop(version)
                slots[index].append(_ast.Assign(targets=[_ast.Name(id=names_of[version], ctx=_ast.Store())],
                                                value=value, lineno=body[index].lineno))

    def loading():
        return [v for v, (_, value) in pending.items() if "read" in _kinds(value)]

    for index, statement in enumerate(body):
        kinds = _kinds(statement)
        if any(isinstance(n, (_ast.Subscript, _ast.Attribute, _ast.Starred)) and isinstance(n.ctx, _ast.Store)
               for n in _ast.walk(statement)):
            kinds.add("effect")  # a store through an index or an attribute writes memory
        substituted = isinstance(statement, (_ast.Assign, _ast.AnnAssign)) \
            or (into_effects and isinstance(statement, (_ast.Expr, _ast.Return)))
        substituted = substituted and not any(isinstance(n, _SCOPED) for n in _ast.walk(statement))
        if not substituted:  # a local read here (a branch, a loop, a call) stays a local
            keep(current[name] for name in _reads(statement) if name in current)
        outer = statement.value if isinstance(statement, _ast.Expr) and isinstance(statement.value, _ast.Call) \
            else None
        if outer is not None and _call_kind(outer) == "effect":
            # a store (or any call) reads its arguments before it acts: only calls inside them act first
            first = set()
            for part in [outer.func, *outer.args, *(k.value for k in outer.keywords)]:
                first |= _kinds(part)
        else:
            first = kinds
        if "effect" in first or not substituted and not isinstance(statement, (_ast.Expr, _ast.Return, _ast.Assert,
                                                                               _ast.Pass, _ast.AnnAssign)):
            keep(loading())  # a load never moves across what may write, nor into a branch or a loop
        if substituted:
            substitute = _Substitute(current, pending)
            statement = substitute.visit(_copy.deepcopy(statement))
            for version in substitute.used:
                pending.pop(version, None)
        if "effect" in kinds:
            keep(loading())
        bound = _bound(statement)
        keep(v for v, (_, value) in list(pending.items())
             if any(isinstance(n, _ast.Name) and n.id in bound for n in _ast.walk(value)))
        target = _candidate(statement)
        for name in sorted(bound):
            current[name] = next(counter)
        if target is not None and reads.get(current[target]) == 1:
            names_of[current[target]] = target
            pending[current[target]] = (index, statement.value)
            continue
        slots[index].append(statement)
    keep(list(pending))
    return [(body[i].lineno, s) for i, kept in enumerate(slots) for s in kept]


def _is_jit(function) -> bool:
    """Whether an ``ast`` function is decorated ``@triton.jit`` (or ``@triton.jit(...)``)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, _ast.Call) else decorator
        if isinstance(target, _ast.Attribute) and target.attr == "jit" and isinstance(target.value, _ast.Name) \
                and target.value.id == "triton":
            return True
    return False


class _Order(_ast.NodeTransformer):
    """Orders the operands of each ``*`` (and of each ``+`` with an evident number) by a key that ignores the
    names of locals and parameters; ties keep their order."""

    def __init__(self, own: set[str], numbers: set[str]):
        self.own, self.numbers = own, numbers

    def key(self, node) -> str:
        plain = _copy.deepcopy(node)
        for n in _ast.walk(plain):
            if isinstance(n, _ast.Name) and n.id in self.own:
                n.id = "_"
        return _ast.dump(plain, annotate_fields=False)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, _ast.Mult) or (isinstance(node.op, _ast.Add)
                                              and (_number(node.left, self.numbers) or _number(node.right, self.numbers))):
            if self.key(node.right) < self.key(node.left):
                node.left, node.right = node.right, node.left
        return node


def _number(node, numbers: set[str]) -> bool:
    """Whether ``node`` is evidently a number or a tensor (never a tuple or a string)."""
    if isinstance(node, _ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, _ast.Name):
        return node.id in numbers
    if isinstance(node, (_ast.Compare, _ast.UnaryOp)):  # a tuple or a string has no sign and no order by value
        return True
    if isinstance(node, _ast.Call):
        return _tl_name(node.func) is not None or (isinstance(node.func, _ast.Attribute)
                                                   and node.func.attr in ("to", "cast"))
    if isinstance(node, _ast.BinOp):
        if isinstance(node.op, (_ast.Sub, _ast.Div, _ast.FloorDiv, _ast.LShift, _ast.RShift, _ast.BitAnd,
                                _ast.BitOr, _ast.BitXor, _ast.Pow, _ast.MatMult)):
            return True
        if isinstance(node.op, _ast.Mod):
            return _number(node.left, numbers)
        if isinstance(node.op, _ast.Add):
            return _number(node.left, numbers) or _number(node.right, numbers)
        if isinstance(node.op, _ast.Mult):  # an int times a tuple is a tuple
            return _number(node.left, numbers) and _number(node.right, numbers)
    return False


def _numbers(function) -> set[str]:
    """The locals every binding of which is a plain assignment of an evident number."""
    values: dict[str, list] = {}
    other: set[str] = set()
    for node in _ast.walk(function):
        if isinstance(node, _ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], _ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
            continue
        if isinstance(node, _ast.AnnAssign) and isinstance(node.target, _ast.Name) and node.value is not None:
            values.setdefault(node.target.id, []).append(node.value)
            continue
        if isinstance(node, (_ast.Assign, _ast.AnnAssign, _ast.AugAssign, _ast.For, _ast.With, _ast.comprehension,
                             _ast.NamedExpr)):
            other |= {n.id for n in _ast.walk(node) if isinstance(n, _ast.Name) and isinstance(n.ctx, _ast.Store)}
    arguments = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bound in values.items():
            if name not in found and name not in other and name not in arguments \
                    and all(_number(v, found) for v in bound):
                found.add(name)
                changed = True
    return found


def _definition(node):
    """``(ast function, first line)`` of a tree-sitter Python definition node (decorators included), or
    None when it is not one ``ast`` reads."""
    outer = node.parent if node.type == "function_definition" and node.parent is not None \
        and node.parent.type == "decorated_definition" else node
    text = " " * outer.start_point[1] + outer.text.decode("utf-8", errors="replace")
    try:
        tree = _ast.parse(_textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (_ast.FunctionDef, _ast.AsyncFunctionDef)):
        return None
    return tree.body[0], outer.start_point[0]


def normal_form(node, into_effects: bool) -> tuple[str, dict[int, int]] | None:
    """The normal form of a ``@triton.jit`` definition (see the module) as Python text, one kept statement
    a line from the second on, with the file row (0-based) each text row's statement starts on; None for
    any other definition or one that cannot be read."""
    read = _definition(node)
    if read is None:
        return None
    function, first = read
    if not _is_jit(function) or not function.body:
        return None
    try:
        kept = _inline(function.body, into_effects)
        own = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
        own |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
        for statement in function.body:
            own |= _bound(statement)
        order = _Order(own, _numbers(function))
        lines = [f"@{_ast.unparse(d)}" for d in function.decorator_list]  # an autotune space is compared too
        lines.append(f"def {function.name}({_ast.unparse(function.args)}):")
        rows: dict[int, int] = {}
        for line, statement in kept:
            rows[len(lines)] = first + line - 1
            lines += ["    " + t for t in _ast.unparse(order.visit(_copy.deepcopy(statement))).splitlines()]
    except (RecursionError, ValueError, TypeError, AttributeError):
        return None
    return "\n".join(lines) + "\n", rows


def _reparsed(text: str):
    """The tree-sitter definition node of normal-form ``text`` (its decorators with it), or None."""
    root = parse(text.encode("utf-8"), "python").root_node
    if root.has_error:
        return None
    return next((c for c in root.named_children if c.type in ("decorated_definition", "function_definition")), None)


def same_computation(old_node, new_node) -> bool:
    """``cosmetic-computation``: both sides are ``@triton.jit`` definitions with the same normal form."""
    old, new = normal_form(old_node, True), normal_form(new_node, True)
    return old is not None and new is not None and old[0] == new[0]


def _statements_at(node) -> dict[int, object]:
    """The simple statements of a tree-sitter definition node by their first row."""
    found: dict[int, object] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("expression_statement", "return_statement"):
            found.setdefault(current.start_point[0], current)
            continue
        stack.extend(current.children)
    return found


def _whole(new_statement, port_statement, new_node, port_node, renaming: dict[str, str]) -> bool:
    """Whether a paired statement reads whole as the port's: parameters by position where both definitions
    take as many (otherwise each only as itself), locals renamed one to one."""
    upstream, mine = equivalence._ordered_parameters(new_node), equivalence._ordered_parameters(port_node)
    if len(upstream) == len(mine) and "" not in upstream:
        positional = dict(zip(upstream, mine))
    else:
        positional = {p: p for p in upstream if p in mine}
        if any(p not in mine for p in upstream if p in _identifiers(new_statement)):
            return False
    names = (equivalence._own_names(new_node) - set(upstream), equivalence._own_names(port_node) - set(mine))
    return equivalence._same_inputs(new_statement, port_statement, positional, renaming, names, set())


def _identifiers(node) -> set[str]:
    """The identifier texts of a tree-sitter node."""
    return {leaf.text.decode("utf-8", errors="replace") for leaf in equivalence._leaves(node)
            if leaf.type == "identifier"}


def port_has_computed_change(old_node, new_node, port_node):
    """``port-has-computed-change``: ``(new normal-form statement, port statement)`` pairs when upstream's
    change, read on the normal forms of its two sides and of the port, is one the port already has (see the
    module); None otherwise. The port's statements are those of ``port_node``'s own source."""
    for into_effects in (False, True):
        forms = [normal_form(n, into_effects) for n in (old_node, new_node, port_node)]
        if None in forms:
            return None
        nodes = [_reparsed(text) for text, _ in forms]
        if None in nodes:
            return None
        old, new, port = nodes
        if forms[0][0] == forms[1][0]:
            continue
        found = equivalence.port_has_change(old, new, port)
        if not found:
            renamed = equivalence.port_has_renamed_change(old, new, port)
            found = renamed[0] if renamed else None
        renaming: dict[str, str] = {}
        if not found or not all(_whole(n, p, new, port, renaming) for n, p in found):
            continue
        originals = _statements_at(port_node)
        cited = [(n, originals.get(forms[2][1].get(p.start_point[0], -1))) for n, p in found]
        if any(p is None for _, p in cited):
            continue
        return cited
    return None


def _python_function(text: str):
    """The one function of a normal form's text, read by Python's own parser; None where it does not parse."""
    try:
        module = _ast.parse(text)
    except SyntaxError:
        return None
    functions = [n for n in module.body if isinstance(n, (_ast.FunctionDef, _ast.AsyncFunctionDef))]
    return functions[0] if len(functions) == 1 else None


def _touched(old, new, path=()) -> list[tuple] | None:
    """The paths (field, index pairs) of the subtrees where ``old`` and ``new`` differ, each a constant or a
    ``tl.`` attribute on both sides; None where they differ in anything else."""
    if type(old) is not type(new):
        return None
    if isinstance(old, list):
        if len(old) != len(new):
            return None
        found = []
        for index, (a, b) in enumerate(zip(old, new)):
            inner = _touched(a, b, path + (index,))
            if inner is None:
                return None
            found += inner
        return found
    if not isinstance(old, _ast.AST):
        return [] if old == new else None
    if _ast.dump(old) == _ast.dump(new):
        return []
    if _literal(old) and _literal(new):
        return [path]
    found = []
    for field in old._fields:
        if field in ("ctx", "type_comment"):
            continue
        inner = _touched(getattr(old, field), getattr(new, field), path + (field,))
        if inner is None:
            return None
        found += inner
    return found


def _literal(node) -> bool:
    """A constant, or an attribute of ``tl`` (a dtype such as ``tl.float32``)."""
    return isinstance(node, _ast.Constant) or (isinstance(node, _ast.Attribute) and isinstance(node.value, _ast.Name)
                                               and node.value.id == "tl")


def _stores(function) -> list[_ast.Call]:
    return [n for n in _ast.walk(function) if isinstance(n, _ast.Call) and _tl_name(n.func) == "store"]


def _pointers(function) -> list[str]:
    """The parameters, in order, that the address of a load or store reads and that are not ``tl.constexpr``."""
    arguments = function.args
    parameters = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    constant = {a.arg for a in parameters if a.annotation is not None and "constexpr" in _ast.unparse(a.annotation)}
    read = set()
    for node in _ast.walk(function):
        if isinstance(node, _ast.Call) and _tl_name(node.func) in ("load", "store") and node.args:
            read |= {n.id for n in _ast.walk(node.args[0]) if isinstance(n, _ast.Name)}
    return [a.arg for a in parameters if a.arg in read and a.arg not in constant]


def _loaded(node, pointers: list[str]) -> list:
    """For each load inside ``node``, the positions among ``pointers`` its address reads, sorted."""
    found = []
    for inner in _ast.walk(node):
        if isinstance(inner, _ast.Call) and _tl_name(inner.func) == "load" and inner.args:
            found.append(tuple(sorted({pointers.index(n.id) for n in _ast.walk(inner.args[0])
                                       if isinstance(n, _ast.Name) and n.id in pointers})))
    return sorted(found)


def _skeleton(node, pointers: list[str]):
    """What ``node`` computes with its names left out: each load as the pointer positions its address reads,
    each other name as one placeholder, constants and ``tl.`` attributes as written, every operation kept."""
    if isinstance(node, list):
        return [_skeleton(n, pointers) for n in node]
    if not isinstance(node, _ast.AST):
        return node
    if isinstance(node, _ast.Call) and _tl_name(node.func) == "load":
        return ("load", _loaded(node, pointers))
    if isinstance(node, _ast.Name):
        return "name"
    if _literal(node):
        return _ast.dump(node)
    return (type(node).__name__,) + tuple(
        type(getattr(node, f)).__name__ if f in ("op",) else
        [type(o).__name__ for o in node.ops] if f == "ops" else _skeleton(getattr(node, f, None), pointers)
        for f in node._fields if f not in ("ctx", "type_comment"))


def _step(node, key):
    return node[key] if isinstance(key, int) else getattr(node, key, None)


def _same_way(mine, theirs, path, pointers: tuple[list[str], list[str]]) -> bool:
    """Whether the port's ``mine`` reaches, along ``path``, a subtree through the same operations as
    ``theirs``: at each step the same node type, operator and called name or attribute, and each operand
    beside the way loading through the same pointer positions."""
    for depth, key in enumerate(path):
        if type(mine) is not type(theirs):
            return False
        if isinstance(theirs, list):
            if len(mine) != len(theirs):
                return False
            siblings = [(a, b) for i, (a, b) in enumerate(zip(mine, theirs)) if i != key]
        else:
            if isinstance(theirs, (_ast.BinOp, _ast.UnaryOp, _ast.BoolOp)) and type(mine.op) is not type(theirs.op):
                return False
            if isinstance(theirs, _ast.Compare) and [type(o) for o in mine.ops] != [type(o) for o in theirs.ops]:
                return False
            if isinstance(theirs, _ast.Attribute) and mine.attr != theirs.attr:
                return False
            if isinstance(theirs, _ast.Call):
                if not isinstance(mine.func, type(theirs.func)):
                    return False
                if isinstance(theirs.func, _ast.Attribute) and mine.func.attr != theirs.func.attr:
                    return False
                if isinstance(theirs.func, _ast.Name) or _tl_name(theirs.func) is not None:
                    if _ast.dump(mine.func) != _ast.dump(theirs.func):
                        return False
                if [k.arg for k in mine.keywords] != [k.arg for k in theirs.keywords]:
                    return False
            fields = [f for f in theirs._fields if f not in ("ctx", "type_comment", "op", "ops")]
            siblings = [(getattr(mine, f, None), getattr(theirs, f, None)) for f in fields if f != key]
        for a, b in siblings:
            for x, y in ((a, b),) if not isinstance(b, list) else (zip(a, b) if isinstance(a, list)
                                                                     and len(a) == len(b) else [(None, b)]):
                if x is None and y is None:
                    continue
                if (x is None) != (y is None):
                    return False
                if isinstance(y, _ast.AST) and _skeleton(x, pointers[0]) != _skeleton(y, pointers[1]):
                    return False
        mine, theirs = _step(mine, key), _step(theirs, key)
        if mine is None or theirs is None:
            return False
    return True


def port_has_retyped_value(old_node, new_node, port_node) -> list[str] | None:
    """``port-has-retyped-value``: the new constants as written when upstream's change, read on the normal
    forms of its two sides (stores with their values written in), only replaces constants or ``tl.`` dtypes in
    the value of its one ``tl.store``, and the port's one store reaches each such place the same way (see
    ``_same_way``) and holds the new constant there, never the old; None otherwise."""
    forms = [normal_form(n, True) for n in (old_node, new_node, port_node)]
    if None in forms:
        return None
    old, new, port = (_python_function(text) for text, _ in forms)
    if old is None or new is None or port is None:
        return None
    if len(old.body) != len(new.body) or _ast.dump(old.args) != _ast.dump(new.args):
        return None
    olds, news, ports = _stores(old), _stores(new), _stores(port)
    if len(olds) != 1 or len(news) != 1 or len(ports) != 1:
        return None
    stored = [i for i, s in enumerate(old.body) if isinstance(s, _ast.Expr) and s.value is olds[0]]
    if len(stored) != 1 or not (isinstance(new.body[stored[0]], _ast.Expr) and new.body[stored[0]].value is news[0]):
        return None  # the store is a statement of the body itself, nothing around it
    paths = _touched(olds[0], news[0])
    rest = [(a, b) for i, (a, b) in enumerate(zip(old.body, new.body)) if i != stored[0]]
    if not paths or any(_ast.dump(a) != _ast.dump(b) for a, b in rest):
        return None
    pointers = (_pointers(port), _pointers(new))
    if len(pointers[0]) != len(pointers[1]) or not pointers[1]:
        return None
    written = []
    for path in paths:
        if not _same_way(ports[0], news[0], path, pointers):
            return None
        mine, was, now = ports[0], olds[0], news[0]
        for key in path:
            mine, was, now = _step(mine, key), _step(was, key), _step(now, key)
        if mine is None or _ast.dump(mine) != _ast.dump(now) or _ast.dump(mine) == _ast.dump(was):
            return None
        written.append(_ast.unparse(now))
    return written
