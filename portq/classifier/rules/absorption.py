"""Absorption rules: a forwarding definition that takes over the body of the one it called (DESIGN §5, form
without meaning).

Upstreams that register their launches as custom operators often keep two
layers, an outer function (tuned, say) that only hands its parameters on and
an inner one (registered) that does the work, and later merge them:

* ``absorbed-callee`` (Python): a definition whose whole body before the
  commit was one call (or ``return`` of one) of another top-level function
  of its module, passing each of its parameters, once, to the callee's
  parameter of the same name (by keyword, or by position where the names
  line up) and nothing else, and whose new text is that callee's old
  definition under the caller's name and parameter list: the callee's body
  token-equal, the caller's decorators first and the callee's after them,
  in their order. Calling the merged function runs what calling the pair
  ran: the same values reach the same body under the same wrappers, outer
  to inner. NOT_APPLICABLE/cosmetic. Where the only other change is the
  arguments of one of the caller's tuning decorators (``uncarried-tuner``)
  and the port carries no decorator of that name, NOT_APPLICABLE/
  not-carried. An argument computed rather than passed on, a parameter left
  out or passed twice, a decorator dropped, added or moved, a body that
  differs from the callee's, or a callee that returns a value the caller
  used to drop (the merged function now returns it), stays flagged.

* ``folded-setup-context`` (Python): PyTorch's two forms of an autograd
  ``Function``: ``forward(*inputs)`` beside ``setup_context(ctx, inputs,
  output)``, or ``forward(ctx, *inputs)`` that saves for backward itself.
  A commit that moves from the first to the second, its ``setup_context``
  removed and declared not carried by the tree, changes nothing the ported
  ``forward`` computes when the new ``forward`` is the old one's statements,
  then its returned value bound to the name (or the names) ``setup_context``
  read the output as, then ``setup_context``'s statements that only write
  the context (``ctx.save_for_backward(...)``, ``ctx.attr = value``: no
  call in their arguments, reading only the inputs ``forward`` unpacked the
  same way, the output names and the context), then ``return`` of that
  binding: the same value. Where the binding unpacked several outputs and
  the ``return`` keeps one of them, ``apply`` now returns that one alone:
  the port's ``forward`` must already return a single value (no tuple or
  list display, down the calls of its own file it returns through).
  NOT_APPLICABLE/not-carried. A changed computation, a moved statement that
  writes anything but the context, a ``setup_context`` the tree does not
  declare, or a port that returns several values, stays flagged.

Example diff (cosmetic; ``_scale_rows`` removed in the same commit)::

    -@register_op("lib::scale_rows")
    -def _scale_rows(x, y, BLOCK):
    -    scale_kernel[grid](x, y, BLOCK=BLOCK)
     @tune(configs=CONFIGS)
    +@register_op("lib::scale_rows")
     def scale_rows(x, y, BLOCK):
    -    _scale_rows(x=x, y=y, BLOCK=BLOCK)
    +    scale_kernel[grid](x, y, BLOCK=BLOCK)

This module states the rule and holds the proof on syntax trees; the proof
reads no git, no tree index and no verdict table, and the rule never names
a corpus symbol, path or commit. ``AbsorptionRules`` holds the method of the
verdict table (``portq.classifier.verdicts.SymbolClassifier``) that applies
it; it must not import the verdict table or anything after it.
"""

from __future__ import annotations

from portq.classifier.rules import Rule
from portq.classifier.rules.tuners import carries_decorator, tuner_arguments_only
from portq.classifier.rules.wrappers import _own_nodes, _split, _text
from portq.core.model import TouchedSymbol
from portq.language.signatures import comment_free_tokens
from portq.language.symbols import language_for_path, symbol_table

