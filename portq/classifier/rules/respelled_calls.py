"""Respelled calls: a definition that only calls another function with the same arguments, placed against a port that already calls it (DESIGN §5, "the port already has it").

Upstream moves its checks and helpers from one spelling to another: a
deprecated assertion macro becomes the one its library now recommends
(``OLD_CHECK(x.dim() == 4, "4-D");`` → ``NEW_CHECK(x.dim() == 4, "4-D");``),
each call keeping its arguments. A C++ port whose definition already calls
the new function and never names the old one has nothing of that change to
follow: it already spells its calls the new way, IN_SYNC
(``port-has-respelled-call``), citing the port's call. Everything else in the
definition must be the same token for token, each old function must become
one new function, and the port must call every new one; a port that still
names the old function, one that calls none of the new ones, or a change to
the arguments too stays with the other rules.

The code: ``cpp_port_has_respelled_calls`` reads the syntax trees handed to
it (upstream's definition before and after, the port's definition). It reads
no git, decides no verdict, imports nothing after the rule modules and never
names a corpus symbol, path or commit.
"""

from __future__ import annotations

from portq.classifier.rules import Rule
from portq.classifier.rules.equivalence import _cpp_calls, _cpp_token_texts

RULES = (
    Rule("port-has-respelled-call", ("IN_SYNC",),
         "A C++ definition whose whole change is which function some of its call statements call, each with "
         "the same receiver and arguments, every other token the same, each old function becoming one new "
         "function, while the port's definition calls every new function and names none of the old ones: "
         "the port already spells the calls the new way, IN_SYNC, citing the port's call. A port that still "
         "names an old function, one that calls none of the new ones, a change to the arguments as well, or "
         "one old function respelled two ways stays flagged.",
         "-    AT_ASSERTM(input.dim() == 4, \"expected 4D tensor\");\n"
         "+    TORCH_CHECK(input.dim() == 4, \"expected 4D tensor\");\n"
         "  (the port: TORCH_CHECK(scores.dim() == 4, \"scores must be 4-D\");)",
         "classifier.rules.respelled_calls.cpp_port_has_respelled_calls, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
)


def cpp_port_has_respelled_calls(old_node, new_node, port_node) -> tuple[list[tuple[object, object]], dict[str, str]] | None:
    """``([(new statement, port statement)], {old function: new function})`` when the change from
    ``old_node`` to ``new_node`` only respells the functions of call statements (``port-has-respelled-call``,
    see the module) and ``port_node`` calls every new function and names no old one; None otherwise."""
    old_calls, new_calls = _cpp_calls(old_node), _cpp_calls(new_node)
    if not old_calls or len(old_calls) != len(new_calls) \
            or any((o[1], o[3]) != (n[1], n[3]) for o, n in zip(old_calls, new_calls)):
        return None
    changed = [(o, n) for o, n in zip(old_calls, new_calls) if o[2] != n[2]]
    if not changed:
        return None
    respelled: dict[str, str] = {}
    for old, new in changed:
        if respelled.setdefault(old[2], new[2]) != new[2]:
            return None  # one old function respelled two ways
    if set(respelled) & set(respelled.values()):
        return None
    statement = frozenset({"expression_statement"})
    if _cpp_token_texts(old_node, {(o[0].start_byte, o[0].end_byte) for o, _ in changed}, statement, "<call>") \
            != _cpp_token_texts(new_node, {(n[0].start_byte, n[0].end_byte) for _, n in changed}, statement, "<call>"):
        return None
    if set(respelled) & set(_cpp_token_texts(port_node)):
        return None  # the port still names an old function
    mine = _cpp_calls(port_node)
    found = []
    for _, new in changed:
        same = [c for c in mine if c[2] == new[2]]
        if not same:
            return None
        found.append((new[0], same[0][0]))
    return found, respelled
