"""Not-carried paths: code upstream runs only on a path the tree declares it does not carry (DESIGN §6).

A port declares what it leaves out (``portq: not-carried``). Two C/C++ shapes
put a change on such a path although the changed definition is not the
declared one:

* ``not-carried-selector`` (C/C++/CUDA): a definition picks between a path
  the port carries and one it does not through a local flag, ``const bool C =
  ...;`` bound once and never assigned again, by an ``if (C)``/``if (!C)``
  whose branch taken when ``C`` holds calls a definition the tree declares
  not carried (and none it ports) while the other branch calls one the tree
  ports. Where ``C`` holds, upstream runs what the port does not carry, so
  the port's path is the one with ``C`` false. Two sides that are the same
  once every ``if`` on ``C`` (or ``!C``) is replaced by the branch taken with
  ``C`` false changed only the not-carried path: NOT_APPLICABLE/not-carried.
  The selector must be the same on both sides; a flag assigned again, taken
  by address, a branch on ``C`` that calls nothing declared, or a change
  outside the ``if``\\ s on ``C`` keeps the usual comparison.

* ``not-carried-call-arguments`` (C/C++): a call of a definition the tree
  declares not carried (whole, ported nowhere) hands that code whatever it
  is passed. Its constant arguments (literals, and locals declared once from
  an initialiser that names nothing, ``E e = {};``, read nowhere else) carry
  nothing of the caller's inputs, so two sides the same once those arguments
  and locals are left out changed only what the port does not carry:
  NOT_APPLICABLE/not-carried. An argument read from an input, a local read
  elsewhere, arguments reordered or a callee no declaration names keeps the
  usual comparison.

* ``declared-python-class-body``: as ``declared-class-body`` below, for a Python class declared not
  carried: its header, bases and class attributes are the declared class's.

* ``declared-class-body`` (C/C++): a class or struct the tree declares not
  carried (whole, no ``[PARAM]``) and ports nowhere, whose body's lines
  changed: the lines are the declared class's members, so the change is
  not-carried, whatever names those lines use (a base's typedef, a
  qualifier). Before, such a body change read as a top-level use of those
  names.

Example diff (NOT_APPLICABLE/not-carried, ``launch_rows`` declared not carried,
``launch_cols`` ported)::

     const bool by_rows = x.stride(1) == 1 && x.stride(2) > 1;
     if (by_rows) {
         TORCH_CHECK(dim % 8 == 0);
    +    TORCH_CHECK(x.stride(0) % 8 == 0);
     }
     ...
     if (!by_rows) { launch_cols(p); } else { launch_rows(p); }

The code: ``NotCarriedPathRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules; the token work is the plain functions here. It must not
import the verdict table or anything after it, and a rule never names a
corpus symbol, path or commit.
"""

from __future__ import annotations

from portq.classifier.reading import _anchor_evidence, _walk_nodes, new_side_evidence
from portq.classifier.rules import Rule
from portq.core.evidence import Kind
from portq.core.model import NOT_APPLICABLE, SymbolVerdict, TouchedSymbol
from portq.language.signatures import comment_free_tokens
from portq.language.symbols import KIND_CLASS, language_for_path
from portq.tree.anchors import NOT_CARRIED, PORTS