RULES = (
    Rule("absorbed-callee", ("NOT_APPLICABLE",),
         "A Python definition whose whole old body called another top-level function of its module with each of "
         "its parameters passed on unchanged to the parameter of the same name, and whose new text is that "
         "function's old body under its own name and parameters, its own decorators outside the callee's, runs "
         "the same: cosmetic (not-carried where a tuner the port lacks also changed its arguments). A computed "
         "argument, a decorator dropped or reordered, a differing body or a newly returned value stays flagged.",
         "-@register_op(\"lib::scale_rows\")\n-def _scale_rows(x, y, BLOCK):\n-    k[grid](x, y, BLOCK=BLOCK)\n"
         " @tune(configs=CONFIGS)\n+@register_op(\"lib::scale_rows\")\n def scale_rows(x, y, BLOCK):\n"
         "-    _scale_rows(x=x, y=y, BLOCK=BLOCK)\n+    k[grid](x, y, BLOCK=BLOCK)",
         "classifier.rules.absorption.absorbed_callee, classifier.rules.absorption.AbsorptionRules._absorbed"),
    Rule("folded-setup-context", ("NOT_APPLICABLE",),
         "An autograd `Function`'s `forward` that takes over its removed `setup_context` (declared not carried by "
         "the tree): the old statements, the returned value bound to the name(s) `setup_context` read the output "
         "as, `setup_context`'s statements that only write the context (no call in their arguments, reading only "
         "the unpacked inputs, the outputs and the context), then `return` of that binding, computes and returns "
         "the same: not-carried. Returning one of several unpacked outputs needs a port `forward` that returns a "
         "single value. A changed computation, a moved statement writing anything but the context, an undeclared "
         "`setup_context` or a port returning several values stays flagged.",
         "-def forward(*args, **kwargs):\n-    x, = args\n-    return Op.__forward(x)\n"
         "-def setup_context(ctx, inputs, output):\n-    x, = inputs\n-    ctx.save_for_backward(output)\n"
         "+def forward(ctx, *args, **kwargs):\n+    x, = args\n+    output = Op.__forward(x)\n"
         "+    ctx.save_for_backward(output)\n+    return output",
         "classifier.rules.absorption.folded_setup_context, classifier.rules.absorption.AbsorptionRules._folded_setup"),
)


def _statements(function) -> list:
    """The statements of a function's body, comments and a leading docstring aside."""
    body = function.child_by_field_name("body")
    statements = [c for c in (body.named_children if body is not None else ()) if c.type != "comment"]
    if statements and statements[0].type == "expression_statement" and statements[0].named_children \
            and statements[0].named_children[0].type == "string":
        statements = statements[1:]
    return statements


def _plain_parameters(function) -> list[str] | None:
    """A function's parameter names in order; None where one is not a plain name (``*args``, ``**kw``, ``/``,
    ``*``)."""
    parameters = function.child_by_field_name("parameters")
    names = []
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type == "comment":
            continue
        if parameter.type == "identifier":
            names.append(_text(parameter))
            continue
        if parameter.type not in ("typed_parameter", "default_parameter", "typed_default_parameter"):
            return None
        name = parameter.child_by_field_name("name")
        if name is None and parameter.named_children and parameter.named_children[0].type == "identifier":
            name = parameter.named_children[0]
        if name is None or name.type != "identifier":
            return None
        names.append(_text(name))
    return names


def _forwarded_call(function) -> tuple[str, bool, list[tuple[str | int, str]]] | None:
    """(the callee's name, whether its value is returned, what is passed: keyword or position -> the parameter)
    where ``function``'s whole body is one call of a plain
    name passing each of its parameters once to the parameter of the same name; else None."""
    statements = _statements(function)
    if len(statements) != 1 or statements[0].type not in ("expression_statement", "return_statement"):
        return None
    statement = statements[0]
    call = statement.named_children[0] if len(statement.named_children) == 1 else None
    if call is None or call.type != "call":
        return None
    callee = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    own = _plain_parameters(function)
    if callee is None or callee.type != "identifier" or arguments is None or own is None:
        return None
    passed: list[tuple[str | int, str]] = []
    for position, argument in enumerate(a for a in arguments.named_children if a.type != "comment"):
        if argument.type == "keyword_argument":
            value = argument.child_by_field_name("value")
            if value is None or value.type != "identifier":
                return None
            passed.append((_text(argument.child_by_field_name("name")), _text(value)))
        elif argument.type == "identifier":
            passed.append((position, _text(argument)))
        else:
            return None
    values = [value for _, value in passed]
    if sorted(values) != sorted(own) or len(set(values)) != len(values):
        return None
    for key, value in passed:
        if isinstance(key, str) and key != value:
            return None
    return _text(callee), statement.type == "return_statement", passed


