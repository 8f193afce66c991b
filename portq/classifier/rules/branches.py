"""Branch rules: a change confined to a branch the port never runs is not the port's change (DESIGN §6).

A port runs one configuration of an upstream definition. Code upstream
compiles only under a build flag nobody sets, is not part of that
configuration, so an edit confined to it changes nothing the port runs:

* ``default-build`` (C/C++/CUDA): a preprocessor conditional on a macro that
  no source of the file defines is decided as the default build decides it:
  ``#ifdef FLAG``/``#if defined(FLAG)`` is off, ``#ifndef FLAG`` on, and a
  bare ``FLAG`` in ``#if`` is 0. Two sides of a definition whose tokens are
  equal once every such conditional is replaced by the branch the default
  build compiles differ only in code that build drops (a flag a downstream
  build sets on purpose is opt-in: the port, built by default, lacks it).
  A macro the file ``#define``\\ s anywhere, and a condition the rule cannot
  evaluate, keep the conditional whole, so a change under it is compared as
  before.

Example diff (NOT_APPLICABLE/not-carried)::

    -    x = exp2f(x * scale - max_scaled);
    +#ifdef EXACT_MUL
    +    x = exp2f(__fmul_rn(x, scale) - max_scaled);
    +#else
    +    x = exp2f(x * scale - max_scaled);
    +#endif

This module states the rule and holds the comparison it makes on syntax
trees; it reads no git, no tree index and no verdict table, and it never
names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from portq.classifier.rules import Rule
from portq.language.signatures import comment_free_tokens

RULES = (
    Rule("default-build", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once every preprocessor conditional on a "
         "macro no source of the file defines is replaced by the branch the default build compiles (`#ifdef FLAG` "
         "off, `#ifndef FLAG` on) changed only code that build drops: not-carried.",
         "-    x = f(x);\n+#ifdef EXACT_MUL\n+    x = g(x);\n+#else\n+    x = f(x);\n+#endif",
         "classifier.rules.branches.same_in_default_build, classifier.verdicts.SymbolClassifier._form_only"),
)

_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


def defined_macros(*sources: bytes | None) -> set[str]:
    """Every macro name a ``#define`` of ``sources`` names (on or off, in any branch)."""
    return {m.group(1).decode() for source in sources if source for m in _DEFINE.finditer(source)}


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _condition(node, defined: set[str]) -> bool | None:
    """The value of an ``#if`` condition in the default build, or None when
    it reads a macro the file defines or anything the rule cannot evaluate."""
    if node is None:
        return None
    kind = node.type
    if kind == "preproc_defined":
        names = [c for c in node.named_children if c.type == "identifier"]
        return None if len(names) != 1 or _text(names[0]) in defined else False
    if kind == "identifier":
        return None if _text(node) in defined else False
    if kind == "number_literal" and _text(node) in ("0", "1"):
        return _text(node) == "1"
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _condition(node.named_children[0], defined)
    if kind == "unary_expression" and _text(node.child_by_field_name("operator") or node.children[0]) == "!":
        inner = _condition(node.child_by_field_name("argument"), defined)
        return None if inner is None else not inner
    if kind == "binary_expression":
        operator = _text(node.child_by_field_name("operator"))
        left = _condition(node.child_by_field_name("left"), defined)
        right = _condition(node.child_by_field_name("right"), defined)
        if operator == "&&":
            return False if left is False or right is False else (True if left and right else None)
        if operator == "||":
            return True if left is True or right is True else (False if left is False and right is False else None)
    return None


def _branch(node, skip) -> list:
    """The children of a conditional or ``#else``/``#elif`` node that form its body."""
    return [c for c in node.children if c not in skip and c.type not in ("#endif", "#else", "\n")
            and not c.type.startswith("#")]


def _default_branch(node, defined: set[str]) -> list | None:
    """What the default build compiles of a conditional node, or None when it cannot be decided."""
    kind = node.type
    alternative = node.child_by_field_name("alternative")
    if kind in ("preproc_ifdef", "preproc_elifdef"):
        name = node.child_by_field_name("name")
        if name is None or _text(name) in defined:
            return None
        negated = node.children[0].type in ("#ifndef", "#elifndef")
        taken = negated
    elif kind in ("preproc_if", "preproc_elif"):
        name = node.child_by_field_name("condition")
        taken = _condition(name, defined)
        if taken is None:
            return None
    else:
        return None
    if taken:
        return _branch(node, {name, alternative})
    if alternative is None:
        return []
    if alternative.type == "preproc_else":
        return _branch(alternative, set())
    return _default_branch(alternative, defined)


def default_build_tokens(node, defined: set[str]) -> list[str]:
    """A C/C++ definition's tokens with each conditional the rule can decide
    replaced by the branch the default build compiles (see the module)."""
    def expand(current):
        if current.type in ("preproc_ifdef", "preproc_if"):
            return _default_branch(current, defined)
        return None
    return comment_free_tokens(node, expand=expand)


def same_in_default_build(before, after, defined: set[str]) -> bool:
    """True when two C/C++ definition nodes differ, and differ only in code
    the default build does not compile (see the module)."""
    if before is None or after is None or before.has_error or after.has_error:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False
    return default_build_tokens(before, defined) == default_build_tokens(after, defined)
