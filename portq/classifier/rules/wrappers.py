"""Wrapper rules: a wrapper added around a ported definition that leaves its default path alone (DESIGN §6).

Upstreams that grow several backends register or dispatch their functions:
a decorator appears above a definition whose body does not change. What the
port runs changes only if the decorator changes what the name is bound to:

* ``registry-decorator`` (Python): decorators added to a definition whose
  own text (without its decorators) is unchanged, each of which provably
  hands the function back (``@register``: a function whose every ``return``
  returns its first parameter, never rebound; ``@register(...)``: a factory
  whose every ``return`` returns such a function defined in it), defined in a
  Python file of the same commit. The name is still bound to the same body:
  NOT_APPLICABLE/cosmetic. A decorator that returns a wrapper of its own, or
  one whose definition the commit does not show, is compared as before.

* ``macro-alias`` (C/C++): a macro use renamed to a macro that the commit's
  files define, in the branch the default build compiles, as the old name
  (``#ifdef DISABLE_X`` … ``#else`` ``#define X_SWITCH BOOL_SWITCH``, where
  no source defines ``DISABLE_X``): the same expansion, so the same code.
  Conditionals are read as ``default-build`` reads them (a macro no source
  defines is off, ``#if`` expressions are not known and keep their
  ``#define``s out); a name defined twice in the default build is no alias.

* ``untuned-port`` (Python/Triton): a kernel whose only change is the
  ``configs`` or ``key`` argument of its ``@triton.autotune`` decorator (the key
  only says when the tuner times its configs again; the function,
  its other decorators and every other argument of the tuner token-equal),
  ported by a definition with no ``autotune`` decorator. The configs are
  the tuner's search space; each must compute the same, so the change is
  in which launch parameters get timed, an interface a port that picks its
  own launch parameters does not have: NOT_APPLICABLE/not-carried. The
  tuner's ``key``, ``reset_to_zero`` or ``restore_value`` (what is reset
  between timed runs) changing, or a port that autotunes too, is compared.

Example diff (NOT_APPLICABLE/cosmetic, with ``register_backend`` returning
``fn`` from its inner ``register(fn)``)::

    +@register_backend("cuda")
     def norm_forward(x, out, mode=1):

This module states the rule and holds the proof on syntax trees; the proof
reads no git, no tree index and no verdict table, and the rule never names
a corpus symbol, path or commit.

The code: ``WrapperRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules. It reads the in-tree index and the upstream side through the
table it is part of; it must not import the verdict table or anything after it,
and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from portq.classifier.rules import Rule, branches
from portq.classifier.rules.form import qualifier_free_tokens
from portq.core.model import TouchedSymbol
from portq.language.signatures import comment_free_tokens
from portq.language.symbols import language_for_path

RULES = (
    Rule("registry-decorator", ("NOT_APPLICABLE",),
         "Decorators added to a Python definition whose own text is unchanged, each defined in the commit as a "
         "function that returns its argument (or a factory returning such a function), leave the name bound to "
         "the same body: cosmetic.",
         "+@register_backend(\"cuda\")\n def norm_forward(x, out, mode=1):",
         "classifier.rules.wrappers.added_registrations, classifier.rules.wrappers.WrapperRules._registered_only"),
    Rule("untuned-port", ("NOT_APPLICABLE",),
         "A Triton kernel whose only change is the `configs` or `key` argument of its `@triton.autotune` "
         "decorator, ported by a definition that is not autotuned, changed which launch configurations a tuner "
         "times and when it times them again, an interface a port choosing its own launch parameters lacks: "
         "not-carried. A change to what the tuner resets or restores between runs is compared.",
         "-@triton.autotune(configs=[triton.Config({}, num_warps=1), ...], key=[\"N\"])\n"
         "+@triton.autotune(configs=autotune_configs(), key=[\"N\"])  (the port: @triton.jit only)",
         "classifier.rules.wrappers.configs_only, classifier.rules.wrappers.WrapperRules._untuned_only"),
    Rule("macro-alias", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once each macro the commit's files define, "
         "in the branch the default build compiles, as another macro's bare name (`#define NEW_SWITCH "
         "BOOL_SWITCH` under `#else` of `#ifdef DISABLE_X`, the flag defined by no source) is replaced by that "
         "name expands to the same code: cosmetic. A macro whose default-build branch is a body of its own is "
         "compared as before.",
         "-    BOOL_SWITCH(p_dropout < 1.f, Is_dropout, [&] {\n+    DROPOUT_SWITCH(p_dropout < 1.f, Is_dropout, [&] {",
         "classifier.rules.wrappers.default_build_aliases, classifier.rules.wrappers.WrapperRules._aliased_only"),
)


_DIRECTIVE = re.compile(r"\s*#\s*(ifdef|ifndef|if|elif|else|endif|define)\b\s*(.*)")
_ALIAS = re.compile(r"([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*(?://.*|/\*.*)?$")


def default_build_aliases(sources: list[bytes]) -> dict[str, str]:
    """``NEW -> OLD`` for each object-like ``#define NEW OLD`` (OLD a bare
    name) of ``sources`` that the default build compiles: every enclosing
    conditional known and on, a macro no source defines being off. A name
    with another definition in the default build, or one under a
    conditional that is not known, is left out."""
    defined = branches.defined_macros(*sources)
    found: dict[str, set[str]] = {}
    for source in sources:
        stack: list[bool | None] = []
        text = source.decode("utf-8", errors="replace").replace("\\\n", " ")
        for line in text.splitlines():
            match = _DIRECTIVE.match(line)
            if match is None:
                continue
            word, rest = match.groups()
            name = rest.split()[0] if rest.split() else ""
            if word in ("ifdef", "ifndef"):
                known = not branches.undecided_macro(name, defined)
                stack.append(None if not known else word == "ifndef")
            elif word == "if":
                stack.append(None)
            elif word == "elif" and stack:
                stack[-1] = None
            elif word == "else" and stack:
                stack[-1] = None if stack[-1] is None else not stack[-1]
            elif word == "endif" and stack:
                stack.pop()
            elif word == "define" and name:
                alias = _ALIAS.match(rest)
                if any(value is not True for value in stack):
                    if any(value is None for value in stack):
                        found.setdefault(name, set()).add("")  # not known: no alias
                    continue
                found.setdefault(name, set()).add(alias.group(2) if alias else "")
    aliases = {new: next(iter(olds)) for new, olds in found.items() if len(olds) == 1 and "" not in olds}
    resolved = {}
    for new in aliases:
        target, seen = aliases[new], {new}
        while target in aliases and target not in seen:
            seen.add(target)
            target = aliases[target]
        resolved[new] = target
    return resolved


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _split(node):
    """(decorator nodes, the function node) of a definition node."""
    if node.type == "decorated_definition":
        return [c for c in node.named_children if c.type == "decorator"], node.child_by_field_name("definition")
    return [], node


def _decorator_name(decorator) -> tuple[str, bool] | None:
    """(the name a decorator calls, whether it is called with arguments: a factory)."""
    expression = decorator.named_children[0] if decorator.named_children else None
    factory = expression is not None and expression.type == "call"
    if factory:
        expression = expression.child_by_field_name("function")
    if expression is None or expression.type not in ("identifier", "attribute"):
        return None
    return _text(expression).split(".")[-1], factory


def _own_nodes(function):
    """The nodes of ``function``'s body, not entering nested definitions."""
    body = function.child_by_field_name("body")
    stack = list(body.named_children) if body is not None else []
    while stack:
        current = stack.pop()
        yield current
        if current.type not in ("function_definition", "decorated_definition", "class_definition", "lambda"):
            stack.extend(current.named_children)