def absorbed_callee(before, after, definitions: dict[str, list]) -> tuple[str, str | None] | None:
    """(the callee ``after`` absorbed, the tuning decorator whose arguments also changed or None) where
    ``before`` only handed its parameters on to a top-level function among ``definitions`` (name -> the old
    module's top-level definition nodes of that name) and ``after`` is that function's old text under
    ``before``'s name, parameters and decorators; else None."""
    old_decorators, old_function = _split(before)
    new_decorators, new_function = _split(after)
    if old_function is None or new_function is None or old_function.type != "function_definition" \
            or new_function.type != "function_definition":
        return None
    forwarded = _forwarded_call(old_function)
    if forwarded is None:
        return None
    name, returned, passed = forwarded
    found = definitions.get(name, [])
    if len(found) != 1 or name == _text(old_function.child_by_field_name("name")):
        return None
    callee_decorators, callee = _split(found[0])
    theirs = _plain_parameters(callee) if callee is not None and callee.type == "function_definition" else None
    if theirs is None or sorted(theirs) != sorted(_plain_parameters(old_function)):
        return None
    if any(isinstance(key, int) and (key >= len(theirs) or theirs[key] != value) for key, value in passed):
        return None
    # The new definition: the callee's return annotation and body, the caller's name and parameters.
    for field in ("name", "parameters"):
        if comment_free_tokens(new_function.child_by_field_name(field)) \
                != comment_free_tokens(old_function.child_by_field_name(field)):
            return None
    old_return, new_return = callee.child_by_field_name("return_type"), new_function.child_by_field_name("return_type")
    if (old_return is None) != (new_return is None) \
            or (old_return is not None and comment_free_tokens(old_return) != comment_free_tokens(new_return)):
        return None
    if comment_free_tokens(new_function.child_by_field_name("body")) \
            != comment_free_tokens(callee.child_by_field_name("body")):
        return None
    if not returned and any(n.type == "return_statement" and n.named_children for n in _own_nodes(callee)):
        return None  # the caller dropped the callee's value; the merged function now returns it
    if callee.type != "function_definition" or any(c.type == "async" for c in callee.children):
        return None
    # The decorators: the caller's, outside the callee's, each token-equal but for one tuner's arguments.
    if len(new_decorators) != len(old_decorators) + len(callee_decorators):
        return None
    tuner = None
    for place, (old, new) in enumerate(zip(old_decorators + callee_decorators, new_decorators)):
        if comment_free_tokens(old) == comment_free_tokens(new):
            continue
        if tuner is not None or place >= len(old_decorators):
            return None
        changed = tuner_arguments_only(_with_function(old, old_function), _with_function(new, old_function))
        if changed is None:
            return None
        tuner = changed
    return name, tuner


_DISPLAYS = frozenset({"expression_list", "tuple", "list", "pattern_list", "tuple_pattern", "list_pattern"})
_BINDERS = frozenset({"assignment", "augmented_assignment", "for_statement", "for_in_clause", "named_expression",
                      "as_pattern", "with_item"})


def _parameter_names(function) -> list[str] | None:
    """A function's parameters as ``name``, ``*name`` or ``**name``, annotations aside; None where one has a
    default or is no plain name (``/``, a bare ``*``)."""
    parameters = function.child_by_field_name("parameters")
    names: list[str] = []
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type == "comment":
            continue
        if parameter.type == "typed_parameter":
            parameter = parameter.named_children[0] if parameter.named_children else None
            if parameter is None:
                return None
        if parameter.type == "identifier":
            names.append(_text(parameter))
        elif parameter.type in ("list_splat_pattern", "dictionary_splat_pattern") and parameter.named_children \
                and parameter.named_children[0].type == "identifier":
            names.append(("*" if parameter.type == "list_splat_pattern" else "**")
                         + _text(parameter.named_children[0]))
        else:
            return None
    return names


