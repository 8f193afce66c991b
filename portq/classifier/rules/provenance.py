"""Provenance and parse rules: what is decided before structure is compared, or instead of it (DESIGN §6).

A port's pin (``# portq: ports PATH::NAME @SHA``) that already contains
the commit settles it without reading either side. Structure read from a
tree that did not parse decides nothing: such a change needs a reader.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("provenance-pin", ("IN_SYNC",),
         "A port whose anchor pins a commit that contains this one already carries it: IN_SYNC by provenance, "
         "whatever the comparison would say; a pin that does not contain it is noted and the port compared.",
         "`# portq: ports ops/k.py::k @abc123` where abc123 descends from the entry",
         "classifier.verdicts.SymbolClassifier._pinned_in_sync, ._container"),
    Rule("parse-failure", ("NEEDS_REVIEW",),
         "A parse error in or around the changed lines (or in a macro a ported definition expands, or one that "
         "lost a ported definition), an unreadable port or an unparsable side never decides REAL_GAP, IN_SYNC or "
         "NOT_APPLICABLE for a port: NEEDS_REVIEW, citing where the parse failed.",
         "+#define LAUNCH(k) k<<<grid,  (unbalanced macro in a file with ported definitions)",
         "classifier.verdicts.SymbolClassifier._parse_failure, ._broken, ._container, ._against_port, ._added"),
)