def _returns_argument(function) -> bool:
    parameters = function.child_by_field_name("parameters")
    first = next((p for p in parameters.named_children if p.type == "identifier"), None) \
        if parameters is not None else None
    if first is None:
        return False
    name = _text(first)
    returns = [n for n in _own_nodes(function) if n.type == "return_statement"]
    rebound = any(n.type in ("assignment", "augmented_assignment") and n.child_by_field_name("left") is not None
                  and _text(n.child_by_field_name("left")) == name for n in _own_nodes(function))
    return bool(returns) and not rebound and all(
        r.named_child_count == 1 and r.named_children[0].type == "identifier" and _text(r.named_children[0]) == name
        for r in returns)


def _factory_returns_registration(function) -> bool:
    inner = {_text(n.child_by_field_name("name")): n for n in _own_nodes(function)
             if n.type == "function_definition"}
    returns = [n for n in _own_nodes(function) if n.type == "return_statement"]
    return bool(returns) and all(
        r.named_child_count == 1 and r.named_children[0].type == "identifier"
        and _text(r.named_children[0]) in inner and _returns_argument(inner[_text(r.named_children[0])])
        for r in returns)


def added_registrations(before, after, definitions) -> list[str] | None:
    """The names of the decorators ``after`` adds to ``before``, when its own text is ``before``'s and each
    added decorator is proven to hand the function back by its definition among ``definitions`` (name ->
    function node); else None."""
    old_decorators, old_function = _split(before)
    new_decorators, new_function = _split(after)
    if old_function is None or new_function is None \
            or comment_free_tokens(old_function) != comment_free_tokens(new_function):
        return None
    kept = [_text(d) for d in old_decorators]
    added = [d for d in new_decorators if _text(d) not in kept]
    if not added or [_text(d) for d in new_decorators if _text(d) in kept] != kept:
        return None
    names = []
    for decorator in added:
        found = _decorator_name(decorator)
        definition = definitions.get(found[0]) if found is not None else None
        if definition is None:
            return None
        _, function = _split(definition)
        proven = _factory_returns_registration(function) if found[1] else _returns_argument(function)
        if not proven:
            return None
        names.append(found[0])
    return names


