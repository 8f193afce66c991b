"""Cosmetic rules: a change that provably does nothing a port could follow (DESIGN §6, "no-op proofs").

Each is a proof, not a guess: equal tokens, an equal Python AST, a
consistent renaming, or imports that bind the same names. Any of them
gives NOT_APPLICABLE/cosmetic; failing every proof, the change is compared.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("cosmetic-comments", ("NOT_APPLICABLE",),
         "Changed lines outside definitions that are only comments or blank change nothing ported.",
         "-# TODO: tune\n+# Tuned on MI300",
         "classifier.verdicts.SymbolClassifier._container"),
    Rule("cosmetic-tokens", ("NOT_APPLICABLE",),
         "A ported definition whose tokens, comments dropped, are identical before and after is unchanged.",
         "-    x = a+b  # sum\n+    x = a+b",
         "classifier.verdicts.SymbolClassifier._against_port"),
    Rule("cosmetic-renaming", ("NOT_APPLICABLE",),
         "A definition that differs only by a consistent renaming of its locals is unchanged.",
         "-    acc = tl.zeros(...)\n+    accumulator = tl.zeros(...)  (every use renamed alike)",
         "classifier.verdicts.SymbolClassifier._against_port, classifier.deltas.renamed_locals"),
    Rule("cosmetic-ast", ("NOT_APPLICABLE",),
         "A Python definition (or class body) with the same AST before and after changed only its formatting.",
         "-    return f(a,\n-             b)\n+    return f(a, b)",
         "classifier.verdicts.SymbolClassifier._against_port, ._container"),
    Rule("cosmetic-imports", ("NOT_APPLICABLE",),
         "Changed import statements that bind the same names to the same modules change nothing.",
         "-from .a import x, y\n+from .a import y, x",
         "classifier.verdicts.SymbolClassifier._import_change"),
)
