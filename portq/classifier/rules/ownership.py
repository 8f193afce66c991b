"""Ownership rules: whether a change is the port's business at all (DESIGN §4, §5).

Decided from paths, the kernel matrix and the tree's anchors, before any
structure is read. They give NOT_APPLICABLE with the justification a
maintainer reads (``no-row``, ``non-code``, ``not-ported``, ``not-carried``,
``net-zero``), or IN_SYNC for a ported file that only moved.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("path-ownership", ("NOT_APPLICABLE",),
         "A change to a file no matrix row owns and no anchor names is not the port's: NOT_APPLICABLE/no-row.",
         "+++ b/docs/unrelated.md  (no row's paths match, no anchor names the file)",
         "classifier.verdicts.SymbolClassifier._unported, classifier.verdicts.entry_verdict, classifier.classify"),
    Rule("non-code-path", ("NOT_APPLICABLE",),
         "A change to tests, benchmarks, docs, CI or build files is not code any port mirrors: "
         "NOT_APPLICABLE/non-code (the path rules of core.paths).",
         "+++ b/op_tests/test_kernel.py  (a row owns it, nothing ports it)",
         "classifier.verdicts.SymbolClassifier._unported, ._file_level"),
    Rule("unported-symbol", ("NOT_APPLICABLE",),
         "A definition a row owns but no anchor ports or declares is a coverage hole, not a gap: "
         "NOT_APPLICABLE/not-ported, with the hole as evidence.",
         "+def new_sibling(x): ...  (in an owned file; no `portq: ports` anchor names it)",
         "classifier.verdicts.SymbolClassifier._unported, ._file_level"),
    Rule("declared-not-carried", ("NOT_APPLICABLE",),
         "A definition the tree declares `not-carried` and nothing ports is out of scope: "
         "NOT_APPLICABLE/not-carried, citing the declaration.",
         "-def fused_variant(...)  (`# portq: not-carried upstream::path::fused_variant` in the tree)",
         "classifier.verdicts.SymbolClassifier._unported"),
    Rule("file-level-change", ("IN_SYNC",),
         "A ported file renamed, or changed without touching any definition, leaves every port's shape as it "
         "was: IN_SYNC (with a note to update anchors that name the old path).",
         "rename from ops/a.py to ops/b.py, 100% similar",
         "classifier.verdicts.SymbolClassifier._file_level"),
    Rule("net-zero", ("NOT_APPLICABLE",),
         "A commit undone (or undoing another) inside the same range leaves the files as they were: "
         "NOT_APPLICABLE/net-zero for both.",
         "entry 7 reverts entry 4, byte for byte",
         "classifier.decision_keys.change_pairs, classifier.classify.StructuralClassifier._net_zero"),
    Rule("provisional-rows", ("NOT_APPLICABLE", "NEEDS_REVIEW"),
         "The scan foundation's rule, kept for comparison: no row touched is NOT_APPLICABLE/no-row, "
         "anything else NEEDS_REVIEW.",
         "any commit touching an owned path",
         "classifier.classify.ProvisionalClassifier"),
)
