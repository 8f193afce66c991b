"""Launcher rules for a kernel whose only launchers are pinned copies changed with it (DESIGN §5: a gap
is an interface the port's callers must supply, or behaviour the port lacks).

A vendoring project pins each upstream definition it copies. When one commit changes a Triton kernel's
parameters and, with it, every upstream definition the tree launches the kernel from, the kernel and its
launchers are behind together: no caller of the engine passes the kernel's new parameters, the launchers'
own parameters did not change, so what the engine calls keeps its interface. Whether the pair still
computes what upstream's does is for a reader: at most NEEDS_REVIEW, never REAL_GAP on the kernel's
parameters alone.

The code: ``PinnedLauncherRules`` holds the method of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``) that applies the rule; it reads the in-tree index and the
upstream side through the table it is part of. It must not import the verdict table or anything after it,
and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from dataclasses import replace

from portq.classifier.rules import Rule, checked
from portq.core.model import NEEDS_REVIEW, REAL_GAP, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.core.paths import is_test_path
from portq.language.symbols import language_for_path
from portq.tree.anchors import PORTS

RULES = (
    Rule("pinned-launchers-changed", ("NEEDS_REVIEW",),
         "A Triton kernel whose parameters a commit changes, when every use of the port's kernel in the tree's "
         "non-test code is a launch (`kernel[grid](...)`) inside a tree definition that ports an upstream "
         "definition the same commit changes, and each of those upstream launchers keeps its own parameter "
         "list (names aside: as many, the same ones constexpr or defaulted): the kernel's new parameters are supplied inside the "
         "copied pair, not by the engine's callers, so the kernel's parameters alone are no REAL_GAP; the pair "
         "is behind together and for a reader (NEEDS_REVIEW). A launch from engine code, from a definition no "
         "anchor pins, from a launcher this commit leaves alone or whose own parameters change, or any other "
         "use of the kernel's name keeps the gap.",
         "-def k(inp_ptr, n, BLOCK: tl.constexpr)\n+def k(out_ptr, inp_ptr, n, m, BLOCK: tl.constexpr)  "
         "(the same commit changes `def host(x, dim)`'s launch `k[grid](...)`, its parameters kept; the tree "
         "launches its copy of k only from its pinned copy of host)",
         "classifier.rules.pinned_launchers.PinnedLauncherRules._pinned_launchers_changed"),
)


def _parameter_shape(signature) -> tuple:
    """A parameter list as its kinds and defaults, names left out."""
    return tuple((p.constexpr, p.has_default) for p in signature.params)


class PinnedLauncherRules:
    """The launcher rule, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _pinned_launchers_verdict(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                                  verdict: SymbolVerdict) -> SymbolVerdict:
        """``verdict``, a REAL_GAP on a kernel's parameters, as NEEDS_REVIEW when rule
        ``pinned-launchers-changed`` holds; else unchanged."""
        if verdict.verdict != REAL_GAP or "parameter-change" not in verdict.rules:
            return verdict
        launchers = self._pinned_launchers_changed(entry, symbol, self._ports(symbol, paths))
        if not launchers:
            return verdict
        return replace(verdict, verdict=NEEDS_REVIEW,
                       reason=f"the tree launches its copy of {symbol.qualified_name} only from its pinned copies "
                              f"of {', '.join(launchers[:3])}, which this commit changes with it, their own "
                              "parameters kept: the kernel's new parameters are supplied inside the copied pair, "
                              "not by the engine's callers, so for a reader (at most NEEDS_REVIEW) rather than "
                              "REAL_GAP; " + verdict.reason,
                       rules=list(checked(*verdict.rules, "pinned-launchers-changed")))

    def _pinned_launchers_changed(self, entry: EntryChanges, symbol: TouchedSymbol, ports) -> list[str] | None:
        """The upstream launchers (qualified names) of Triton kernel ``symbol`` through which alone the tree
        launches its port (``ports``), when rule ``pinned-launchers-changed`` holds; else None."""
        if symbol.change != "modified" or language_for_path(symbol.path) != "python" or len(ports) != 1:
            return None
        old = self._upstream_signature(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                       symbol.old_lines)
        new = self._upstream_signature(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if old is None or new is None or not new.is_kernel or old.param_names == new.param_names:
            return None
        port = ports[0].definition
        sources = self.index.tree_sources()
        if sources is None:
            return None
        changed = {(s.path, s.qualified_name): s for s in entry.symbols if s.change == "modified"
                   and (s.old_path or s.path) == s.path}
        mention = re.compile(rf"(?<![\w]){re.escape(port.qualified_name)}\b")
        launch = re.compile(rf"(?<![\w]){re.escape(port.qualified_name)}\s*\[")
        launchers: set[str] = set()
        for path, source in sources.items():
            if is_test_path(path):
                continue
            text = source.decode("utf-8", errors="replace")
            found = list(mention.finditer(text))
            if not found:
                continue
            records = self.index.definitions_in_file(path) or []
            for hit in found:
                line = text.count("\n", 0, hit.start()) + 1
                if "#" in text[text.rfind("\n", 0, hit.start()) + 1:hit.start()]:
                    continue  # in a comment (an anchor naming it)
                if path == port.file and port.start_line <= line <= port.end_line:
                    continue  # the kernel itself
                if not launch.match(text, hit.start()):
                    return None  # a use that is no launch
                around = [d for d in records if d.start_line <= line <= d.end_line]
                if not around:
                    return None  # a launch at file scope
                innermost = max(around, key=lambda d: d.start_line)
                anchors = [a for a in self.index.anchors if a.file == path and a.kind == PORTS and a.definition
                           and self.index.definition_of(a) is not None
                           and (self.index.definition_of(a).file, self.index.definition_of(a).start_line)
                           == (innermost.file, innermost.start_line)]
                touched = [changed.get((a.path, a.symbol)) or next(
                    (s for (where, _), s in changed.items() if where == a.path and s.name == a.symbol), None)
                    for a in anchors]
                touched = [s for s in touched if s is not None]
                if len(touched) != 1:
                    return None  # a launcher no anchor pins to a definition this commit changes
                host = touched[0]
                was = self._upstream_signature(host.old_blob, host.old_path or host.path, host.qualified_name,
                                               host.old_lines)
                now = self._upstream_signature(host.new_blob, host.path, host.qualified_name, host.new_lines)
                if was is None or now is None or _parameter_shape(was) != _parameter_shape(now):
                    return None  # the launcher's own parameters change: its callers are affected
                launchers.add(host.qualified_name)
        return sorted(launchers) or None