def _assignment(statement):
    """(left, right) of a statement that is one plain ``left = right``; None otherwise."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = statement.named_children[0]
    if assignment.type != "assignment" or assignment.child_by_field_name("type") is not None:
        return None
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    return (left, right) if left is not None and right is not None else None


def _read_names(node) -> set[str]:
    """The names ``node`` reads: its identifiers, attribute and keyword names aside."""
    names: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            parent = current.parent
            if parent is not None and ((parent.type == "attribute" and parent.child_by_field_name("attribute") == current)
                                       or (parent.type == "keyword_argument"
                                           and parent.child_by_field_name("name") == current)):
                continue
            names.add(_text(current))
        stack.extend(current.named_children)
    return names


def _bound_names(nodes) -> set[str]:
    """The names any assignment, loop, ``with`` or walrus among ``nodes`` (and below them) binds."""
    bound: set[str] = set()
    stack = list(nodes)
    while stack:
        current = stack.pop()
        if current.type in _BINDERS:
            target = current.child_by_field_name("left") or current.child_by_field_name("name") \
                or current.child_by_field_name("alias")
            if current.type == "with_item":
                value = current.child_by_field_name("value")
                target = value.child_by_field_name("alias") if value is not None and value.type == "as_pattern" \
                    else None
            if target is not None:
                bound |= _read_names(target) if target.type != "identifier" else {_text(target)}
        stack.extend(current.named_children)
    return bound


def _context_only(statement, ctx: str) -> bool:
    """Whether ``statement`` only writes the context ``ctx``: ``ctx.method(...)`` or ``ctx.attr = value``, with
    no call, assignment or lambda in what it passes."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return False
    expression = statement.named_children[0]
    if expression.type == "call":
        target, passed = expression.child_by_field_name("function"), expression.child_by_field_name("arguments")
    elif expression.type == "assignment" and expression.child_by_field_name("type") is None:
        target, passed = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    else:
        return False
    if target is None or passed is None or target.type != "attribute":
        return False
    owner = target.child_by_field_name("object")
    if owner is None or owner.type != "identifier" or _text(owner) != ctx:
        return False
    stack = list(passed.named_children) if expression.type == "call" else [passed]
    while stack:
        current = stack.pop()
        if current.type in ("call", "assignment", "augmented_assignment", "named_expression", "lambda", "await",
                            "yield"):
            return False
        stack.extend(current.named_children)
    return True


