"""Definition rules: ported definitions added, removed, renamed or changed in their body, and who calls a port (DESIGN §5, §6).

A gap is REAL_GAP only when non-test code in the tree calls the port
(``caller-reachability``); otherwise INERT. A body change no structural
rule explains needs a reader, never NOT_APPLICABLE.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("added-definition", ("IN_SYNC", "NEEDS_REVIEW"),
         "A definition new upstream that the tree already ports is in sync when the port takes every runtime "
         "parameter (out-parameters returned and declared-out-of-scope ones aside); one lacking any needs review.",
         "+def k(x, n, stride):  (the tree's port k(x, n) is anchored to it)",
         "classifier.verdicts.SymbolClassifier._added"),
    Rule("removed-definition", ("NEEDS_REVIEW",),
         "A ported definition upstream deleted without a same-kind replacement of a related name needs a reader "
         "to decide whether the port goes too.",
         "-def k(x): ...  (the port still defines it)",
         "classifier.verdicts.SymbolClassifier._removed"),
    Rule("renamed-definition", ("IN_SYNC", "REAL_GAP", "INERT"),
         "A ported definition renamed upstream is in sync when the new name is ported already, else the port is "
         "behind (it still carries the old name).",
         "-def k_v1(x): ...\n+def k_v2(x): ...",
         "classifier.verdicts.SymbolClassifier._removed"),
    Rule("body-change", ("NEEDS_REVIEW",),
         "A ported definition that changed with no parameter or launch delta (besides declared scope) changed in "
         "its body: a reviewer compares the bodies; never NOT_APPLICABLE.",
         "-    y = x * s\n+    y = x * s + bias",
         "classifier.verdicts.SymbolClassifier._from_items"),
    Rule("caller-reachability", ("REAL_GAP", "INERT"),
         "A port behind upstream is REAL_GAP when non-test code in the tree calls it (directly or through ported "
         "wrappers), INERT when only tests call it or nothing does.",
         "the port of k behind upstream; engine/run.py calls k  → REAL_GAP",
         "classifier.verdicts.SymbolClassifier._gap, tree.reachability"),
)
