"""Members a ported class gained after the port's pin, which the port does not carry (DESIGN §5, §6).

A tree may port a Python class by an anchor on the class itself, pinned to
the upstream commit the port reflects, and some of its methods by anchors of
their own. Upstream keeps growing the class: a method added after the pin
that the in-tree class does not define (under that name) and that nothing
anchors cannot be part of the port. If, besides, none of what the port does
carry reads it — the class's anchored methods, the upstream methods the
in-tree class defines too, the class's own body lines, the file's other
anchored definitions, and whatever those read in the file, transitively —
then a change to it is a coverage hole (``not-ported``), not a change to the
ported class; and the names only such members read (a module-level lock, a
module-level call of the member) are no part of the class's surface.

The code: ``UnportedMemberRules`` holds the methods of the verdict table that
apply these rules. It must not import the verdict table or anything after it,
and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from portq.classifier.rules import Rule
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.symbols import KIND_CLASS, language_for_path

RULES = (
    Rule("unported-member", ("NOT_APPLICABLE",),
         "A Python method of a class the tree ports by a pinned anchor on the class, when every such anchor's pin "
         "predates the method (upstream's class at the pin has no member of that name), the in-tree class defines "
         "no member of that name, no anchor names the method, and none of what the port carries reads it (the "
         "anchored members, the members the in-tree class defines too, the class's own body lines, the file's "
         "other anchored definitions, and what those read in the file, transitively): a change to it is "
         "NOT_APPLICABLE/not-ported, a coverage hole. The module-level lines and bindings only such members read "
         "are not the ported class's surface (`toplevel-use` and `module-level-use` read the class without them). "
         "A member the constructor or another carried member reads, one the class had at the pin, one the in-tree "
         "class defines, or an unpinned class anchor, stays compared.",
         "+    @staticmethod\n+    def load(filename): ...   (added after the pin of `ports ...::Layer @SHA`; the "
         "in-tree class has no `load`, nothing carried reads it); a later change to `load`",
         "classifier.rules.unported_members.UnportedMemberRules._unported_member, ._carried_text"),
)

_WORD = re.compile(r"[A-Za-z_]\w*")


class UnportedMemberRules:
    """``unported-member`` (see the module)."""

    def _unported_member(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                         ports) -> SymbolVerdict | None:
        """Rule ``unported-member``: a touched method of a pinned-ported class the port does not carry; None
        otherwise."""
        if language_for_path(symbol.path) != "python" or symbol.change not in ("modified", "added") \
                or "." not in symbol.qualified_name or not ports:
            return None
        if self.index.ports_for(self.upstream, paths, symbol.name, symbol.qualified_name):
            return None  # anchored itself
        owner = symbol.qualified_name.rsplit(".", 1)[0]
        sides = [(symbol.new_blob, symbol.path)]
        if symbol.change == "modified":
            sides.append((symbol.old_blob, symbol.old_path or symbol.path))
        for blob, path in sides:
            if symbol.name not in self._uncarried_members(blob, path, owner):
                return None
        pins = sorted({p.anchor.pin[:10] for p in ports if p.anchor.pin})
        return self._base("unported-member", symbol, NOT_APPLICABLE, "not-ported", "path",
                          f"{symbol.qualified_name} is a member upstream's {owner} did not have at the port's pin "
                          f"({', '.join(pins)}); the in-tree class defines no {symbol.name}, no anchor names it, and "
                          "nothing the port carries reads it, so not-ported (a coverage hole) rather than a change "
                          "to the ported class",
                          [Evidence(kind=Kind.COVERAGE_HOLE, side="tree", symbol=symbol.name,
                                    message=f"no in-tree port of {symbol.path}::{symbol.qualified_name} "
                                            f"(added to {owner} after the pin)")])

    def _uncarried_members(self, blob, path, owner: str) -> frozenset[str]:
        """The names of the members of upstream's class ``owner`` (in ``blob`` at ``path``) the port does not
        carry (``unported-member``); empty where the class is not ported by pinned anchors or cannot be read."""
        cache = self.__dict__.setdefault("_uncarried_cache", {})
        key = (blob, path, owner)
        if key not in cache:
            cache[key] = self._find_uncarried(blob, path, owner)
        return cache[key]

    def _find_uncarried(self, blob, path, owner: str) -> frozenset[str]:
        table = self._table(blob, path)
        if table is None or table.fallback or table.source is None or language_for_path(path) != "python":
            return frozenset()
        classes = [d for d in table.definitions if d.qualified_name == owner and d.kind == KIND_CLASS and d.node]
        if len(classes) != 1:
            return frozenset()
        cls = classes[0]
        ports = self.index.ports_for(self.upstream, {path}, cls.name, cls.qualified_name)
        if not ports or any(not p.anchor.pin for p in ports):
            return frozenset()
        in_tree: set[str] = set()
        for port in ports:
            records = self.index.definitions_in_file(port.definition.file)
            if records is None:
                return frozenset()
            prefix = port.definition.qualified_name + "."
            in_tree |= {d.name for d in records if d.qualified_name.startswith(prefix)}
        at_pin: set[str] = set()
        for pin in sorted({p.anchor.pin for p in ports}):
            anchor_path = next(p.anchor.path for p in ports if p.anchor.pin == pin)
            pinned = self._table(f"{pin}:{anchor_path}", anchor_path)
            if pinned is None or pinned.fallback or not any(d.qualified_name == owner for d in pinned.definitions):
                return frozenset()
            at_pin |= {d.name for d in pinned.definitions if d.qualified_name.startswith(owner + ".")}
        members = [d for d in table.definitions if d.node is not None and d.qualified_name.startswith(owner + ".")
                   and "." not in d.qualified_name[len(owner) + 1:]]
        candidates = {d.qualified_name: d for d in members
                      if d.name not in in_tree and d.name not in at_pin
                      and not self.index.ports_for(self.upstream, {path}, d.name, d.qualified_name)}
        if not candidates:
            return frozenset()
        source = table.source
        cut = sorted((d.node.start_byte, d.node.end_byte) for d in candidates.values())
        text, at = [], cls.node.start_byte
        for start, end in cut:
            text.append(source[at:start])
            at = end
        text.append(source[at:cls.node.end_byte])
        words = set(_WORD.findall(b"".join(text).decode("utf-8", errors="replace")))
        anchors = self.index.anchors_for_path(self.upstream, {path})
        included = {cls.qualified_name}
        for d in table.definitions:
            if d.node is not None and d.qualified_name not in candidates and d.qualified_name not in included \
                    and not d.qualified_name.startswith(owner + ".") \
                    and any(a.matches_name(d.name, d.qualified_name) for a in anchors):
                included.add(d.qualified_name)
                words |= set(_WORD.findall(d.node.text.decode("utf-8", errors="replace")))
        grown = True
        while grown:  # what the carried definitions read in the file, transitively
            grown = False
            for d in table.definitions:
                if d.node is None or d.qualified_name in included or d.name not in words:
                    continue
                if d.qualified_name.startswith(owner + ".") and d.qualified_name not in candidates:
                    continue  # a carried member: its text is in the class's already
                included.add(d.qualified_name)
                words |= set(_WORD.findall(d.node.text.decode("utf-8", errors="replace")))
                grown = True
        return frozenset(d.name for q, d in candidates.items() if q not in included)

    def _carried_text(self, blob, path, definition) -> str:
        """``definition``'s text (an upstream definition a port anchors), less the members of a class the port
        does not carry (``unported-member``): what the port's class reads."""
        text = definition.node.text.decode("utf-8", errors="replace") if definition.node is not None else ""
        if definition.kind != KIND_CLASS or definition.node is None or language_for_path(path or "") != "python":
            return text
        uncarried = self._uncarried_members(blob, path, definition.qualified_name)
        if not uncarried:
            return text
        table = self._table(blob, path)
        source = table.source
        cut = sorted((d.node.start_byte, d.node.end_byte) for d in table.definitions
                     if d.node is not None and d.name in uncarried
                     and d.qualified_name == f"{definition.qualified_name}.{d.name}")
        parts, at = [], definition.node.start_byte
        for start, end in cut:
            parts.append(source[at:start])
            at = end
        parts.append(source[at:definition.node.end_byte])
        return b"".join(parts).decode("utf-8", errors="replace")