def folded_setup_context(before, setup, after) -> bool | None:
    """Rule ``folded-setup-context``: whether the autograd ``forward`` ``after`` is ``before`` with ``setup``
    (its class's old ``setup_context``) folded in: True where it returns one of several outputs it used to
    return whole (``apply``'s value narrows to that one), False where it returns the same value; None where
    the rule does not hold."""
    old_decorators, old = _split(before)
    new_decorators, new = _split(after)
    _, context = _split(setup)
    if any(f is None or f.type != "function_definition" or any(c.type == "async" for c in f.children)
           for f in (old, new, context)):
        return None
    if [comment_free_tokens(d) for d in old_decorators] != [comment_free_tokens(d) for d in new_decorators]:
        return None
    takes = _plain_parameters(context)
    old_names, new_names = _parameter_names(old), _parameter_names(new)
    if takes is None or len(takes) != 3 or old_names is None or new_names is None \
            or new_names != [takes[0]] + old_names:
        return None
    ctx, inputs, output = takes
    statements, moved = _statements(old), _statements(context)
    if not statements or statements[-1].type != "return_statement" or len(statements[-1].named_children) != 1 \
            or sum(n.type == "return_statement" for n in _own_nodes(old)) != 1:
        return None
    computed = statements[-1].named_children[0]
    unpacked_inputs, unpacked_output, kept = None, None, []
    for statement in moved:
        pair = _assignment(statement)
        if pair is not None and pair[1].type == "identifier" and _text(pair[1]) == inputs and unpacked_inputs is None:
            unpacked_inputs = pair[0]
        elif pair is not None and pair[1].type == "identifier" and _text(pair[1]) == output \
                and unpacked_output is None and not kept:
            unpacked_output = pair[0]
        elif _context_only(statement, ctx):
            kept.append(statement)
        else:
            return None
    # The inputs setup_context unpacked are forward's own: its plain parameters, or the unpacking of its splat,
    # bound once and never rebound before the value is computed.
    taken_in: set[str] = set()
    if unpacked_inputs is not None:
        taken_in = _read_names(unpacked_inputs)
        splat = next((n[1:] for n in old_names if n.startswith("*") and not n.startswith("**")), None)
        unpacking = [s for s in statements[:-1] if (p := _assignment(s)) is not None and p[1].type == "identifier"
                     and _text(p[1]) == splat and comment_free_tokens(p[0]) == comment_free_tokens(unpacked_inputs)]
        plain = [n for n in old_names if not n.startswith("*")]
        if len(unpacking) == 1:
            others = [s for s in statements[:-1] if s is not unpacking[0]] + [computed]
        elif plain == [_text(i) for i in unpacked_inputs.named_children if i.type == "identifier"] \
                and len(plain) == len(unpacked_inputs.named_children):
            others = statements[:-1] + [computed]
        else:
            return None
        if _bound_names(others) & taken_in or _bound_names([computed]):
            return None
    outputs = {output} if unpacked_output is None else _read_names(unpacked_output)
    if unpacked_output is not None and (unpacked_output.type not in _DISPLAYS
                                        or any(c.type != "identifier" for c in unpacked_output.named_children)):
        return None
    for statement in kept:
        if not _read_names(statement) <= taken_in | outputs | {ctx}:
            return None
    # The new forward: the old statements, the value bound, the context statements, the binding returned.
    binding = unpacked_output if unpacked_output is not None else None
    expected = [comment_free_tokens(s) for s in statements[:-1]]
    now = _statements(new)
    if len(now) != len(expected) + len(kept) + 2 or sum(n.type == "return_statement" for n in _own_nodes(new)) != 1:
        return None
    if [comment_free_tokens(s) for s in now[:len(expected)]] != expected:
        return None
    bound = _assignment(now[len(expected)])
    if bound is None or comment_free_tokens(bound[1]) != comment_free_tokens(computed):
        return None
    target = comment_free_tokens(bound[0])
    if target != (comment_free_tokens(binding) if binding is not None else [output]):
        return None
    if [comment_free_tokens(s) for s in now[len(expected) + 1:-1]] != [comment_free_tokens(s) for s in kept]:
        return None
    last = now[-1]
    if last.type != "return_statement" or len(last.named_children) != 1:
        return None
    returned = last.named_children[0]
    if comment_free_tokens(returned) == target or (returned.type == "parenthesized_expression"
                                                   and comment_free_tokens(returned)[1:-1] == target):
        return False
    if binding is not None and returned.type == "identifier" and _text(returned) in outputs:
        return True
    return None


