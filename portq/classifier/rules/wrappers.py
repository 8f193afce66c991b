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

* ``macro-expanded`` (C/C++): each use of an object-like macro replaced by
  what the macro expands to (``x.DATA_PTR<float>()`` → ``x.data_ptr<float>()``
  under ``#define DATA_PTR data_ptr``), the ``#define`` read at the commit's
  parent from the file or the headers it includes (``#include "..."``,
  followed transitively beside the including file). The preprocessor
  produced those very tokens, so the definition compiles to the same code:
  cosmetic, or IN_SYNC where the port already spells the expansion. A macro
  defined more than once, under a conditional other than an include guard,
  ``#undef``'d, function-like, or not reached through the includes, stays
  flagged.

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
    Rule("macro-expanded", ("NOT_APPLICABLE", "IN_SYNC"),
         "A C/C++ definition whose new tokens are its old tokens with each use of an object-like macro replaced by "
         "the macro's replacement list, the `#define` read at the commit's parent in the file or the headers it "
         "includes (quoted includes, followed transitively beside the including file), defined once there, outside "
         "any conditional but an include guard, never `#undef`'d, and no replacement token a macro at the new side: "
         "the preprocessor produced exactly the new tokens before, so the same code compiles (DESIGN §5: form "
         "without meaning). Cosmetic where the port still spells the macro, IN_SYNC where it already spells the "
         "expansion. A macro defined twice, under `#ifdef`, function-like, or not reached through the includes "
         "stays flagged.",
         "  // compat.h: #define DATA_PTR data_ptr\n-  k<<<g, b>>>(x.DATA_PTR<float>());\n"
         "+  k<<<g, b>>>(x.data_ptr<float>());",
         "classifier.rules.wrappers.visible_object_macros, classifier.rules.wrappers.WrapperRules._expanded_only"),
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


_INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')
_DEFINE = re.compile(r"\s*#\s*(define|undef)\s+([A-Za-z_]\w*)(\(?)(.*)")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_PP_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|::|->|<<=|>>=|<<|>>|&&|\|\||[-+*/%&|^!=<>]=|\+\+|--|\S")


def included_sources(path: str, read, limit: int = 64) -> list[tuple[str, bytes]]:
    """``path`` and the files its quoted ``#include "..."`` lines name, followed
    transitively (each resolved beside the file that includes it), as
    ``(path, bytes)`` read with ``read(path) -> bytes | None``; at most ``limit``
    files. A system include (``<...>``) is not followed."""
    seen: dict[str, bytes] = {}
    waiting = [path]
    while waiting and len(seen) < limit:
        current = waiting.pop(0)
        if current in seen:
            continue
        source = read(current)
        if source is None:
            continue
        seen[current] = source
        folder = current.rpartition("/")[0]
        for line in source.decode("utf-8", errors="replace").splitlines():
            match = _INCLUDE.match(line)
            if match:
                waiting.append(_joined(folder, match.group(1)))
    return list(seen.items())


def _joined(folder: str, relative: str) -> str:
    parts = folder.split("/") if folder else []
    for part in relative.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/".join(parts)


def visible_object_macros(sources: list[bytes]) -> dict[str, list[str]]:
    """``NAME -> replacement tokens`` for each object-like macro of ``sources``
    that every build sees the same: defined exactly once among them, outside
    every conditional except a file's include guard, and never ``#undef``'d.
    A function-like macro, one defined twice (whatever the conditions), and one
    under any other conditional are left out."""
    definitions: dict[str, list[list[str] | None]] = {}
    for source in sources:
        lines = source.decode("utf-8", errors="replace").replace("\\\n", " ").splitlines()
        guard = _include_guard(lines)
        depth = 0
        for line in lines:
            match = _DIRECTIVE.match(line)
            if match is not None and match.group(1) in ("ifdef", "ifndef", "if"):
                depth += 1
                continue
            if match is not None and match.group(1) == "endif":
                depth -= 1
                continue
            found = _DEFINE.match(line)
            if found is None:
                continue
            word, name, paren, rest = found.groups()
            if name == guard:
                continue
            outside = depth == 0 or (guard is not None and depth == 1)
            if word == "undef" or paren or not outside:
                definitions.setdefault(name, []).append(None)
                continue
            body = re.sub(r"//.*|/\*.*?\*/", " ", rest)
            definitions.setdefault(name, []).append(_PP_TOKEN.findall(body))
    return {name: found[0] for name, found in definitions.items()
            if len(found) == 1 and found[0] is not None and found[0] and name not in found[0]}


def _include_guard(lines: list[str]) -> str | None:
    """The macro of a file's include guard (``#ifndef G`` / ``#define G`` first, its ``#endif`` last), or None."""
    directives = [m for m in (_DIRECTIVE.match(line) for line in lines) if m is not None]
    if len(directives) < 3 or directives[0].group(1) != "ifndef" or directives[1].group(1) != "define" \
            or directives[-1].group(1) != "endif":
        return None
    name = (directives[0].group(2).split() or [""])[0]
    if (directives[1].group(2).split() or [""])[0] != name:
        return None
    depth = 0
    for index, directive in enumerate(directives):
        if directive.group(1) in ("ifdef", "ifndef", "if"):
            depth += 1
        elif directive.group(1) == "endif":
            depth -= 1
            if depth == 0 and index != len(directives) - 1:
                return None  # the first conditional closes before the end: no guard around the file
    return name


def expanded_macros(old_tokens: list[str], new_tokens: list[str], macros: dict[str, list[str]]) -> list[str]:
    """The macros whose uses in ``old_tokens``, replaced by their replacement
    tokens, give exactly ``new_tokens`` (the replacement followed through
    macros it names); empty when the tokens differ in any other way."""
    used = [name for name in dict.fromkeys(old_tokens) if name in macros]
    if not used or old_tokens == new_tokens:
        return []

    def expand(tokens: list[str], depth: int = 0) -> list[str]:
        out: list[str] = []
        for token in tokens:
            out += expand(macros[token], depth + 1) if token in macros and depth < 8 else [token]
        return out

    return used if expand(old_tokens) == new_tokens else []


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

    def _expanded_only(self, entry, symbol: TouchedSymbol) -> list[str] | None:
        """``macro-expanded``: the macros (``NAME = replacement``) whose uses the definition's whole change
        replaces by their replacement lists, read at the commit's parent from the file and the headers it
        includes; None when that is not the whole change."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None or not entry.commit.parents:
            return None
        before, after = sides
        old_tokens, new_tokens = qualifier_free_tokens(before.node), qualifier_free_tokens(after.node)
        gone = set(old_tokens) - set(new_tokens)
        if not gone or not all(_IDENTIFIER.fullmatch(t) for t in gone):
            return None  # only a macro name can vanish in an expansion: nothing to read for the rest
        parent, commit = entry.commit.parents[0], entry.commit.sha
        old_path = symbol.old_path or symbol.path
        old_table = self._table(symbol.old_blob, old_path)
        if old_table is None or not old_table.source:
            return None

        def at_parent(path: str) -> bytes | None:
            return old_table.source if path == old_path else self._upstream_file(parent, path)

        visible = included_sources(old_path, at_parent)
        macros = visible_object_macros([source for _, source in visible])
        used = expanded_macros(old_tokens, new_tokens, macros)
        if not used:
            return None
        # A replacement token that the new side defines as a macro would be replaced again there.
        new_table = self._table(symbol.new_blob, symbol.path)
        now = included_sources(symbol.path, lambda path: new_table.source if new_table is not None
                               and path == symbol.path else self._upstream_file(commit, path))
        defined = branches.defined_macros(*[source for _, source in now])
        if any(token in defined for name in used for token in macros[name]):
            return None
        return [f"{name} = {' '.join(macros[name])}" for name in used]

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