RULES = (
    Rule("not-carried-selector", ("NOT_APPLICABLE",),
         "A C/C++ definition whose local flag `const bool C = ...;` (bound once, never assigned again) selects, by an "
         "`if` on `C`, a call of a definition the tree declares not carried when `C` holds and one it ports when "
         "not, and whose two sides are the same once every `if` on `C` or `!C` is replaced by the branch taken "
         "with `C` false, changed only the path the port does not carry: not-carried. A flag assigned again, a "
         "selector that differs between the sides or a change outside those branches stays flagged.",
         "     if (by_rows) {\n+        TORCH_CHECK(x.stride(0) % 8 == 0);\n     }\n"
         "     if (!by_rows) { launch_cols(p); } else { launch_rows(p); }   (launch_rows declared not carried)",
         "classifier.rules.not_carried_paths.selector_flags, classifier.rules.not_carried_paths.flag_off_tokens, "
         "classifier.rules.not_carried_paths.NotCarriedPathRules._selected_off"),
    Rule("not-carried-call-arguments", ("NOT_APPLICABLE",),
         "A C/C++ definition whose two sides are the same once the constant arguments (literals, and locals "
         "declared once from an initialiser that names nothing, `E e = {};`, read nowhere else) of its calls of "
         "definitions the tree declares not carried (whole, ported nowhere) are left out, with those locals' "
         "declarations, changed only what it hands code the port does not carry, and hands it nothing it reads "
         "from its inputs: not-carried. An argument read from an input or a parameter, a local read anywhere "
         "else, arguments reordered, or a callee the tree does not declare stays flagged.",
         "-    dispatch<NoParam>(x, out, n, stream);\n+    NoParam e = {};\n+    dispatch<NoParam>(x, out, e, n, stream);"
         "   (dispatch declared not carried)",
         "classifier.rules.not_carried_paths.not_carried_call_tokens, "
         "classifier.rules.not_carried_paths.NotCarriedPathRules._not_carried_call_arguments"),
    Rule("declared-python-class-body", ("NOT_APPLICABLE",),
         "A Python class declared not carried (whole) and ported nowhere whose own body lines changed (its header, "
         "bases, class attributes; its methods are decided on their own, `declared-member`) changed the declared "
         "class: not-carried, rather than a top-level use of the names those lines read (a base class a ported "
         "class shares). An undeclared class's lines keep `toplevel-use`.",
         "-class FastLayer(torch.nn.Module):\n-    width = 32   (FastLayer declared not carried, "
         "SlowLayer(torch.nn.Module) ported)",
         "classifier.rules.not_carried_paths.NotCarriedPathRules._declared_class_body"),
    Rule("declared-class-body", ("NOT_APPLICABLE",),
         "A C/C++ class or struct declared not carried (whole) and ported nowhere whose body's lines changed changed "
         "the declared class's members: not-carried, rather than a top-level use of the names those lines read.",
         "     struct GradParams: public Params {\n+    bool deterministic;\n+    void *__restrict__ workspace_ptr;\n"
         "     };   (GradParams declared not carried, Params ported)",
         "classifier.rules.not_carried_paths.NotCarriedPathRules._declared_class_body"),
)


def _condition_flag(statement) -> tuple[str, bool] | None:
    """``(C, True)`` for ``if (C)``, ``(C, False)`` for ``if (!C)``; None for any other ``if``."""
    condition = statement.child_by_field_name("condition")
    tokens = comment_free_tokens(condition) if condition is not None else []
    if len(tokens) == 3 and tokens[0] == "(" and tokens[2] == ")":
        return tokens[1], True
    if len(tokens) == 4 and tokens[:2] == ["(", "!"] and tokens[3] == ")":
        return tokens[2], False
    return None


def _branches(statement, polarity: bool) -> tuple[list, list]:
    """The nodes run when the flag holds and when it does not, of an ``if`` of that polarity."""
    consequence = statement.child_by_field_name("consequence")
    alternative = statement.child_by_field_name("alternative")
    if alternative is not None and alternative.type == "else_clause":
        alternative_nodes = [c for c in alternative.children if c.type != "else"]
    else:
        alternative_nodes = [alternative] if alternative is not None else []
    then = [consequence] if consequence is not None else []
    return (then, alternative_nodes) if polarity else (alternative_nodes, then)


def _called(nodes) -> set[str]:
    """The bare names of the functions called under ``nodes`` (``f(x)``, ``f<T>(x)``, ``ns::f(x)``)."""
    names: set[str] = set()
    for node in nodes:
        for current in _walk_nodes(node):
            if current.type != "call_expression":
                continue
            function = current.child_by_field_name("function")
            while function is not None and function.type in ("template_function", "qualified_identifier"):
                function = function.child_by_field_name("name")
            if function is not None and function.type == "identifier":
                names.add(function.text.decode("utf-8", errors="replace"))
    return names


def _bound_once_flags(definition) -> set[str]:
    """Locals declared ``bool`` with an initialiser, named exactly once as an assignment's or an
    increment's target nowhere and never taken by address."""
    declared: dict[str, int] = {}
    for current in _walk_nodes(definition):
        if current.type == "declaration":
            kind = current.child_by_field_name("type")
            if kind is None or kind.text != b"bool":
                continue
            for child in current.children_by_field_name("declarator"):
                if child.type == "init_declarator" and child.child_by_field_name("declarator") is not None:
                    name = child.child_by_field_name("declarator").text.decode("utf-8", errors="replace")
                    declared[name] = declared.get(name, 0) + 1
    tokens = comment_free_tokens(definition)
    flags = set()
    for name, count in declared.items():
        if count != 1:
            continue
        spots = [i for i, t in enumerate(tokens) if t == name]
        if any((i + 1 < len(tokens) and tokens[i + 1] in ("=", "|=", "&=", "^=", "++", "--"))
               or (i > 0 and tokens[i - 1] in ("&", "++", "--")) for i in spots[1:]):
            continue
        flags.add(name)
    return flags