def _autotune_arguments(decorator) -> dict[str, list[str]] | None:
    """``@triton.autotune(...)``'s arguments as name (or ``#position``) -> tokens; None for any other decorator."""
    found = _decorator_name(decorator)
    if found is None or found != ("autotune", True):
        return None
    call = decorator.named_children[0]
    arguments = call.child_by_field_name("arguments")
    named: dict[str, list[str]] = {}
    for position, argument in enumerate(arguments.named_children if arguments is not None else ()):
        if argument.type == "comment":
            continue
        if argument.type == "keyword_argument":
            name, value = argument.child_by_field_name("name"), argument.child_by_field_name("value")
            named[_text(name)] = comment_free_tokens(value) if value is not None else []
        else:
            named[f"#{position}"] = comment_free_tokens(argument)
    return named


_TUNER_ONLY = frozenset({"configs", "key"})
"""``@triton.autotune`` arguments that only decide which configuration the tuner picks and when it times them
again (``reset_to_zero``, ``restore_value`` and the rest touch the kernel's buffers or launches)."""


def configs_only(before, after) -> bool:
    """Whether ``after`` differs from ``before`` only in the ``configs`` or ``key`` keywords of its
    ``@triton.autotune`` decorator: the function and every other decorator token-equal, the tuner's other
    arguments equal."""
    old_decorators, old_function = _split(before)
    new_decorators, new_function = _split(after)
    if old_function is None or new_function is None or len(old_decorators) != len(new_decorators) \
            or comment_free_tokens(old_function) != comment_free_tokens(new_function):
        return False
    changed = False
    for old, new in zip(old_decorators, new_decorators):
        if comment_free_tokens(old) == comment_free_tokens(new):
            continue
        was, now = _autotune_arguments(old), _autotune_arguments(new)
        if was is None or now is None or set(was) != set(now) or "configs" not in was \
                or any(was[k] != now[k] for k in was if k not in _TUNER_ONLY):
            return False
        changed = True
    return changed


def autotuned(node) -> bool:
    """Whether a definition carries an ``autotune`` decorator."""
    decorators, _ = _split(node)
    return any((_decorator_name(d) or ("", False))[0] == "autotune" for d in decorators)


class WrapperRules:
    """The registry-decorator rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _registered_only(self, entry, symbol: TouchedSymbol) -> list[str] | None:
        """The decorators ``registry-decorator`` proves hand the function back, when they are the definition's
        whole change (``portq.classifier.rules.wrappers``); else None."""
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return None
        before, after = sides
        if after.node.type != "decorated_definition":
            return None
        definitions = {}
        for blob, path in [(c.new_blob, c.new_path) for c in entry.owned_changes if c.new_blob and c.new_path] \
                + [(symbol.new_blob, symbol.path)]:
            table = self._table(blob, path) if language_for_path(path) == "python" else None
            for d in table.definitions if table is not None and not table.fallback else ():
                if d.node is not None and d.qualified_name == d.name:
                    definitions.setdefault(d.name, d.node)
        return added_registrations(before.node, after.node, definitions)

    def _untuned_only(self, symbol: TouchedSymbol, definition) -> bool:
        """``untuned-port``: the symbol's whole change is its autotune configs and the port at ``definition`` is
        not autotuned."""
        if language_for_path(definition.file) != "python":
            return False
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None or not configs_only(sides[0].node, sides[1].node):
            return False
        mine = self._port_node(definition)
        return mine is not None and not autotuned(mine)

    def _aliased_only(self, entry, symbol: TouchedSymbol) -> list[str] | None:
        """The macros ``macro-alias`` proves the definition's whole change
        renames to aliases of what it used (``(new, old)`` spelled
        ``NEW = OLD``), or None."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None:
            return None
        before, after = sides
        tables = [self._table(c.new_blob, c.path) for c in entry.commit.changes
                  if c.new_blob and c.path and language_for_path(c.path) == "cpp"]
        aliases = default_build_aliases([t.source for t in tables if t is not None and t.source])
        if not aliases:
            return None
        old_tokens, new_tokens = qualifier_free_tokens(before.node), qualifier_free_tokens(after.node)
        if old_tokens == new_tokens:
            return None
        spell = lambda tokens: [aliases.get(t, t) for t in tokens]  # noqa: E731
        if spell(old_tokens) != spell(new_tokens):
            return None
        used = sorted({t for t in new_tokens if t in aliases} - set(old_tokens))
        return [f"{name} = {aliases[name]}" for name in used] or None
