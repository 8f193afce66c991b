"""Ownership rules: whether a change is the port's business at all (DESIGN §4, §5).

Decided from paths, the kernel matrix and the tree's anchors, before any
structure is read. They give NOT_APPLICABLE with the justification a
maintainer reads (``no-row``, ``non-code``, ``not-ported``, ``not-carried``,
``net-zero``), or IN_SYNC for a ported file that only moved.

The code: ``OwnershipRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules. It reads the in-tree index and the upstream side through the
table it is part of; it must not import the verdict table or anything after it,
and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from portq.classifier.imports import _module_stem
from portq.classifier.reading import RangeFacts, _anchor_evidence
from portq.classifier.rules import Rule
from portq.core.evidence import Evidence, Kind
from portq.core.model import IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.core.paths import non_code_kind
from portq.classifier.rules.parameters import cpp_kernel_uses
from portq.language.symbols import KIND_CLASS, language_for_path

RULES = (
    Rule("path-ownership", ("NOT_APPLICABLE",),
         "A change to a file no matrix row owns and no anchor names is not the port's: NOT_APPLICABLE/no-row.",
         "+++ b/docs/unrelated.md  (no row's paths match, no anchor names the file)",
         "classifier.rules.ownership.OwnershipRules._unported, classifier.verdicts.entry_verdict, classifier.classify"),
    Rule("non-code-path", ("NOT_APPLICABLE",),
         "A change to tests, benchmarks, docs, CI or build files is not code any port mirrors: "
         "NOT_APPLICABLE/non-code (the path rules of core.paths).",
         "+++ b/op_tests/test_kernel.py  (a row owns it, nothing ports it)",
         "classifier.rules.ownership.OwnershipRules._unported, ._file_level"),
    Rule("unported-symbol", ("NOT_APPLICABLE",),
         "A definition a row owns but no anchor ports or declares is a coverage hole, not a gap: "
         "NOT_APPLICABLE/not-ported, with the hole as evidence.",
         "+def new_sibling(x): ...  (in an owned file; no `portq: ports` anchor names it)",
         "classifier.rules.ownership.OwnershipRules._unported, ._file_level"),
    Rule("imported-class-use", ("NEEDS_REVIEW",),
         "A Python class no anchor ports or declares (an enum or a class of constants a vendored file defined "
         "beside its pinned functions, since moved into a module of its own), changed in a module that a Python "
         "file the tree anchors imports it from at module level (by name or `*`, as of the commit), where an "
         "anchored definition of that file reads its name: what a ported definition reads changed, as "
         "`toplevel-use` reads a change to it while it sat in the ported file: NEEDS_REVIEW, never a silent "
         "not-ported. A class of that module no anchored definition there reads, or one in a module the "
         "anchored files do not import from, stays `unported-symbol`.",
         "-    wide = 2\n+    WIDE = 2   (in ops/kinds.py::Mode; ops/core.py does `from .kinds import *` and its "
         "pinned pick reads Mode)",
         "classifier.rules.ownership.OwnershipRules._imported_class_use"),
    Rule("lost-anchor-successor", ("NEEDS_REVIEW",),
         "Once a commit removes a definition an anchor ports with no move followed, the anchor has lost its "
         "symbol and portq can no longer show that nothing in-tree ports a definition that first appeared with "
         "that commit (added by it, or moved later under its name out of its file) in a file of the row that commit created or renamed (or in a file a later commit "
         "created while it removed definitions from such a file): it may be what the lost definition became. A change to it is NEEDS_REVIEW, citing the lost anchor, the commit that lost it and the "
         "candidate (\"anchor lost at SHA: ...\"), never a silent not-ported. A definition that was there before "
         "the loss, one a later commit adds (a new sibling), one only reformatted, one in a file kept where it was (a definition replaced in place was compared there), or any "
         "when no anchor was lost, stays `unported-symbol`. The loss ends at the commit that defines the lost name "
         "again where it was (the anchor names a definition again). The candidate stands for the lost definition: "
         "compared against the lost anchor's ports as a ported definition is, a change those rules set aside "
         "(NOT_APPLICABLE: cosmetic, not carried) keeps their verdict; only one they would flag is NEEDS_REVIEW. "
         "A candidate must be a plausible identity for the lost definition: its own name shares a word with the "
         "lost name (split at underscores and case changes), or it is of the lost one's kind in its language; "
         "a definition of another kind or language sharing no name word with any definition the commit lost "
         "stays `unported-symbol`. Of several losses, the one whose name it shares most with is cited and compared.",
         "-def scaled_mm(a, b, scale): ...  (ported; removed, ops/api.py created with +def mm_nt(...)); a later "
         "change to mm_nt",
         "classifier.classify.anchor_losses, classifier.reading.AnchorLosses.successor_of, "
         "classifier.rules.ownership.OwnershipRules._lost_anchor_successor"),
    Rule("declared-not-carried", ("NOT_APPLICABLE",),
         "A definition the tree declares `not-carried` and nothing ports is out of scope: "
         "NOT_APPLICABLE/not-carried, citing the declaration.",
         "-def fused_variant(...)  (`# portq: not-carried upstream::path::fused_variant` in the tree)",
         "classifier.rules.ownership.OwnershipRules._unported"),
    Rule("declared-member", ("NOT_APPLICABLE",),
         "A member of a definition the tree declares `not-carried` as a whole (a method of a declared class) that "
         "nothing ports is out of scope with it: NOT_APPLICABLE/not-carried, citing the enclosing declaration, "
         "not a coverage hole. A declaration narrowed to a parameter covers no member.",
         "-        return dy / x.norm()\n+        dy = dy.contiguous()  (in Fn.backward; `# portq: not-carried "
         "upstream::path::Fn` in the tree)",
         "classifier.rules.ownership.OwnershipRules._unported, tree.anchors.Anchor.encloses"),
    Rule("file-level-change", ("IN_SYNC",),
         "A ported file renamed, or changed without touching any definition, leaves every port's shape as it "
         "was: IN_SYNC (with a note to update anchors that name the old path).",
         "rename from ops/a.py to ops/b.py, 100% similar",
         "classifier.rules.ownership.OwnershipRules._file_level"),
    Rule("net-zero", ("NOT_APPLICABLE",),
         "A commit undone (or undoing another) inside the same range leaves the files as they were: "
         "NOT_APPLICABLE/net-zero for both. A pair that touches no row's path and no anchored file is "
         "`no-row` instead: neither commit was ever the port's.",
         "entry 7 reverts entry 4, byte for byte",
         "classifier.decision_keys.change_pairs, classifier.classify.StructuralClassifier._net_zero"),
    Rule("partial-revert", ("NOT_APPLICABLE",),
         "A commit that only removes lines one earlier commit of the same range added (file by file, where that "
         "commit put them, adding none) takes back part of that commit before any port could follow it: "
         "NOT_APPLICABLE/net-zero with it; the earlier commit is still decided on its own. A commit that also puts "
         "back part of what the earlier one replaced, the rest of that replacement kept, is no inverse (the lines "
         "then compute what neither commit had) and is decided on its merits; only an exact inverse of a whole "
         "commit (`net-zero`) or file change (`file-revert`) cancels restored text.",
         "entry 9 adds `print(z)` among other changes; entry 12 removes only that `print(z)`",
         "classifier.classify.partial_reverts, classifier.classify.StructuralClassifier._net_zero"),
    Rule("file-revert", ("NOT_APPLICABLE",),
         "A commit's change to one file that a later commit of the same range restores hunk for hunk (the later "
         "change's removed lines, hunk by hunk and in order, are the earlier one's added lines and its added lines "
         "the earlier one's removed lines) leaves that file's lines as they were over the range, even when both "
         "commits change other files too (so neither is a `net-zero` or `partial-revert` commit): the "
         "definitions the pair touches in that file are NOT_APPLICABLE/net-zero in both; each commit's other "
         "files are decided on their own. Restoring something else, or only some of the hunks, is no revert.",
         "entry 4 binds `pow` under a condition in a.py (and changes b.py); entry 9 restores the plain binding in "
         "a.py (and changes c.py)",
         "classifier.classify.file_reverts, classifier.classify.StructuralClassifier._file_revert"),
    Rule("chained-file-revert", ("NOT_APPLICABLE",),
         "A commit's change to one file that a later commit of the same range puts back byte for byte (the "
         "later commit leaves the file as it was before the earlier one), where every commit between that "
         "changes the file does so only outside its definitions and removes only lines the earlier change or "
         "a commit between added, is a change and its revert inside the range with edits of the change itself "
         "between: the definitions the earlier and the later commit touch in that file are "
         "NOT_APPLICABLE/net-zero in both; the commits between are decided on their own. A commit between that "
         "changes a definition of the file or removes a line the file had before the earlier change (a port "
         "may have followed it, and the later commit takes it back), or a later commit leaving the file "
         "otherwise, is no revert; unless every definition such a commit between changes is one no port "
         "carries or declares and every line the file had that it removes lies in one of them (no port can "
         "have followed it): then it is NOT_APPLICABLE/net-zero with the pair for that file too.",
         "entry 4: `const int BLOCK = 256;` → `1024;`; entry 6: wraps that line in `#if defined(OTHER) 256 "
         "#else 1024 #endif`; entry 7: the file as before entry 4",
         "classifier.classify.file_reverts, classifier.classify._restores_across_edits, "
         "classifier.classify.StructuralClassifier._file_revert"),
    Rule("provisional-rows", ("NOT_APPLICABLE", "NEEDS_REVIEW"),
         "The scan foundation's rule, kept for comparison: no row touched is NOT_APPLICABLE/no-row, "
         "anything else NEEDS_REVIEW.",
         "any commit touching an owned path",
         "classifier.classify.ProvisionalClassifier"),
    Rule("declared-callers", ("NOT_APPLICABLE",),
         "A C++ definition the commit adds that, in the new side of every C++ file the commit changes, is named "
         "(comments and literals aside) only inside definitions the tree declares `not-carried` as a whole for "
         "their file, explicit specialisations of them included: a new helper of code the port states it does "
         "not carry, NOT_APPLICABLE/not-carried rather than a coverage hole, citing the declarations. A helper "
         "that any other definition names, or one named at file scope, stays `unported-symbol`.",
         "+__device__ float add_eps(float x) { ... }\n-  dx = dy / gamma;\n+  dx = dy / add_eps(gamma);   (in "
         "the backward kernel, `// portq: not-carried upstream:path::norm_bw` in the tree)",
         "classifier.rules.ownership.OwnershipRules._declared_callers, classifier.rules.parameters.cpp_kernel_uses"),
)


class OwnershipRules:
    """The ownership rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _file_level(self, symbol: TouchedSymbol, paths: set[str]) -> SymbolVerdict:
        """An owned change that touched no definition: a pure rename or blank lines."""
        anchors = self.index.anchors_for_path(self.upstream, paths)
        if anchors:
            renamed = symbol.old_path is not None and symbol.old_path != symbol.path
            what = f"renamed {symbol.old_path} → {symbol.path}" if renamed else "changed no definition"
            stale = [a for a in anchors if a.path != symbol.path]
            return self._base("file-level-change", 
                symbol, IN_SYNC, None, "path",
                f"the ported file was {what} without changing any definition, so the ports keep their shape: "
                "IN_SYNC rather than a gap" + ("; update the anchors to the new path" if stale and renamed else ""),
                [_anchor_evidence(a, f"anchor names {a.path}") for a in anchors[:3]],
            )
        kind = non_code_kind(symbol.path)
        justification = "non-code" if kind else "not-ported"
        return self._base("non-code-path" if kind else "unported-symbol", 
            symbol, NOT_APPLICABLE, justification, "path",
            (f"{symbol.path} is {kind}" if kind else f"no in-tree anchor names {symbol.path}") + f", so {justification}",
        )

    def _unported(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str]) -> SymbolVerdict:
        declarations = [a for a in self.index.not_carried_for(self.upstream, paths, symbol.name, symbol.qualified_name)
                        if not a.param]
        if declarations:
            anchor = declarations[0]
            return self._base("declared-not-carried", 
                symbol, NOT_APPLICABLE, "not-carried", "provenance",
                f"{symbol.name} is declared out of scope at {anchor.cite} and nothing in-tree ports it, "
                "so not-carried rather than a coverage hole",
                [_anchor_evidence(anchor, "not-carried declaration")],
            )
        enclosing = self.index.not_carried_enclosing(self.upstream, paths, symbol.qualified_name)
        if enclosing:
            anchor = enclosing[0]
            return self._base("declared-member", symbol, NOT_APPLICABLE, "not-carried", "provenance",
                              f"{symbol.qualified_name} belongs to {anchor.symbol}, which is declared out of scope "
                              f"at {anchor.cite}, and nothing in-tree ports it, so not-carried rather than a "
                              "coverage hole",
                              [_anchor_evidence(anchor, f"not-carried declaration of {anchor.symbol}")])
        kind = non_code_kind(symbol.path)
        if kind is not None:
            return self._base("non-code-path", 
                symbol, NOT_APPLICABLE, "non-code", "path",
                f"{symbol.path} is {kind}, not code any port mirrors, so non-code rather than not-ported",
            )
        reached = self._through_ported_callers(entry, symbol, paths)
        if reached is not None:
            return reached
        declared_callers = self._declared_callers(entry, symbol)
        if declared_callers is not None:
            return declared_callers
        successor = self._lost_anchor_successor(entry, symbol, paths)
        if successor is not None:
            return successor
        imported = self._imported_class_use(entry, symbol)
        if imported is not None:
            return imported
        if symbol.rows:
            return self._base("unported-symbol", 
                symbol, NOT_APPLICABLE, "not-ported", "path",
                f"row {symbol.rows[0]} owns {symbol.name} but no in-tree anchor ports or declares it "
                "(a coverage hole), so not-ported rather than IN_SYNC",
                [Evidence(kind=Kind.COVERAGE_HOLE, message=f"no in-tree port of {symbol.path}::{symbol.name}",
                          side="tree", symbol=symbol.name)],
            )
        return self._base("path-ownership", symbol, NOT_APPLICABLE, "no-row", "path",
                          f"no matrix row owns {symbol.path} and no anchor names it, so no-row")

    def _imported_class_use(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``imported-class-use``: a modified Python class nothing anchors, which a Python file the tree anchors
        imports at module level from the class's module (by name or ``*``, as of this commit) and whose anchored
        definitions there read its name: NEEDS_REVIEW, citing the readers. None otherwise."""
        if symbol.change != "modified" or symbol.kind != KIND_CLASS or language_for_path(symbol.path) != "python" \
                or "." in symbol.qualified_name:
            return None
        stem = symbol.path[:-len("/__init__.py")] if symbol.path.endswith("/__init__.py") else symbol.path[:-3]
        by_path: dict[str, list] = {}
        for anchor in self.index.anchors:
            if anchor.kind == "ports" and anchor.upstream == self.upstream and anchor.path != symbol.path \
                    and language_for_path(anchor.path) == "python":
                by_path.setdefault(anchor.path, []).append(anchor)
        word = re.compile(rf"\b{re.escape(symbol.name)}\b")
        for path, anchors in sorted(by_path.items()):
            table = self._table(f"{entry.commit.sha}:{path}", path)
            if table is None or table.fallback or table.source is None:
                continue
            try:
                module = ast.parse(table.source)
            except (SyntaxError, ValueError):
                continue
            imports = [s for s in module.body if isinstance(s, ast.ImportFrom)
                       and _module_stem("." * s.level + (s.module or ""), path) == stem
                       and any(a.name in ("*", symbol.name) and (a.asname or a.name) in ("*", symbol.name)
                               for a in s.names)]
            if not imports:
                continue
            readers = sorted({d.qualified_name for d in table.definitions if d.node is not None
                              and any(a.matches_name(d.name, d.qualified_name) for a in anchors)
                              and word.search(d.node.text.decode("utf-8", errors="replace"))})
            if not readers:
                continue
            return self._base("imported-class-use", symbol, NEEDS_REVIEW, None, "provenance",
                              f"{symbol.name} is imported from {symbol.path} by {path}, whose ported "
                              f"{', '.join(readers[:3])} read{'s' if len(readers) == 1 else ''} it: what they read "
                              "changed, so a reviewer must judge it rather than not-ported",
                              [Evidence(kind=Kind.TOPLEVEL, side="upstream-new", path=path, symbol=readers[0],
                                        subject=symbol.name, message=f"{path}::{readers[0]} reads {symbol.name} "
                                        f"imported from {symbol.path}")]
                              + [_anchor_evidence(a, f"anchor in {path}") for a in anchors[:2]])
        return None

    def porting_definitions(self, symbol: TouchedSymbol, aliases: dict[str, set[str]]) -> list:
        """The in-tree ports whose ``ports`` anchors name the touched definition itself where it was (not one
        enclosing it): what a removal of it leaves without a symbol (``classify.anchor_losses``)."""
        paths = self._paths(symbol, RangeFacts(None, aliases))
        return list(self.index.ports_for(self.upstream, paths, symbol.name, symbol.qualified_name))

    def _lost_anchor_successor(self, entry: EntryChanges, symbol: TouchedSymbol,
                               paths: set[str]) -> SymbolVerdict | None:
        """``lost-anchor-successor``: an unported definition of a row that first appeared with a commit that
        removed a definition the row's anchors port with no move followed, in a file that commit created or
        renamed, or in one made later out of such a file, while the anchor names nothing (before the lost name
        is defined again where it was), and whose change the rules of a ported definition, compared against
        the lost anchor's ports, do not set aside. None otherwise; the setting aside when they do."""
        losses = getattr(self, "_range_losses", None)
        loss = losses.successor_of(symbol, paths, entry.position) if losses is not None and symbol.rows else None
        if loss is None or self._formatter_only(symbol) is not None:
            return None  # a candidate only reformatted holds no change to review
        if loss.ports:
            # it stands for the lost definition: a change the rules of a ported definition set aside
            # (cosmetic, not carried) holds nothing to review either, and that verdict stands
            judged = self._ported(entry, symbol, paths, list(loss.ports))
            if judged.verdict == NOT_APPLICABLE:
                return judged
        anchor = loss.anchors[0]
        return self._base("lost-anchor-successor", symbol, NEEDS_REVIEW, None, "provenance",
                          f"{anchor.cite} ports {loss.lost[0]}::{loss.lost[1]}, which entry {loss.position} "
                          f"({loss.sha[:10]}) removed with no move followed; {symbol.qualified_name} first appeared "
                          f"with it (now in {symbol.path}) and may be what it became, so nothing shows that no port "
                          "carries it: review it (and update the anchor) rather than not-ported",
                          [Evidence(kind=Kind.ANCHOR_LOST, message=loss.message + f" {symbol.path}::"
                                    f"{symbol.qualified_name}?", side="upstream-new", path=symbol.path,
                                    symbol=symbol.qualified_name)]
                          + [replace(_anchor_evidence(a, f"{a.reference} lost at {loss.sha[:10]}"),
                                     subject=a.reference) for a in loss.anchors[:3]])

    def _declared_callers(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``declared-callers``: a C++ definition the commit adds, named (comments and literals aside) in the
        new side of the C++ files the commit changes only inside definitions the tree declares not-carried as
        a whole for their file (their explicit specialisations included). None otherwise."""
        if symbol.change != "added" or language_for_path(symbol.path) != "cpp":
            return None
        declarations = {}
        for change in entry.owned_changes:
            if not change.new_path or not change.new_blob or language_for_path(change.new_path) != "cpp":
                continue
            table = self._table(change.new_blob, change.new_path)
            if table is None or table.fallback or table.source is None:
                return None
            if symbol.name.encode() not in table.source:
                continue
            uses = cpp_kernel_uses(table.source, symbol.name, table.tree)
            if uses is None:
                return None
            for function, _parameters, _count in uses:
                if function not in declarations:
                    found = [a for a in self.index.not_carried_for(self.upstream, {change.new_path, change.old_path or change.new_path},
                                                                 function, function)
                             if not a.param]
                    if not found:
                        return None
                    declarations[function] = found[0]
        if not declarations:
            return None
        names = sorted(declarations)
        return self._base("declared-callers", symbol, NOT_APPLICABLE, "not-carried", "provenance",
                          f"upstream added {symbol.name}, which only {', '.join(names[:3])} use, declared out of "
                          f"scope at {declarations[names[0]].cite}: it belongs to code the port does not carry, so "
                          "not-carried rather than a coverage hole",
                          [_anchor_evidence(declarations[name], "not-carried declaration") for name in names[:3]])