def selector_flags(definition, not_carried: set[str], ported: set[str]) -> dict[str, str]:
    """``C -> the not-carried callee it selects``: each flag bound once (``_bound_once_flags``) with an ``if``
    on it whose branch taken when it holds calls a declared definition and none ported, the other branch
    calling a ported one."""
    if definition is None or definition.has_error:
        return {}
    flags = _bound_once_flags(definition)
    found: dict[str, str] = {}
    for current in _walk_nodes(definition):
        if current.type != "if_statement":
            continue
        read = _condition_flag(current)
        if read is None or read[0] not in flags:
            continue
        when_on, when_off = _branches(current, read[1])
        on, off = _called(when_on), _called(when_off)
        if on & not_carried and not on & ported and off & ported:
            found.setdefault(read[0], sorted(on & not_carried)[0])
    return found


def flag_off_tokens(definition, flag: str) -> list[str]:
    """The definition's tokens with each ``if`` on ``flag`` (or ``!flag``) replaced by the branch taken when
    the flag is false."""
    def expand(current):
        if current.type != "if_statement":
            return None
        read = _condition_flag(current)
        if read is None or read[0] != flag:
            return None
        return _branches(current, read[1])[1]
    return comment_free_tokens(definition, expand=expand)


_LITERALS = {"number_literal", "true", "false", "null", "nullptr", "string_literal", "char_literal",
             "raw_string_literal", "concatenated_string"}


def _names_nothing(node) -> bool:
    """True when ``node`` (an initialiser or an argument) is built of literals and braces alone."""
    return node is not None and all(c.type not in ("identifier", "field_identifier", "type_identifier",
                                                   "qualified_identifier", "call_expression", "this")
                                    for c in _walk_nodes(node))


def not_carried_call_tokens(definition, declared: set[str]) -> tuple[list[str], list[str]] | None:
    """Rule ``not-carried-call-arguments``: the tokens of a C/C++ definition with the constant arguments of its
    calls of ``declared`` callees (literals, and locals declared once from an initialiser that names nothing
    and read nowhere but as such an argument) and those locals' declarations left out, with the names of the
    callees whose arguments were; None when no such call is there."""
    calls = []
    for current in _walk_nodes(definition):
        if current.type == "call_expression" and _called([current]) & declared \
                and current.child_by_field_name("function") is not None \
                and not any(n.type == "call_expression" for n in _walk_nodes(current.child_by_field_name("function"))):
            function = current.child_by_field_name("function")
            while function.type in ("template_function", "qualified_identifier"):
                function = function.child_by_field_name("name")
            if function is not None and function.type == "identifier" \
                    and function.text.decode("utf-8", errors="replace") in declared:
                calls.append((current, function.text.decode("utf-8", errors="replace")))
    if not calls:
        return None
    arguments = {c.id: name for call, name in calls
                 for c in (call.child_by_field_name("arguments").named_children
                           if call.child_by_field_name("arguments") is not None else [])}
    constants: dict[str, object] = {}
    counted: dict[str, int] = {}
    for current in _walk_nodes(definition):
        if current.type != "declaration":
            continue
        declarators = [c for c in current.named_children if c.type == "init_declarator"]
        for declarator in declarators:
            name = declarator.child_by_field_name("declarator")
            if name is not None and name.type == "identifier":
                text = name.text.decode("utf-8", errors="replace")
                counted[text] = counted.get(text, 0) + 1
                if len(declarators) == 1 and _names_nothing(declarator.child_by_field_name("value")):
                    constants[text] = current
    for name in [n for n in constants if counted.get(n) != 1]:
        del constants[name]
    for current in _walk_nodes(definition):
        if current.type == "identifier" and current.text.decode("utf-8", errors="replace") in constants:
            text = current.text.decode("utf-8", errors="replace")
            declaration = constants[text]
            inside = current.parent
            while inside is not None and inside.id != declaration.id:
                inside = inside.parent
            if inside is None and current.id not in arguments:
                del constants[text]
    dropped: set[int] = {declaration.id for declaration in constants.values()}
    touched: set[str] = set()
    for call, name in calls:
        listed = call.child_by_field_name("arguments")
        for argument in listed.named_children if listed is not None else []:
            if argument.type == "comment":
                continue
            if argument.type in _LITERALS or argument.type == "initializer_list" and _names_nothing(argument) \
                    or argument.type == "identifier" and argument.text.decode("utf-8", errors="replace") in constants:
                dropped.add(argument.id)
                touched.add(name)

    def expand(current):
        return [] if current.id in dropped else None
    return comment_free_tokens(definition, expand=expand), sorted(touched)


