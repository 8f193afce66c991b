"""Interface rules: a parameter that widens the interface but changes nothing the definition computes (DESIGN §6).

* ``unused-constexpr``: a ``tl.constexpr`` upstream adds with a default,
  that the new body never reads and no launch of the commit passes, is the
  interface growing ahead of an implementation: every launch the port makes
  computes what upstream's does, so the port lacking it is no gap. The
  proof is on the syntax tree: with that parameter left out, the new
  definition has the old one's tokens; anything else changed is compared
  as before.

Example diff (IN_SYNC when the port lacks ``USE_BIAS``)::

    -def k(x_ptr, n, BLOCK: tl.constexpr):
    +def k(x_ptr, n, BLOCK: tl.constexpr, USE_BIAS: tl.constexpr = False):

A constexpr the body reads, one without a default, or one a launch passes
is an input: the parameter rules decide it. This module states the rule,
picks the parameters from two signatures and (``InterfaceRules``, a part of
the verdict table ``portq.classifier.verdicts.SymbolClassifier``) proves the
rest unchanged; it reads no git and no tree index, imports no verdict table,
and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

from typing import Callable

from portq.classifier.rules import Rule
from portq.classifier.rules.scope import scoped_tokens
from portq.core.model import TouchedSymbol
from portq.language.signatures import Signature

RULES = (
    Rule("unused-constexpr", ("IN_SYNC",),
         "A defaulted `tl.constexpr` upstream adds that the body never reads and no launch passes changes nothing "
         "the definition computes: a port lacking it is in sync, when leaving it out makes the new definition's "
         "tokens the old one's.",
         "-def k(x_ptr, n, BLOCK: tl.constexpr):\n+def k(x_ptr, n, BLOCK: tl.constexpr, USE_BIAS: tl.constexpr = False):",
         "classifier.rules.interface.unused_new_constexprs, classifier.verdicts.SymbolClassifier._against_port"),
)


def unused_new_constexprs(old, new, port, passed: Callable[[str], bool]) -> list[str]:
    """The normalised names of the constexpr parameters ``new`` adds to
    ``old`` with a default, that its body never reads, that the port's
    signature lacks and that ``passed(name)`` says no launch passes; empty
    when any parameter ``new`` adds is not such a one (then the parameter
    rules decide them all)."""
    added = [p for p in new.params if old.param(p.normalised) is None]
    if not added or new.language != "python":
        return []
    unused = [p.normalised for p in added
              if p.constexpr and p.has_default and not p.heuristic and p.normalised in new.dead_params
              and port.param(p.normalised) is None]
    if len(unused) != len(added) or any(passed(name) for name in unused):
        return []
    return unused


class InterfaceRules:
    """The interface rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _unused_interface(self, entry, symbol: TouchedSymbol, old: Signature, new: Signature,
                          port: Signature) -> list[str]:
        """The constexpr parameters ``unused-constexpr`` sets aside, when the new
        definition without them has the old one's tokens; else empty."""
        unused = unused_new_constexprs(
            old, new, port, lambda name: self._derivation(entry, symbol, new, name) is not None)
        if not unused:
            return []
        sides = self._both_sides(symbol, parsed=True)
        if sides is None:
            return []
        before, after = sides
        if scoped_tokens(before.node, set()) != scoped_tokens(after.node, set(unused)):
            return []
        return [new.param(name).name if new.param(name) else name for name in unused]
