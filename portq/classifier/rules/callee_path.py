"""Callee-path rule: a ported definition's change made in an unported helper it calls (DESIGN §6, §7).

A port mirrors its upstream definition, not every helper that definition
calls. When a helper nothing ports changes its body, the ported callers
that pass one of their own parameters into it may now reach a launch they
did not reach before, for some value of that parameter: that new path is
the caller's change, which the port must launch too. The walk over the
helper's body is ``portq.classifier.callees``.

Example diff (the helper ``apply`` is not ported; its ported caller passes ``style``)::

         elif style == NEOX:
    -        raise NotImplementedError
    +        _neox[grid](x)

This module states the rule and (``CalleePathRules``, a part of the verdict
table ``portq.classifier.verdicts.SymbolClassifier``) finds the ported
callers and the modules the walk reads; it imports no verdict table and
never names a corpus symbol, path or commit.
"""

from __future__ import annotations

from pathlib import Path

from portq.classifier.callees import callee_deltas
from portq.classifier.reading import _anchor_evidence, _module_resolver
from portq.classifier.rules import Rule
from portq.classifier.rules.scope import _scope_names
from portq.core.model import EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.symbols import KIND_FUNCTION, language_for_path, symbol_table
from portq.tree.file_records import Port

RULES = (
    Rule("callee-path", ("REAL_GAP", "IN_SYNC", "NEEDS_REVIEW"),
         "An unported helper whose body changed, called by a ported definition that passes on its own parameter, "
         "is the caller's change through the call: for each value the helper compares that parameter with, a new "
         "launch reached where none was is a new path the port must launch too (IN_SYNC if it does, REAL_GAP if "
         "it certainly raises, NEEDS_REVIEW if it cannot be placed).",
         "     elif style == NEOX:\n-        raise NotImplementedError\n+        _neox[grid](x)",
         "classifier.callees, classifier.rules.callee_path.CalleePathRules._through_ported_callers"),
)


class CalleePathRules:
    """The callee-path rule, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _through_ported_callers(self, entry: EntryChanges, symbol: TouchedSymbol,
                                paths: set[str]) -> SymbolVerdict | None:
        """An unported Python helper whose body changed, called by a ported definition of its module or of
        a module importing it from the same package: the change is the ported caller's, through the call,
        when a value of an argument the caller passes on now reaches a new launch (``portq.classifier.callees``)."""
        if symbol.change != "modified" or symbol.kind != KIND_FUNCTION or language_for_path(symbol.path) != "python":
            return None
        callers = [change.new_path for change in entry.owned_changes
                   if change.new_path and language_for_path(change.new_path) == "python"]
        if not any(self.index.anchors_for_path(self.upstream, paths if path == symbol.path else {path})
                   for path in callers):
            return None  # no changed module holds a port that could call it: its modules are not built
        new_modules = self._upstream_modules(entry, "new")
        if symbol.path not in new_modules:
            return None
        for path, module in new_modules.items():
            caller_paths = paths if path == symbol.path else {path}
            anchored = {anchor.bare_symbol for anchor in self.index.anchors_for_path(self.upstream, caller_paths)}
            if not anchored:
                continue
            reached = module.function(symbol.name)
            if reached is None or reached[0].path != symbol.path:
                continue
            for name in (n for n in module.functions if n in anchored and module.calls(n, symbol.name)):
                for port in self.index.ports_for(self.upstream, caller_paths, name, name):
                    verdict = self._through_call(entry, symbol, port, name,
                                                 self._upstream_modules(entry, "old").get(path), module)
                    if verdict is not None:
                        return verdict
        return None

    def _through_call(self, entry, symbol, port: Port, caller: str, old, new) -> SymbolVerdict | None:
        tree = self._tree_module(port.definition.file)
        function = tree.functions.get(port.definition.name) if tree is not None else None
        if function is None:
            return None
        scope = _scope_names(a.param for a in self.index.not_carried_for(self.upstream, {new.path}, caller, caller)
                             if a.param)
        items = callee_deltas(symbol.name, caller, old, new, tree, function, scope)
        if not items:
            return None
        anchor = port.anchor
        evidence = [_anchor_evidence(anchor, f"{port.definition.qualified_name} ports {caller}, "
                                     f"which calls {symbol.name}")]
        pinned = self._pinned_in_sync(entry, symbol, anchor, evidence,
                                      f"{symbol.name} changes what the ported {caller} does, and the")
        if pinned is not None:
            return pinned
        verdict = self._from_items(entry, symbol, None, None, port, items, evidence)
        verdict.ports = [f"{port.definition.cite} {port.definition.qualified_name}"]
        return verdict

    def _upstream_modules(self, entry: EntryChanges, side: str) -> dict:
        """The entry's changed Python files on one side, as ``callees.Module`` (imports resolved among them);
        kept for the entry being classified, whose unported helpers all ask."""
        key = (entry.commit.sha, side)
        if key in self._modules:
            return self._modules[key]
        if any(sha != entry.commit.sha for sha, _ in self._modules):
            self._modules.clear()  # only the entry being classified asks
        blobs = {}
        for change in entry.owned_changes:
            path, blob = (change.old_path, change.old_blob) if side == "old" else (change.new_path, change.new_blob)
            if path and blob and language_for_path(path) == "python":
                blobs[path] = blob
        resolve, modules = _module_resolver(lambda path: self._table(blobs[path], path) if path in blobs else None)
        for path in blobs:
            resolve(path, "." + Path(path).stem)
        self._modules[key] = {path: module for path, module in modules.items() if module is not None}
        return self._modules[key]

    def _tree_module(self, file: str):
        """An in-tree Python file as a ``callees.Module``, as the index read it (imports among its package)."""
        if not file.endswith(".py"):
            return None

        def table(path: str):
            source = self.index.source(path)
            return symbol_table(source, path) if source is not None else None

        resolve, _ = _module_resolver(table)
        return resolve(file, "." + Path(file).stem)