class NotCarriedPathRules:
    """The not-carried path rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _declared_names(self) -> tuple[set[str], set[str]]:
        """(bare names the tree declares not carried, whole; bare names it ports), of this upstream."""
        not_carried = {a.bare_symbol for a in self.index.anchors
                       if a.kind == NOT_CARRIED and a.upstream == self.upstream and not a.param}
        ported = {a.bare_symbol for a in self.index.anchors if a.kind == PORTS and a.upstream == self.upstream}
        return not_carried - ported, ported

    def _selected_off(self, symbol: TouchedSymbol, evidence: list) -> SymbolVerdict | None:
        """``not-carried-selector`` (see the module) for a modified ported C/C++ definition; None otherwise."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None or sides[0].node is None or sides[1].node is None:
            return None
        before, after = sides[0].node, sides[1].node
        if before.has_error or after.has_error:
            return None
        not_carried, ported = self._declared_names()
        if not not_carried:
            return None
        old, new = selector_flags(before, not_carried, ported), selector_flags(after, not_carried, ported)
        for flag, callee in new.items():
            if old.get(flag) != callee:
                continue
            if flag_off_tokens(before, flag) != flag_off_tokens(after, flag):
                continue
            what = f"changed only branches taken when {flag} holds, and {flag} selects {callee}, which the tree " \
                   "declares not carried"
            return self._base("not-carried-selector", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{symbol.name} {what}: with {flag} false, the path the port carries, it is the same "
                              "before and after, so not-carried rather than a change the port must follow",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED, what, flag)])
        return None

    def _not_carried_call_arguments(self, symbol: TouchedSymbol, evidence: list) -> SymbolVerdict | None:
        """``not-carried-call-arguments`` (see the module) for a modified ported C/C++ definition; None otherwise."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None or sides[0].node is None or sides[1].node is None:
            return None
        before, after = sides[0].node, sides[1].node
        if before.has_error or after.has_error or comment_free_tokens(before) == comment_free_tokens(after):
            return None
        not_carried, _ = self._declared_names()
        if not not_carried:
            return None
        old, new = not_carried_call_tokens(before, not_carried), not_carried_call_tokens(after, not_carried)
        if old is None or new is None or old[0] != new[0]:
            return None
        callees = ", ".join(sorted(set(old[1]) | set(new[1]))) or "a callee declared not carried"
        what = f"changed only constant arguments it hands {callees}, which the tree declares not carried"
        return self._base("not-carried-call-arguments", symbol, NOT_APPLICABLE, "not-carried", "body",
                          f"{symbol.name} {what} (literals and locals that name nothing, read nowhere else): it "
                          "hands that code nothing read from its inputs, so not-carried rather than a change the "
                          "port must follow",
                          evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED, what, callees.split(", ")[0])])

    def _declared_class_body(self, symbol: TouchedSymbol, paths: set[str], ports) -> SymbolVerdict | None:
        """``declared-class-body`` (see the module); None otherwise."""
        if symbol.kind != KIND_CLASS or ports or language_for_path(symbol.path) not in ("cpp", "python"):
            return None
        declarations = [a for a in self.index.not_carried_for(self.upstream, paths, symbol.name,
                                                               symbol.qualified_name) if not a.param]
        if not declarations:
            return None
        anchor = declarations[0]
        rule = "declared-class-body" if language_for_path(symbol.path) == "cpp" else "declared-python-class-body"
        return self._base(rule, symbol, NOT_APPLICABLE, "not-carried", "provenance",
                          f"{symbol.name} is declared out of scope at {anchor.cite} and nothing in-tree ports it: "
                          "the changed lines of its body are its own members, so not-carried rather than a use of "
                          "the names they read",
                          [_anchor_evidence(anchor, "not-carried declaration")])
