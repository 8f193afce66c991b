"""Classifier: from one upstream commit's changes to a verdict with its evidence.

In data-flow order: ``mapping`` decides which matrix rows and upstream
symbols a change touches; ``rules`` states every rule by id and holds the
code that applies it (below them, the ``delta`` record and ``reading`` a
touched symbol); ``deltas`` and ``callees`` compare an upstream
definition's structure old and new with its port's; ``verdicts`` asks the
rules in order per symbol and combines an entry's; ``decision_keys`` says
when an earlier decision can be reused; ``classify`` is the entry point a
scan calls.

Must not write the ledger, print, render a report or import the reporting,
pipeline or command layers. A rule is stated in DESIGN terms and never names
a corpus symbol, path or commit.
"""

from portq.core.face import lazy_face

_FACE = {
    "ClassifierContext": "classify",
    "StructuralClassifier": "classify",
    "ProvisionalClassifier": "classify",
    "build_classifier": "classify",
    "ChangeMapper": "mapping",
    "SymbolClassifier": "verdicts",
    "entry_verdict": "verdicts",
    "CLASSIFIER_VERSION": "verdicts",
    "DecisionKeys": "decision_keys",
}
"""The package's public names and the module that defines each."""

__getattr__, __all__ = lazy_face(__name__, _FACE)
