"""Switch rules: a compile-time flag bound by a switch macro is a flag like a template parameter (DESIGN §6).

C++ launchers turn runtime values into compile-time flags with a macro that
binds a name inside a lambda and instantiates the lambda once per value::

    BOOL_SWITCH(params.window_size_left >= 0, Is_local, [&] {
        auto kernel = &fwd_kernel<Traits, Is_causal && !Is_local, Is_local>;
        ...
    });

``Is_local`` is then a compile-time flag of the launcher as much as a
template parameter is, and the condition (the macro's first argument) only
decides its value. A port that has no such flag runs the path where it is
off:

* ``lacked-switch-flag`` (C/C++ upstream, a port in another language): a name
  bound by a switch macro (a call whose second argument is a bare name and
  whose last argument is a lambda) is lacked by the port when the port's
  file names no input or identifier with a word of the flag's name (its
  boolean prefix, ``Is_``/``Has_``/``Use_``/``Enable_``/``With_``, and a
  ``Const`` suffix dropped): ``Is_local`` is lacked by a port with no
  ``local`` anywhere, ``IsEvenKConst`` is not by one with ``EVEN_K``. Each
  such flag is off: the boolean expressions it decides are folded as
  ``declared-flag-off`` folds them (``Is_causal && !Is_local`` is
  ``Is_causal``, ``Is_local && x`` is ``false``), and the condition of the
  switch that binds it is set aside. Two sides equal once folded so differ
  only in the path the port lacks: NOT_APPLICABLE/not-carried. A flag the
  port names, or a change outside what the flags decide, is compared as
  before. Matching words rather than whole names is deliberately loose: a
  port that carries the path under any name sharing a word of the flag
  keeps its changes compared. A port in upstream's own language (a copy)
  that lacks a flag is behind upstream rather than without the path, as
  ``port-has-flag`` reads only cross-language ports: every change to the
  definition is still its to follow.

Example diff (NOT_APPLICABLE/not-carried for a port with no sliding window)::

    -    BOOL_SWITCH(window_left >= 0, Is_local, [&] {
    -        auto kernel = &fwd_kernel<Traits, Is_causal && !Is_local, Is_local>;
    +    BOOL_SWITCH(window_left >= 0 && !Is_causal, Is_local, [&] {
    +        auto kernel = &fwd_kernel<Traits, Is_causal, Is_local && !Is_causal>;

This module states the rule and holds the comparison on syntax trees
(``SwitchRules``, a part of the verdict table
``portq.classifier.verdicts.SymbolClassifier``, reads the port's file through
the tree index); it reads no git, imports no verdict table, and the rule
never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from portq.classifier.reading import _walk_nodes
from portq.classifier.rules import Rule
from portq.classifier.rules.branches import _flag_value
from portq.core.model import TouchedSymbol
from portq.language.signatures import comment_free_tokens, normalise_name
from portq.language.symbols import language_for_path

RULES = (
    Rule("lacked-switch-flag", ("NOT_APPLICABLE",),
         "A name a switch macro binds (`BOOL_SWITCH(cond, Is_local, [&] {...})`) is a compile-time flag; when no "
         "identifier of a cross-language port's file shares a word of it (boolean prefix and `Const` suffix dropped), the port "
         "lacks its path: with the flag off (its expressions folded, the switch's condition set aside) a definition "
         "the same before and after changed only that path: not-carried.",
         "-    BOOL_SWITCH(left >= 0, Is_local, [&] { k<T, Is_causal && !Is_local, Is_local>... \n"
         "+    BOOL_SWITCH(left >= 0 && !Is_causal, Is_local, [&] { k<T, Is_causal, Is_local && !Is_causal>...",
         "classifier.rules.switches.switch_bound_names, classifier.rules.switches.switch_flags_off_tokens, "
         "classifier.rules.switches.SwitchRules._lacked_switch_flags"),
)

_PREFIXES = frozenset({"is", "has", "use", "enable", "with", "const"})


def _switch_parts(call):
    """``(condition node, bound name)`` of a switch macro call, or None."""
    if call.type != "call_expression":
        return None
    arguments = call.child_by_field_name("arguments")
    values = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
    if len(values) < 3 or values[1].type != "identifier" or values[-1].type != "lambda_expression":
        return None
    return values[0], values[1].text.decode("utf-8", errors="replace")


def switch_bound_names(node) -> set[str]:
    """The names switch macros bind in a C/C++ definition node."""
    return {parts[1] for parts in map(_switch_parts, _walk_nodes(node)) if parts is not None}


def _words(name: str) -> set[str]:
    """A name's words: split at ``_`` and case changes, lower-cased."""
    return {w.lower() for w in re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).split("_") if w}


def flag_words(name: str) -> set[str]:
    """The words of a flag's name that say what it selects: its words less
    boolean prefixes and ``Const``."""
    return _words(name) - _PREFIXES


def switch_flags_off_tokens(node, off: set[str]) -> list[str]:
    """A C/C++ definition's tokens with every flag of ``off`` read as false
    (boolean expressions folded as ``declared-flag-off`` folds them) and the
    condition of each switch binding one of them set aside."""
    normalised = {normalise_name(n) for n in off}
    conditions = {parts[0].id for parts in map(_switch_parts, _walk_nodes(node))
                  if parts is not None and parts[1] in off}

    def expand(current):
        if current.id in conditions:
            return ["<switch condition>"]
        if current.type not in ("identifier", "type_identifier", "type_descriptor", "parenthesized_expression",
                                "unary_expression", "binary_expression"):
            return None
        decided = _flag_value(current, normalised)
        if decided is not None:
            return ["true" if decided else "false"]
        if current.type == "binary_expression":
            operator = current.child_by_field_name("operator").text.decode()
            left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
            neutral = True if operator == "&&" else (False if operator == "||" else None)
            if neutral is not None and _flag_value(left, normalised) is neutral:
                return [right]
            if neutral is not None and _flag_value(right, normalised) is neutral:
                return [left]
        return None
    return comment_free_tokens(node, expand=expand)


class SwitchRules:
    """The switch rules, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _lacked_switch_flags(self, symbol: TouchedSymbol, port) -> list[str] | None:
        """The switch-bound flags the port lacks, when with them off the
        definition is the same before and after (``lacked-switch-flag``);
        None otherwise."""
        if language_for_path(port.file) == "cpp":
            return None  # a copy in upstream's language that lacks a flag is behind, not without the path
        sides = self._modified_sides(symbol, "cpp", parsed=True)
        if sides is None:
            return None
        before, after = sides
        own = self.index.source(port.file)
        if not own:
            return None
        words = set().union(*(_words(w) for w in re.findall(r"[A-Za-z_]\w*", own.decode("utf-8", errors="replace"))))
        lacked = {name for name in switch_bound_names(before.node) | switch_bound_names(after.node)
                  if flag_words(name) and not flag_words(name) & words}
        if not lacked:
            return None
        if comment_free_tokens(before.node) == comment_free_tokens(after.node):
            return None
        if switch_flags_off_tokens(before.node, lacked) != switch_flags_off_tokens(after.node, lacked):
            return None
        return sorted(lacked)
