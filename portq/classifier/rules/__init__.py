"""Rules: every decision the classifier makes, as a named unit with a stable id.

A verdict records the ids of the rules that decided it (``rules`` on a
symbol's and an entry's verdict; the ledger stores them, ``--json`` shows
them, ``benchmarks/accuracy.py`` scores each). An id never changes meaning:
a rule that decides differently gets a new id. Each module here states a
cohesive group of rules in DESIGN terms, with a small example diff; each
rule's ``where`` names the code that applies it.

Each module also holds the code that applies its rules: the comparisons
on signatures and syntax trees (parameters, launches, scope, cosmetic and
form proofs), and, as a class of methods (``OwnershipRules``,
``AttributionRules``, ...), the decisions of the verdict table
``portq.classifier.verdicts.SymbolClassifier``, which is built from those
classes and asks them in order. A rule module must not import the verdict
table, ``portq.classifier.deltas`` or anything after the classifier
(``lint-imports`` checks it), and a rule never names a corpus symbol, path
or commit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One decision rule: its id, the verdicts it can give, what it says, and where it is applied."""

    id: str
    gives: tuple[str, ...]
    statement: str
    example: str
    where: str


def _registry() -> dict[str, Rule]:
    from portq.classifier.rules import (attribution, branches, callee_path, cosmetic, definitions, equivalence, form,
                                        guards, identity, interface, launch, ownership, parameters, provenance, scope,
                                        switches, wrappers)
    from portq.classifier.rules import (builds, computation, inlining, launch_checks, moved_lines, namespace_wrap,
                                        pinned_launchers, renamed_helpers, returns, reverts, spellings)
    from portq.classifier.rules import module_constants, tracing
    from portq.classifier.rules import library_calls, scaffolding
    from portq.classifier.rules import not_carried_paths, preprocessed
    from portq.classifier.rules import absorption, checks, selectors, tuners
    from portq.classifier.rules import respelled_calls
    from portq.classifier.rules import registrations, regrouped
    from portq.classifier.rules import unported_members
    from portq.classifier.rules import integer_values
    from portq.classifier.rules import synced_beside

    found: dict[str, Rule] = {}
    for module in (ownership, provenance, cosmetic, form, branches, guards, switches, wrappers, attribution, parameters,
                   scope, equivalence, interface, launch, callee_path, definitions, identity, builds,
                   moved_lines, computation, launch_checks, renamed_helpers, namespace_wrap, inlining, returns,
                   spellings, reverts, pinned_launchers, module_constants, tracing, scaffolding,
                   library_calls,
                   preprocessed, not_carried_paths, tuners,
                   absorption, selectors, checks,
                   respelled_calls, registrations, regrouped, unported_members, integer_values, synced_beside):
        for rule in module.RULES:
            if rule.id in found:
                raise ValueError(f"rule id {rule.id} is stated twice")
            found[rule.id] = rule
    return found


def checked(*ids: str) -> tuple[str, ...]:
    """``ids`` without repeats, in order; an id no rule states is a programming error."""
    unknown = [i for i in ids if i not in RULES]
    if unknown:
        raise ValueError(f"no classifier rule has the id {', '.join(unknown)}")
    return tuple(dict.fromkeys(ids))


RULES: dict[str, Rule] = _registry()
"""id -> rule, in the order the groups are listed above."""
