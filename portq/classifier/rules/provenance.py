"""Provenance and parse rules: what is decided before structure is compared, or instead of it (DESIGN §6).

A port's pin (``# portq: ports PATH::NAME @SHA``) that already contains
the commit settles it without reading either side. Structure read from a
tree that did not parse decides nothing: such a change needs a reader.

The code: ``ProvenanceRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules (where a parse failed, which ports it cost, which pins
contain the commit). It reads the in-tree index and the upstream side through
the table it is part of; it must not import the verdict table or anything after
it, and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import hashlib
import re
import warnings

from portq.classifier.reading import (_IDENTIFIER, _anchor_evidence, _changed_lines, _error_spans, _file_change,
                                      _source_lines, _stands_for)
from portq.classifier.rules import Rule, branches
from portq.classifier.rules.branches import cross_language
from portq.core.evidence import Evidence, Kind
from portq.core.model import IN_SYNC, NEEDS_REVIEW, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.symbols import KIND_CLASS, language_for_path, macro_extents, masked_lines
from portq.tree.anchors import Anchor

RULES = (
    Rule("provenance-pin", ("IN_SYNC",),
         "A port whose anchor pins a commit that contains this one already carries it: IN_SYNC by provenance, "
         "whatever the comparison would say; a pin that does not contain it is noted and the port compared.",
         "`# portq: ports ops/k.py::k @abc123` where abc123 descends from the entry",
         "classifier.rules.provenance.ProvenanceRules._pinned_in_sync, "
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("parse-failure", ("NEEDS_REVIEW",),
         "A parse error in or around the changed lines (or in a macro a ported definition expands, or one that "
         "lost a ported definition), an unreadable port or an unparsable side never decides REAL_GAP, IN_SYNC or "
         "NOT_APPLICABLE for a port: NEEDS_REVIEW, citing where the parse failed. An error span holding no changed "
         "line that fails the same way on the other side is tree-sitter's reading of unchanged text: past it a "
         "token proof of a cosmetic change still decides, and structure decides at most NEEDS_REVIEW. A C/C++ "
         "file parsed from a rewritten copy (a conditional inside parentheses, statements passed to a macro) "
         "counts a changed line the copy blanked (the conditional's directives and untaken branches) as unparsed.",
         "+#define LAUNCH(k) k<<<grid,  (unbalanced macro in a file with ported definitions)",
         "classifier.rules.provenance.ProvenanceRules._parse_failure, ._broken, "
         "classifier.rules.attribution.AttributionRules._container, "
         "classifier.verdicts.SymbolClassifier._against_port, classifier.rules.definitions.DefinitionRules._added"),
    Rule("unparsable-module", ("NEEDS_REVIEW",),
         "A Python file that Python's own parser rejects after the commit, at a line the commit added or within "
         "three lines of one, where tree-sitter's parse has an error too and the file parsed before, no longer "
         "imports: no definition in it runs as "
         "written. A ported definition of that file is then never decided NOT_APPLICABLE or IN_SYNC by a "
         "form-only proof (equal tokens, a moved or reordered definition) read from tree-sitter's recovered "
         "tree: NEEDS_REVIEW, citing the line. An error on lines the commit did not touch, or one the file "
         "already had, leaves the proofs to decide.",
         "-def k(x, eps=0.6):\n+def k(x, eps=-0,1):   (a sibling of the ported definition, whose own text is unchanged)",
         "classifier.rules.provenance.ProvenanceRules._unparsable_module, classifier.verdicts.SymbolClassifier._decided"),
)


def _span_text(source: bytes, span: tuple[int, int]) -> str:
    """The lines of ``span`` (1-based, inclusive), each stripped of its indentation."""
    return "\n".join(line.strip() for line in _source_lines(source, span).splitlines())


class ProvenanceRules:
    """The provenance and parse rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _parse_failure(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                       ported: bool, moved: set[str] = frozenset(), misread: bool = False,
                       ports=()) -> SymbolVerdict | None:
        """NEEDS_REVIEW when the parse of a side the symbol exists on has an
        error that structure would be read from: in or around the symbol's
        changed lines or its own extent, or (for a ported symbol) in a macro
        it expands. For a symbol nothing ports, only an error in lines that
        stand for a name a ported definition uses, or a parse that lost a
        ported definition, counts: a new sibling's broken macros change no
        port. Structure read from a broken tree never decides REAL_GAP or
        IN_SYNC for a port. A ported definition this commit moved elsewhere (``moved``) is not lost.

        An error the change did not make (``_errors_of_the_change``) is left
        out, unless ``misread``: then such errors alone are asked for, to keep
        what structure read from that tree says from deciding anything but a
        token-level proof that the change is cosmetic. So is an error inside a
        branch that only reports an unsupported build (``live-branch``) of a
        definition whose every port (``ports``) is in another language: the
        port's target never builds that branch, and structure is read past it."""
        change = _file_change(entry, symbol)
        anchors = self.index.anchors_for_path(self.upstream, paths)
        referenced: dict[str, list[str]] | None = None
        for side, blob, path, extent in (("new", symbol.new_blob, symbol.path, symbol.new_lines),
                                         ("old", symbol.old_blob, symbol.old_path or symbol.path, symbol.old_lines)):
            if symbol.change == ("added" if side == "old" else "removed"):
                continue  # the symbol has no lines on this side
            if not ported and symbol.name not in ("<toplevel>", "<lines>") and symbol.kind != KIND_CLASS \
                    and language_for_path(path) != "python" and not self._has_parse_errors(blob, path):
                continue  # nothing else reads this side's table (a Python one, callee following may)
            table = self._table(blob, path)
            masked = masked_lines(table.source, table.language, parsed=True) \
                if table is not None and table.tree is not None else ()
            if table is None or table.tree is None or (not table.tree.root_node.has_error and not masked):
                continue
            changed = [line for at, line, _text in _changed_lines(change, symbol, None, None, outside_definitions=False)
                       if at == side] if change is not None else []
            if symbol.change in ("added", "removed") and extent is not None \
                    and set(range(extent[0], extent[1] + 1)) <= set(changed):
                continue  # a definition wholly added or deleted is read from the diff, not from its tree
            errors = self._errors_of_the_change(table, symbol, side, changed)
            # lines the parse read blanked (a conditional inside parentheses): a change to them is unread
            errors = sorted(set(errors) | {span for span in masked if any(span[0] <= c <= span[1] for c in changed)})
            if misread:
                errors = sorted(set(_error_spans(table.tree.root_node)) - set(errors))
            if extent is not None and cross_language(symbol.path, ports):
                errors = self._outside_reporting_branches(table, symbol, extent, errors)
            own = sorted({max(first, c - 3) for first, last in errors for c in changed if first - 3 <= c <= last + 3}
                         | ({max(first, extent[0]) for first, last in errors if first <= extent[1] and last >= extent[0]}
                            if extent is not None and symbol.name not in ("<toplevel>", "<lines>") else set()))
            macros = macro_extents(table.source) if table.language == "cpp" else {}
            expanded: list[tuple[int, str]] = []
            if ported and extent is not None:
                used = set(_IDENTIFIER.findall(_source_lines(table.source, extent)))
                expanded = sorted((max(first, start), name) for name, (start, end) in macros.items() if name in used
                                  for first, last in errors if first <= end and last >= start)
            if not ported:
                if referenced is None:
                    referenced = self._ported_identifiers(symbol, paths, anchors)
                lost = self._lost_ports(table, anchors, symbol, side, moved, change)
                if lost is not None:
                    return self._broken(symbol, side, path, table, lost,
                                        f"a parse that lost the ported definition {lost[1]}")
                if symbol.name in ("<toplevel>", "<lines>"):
                    own = [e for e in own if _stands_for(table, e, symbol) & set(referenced)]
                elif symbol.name not in referenced:
                    own = []  # a definition nothing ported uses: its own broken lines change no port
            if own:
                return self._broken(symbol, side, path, table, (own[0], None),
                                    f"in lines of {symbol.name} the change did not touch, which tree-sitter "
                                    "misreads the same way before and after" if misread else
                                    f"in or around the changed lines of {symbol.name}")
            if expanded:
                line, macro = expanded[0]
                return self._broken(symbol, side, path, table, (line, macro),
                                    f"in the macro {macro} that {symbol.name} expands")
        return None

    def _unparsable_module(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """Rule ``unparsable-module``: NEEDS_REVIEW when Python's own parser rejects the symbol's file after
        the commit at a line the commit added (or within three lines of one), tree-sitter's parse has an error
        there too (both parsers agree: a syntax only a newer interpreter reads is no break), while the file
        parsed before (or was new): the module no longer imports, so a form-only proof about one of its definitions decides
        nothing. None otherwise, or for a file that is not Python."""
        if language_for_path(symbol.path) != "python" or not symbol.new_blob:
            return None
        change = _file_change(entry, symbol)
        if change is None:
            return None
        new = self._table(symbol.new_blob, symbol.path)
        if new is None or not new.source:
            return None
        line = _python_syntax_error(new.source)
        if line is None:
            return None
        added = {n for hunk in change.hunks for n in hunk.added_lines}
        if not any(abs(line - n) <= 3 for n in added):
            return None
        if new.tree is None or not any(first - 3 <= line <= last + 3
                                       for first, last in _error_spans(new.tree.root_node)):
            return None  # tree-sitter reads that line: syntax newer than this interpreter's, not a broken file
        if symbol.old_blob:
            old = self._table(symbol.old_blob, symbol.old_path or symbol.path)
            if old is None or not old.source or _python_syntax_error(old.source) is not None:
                return None  # it did not parse before either (or cannot be read): not this commit's break
        return self._broken(symbol, "new", symbol.path, new, (line, None),
                            f"which Python's own parser rejects, a line this commit wrote: {symbol.path} no "
                            f"longer imports, so no form-only proof about {symbol.name} decides", "unparsable-module")

    @staticmethod
    def _outside_reporting_branches(table, symbol: TouchedSymbol, extent: tuple[int, int],
                                    errors: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """``errors`` less those lying wholly inside a branch of the
        symbol's definition that only reports an unsupported build."""
        definition = next((d for d in table.definitions if d.qualified_name == symbol.qualified_name
                           and d.start_line <= extent[1] and d.end_line >= extent[0]), None)
        if definition is None or definition.node is None:
            return errors
        spans = branches.reporting_spans(definition.node, branches.reporting_macros(table.source))
        return [(first, last) for first, last in errors
                if not any(low <= first and last <= high for low, high in spans)]

    def _errors_of_the_change(self, table, symbol: TouchedSymbol, side: str, changed: list[int]) -> list[tuple[int, int]]:
        """The error spans of ``table`` (``side`` of the symbol's file) less
        those tree-sitter makes of unchanged text on both sides: a span that
        holds no changed line of this side and whose text fails to parse, as
        an error of its own, on the other side too is how the parser reads
        that text, not what the commit did (the same misreading before and
        after), so it lowers nothing."""
        errors = _error_spans(table.tree.root_node)
        other = self._table(symbol.old_blob, symbol.old_path or symbol.path) if side == "new" \
            else self._table(symbol.new_blob, symbol.path)
        if other is None or other.tree is None or not other.tree.root_node.has_error:
            return errors
        theirs = {_span_text(other.source, span) for span in _error_spans(other.tree.root_node)}
        return [(first, last) for first, last in errors
                if any(first <= c <= last for c in changed) or _span_text(table.source, (first, last)) not in theirs]

    def _lost_ports(self, table, anchors: list[Anchor], symbol: TouchedSymbol, side: str,
                    moved: set[str] = frozenset(), change=None) -> tuple[int, str] | None:
        """(first error line, name) of a ported definition the other side of
        the file defines but this broken side's parse does not: recovery
        folded it into an error, so no line of the file can be placed. A
        definition whose every line the commit deletes (or adds) is gone (or
        new) by the diff, not lost by the parse."""
        other = self._table(symbol.old_blob, symbol.old_path or symbol.path) if side == "new" \
            else self._table(symbol.new_blob, symbol.path)
        if other is None or other.fallback:
            return None
        present = {(d.name, d.qualified_name) for d in table.definitions}
        diffed = {line for hunk in (change.hunks if change is not None else ())
                  for line in (hunk.removed_lines if side == "new" else hunk.added_lines)}
        for definition in other.definitions:
            if any(a.matches_name(definition.name, definition.qualified_name) for a in anchors) \
                    and (definition.name, definition.qualified_name) not in present \
                    and definition.qualified_name not in moved \
                    and not all(line in diffed for line in range(definition.start_line, definition.end_line + 1)):
                errors = _error_spans(table.tree.root_node)
                return (errors[0][0] if errors else 1), definition.qualified_name
        return None

    def _broken(self, symbol: TouchedSymbol, side: str, path: str, table, where_line: tuple[int, str | None],
                what: str, rule: str = "parse-failure") -> SymbolVerdict:
        line = where_line[0]
        where = f"{path}:{line}"
        quote = table.source.decode("utf-8", errors="replace").splitlines()[line - 1].strip() \
            if 0 < line <= table.source.count(b"\n") + 1 else None
        return self._base(rule,
            symbol, NEEDS_REVIEW, None, "fallback",
            f"parse failed at {where} (upstream-{side}), {what}, so "
            "structure read from that tree decides nothing and a reviewer must read the hunks",
            [Evidence(kind=Kind.PARSE_FAILURE, message=f"parse failed at {where}", side=f"upstream-{side}",
                      path=path, line=line, quote=quote, symbol=symbol.name, subject=where_line[1])],
        )

    def _pins_containing(self, entry: EntryChanges, paths: set[str], users: set[str]) -> list[Anchor]:
        """The pinning anchors of every port of ``users`` (upstream qualified
        names), when each such port pins a commit containing this entry; an
        empty list when any user is unported, unpinned or pinned earlier."""
        anchors: list[Anchor] = []
        for user in sorted(users):
            name = re.split(r"::|\.", user)[-1]
            ports = self.index.ports_for(self.upstream, paths, name, user)
            if not ports:
                return []
            for port in ports:
                pin = port.anchor.pin
                if not pin or not self.context.is_ancestor(entry.commit.sha, pin):
                    return []
                anchors.append(port.anchor)
        return anchors

    def _pinned_in_sync(self, entry, symbol, anchor, evidence: list, opening: str) -> SymbolVerdict | None:
        """IN_SYNC by provenance when the anchor's pin already contains the commit; otherwise None, with
        ``evidence`` told why the pin does not decide (it is then compared structurally)."""
        if not anchor.pin:
            return None
        contains = self.context.is_ancestor(entry.commit.sha, anchor.pin)
        if contains:
            return self._base("provenance-pin", 
                symbol, IN_SYNC, None, "provenance",
                f"{opening} port's anchor pins {anchor.pin}, which already contains this commit, so IN_SYNC "
                "by provenance rather than by comparison",
                evidence + [_anchor_evidence(anchor, f"pin {anchor.pin} contains {entry.commit.sha[:10]}", Kind.PIN)],
            )
        note = "does not contain this commit" if contains is False else "is not known to the upstream clone"
        evidence.append(_anchor_evidence(anchor, f"pin {anchor.pin} {note}; compared structurally", Kind.PIN))
        return None


_SYNTAX_ERRORS: dict[bytes, int | None] = {}


def _python_syntax_error(source: bytes) -> int | None:
    """The line at which Python's own parser rejects ``source`` (1-based), or None where it parses."""
    key = hashlib.blake2b(source, digest_size=16).digest()
    if key not in _SYNTAX_ERRORS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(source)
            _SYNTAX_ERRORS[key] = None
        except SyntaxError as error:
            _SYNTAX_ERRORS[key] = error.lineno or 0
        except (ValueError, RecursionError, MemoryError):  # null bytes, too deep: no verdict from the parser
            _SYNTAX_ERRORS[key] = None
    return _SYNTAX_ERRORS[key]
