"""Attribution rules: a change outside definitions matters through the ported definitions that use it (DESIGN §6).

Module-level lines, class bodies and new types are attributed by use:
what the changed lines name, and whether a ported definition names it too.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("toplevel-use", ("NEEDS_REVIEW", "NOT_APPLICABLE"),
         "Changed module-level lines that name something a ported definition of the file uses need a reader "
         "(NEEDS_REVIEW); lines that name nothing a ported definition uses are NOT_APPLICABLE/not-ported. A name "
         "the ported definitions use only in decorators the port does not carry is not attributed to it.",
         "-BLOCK = 128\n+BLOCK = 256  (the ported kernel reads BLOCK)",
         "classifier.verdicts.SymbolClassifier._container"),
    Rule("import-rebinding", ("NOT_APPLICABLE",),
         "Changed imports that rebind only names no ported definition of the file uses are "
         "NOT_APPLICABLE/not-ported.",
         "+from typing import Tuple  (no ported definition names Tuple)",
         "classifier.verdicts.SymbolClassifier._import_change"),
    Rule("new-type-use", ("NEEDS_REVIEW", "NOT_APPLICABLE"),
         "A new type nothing ports matters through its ported users: one the commit leaves unchanged needs a "
         "reader (NEEDS_REVIEW); when the commit changes every user (compared in their own right) or none "
         "exists, NOT_APPLICABLE/not-ported.",
         "+struct Params { int n; };  (used by a ported kernel this commit does not touch)",
         "classifier.verdicts.SymbolClassifier._added_type"),
)