def returns_one_value(function, definitions: dict[str, object], owner: str | None, depth: int = 0) -> bool:
    """Rule ``folded-setup-context``: whether every ``return`` of the Python function ``function`` hands back a
    single value: no tuple or list display, no name bound to one, and a call of a definition of its own file
    (``definitions``: qualified name -> node; ``owner``, its class, for ``Owner.method`` and ``self.method``)
    returning a single value in turn."""
    _, function = _split(function)
    if function is None or depth > 3:
        return False
    returns = [n for n in _own_nodes(function) if n.type == "return_statement"]
    if not returns:
        return False
    for statement in returns:
        values = [c for c in statement.named_children if c.type != "comment"]
        if len(values) != 1:
            return False
        value = values[0]
        while value.type == "parenthesized_expression" and len(value.named_children) == 1:
            value = value.named_children[0]
        if value.type in _DISPLAYS or value.type in ("list_comprehension", "generator_expression"):
            return False
        if value.type == "identifier":
            for node in _own_nodes(function):
                pair = _assignment(node) if node.type == "expression_statement" else None
                if pair is not None and pair[0].type == "identifier" and _text(pair[0]) == _text(value) \
                        and pair[1].type in _DISPLAYS:
                    return False
        if value.type == "call":
            callee = value.child_by_field_name("function")
            name = _text(callee) if callee is not None else ""
            head, _, tail = name.rpartition(".")
            if head in ("self", "cls") and owner:
                name = f"{owner}.{tail}"
            found = definitions.get(name)
            if found is not None:
                inner_owner = name.rpartition(".")[0] or None
                if not returns_one_value(found, definitions, inner_owner, depth + 1):
                    return False
    return True


class _Decorated:
    """A decorator and a function, standing in for a decorated definition where ``tuner_arguments_only`` reads
    one: its decorators and its function."""

    type = "decorated_definition"

    def __init__(self, decorator, function) -> None:
        self.named_children = [decorator, function]
        self._function = function

    def child_by_field_name(self, field):
        return self._function if field == "definition" else None


def _with_function(decorator, function):
    return _Decorated(decorator, function)


class AbsorptionRules:
    """The absorbed-callee and folded-setup-context rules, as methods of the verdict table
    (``verdicts.SymbolClassifier``)."""

    def _absorbed(self, symbol: TouchedSymbol, definition) -> tuple[str, str | None] | None:
        """``absorbed-callee``: (the callee the symbol absorbed, a tuner whose arguments also changed and the
        port at ``definition`` does not carry, or None); None where the rule does not hold."""
        if language_for_path(definition.file) != "python":
            return None
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return None
        table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        if table is None or table.fallback:
            return None
        definitions: dict[str, list] = {}
        for d in table.definitions:
            if d.node is not None and d.qualified_name == d.name:
                definitions.setdefault(d.name, []).append(d.node)
        found = absorbed_callee(sides[0].node, sides[1].node, definitions)
        if found is None:
            return None
        if found[1] is not None:
            mine = self._port_node(definition)
            if mine is None or carries_decorator(mine, found[1]):
                return None
        return found

    def _folded_setup(self, symbol: TouchedSymbol, definition) -> str | None:
        """``folded-setup-context``: the qualified name of the removed ``setup_context`` the symbol, an autograd
        ``forward`` ported at ``definition``, took over, the tree declaring it not carried; None where the rule
        does not hold."""
        if language_for_path(definition.file) != "python" or symbol.name != "forward" \
                or "." not in symbol.qualified_name:
            return None
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return None
        owner = symbol.qualified_name.rpartition(".")[0]
        setup = f"{owner}.setup_context"
        before = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        after = self._table(symbol.new_blob, symbol.path)
        if before is None or after is None or before.fallback or after.fallback \
                or any(d.qualified_name == setup for d in after.definitions):
            return None
        removed = [d for d in before.definitions if d.qualified_name == setup and d.node is not None]
        paths = {symbol.path} | ({symbol.old_path} if symbol.old_path else set())
        if len(removed) != 1 or not any(not a.param for a in self.index.not_carried_for(
                self.upstream, paths, "setup_context", setup)):
            return None
        narrowed = folded_setup_context(sides[0].node, removed[0].node, sides[1].node)
        if narrowed is None:
            return None
        if narrowed:
            source = self.index.source(definition.file)
            table = symbol_table(source, definition.file) if source is not None else None
            mine = self._port_node(definition)
            if table is None or table.tree is None or mine is None:
                return None
            nodes = {d.qualified_name: d.node for d in table.definitions if d.node is not None}
            if not returns_one_value(mine, nodes, definition.qualified_name.rpartition(".")[0] or None):
                return None
        return setup
