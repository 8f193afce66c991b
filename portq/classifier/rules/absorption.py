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
from portq.language.symbols import language_for_path

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
    """The absorbed-callee rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

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
