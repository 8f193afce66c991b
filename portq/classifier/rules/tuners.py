"""Tuner rules: a tuning decorator the port does not carry (DESIGN §5 and §6: form without meaning, wrappers).

Upstreams that autotune their host functions wrap them in a tuner of their
own: a decorator called with the configurations it times, a configuration to
use when tuning is off, the arguments whose change makes it time again. A
port that picks its launch parameters itself calls the function directly:

* ``uncarried-tuner`` (Python): a definition whose whole change lies in the
  arguments of one decorator that is a tuner on both sides (called with a
  ``configs`` keyword: the search space it times), the function's own text
  and every other decorator token-equal, ported by a definition that
  carries no decorator of that name. The tuner only chooses among launch
  parameters the port passes itself, so its arguments are an interface the
  port lacks: NOT_APPLICABLE/not-carried. A changed argument that lists the
  function's parameters by name (what a tuner resets or restores between
  timed runs: the function's buffers), a change to the function itself, a
  port that carries the tuner, a decorator added or dropped, or one without
  ``configs``, is compared as before. Triton's own ``@triton.autotune`` is
  decided first by ``untuned-port``, argument by argument.

Example diff (NOT_APPLICABLE/not-carried; the port: ``def scale(x, y, block)``,
no decorator)::

     @tune(
         configs=[TuneConfig({"BLOCK": b}) for b in (64, 128, 256)],
    +    fallback=TuneConfig({"BLOCK": 128}),
         retime_on={"x.dtype"},
     )
     def scale_rows(x, y, BLOCK):

This module states the rule and holds the proof on syntax trees; the proof
reads no git, no tree index and no verdict table, and the rule never names
a corpus symbol, path or commit. ``TunerRules`` holds the method of the
verdict table (``portq.classifier.verdicts.SymbolClassifier``) that applies
it; it must not import the verdict table or anything after it.
"""

from __future__ import annotations

from portq.classifier.rules import Rule
from portq.classifier.rules.wrappers import _decorator_name, _split, _text
from portq.core.model import TouchedSymbol
from portq.language.signatures import comment_free_tokens
from portq.language.symbols import language_for_path

RULES = (
    Rule("uncarried-tuner", ("NOT_APPLICABLE",),
         "A Python definition whose only change is the arguments of a tuning decorator (one called with a "
         "`configs` keyword on both sides), the function and its other decorators token-equal, ported by a "
         "definition that carries no decorator of that name, changed how a tuner the port lacks picks launch "
         "parameters the port passes itself: not-carried. An argument listing the function's parameters by name "
         "(buffers reset or restored between timed runs) is compared.",
         "     @tune(\n         configs=[TuneConfig({\"BLOCK\": b}) for b in (64, 128, 256)],\n"
         "+    fallback=TuneConfig({\"BLOCK\": 128}),\n     )\n     def scale_rows(x, y, BLOCK):  "
         "(the port: def scale(x, y, block), no decorator)",
         "classifier.rules.tuners.tuner_arguments_only, classifier.rules.tuners.TunerRules._uncarried_tuner"),
)


def _arguments(decorator) -> dict[str, object] | None:
    """A decorator call's arguments as name (or ``#position``) -> its value node; None for a decorator not
    called."""
    expression = decorator.named_children[0] if decorator.named_children else None
    if expression is None or expression.type != "call":
        return None
    arguments = expression.child_by_field_name("arguments")
    found: dict[str, object] = {}
    for position, argument in enumerate(arguments.named_children if arguments is not None else ()):
        if argument.type == "comment":
            continue
        if argument.type == "keyword_argument":
            found[_text(argument.child_by_field_name("name"))] = argument.child_by_field_name("value")
        else:
            found[f"#{position}"] = argument
    return found


def _parameter_names(function) -> set[str]:
    parameters = function.child_by_field_name("parameters")
    names = set()
    for parameter in parameters.named_children if parameters is not None else ():
        name = parameter if parameter.type == "identifier" else parameter.child_by_field_name("name")
        if name is None and parameter.named_children and parameter.named_children[0].type == "identifier":
            name = parameter.named_children[0]
        if name is not None and name.type == "identifier":
            names.add(_text(name))
    return names


def _lists_parameters(value, parameters: set[str]) -> bool:
    """Whether ``value`` is a list, tuple or set display of string literals, one of them a parameter's name."""
    if value is None or value.type not in ("list", "tuple", "set"):
        return False
    items = [c for c in value.named_children if c.type != "comment"]
    if not items or any(c.type != "string" for c in items):
        return False
    return any(_text(c)[1:-1] in parameters for c in items if len(_text(c)) >= 2)


def tuner_arguments_only(before, after) -> str | None:
    """The name of the tuning decorator whose arguments are ``after``'s whole change from ``before`` (the
    function and every other decorator token-equal, the decorator called with ``configs`` on both sides, no
    changed argument listing the function's parameters by name); else None."""
    old_decorators, old_function = _split(before)
    new_decorators, new_function = _split(after)
    if old_function is None or new_function is None or len(old_decorators) != len(new_decorators) \
            or comment_free_tokens(old_function) != comment_free_tokens(new_function):
        return None
    changed = [(old, new) for old, new in zip(old_decorators, new_decorators)
               if comment_free_tokens(old) != comment_free_tokens(new)]
    if len(changed) != 1:
        return None
    old, new = changed[0]
    named = _decorator_name(old)
    if named is None or named != _decorator_name(new) or not named[1]:
        return None
    if comment_free_tokens(old.named_children[0].child_by_field_name("function")) \
            != comment_free_tokens(new.named_children[0].child_by_field_name("function")):
        return None
    was, now = _arguments(old), _arguments(new)
    if was is None or now is None or "configs" not in was or "configs" not in now:
        return None
    parameters = _parameter_names(new_function) | _parameter_names(old_function)
    for name, value in now.items():
        kept = was.get(name)
        if kept is not None and comment_free_tokens(kept) == comment_free_tokens(value):
            continue
        if _lists_parameters(value, parameters):
            return None
    if any(_lists_parameters(value, parameters) for name, value in was.items() if name not in now):
        return None
    return named[0]


def carries_decorator(node, name: str) -> bool:
    """Whether a definition node carries a decorator calling (or naming) ``name``."""
    decorators, _ = _split(node)
    return any((_decorator_name(d) or ("", False))[0] == name for d in decorators)


class TunerRules:
    """The uncarried-tuner rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _uncarried_tuner(self, symbol: TouchedSymbol, definition) -> str | None:
        """``uncarried-tuner``: the name of the tuning decorator whose arguments are the symbol's whole change,
        when the port at ``definition`` carries no decorator of that name; else None."""
        if language_for_path(definition.file) != "python":
            return None
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return None
        name = tuner_arguments_only(sides[0].node, sides[1].node)
        if name is None:
            return None
        mine = self._port_node(definition)
        return name if mine is not None and not carries_decorator(mine, name) else None
