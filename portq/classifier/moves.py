"""Moved definitions: an upstream definition the tree ports, followed by identity across a range.

Upstream moves code without changing it: a kernel is renamed, a module is
split (git pairs one new file as the rename and the others look new), a
method's body is extracted into a module-level helper the method now calls.
An anchor names the definition where it was; after the move, every change to
the moved body would look like a change to an unported definition
(``not-ported``), silently. ``follow_moves`` walks the range in order and,
for each commit, pairs every definition the tree anchors (or one already
followed) that lost its body with the definition added in the same commit
that carries it:

* *renamed* / *moved*: the anchored definition is removed and an added one
  (same file or another) has its body, modulo the names of definitions the
  commit adds or removes (a kernel renamed together with its launcher);
* *extracted*: the anchored definition stays, its body shrinks, and an added
  definition it now calls holds the lines that left it.

Three more pairings keep identity where bodies alone cannot (rules in
``classifier.rules.identity``): a carrier whose whole file a later commit
renames carries at the new path too (``carrier-file-renamed``); a module
replaced by a package of the same name keeps each definition's import path,
so the one same-named definition under the package is the same one even when
rewritten (``module-to-package``); and a name that now holds another kind of
definition (a kernel's name reused for its launcher) gives the body to the
added definition that carries it (``name-reused``).

Helpers split out of a ported definition are followed too (``moved-callee-body``): a Python
definition a commit adds together with the call that runs it from an anchored or followed definition,
directly or through other definitions the commit adds, is code the port runs, so a later move of its
body makes a carrier of the anchor it runs for, as the anchored definition's own move would.

A class renamed or moved whole is reported as the class, not its methods: each of its methods
is followed as a definition of its own (``_Norm.forward`` into ``_NormOp.forward``). A name that
now holds another kind of definition (a kernel's name given to the wrapper that launches it) holds
new code, so it may carry lines another definition gives up, as an added one would; a helper's
lines are compared with the caller's as the caller's one call binds its parameters
(``BLOCK_SIZE`` read as the ``BLOCK_SIZE_fwd`` passed), and an extraction is measured by the old
lines that leave the caller (a call may replace them), not by how much shorter it gets.

"Carries" means at least ``CARRIED_SHARE`` of the added body's code lines
(comments and blank lines aside) are lines of the old body, at least two of
them (one, when a same-named definition keeps its body line for line); a removed definition's body must be carried as much the other way, and
an extraction must take at least half as many lines out of the old definition
as the helper holds. Bodies equal line for line are ``exact``. A body carried under another name that is not exact
must keep every parameter of the old definition (it may gain some): one whose callers pass something
else in place of an old parameter replaces the definition rather than moving it. The result
maps each carrier (path, qualified name) to the ``Move`` that made it, so the
verdict table treats a later change to the carrier as a change to what the
anchor names (rule ``moved-definition``), and reports the move itself
("anchor lost at SHA: SYMBOL moved to PATH::NAME?"). A renamed or moved body
carries the anchor only until a later commit defines its old name again
where it was: from then on the anchor names that definition, and the
carrier is a sibling of its own.

This module reads symbol tables handed to it through ``table_of``; it decides
no verdict and reads no tree file.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from portq.core.model import EntryChanges, TouchedSymbol
from portq.language.extraction import signature_of
from portq.language.signatures import walk
from portq.language.signatures_python import PythonLocals, is_field_or_keyword
from portq.language.symbols import KIND_CLASS, language_for_path

CARRIED_SHARE = 0.7
"""Share of an added body's code lines that must be lines of the old body for it to carry that body."""

CALLEE_RULE = "moved-callee-body"
"""The rule that follows a helper split out of a ported definition (``_follow_added_callees``)."""

BY_NAME_RULE = "moved-by-name"
"""The rule that follows a definition, removed where it was, to the one definition of the same qualified name
another file gains in the same commit (``_follow_by_name``)."""

EDITED_RULE = "renamed-with-edits"
"""The rule that follows a definition renamed in its own file while the same commit edits it: the one added
definition of the same kind in that file keeps at least ``CARRIED_SHARE`` of the old body and every old
parameter, and the old lines are at least half of its body (``_edited_rename``)."""

COPIED_RULE = "copied-then-removed"
"""The rule that follows a definition, removed with its file and no carrier in its own commit, to the one
definition an earlier commit of the range added elsewhere that carries its body (a copy made first, the original deleted
later; ``_follow_earlier_copy``)."""

NARROWED_RULE = "renamed-narrowed"
"""The rule that follows a definition renamed in its own file under a kindred name while the same commit narrows its
interface: the one added definition of the same kind there whose name is the old one with one word dropped, added or
shortened, whose parameters are old parameters only, and whose body is mostly old lines (``_follow_narrowed``)."""

REBOUND_RULE = "rebound-name"
"""The rule that follows a Python function a commit removes while the new side of its file binds the old name at
module level to functions the commit adds (``old = new``, under a setting or not): of those, the one keeping the
most lines of the old body (``_follow_rebound_name``)."""

FOLLOW_ONLY = (BY_NAME_RULE, EDITED_RULE, COPIED_RULE, NARROWED_RULE, REBOUND_RULE)
"""Identity rules that follow a definition without clearing anything: the move commit is decided as without
them, and only later changes to the carrier are read as the port's."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Key = tuple[str, str]  # (upstream path, qualified name)


@dataclass(frozen=True)
class Move:
    """One definition's body carried to another place by one commit."""

    position: int  # the entry that moved it
    sha: str
    origin: Key  # what the tree's anchor names (the first place in the range)
    old: Key  # where the body was just before this commit
    new: Key  # where it is after
    how: str  # renamed | moved | extracted
    exact: bool  # the carried body is the old one, line for line (modulo moved names)
    via: tuple[str, ...] = ()  # ids of the identity rules besides ``moved-definition`` that paired the bodies

    @property
    def lost(self) -> str:
        """The line a scan shows for an anchor whose symbol no longer exists where it names."""
        return f"anchor lost at {self.sha[:10]}: {self.old[1]} moved to {self.new[0]}::{self.new[1]}?"


@dataclass
class Moves:
    """Every move of the range: by carrier (the latest move into it) and by the entry that made it."""

    carriers: dict[Key, Move] = field(default_factory=dict)
    by_entry: dict[int, list[Move]] = field(default_factory=dict)
    ended: dict[Key, int] = field(default_factory=dict)  # carrier -> the entry that added its origin back
    # (entry, old key) -> the places of every same-named definition the entry adds, when more than one
    ambiguous: dict[tuple[int, Key], tuple[Key, ...]] = field(default_factory=dict)

    def carrying(self, key: Key, position: int) -> Move | None:
        """The move that made ``key`` carry an anchored body before entry ``position``, if any: none from
        the entry on that adds back the definition the body was moved from (the anchor names it again)."""
        move = self.carriers.get(key)
        if move is None or move.position >= position or position >= self.ended.get(key, position + 1):
            return None
        return move

    def made_into(self, position: int, new: Key) -> Move | None:
        """The move entry ``position`` made into ``new``."""
        return next((m for m in self.by_entry.get(position, ()) if m.new == new), None)

    def made_by(self, position: int, old: Key) -> Move | None:
        """The move entry ``position`` made of the body at ``old``."""
        return next((m for m in self.by_entry.get(position, ()) if m.old == old), None)

    def lost_line(self, position: int, sha: str, old: Key) -> str | None:
        """The line a scan shows for an anchored definition entry ``position`` removed while it added more than
        one definition of the same name elsewhere (``moved-by-name``, followed to none of them), or None."""
        places = self.ambiguous.get((position, old))
        if not places:
            return None
        return f"anchor lost at {sha[:10]}: {old[1]} moved to " + " or ".join(f"{p}::{n}" for p, n in places) \
            + "? (ambiguous: not followed)"


def _body_node(node):
    if node is None:
        return None
    if node.type in ("decorated_definition", "template_declaration"):
        inner = node.child_by_field_name("definition") or next(
            (c for c in node.named_children if c.type == "function_definition"), None)
        node = inner if inner is not None else node
    return node.child_by_field_name("body")


def _comment(line: str) -> bool:
    return line.startswith(("#", "//", "/*", "*"))


def body_lines(table, qualified_name: str, names: set[str]) -> list[str] | None:
    """The code lines of a definition's body, stripped, without comments, a leading
    docstring and blank lines, with every name in ``names`` written as ``<moved>``."""
    if table is None or table.tree is None:
        return None
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None)
    body = _body_node(definition.node) if definition is not None else None
    if body is None:
        return None
    statements = body.named_children
    start = body.start_byte
    if statements and statements[0].type == "expression_statement" and statements[0].named_children \
            and statements[0].named_children[0].type == "string":
        start = statements[0].end_byte
    text = table.source[start:body.end_byte].decode("utf-8", errors="replace")
    lines = []
    for raw in text.splitlines():
        line = raw.strip().strip("{}").strip()
        if not line or _comment(line):
            continue
        lines.append(_IDENTIFIER.sub(lambda m: "<moved>" if m.group(0) in names else m.group(0), line))
    return lines


def _into_own_package(old_path: str, new_path: str) -> bool:
    """True when ``new_path`` lies in the package that took the place of module ``old_path``
    (``ops/norm.py`` -> ``ops/norm/__init__.py``, ``ops/norm/forward.py``): same import path."""
    stem, dot, extension = old_path.rpartition(".")
    return bool(dot) and extension == "py" and new_path.startswith(stem + "/") and new_path.endswith(".py")


def _kind(table, qualified_name: str) -> str | None:
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None) \
        if table is not None and table.tree is not None else None
    return definition.kind if definition is not None else None


def _shared(carried: list[str], left: Counter) -> int:
    return sum((Counter(carried) & left).values())


def _class_members(symbols: list[TouchedSymbol], table_of: Callable) -> list[TouchedSymbol]:
    """The methods of every class ``symbols`` add or remove whole, as touched symbols of their own.

    A commit that renames or moves a class reports the class, not its methods; an anchor on one
    of the methods (``_Norm.forward``) must still be followed into the class that carries it
    (``_NormOp.forward``). Each method inherits the class's change, paths and blobs; one the
    commit already reports is left to that report."""
    reported = {(s.path, s.qualified_name) for s in symbols}
    members = []
    for symbol in symbols:
        if symbol.kind != KIND_CLASS or symbol.change not in ("added", "removed"):
            continue
        blob, path = (symbol.new_blob, symbol.path) if symbol.change == "added" \
            else (symbol.old_blob, symbol.old_path or symbol.path)
        table = table_of(blob, path)
        if table is None or table.tree is None:
            continue
        prefix = symbol.qualified_name + "."
        for definition in table.definitions:
            if not definition.qualified_name.startswith(prefix) or definition.kind == KIND_CLASS \
                    or "." in definition.qualified_name[len(prefix):] \
                    or (symbol.path, definition.qualified_name) in reported:
                continue
            lines = (definition.start_line, definition.end_line)
            members.append(replace(symbol, name=definition.name, qualified_name=definition.qualified_name,
                                   kind=definition.kind, old_lines=lines if symbol.change == "removed" else None,
                                   new_lines=lines if symbol.change == "added" else None))
    return members


def _as_called(lines: list[str], caller_table, caller: str, helper_table, helper: str) -> list[str]:
    """A helper's body lines with each parameter it reads written as the argument the caller's one
    call passes it (``BLOCK_SIZE`` as ``BLOCK_SIZE_fwd``): the lines an extraction took out of the
    caller, before the helper named them after its own parameters."""
    bound = _bound_arguments(caller_table, caller, helper_table, helper)
    if not bound:
        return lines
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, bound)) + r")(?!\w)(?!\s*=(?!=))")
    return [pattern.sub(lambda m: bound[m.group(1)], line) for line in lines]


def as_called_source(caller_table, caller: str, helper_table, helper: str) -> bytes | None:
    """The helper's file with the helper's body opening on an assignment of each parameter the
    caller's one call binds to something else (``BLOCK_SIZE = ctx.block_size``): binding a parameter
    is that assignment, so the helper's launches read through it (a grid resolves its locals) as
    the caller runs them. A parameter passed under its own name (``x=x``) where the caller assigned
    that name takes the caller's value the same way: the caller's assignment that reaches the call
    (``x, w = ctx.saved_tensors``) opens the body first (``_callers_assignments``). None when the
    call binds nothing differently or the helper cannot be read; lines below the helper's first
    statement move down by one a binding."""
    bound = _bound_arguments(caller_table, caller, helper_table, helper)
    carried = _callers_assignments(caller_table, caller, helper_table, helper)
    node = _definition_node(helper_table, helper)
    body = node.child_by_field_name("body") if node is not None else None
    if not (bound or carried) or body is None or body.start_point[0] == node.start_point[0]:
        return None
    indent = " " * body.start_point[1]
    bindings = "".join(f"{text}\n{indent}" for text in carried) \
        + "".join(f"{name} = {text}\n{indent}" for name, text in bound.items())
    source = helper_table.source
    return source[:body.start_byte] + bindings.encode("utf-8") + source[body.start_byte:]


def _reused_names(symbols: list[TouchedSymbol], table_of: Callable) -> list[TouchedSymbol]:
    """Modified definitions whose name now holds another kind of definition (a kernel's name given to
    the wrapper that launches it): the new body there is new code, so it may carry lines another
    definition gives up in the same commit (an extraction into the wrapper), as an added one would."""
    return [s for s in symbols if s.change == "modified" and s.kind != KIND_CLASS and s.language
            and not s.name.startswith("<")
            and _kind(table_of(s.old_blob, s.old_path or s.path), s.qualified_name) is not None
            and _kind(table_of(s.new_blob, s.path), s.qualified_name) is not None
            and _kind(table_of(s.old_blob, s.old_path or s.path), s.qualified_name)
            != _kind(table_of(s.new_blob, s.path), s.qualified_name)]


def follow_moves(entries: Iterable[EntryChanges], table_of: Callable, anchored: Callable[[TouchedSymbol], bool]) -> Moves:
    """The moves of anchored definitions in ``entries`` (in range order).

    ``table_of(blob, path)`` gives a symbol table; ``anchored(symbol)`` says
    whether the tree ports or declares the touched symbol where it was.
    """
    moves = Moves()
    callees: dict[Key, Key] = {}  # a definition added as the callee of an anchored or followed one -> its origin
    blobs: dict[str, str] = {}  # path -> its latest blob seen in the range
    # a definition added in the range (and still there) -> (the entry that added it, its symbol)
    born: dict[Key, tuple[int, TouchedSymbol]] = {}
    for entry in entries:
        follow_file_renames(moves, entry)
        _track_added(entry, blobs, born)
        symbols = entry.symbols + _class_members(entry.symbols, table_of)
        added = [s for s in symbols if s.change == "added" and s.kind != KIND_CLASS and s.language
                 and not s.name.startswith("<")]
        for change in entry.commit.changes:  # a renamed file keeps its callees
            if change.status == "renamed" and change.old_path and change.new_path:
                for (path, name), origin in list(callees.items()):
                    if path == change.old_path:
                        callees.setdefault((change.new_path, name), origin)
        _follow_added_callees(entry, symbols, added, table_of, anchored, moves, callees)
        back = {(s.path, s.qualified_name) for s in added}
        # a carrier the commit removes takes its body along: its old name defined again is where the body went
        leaving = {(s.old_path or s.path, s.qualified_name) for s in symbols if s.change == "removed"}
        for carrier, move in moves.carriers.items():  # a renamed or moved body's old name defined again
            if move.how != "extracted" and (move.old in back or move.origin in back) and carrier not in moves.ended \
                    and not (carrier in leaving and move.origin not in back):
                moves.ended[carrier] = entry.position
        _end_left_names(moves, entry.position, back, leaving)
        _follow_classes_by_name(entry, symbols, table_of, anchored, moves)
        if not added and not born:  # a name reused for new code comes with the definition that took the old code
            continue
        losing = []
        through_callee: set[Key] = set()  # old keys followed as callees of a ported definition
        for symbol in symbols:
            if symbol.change not in ("removed", "modified") or symbol.kind == KIND_CLASS or symbol.name.startswith("<"):
                continue
            old_key = (symbol.old_path or symbol.path, symbol.qualified_name)
            followed = moves.carrying(old_key, entry.position)
            if followed is not None or anchored(symbol):
                losing.append((symbol, followed.origin if followed is not None else old_key))
                if followed is not None and CALLEE_RULE in followed.via:
                    through_callee.add(old_key)
            elif symbol.change == "removed" and old_key in callees:
                losing.append((symbol, callees[old_key]))
                through_callee.add(old_key)
        if not losing:
            continue
        reused = _reused_names(symbols, table_of)
        names = {s.name for s in entry.symbols if s.change in ("added", "removed")} | {s.name for s in reused}
        new_bodies = {}
        for symbol in added + reused:
            lines = body_lines(table_of(symbol.new_blob, symbol.path), symbol.qualified_name, names)
            if lines:
                new_bodies[(symbol.path, symbol.qualified_name)] = (symbol, lines)
        taken: set[Key] = set()
        made: list[Move] = []
        for symbol, origin in sorted(losing, key=lambda pair: pair[0].qualified_name.count(".")):
            old_path = symbol.old_path or symbol.path
            outer = next((m for m in made if m.old[0] == old_path and symbol.qualified_name.startswith(m.old[1] + ".")),
                         None)
            if outer is not None:  # a definition nested in a moved one moves with it
                inner = (outer.new[0], outer.new[1] + symbol.qualified_name[len(outer.old[1]):])
                if inner in new_bodies and inner not in taken:
                    taken.add(inner)
                    move = Move(entry.position, entry.commit.sha, origin, (old_path, symbol.qualified_name), inner,
                                outer.how, outer.exact)
                    moves.carriers[inner] = move
                    moves.by_entry.setdefault(entry.position, []).append(move)
                continue
            before = body_lines(table_of(symbol.old_blob, old_path), symbol.qualified_name, names)
            if not before:
                _follow_by_name(entry, symbol, origin, old_path, added, taken, table_of, moves, made)
                continue
            still = None
            if symbol.change == "modified":
                still = body_lines(table_of(symbol.new_blob, symbol.path), symbol.qualified_name, names)
                if still is None:
                    continue
                if _kind(table_of(symbol.old_blob, old_path), symbol.qualified_name) \
                        != _kind(table_of(symbol.new_blob, symbol.path), symbol.qualified_name) \
                        and _shared(still, Counter(before)) < (1 - CARRIED_SHARE) * len(before):
                    still = None  # the name now holds another kind of definition: where the old body went is a rename
            best = None
            edits: list[Key] = []
            for key, (candidate, lines) in new_bodies.items():
                if key in taken:
                    continue
                if still is not None and not any(re.search(rf"\b{re.escape(candidate.name)}\s*[\(\[]", s)
                                                 for s in _raw_calls(table_of(symbol.new_blob, symbol.path),
                                                                     symbol.qualified_name)):
                    continue  # an extraction: the old definition calls what carries its body
                shared = _shared(lines, Counter(before))
                if still is not None and shared < CARRIED_SHARE * len(lines):
                    lines = _as_called(lines, table_of(symbol.new_blob, symbol.path), symbol.qualified_name,
                                       table_of(candidate.new_blob, candidate.path), candidate.qualified_name)
                    shared = _shared(lines, Counter(before))
                same = still is None and lines == before and candidate.qualified_name == symbol.qualified_name
                # a module turned into a package of the same name: the definition keeps its import path
                into_package = still is None and candidate.qualified_name == symbol.qualified_name \
                    and _into_own_package(old_path, candidate.path) \
                    and sum(1 for s in added if s.qualified_name == symbol.qualified_name
                            and _into_own_package(old_path, s.path)) == 1
                edited = _edited_rename(symbol, candidate, table_of, old_path, still, before, lines, shared)
                if not into_package and not edited \
                        and ((shared < 2 and not same) or shared < CARRIED_SHARE * len(lines)):
                    continue
                edited = edited and shared < CARRIED_SHARE * len(lines)  # carried outright otherwise
                if not into_package and still is None and shared < CARRIED_SHARE * len(before):
                    continue  # a removed definition's body must be carried, not only quoted
                if still is not None and sum((Counter(before) - Counter(still)).values()) < len(lines) / 2:
                    continue  # an extraction takes the lines out of the old definition (a call may replace them)
                if still is None and lines != before and _replaced(symbol, table_of(symbol.old_blob, old_path),
                                                                   candidate, table_of(candidate.new_blob,
                                                                                       candidate.path)):
                    continue  # another name with another interface: a replacement, not the same definition
                if edited:
                    edits.append(key)
                if best is None or shared > best[0]:
                    best = (shared, key, candidate, lines, into_package and shared < CARRIED_SHARE * len(before),
                            edited)
            if best is not None and best[5] and len(edits) > 1:
                best = None  # two edited renames keep the body: which one is the definition is not known
            if best is None:
                _follow_by_name(entry, symbol, origin, old_path, added, taken, table_of, moves, made)
                if moves.made_by(entry.position, (old_path, symbol.qualified_name)) is None:
                    _follow_earlier_copy(entry, symbol, origin, old_path, before, names, blobs, born, taken,
                                         table_of, anchored, moves, made)
                if moves.made_by(entry.position, (old_path, symbol.qualified_name)) is None:
                    _follow_narrowed(entry, symbol, origin, old_path, before, new_bodies, taken, table_of, moves,
                                     made)
                if moves.made_by(entry.position, (old_path, symbol.qualified_name)) is None:
                    _follow_rebound_name(entry, symbol, origin, old_path, before, new_bodies, taken, table_of,
                                         moves, made)
                continue
            _, key, candidate, lines, _, edited = best
            taken.add(key)
            how = "extracted" if still is not None else ("renamed" if candidate.path == old_path else "moved")
            via = tuple(rule for rule, applies in (
                ("module-to-package", best[4]), ("name-reused", still is None and symbol.change == "modified"),
                (CALLEE_RULE, (old_path, symbol.qualified_name) in through_callee), (EDITED_RULE, edited))
                if applies)
            move = Move(entry.position, entry.commit.sha, origin, (old_path, symbol.qualified_name), key, how,
                        exact=still is None and lines == before, via=via)
            moves.carriers[key] = move
            if still is None and symbol.change == "modified":  # the old name, reused, no longer carries the body
                moves.ended[(symbol.path, symbol.qualified_name)] = entry.position
            moves.by_entry.setdefault(entry.position, []).append(move)
            made.append(move)
    return moves


def _module_bindings(source: bytes, name: str) -> set[str] | None:
    """The names a module binds ``name`` to at its top level (``name = other``, inside module-level ``if`` or
    ``try`` blocks too, never inside a definition), or None when the source does not parse."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    bound: set[str] = set()

    def visit(statements) -> None:
        for statement in statements:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name) \
                    and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
                bound.add(statement.value.id)
            elif isinstance(statement, ast.If):
                visit(statement.body)
                visit(statement.orelse)
            elif isinstance(statement, ast.Try):
                for block in (statement.body, statement.orelse, statement.finalbody,
                              *(h.body for h in statement.handlers)):
                    visit(block)

    visit(module.body)
    return bound


def _follow_rebound_name(entry: EntryChanges, symbol: TouchedSymbol, origin: Key, old_path: str,
                         before: list[str], new_bodies: dict, taken: set[Key], table_of: Callable, moves: Moves,
                         made: list[Move]) -> None:
    """Rule ``rebound-name``: an anchored (or followed) top-level Python function ``entry`` removes, whose body no
    added definition carries, while the new side of its file binds the old name at module level to functions
    the commit adds there: every caller that named it now runs one of them, and the one keeping the most of its
    old body's lines (at least two, no tie) is the same definition. Never ``exact``: it clears nothing."""
    if symbol.change != "removed" or language_for_path(old_path) != "python" or "." in symbol.qualified_name:
        return
    change = next((c for c in entry.commit.changes if (c.old_path or c.new_path) == old_path
                   and c.new_path and c.new_blob and c.status != "deleted"), None)
    table = table_of(change.new_blob, change.new_path) if change is not None else None
    if table is None or table.source is None:
        return
    bound = _module_bindings(table.source, symbol.name)
    if not bound or symbol.name in bound:
        return
    scored = sorted(((_shared(lines, Counter(before)), key) for key, (candidate, lines) in new_bodies.items()
                     if key not in taken and key[0] == change.new_path and key[1] in bound), reverse=True)
    if not scored or scored[0][0] < 2 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return
    _record(Move(entry.position, entry.commit.sha, origin, (old_path, symbol.qualified_name), scored[0][1],
                 "renamed", exact=False, via=(REBOUND_RULE,)), taken, moves, made)


def _track_added(entry: EntryChanges, blobs: dict[str, str], born: dict[Key, tuple[int, TouchedSymbol]]) -> None:
    """Keep, for ``_follow_earlier_copy``, every file's latest blob and every definition the range added and
    still has (through file renames), with the entry that added it."""
    for change in entry.commit.changes:
        if change.status in ("deleted", "renamed") and change.old_path:
            blobs.pop(change.old_path, None)
            for key in [k for k in born if k[0] == change.old_path]:
                position, symbol = born.pop(key)
                if change.status == "renamed" and change.new_path:
                    born[(change.new_path, key[1])] = (position, replace(symbol, path=change.new_path))
        if change.new_path and change.new_blob and change.status != "deleted":
            blobs[change.new_path] = change.new_blob
    for symbol in entry.symbols:
        if symbol.kind == KIND_CLASS or not symbol.language or symbol.name.startswith("<"):
            continue
        if symbol.change == "added":
            born[(symbol.path, symbol.qualified_name)] = (entry.position, symbol)
        elif symbol.change == "removed":
            born.pop((symbol.old_path or symbol.path, symbol.qualified_name), None)


def _edited_rename(symbol: TouchedSymbol, candidate: TouchedSymbol, table_of: Callable, old_path: str,
                   still, before: list[str], lines: list[str], shared: int) -> bool:
    """Rule ``renamed-with-edits``: ``candidate``, added in the file ``symbol`` (removed) was defined in, under
    another name and as the same kind of definition, keeps at least ``CARRIED_SHARE`` of the old body, and the
    old lines are at least half of its own: the definition renamed while the commit edits it (a template flag,
    a parameter, a branch added). Whether it keeps every old parameter is checked as for any rename
    (``_replaced``)."""
    return still is None and symbol.change == "removed" and candidate.path in (symbol.path, old_path) \
        and candidate.qualified_name != symbol.qualified_name and shared >= 2 \
        and shared >= CARRIED_SHARE * len(before) and 2 * shared >= len(lines) \
        and _kind(table_of(symbol.old_blob, old_path), symbol.qualified_name) \
        == _kind(table_of(candidate.new_blob, candidate.path), candidate.qualified_name)


def _follow_earlier_copy(entry: EntryChanges, symbol: TouchedSymbol, origin: Key, old_path: str, before: list[str],
                         names: set[str], blobs: dict[str, str], born: dict[Key, tuple[int, TouchedSymbol]],
                         taken: set[Key], table_of: Callable, anchored: Callable[[TouchedSymbol], bool], moves: Moves,
                         made: list[Move]) -> None:
    """Rule ``copied-then-removed``: an anchored (or followed) definition ``entry`` removes with its whole file,
    that no definition of the commit carries, is followed to the one definition an earlier commit of the range added (in any file of
    the same language, still there, neither anchored nor already a carrier) whose body as it is now carries the
    removed one both ways (``CARRIED_SHARE``): upstream copied the code first and deleted the original later.
    The move is never ``exact``: following a copy clears nothing."""
    if symbol.change != "removed" or not any(c.status == "deleted" and c.old_path == old_path
                                             for c in entry.commit.changes):
        return  # only a file deleted whole hands its definitions to copies made before
    language = language_for_path(old_path)
    found = []
    for key, (position, copy) in born.items():
        if position >= entry.position or key in taken or key in moves.carriers or key == origin \
                or key == (old_path, symbol.qualified_name) or language_for_path(key[0]) != language \
                or key[0] not in blobs or anchored(copy):
            continue
        lines = body_lines(table_of(blobs[key[0]], key[0]), key[1], names)
        if not lines:
            continue
        shared = _shared(lines, Counter(before))
        if shared >= 2 and shared >= CARRIED_SHARE * len(lines) and shared >= CARRIED_SHARE * len(before):
            found.append(key)
    if len(found) != 1:
        return
    _record(Move(entry.position, entry.commit.sha, origin, (old_path, symbol.qualified_name), found[0], "moved",
                 exact=False, via=(COPIED_RULE,)), taken, moves, made)


def _words(name: str) -> list[str]:
    return [word for word in name.lower().split("_") if word]


def kindred_names(old: str, new: str) -> bool:
    """True when ``new`` is ``old`` with one word of its name (``_``-separated) dropped, added or shortened
    (``mix_v2_op`` / ``mix_op``, ``lut8v2_mix`` / ``lut8_mix``): the same name with its version or variant mark
    changed, not another name."""
    a, b = _words(old), _words(new)
    if a == b or not a or not b:
        return False
    if len(a) == len(b):
        differing = [(x, y) for x, y in zip(a, b) if x != y]
        return len(differing) == 1 and (differing[0][0].startswith(differing[0][1])
                                        or differing[0][1].startswith(differing[0][0]))
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return len(longer) == len(shorter) + 1 and any(longer[:i] + longer[i + 1:] == shorter for i in range(len(longer)))


def _follow_narrowed(entry: EntryChanges, symbol: TouchedSymbol, origin: Key, old_path: str, before: list[str],
                     new_bodies: dict, taken: set[Key], table_of: Callable, moves: Moves, made: list[Move]) -> None:
    """Rule ``renamed-narrowed``: an anchored (or followed) definition ``entry`` removes, that no added definition
    carries, is followed to the one definition the commit adds in the same file, of the same kind, under a kindred
    name (``kindred_names``), whose parameters are all old parameters (some dropped, none new: what a caller passed
    separately now travels in what it already passes) and whose body's code lines are at least ``CARRIED_SHARE``
    old lines (at least two): the definition renamed while its interface narrowed. A definition that takes a new
    input is a replacement (``_replaced``); two such candidates are followed to none. The move is never ``exact``:
    following a narrowed rename clears nothing, and the move commit stays as flagged as it was."""
    if symbol.change != "removed" or symbol.name.startswith("<"):
        return
    old_table = table_of(symbol.old_blob, old_path)
    kind = _kind(old_table, symbol.qualified_name)
    before_params = _parameter_names(old_table, symbol.qualified_name, old_path)
    if kind is None or before_params is None:
        return
    found = []
    for key, (candidate, lines) in new_bodies.items():
        if key in taken or key in moves.carriers or candidate.change != "added" \
                or candidate.path not in (symbol.path, old_path) \
                or not kindred_names(re.split(r"::|\.", symbol.qualified_name)[-1],
                                     re.split(r"::|\.", candidate.qualified_name)[-1]) \
                or re.split(r"::|\.", candidate.qualified_name)[:-1] != re.split(r"::|\.", symbol.qualified_name)[:-1]:
            continue
        new_table = table_of(candidate.new_blob, candidate.path)
        if _kind(new_table, candidate.qualified_name) != kind:
            continue
        after_params = _parameter_names(new_table, candidate.qualified_name, candidate.path)
        if after_params is None or not after_params < before_params:
            continue
        shared = _shared(lines, Counter(before))
        if shared >= 2 and shared >= CARRIED_SHARE * len(lines):
            found.append(key)
    if len(found) != 1:
        return
    _record(Move(entry.position, entry.commit.sha, origin, (old_path, symbol.qualified_name), found[0], "renamed",
                 exact=False, via=(NARROWED_RULE,)), taken, moves, made)


def hoisted_local(old_table, new_table, qualified_name: str, old_params: list[str],
                  new_params: list[str]) -> tuple[str, list[str], str] | None:
    """Rule ``hoisted-local``: (the local, the parameters it replaces, its old line) when a definition takes, in
    place of some of its parameters, exactly one new parameter named as a local its old body computed from them
    (``p = base + row * n + col`` gone, ``p`` taken instead of ``base, row, col``), the removed parameters read
    nowhere else, and the rest of its body unchanged line for line; else None."""
    added = [name for name in new_params if name not in old_params]
    removed = [name for name in old_params if name not in new_params]
    if len(added) != 1 or not removed:
        return None
    before, after = body_lines(old_table, qualified_name, set()), body_lines(new_table, qualified_name, set())
    if not before or after is None:
        return None
    local = added[0]
    declaring = re.compile(rf"^(?:[\w:<>,\s\*&]*[\s\*&])?{re.escape(local)}\s*=(?!=)")
    found = [i for i, line in enumerate(before) if declaring.match(line)]
    if len(found) != 1:
        return None
    line = before[found[0]]
    if before[:found[0]] + before[found[0] + 1:] != after:
        return None
    reads = [name for name in removed if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", line)]
    if not reads or any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", other)
                        for name in removed for other in after):
        return None
    return local, removed, line


def _unscoped(table, qualified_name: str) -> str:
    """A C++ qualified name without its namespaces: the class scopes (a qualifier the table defines as a
    class) and the name stay (``ops::Norm::fwd`` -> ``Norm::fwd``; ``ops::fwd`` -> ``fwd``)."""
    parts = qualified_name.split("::")
    kept = [part for i, part in enumerate(parts[:-1]) if _kind(table, "::".join(parts[:i + 1])) == KIND_CLASS]
    return "::".join(kept + parts[-1:])


def _follow_by_name(entry: EntryChanges, symbol: TouchedSymbol, origin: Key, old_path: str,
                    added: list[TouchedSymbol], taken: set[Key], table_of: Callable, moves: Moves,
                    made: list[Move]) -> None:
    """Rule ``moved-by-name``: an anchored (or followed) definition ``entry`` removes, whose body no added
    definition carries, is followed to the one definition of the same qualified name the entry adds in
    another file (a rewrite that moves a kernel to a new file without git pairing the files). A C++ name
    is compared without its namespaces when no added definition has it with them (a rewrite that drops
    the namespace), never without its class. Two or more such definitions are recorded as ambiguous and
    followed to none. The move is never ``exact``: following by name clears nothing."""
    if symbol.change != "removed" or symbol.name.startswith("<"):
        return
    others = [s for s in added if s.path != old_path and (s.path, s.qualified_name) not in taken
              and (s.path, s.qualified_name) not in moves.carriers]
    language = language_for_path(old_path)
    others = [s for s in others if language_for_path(s.path) == language]
    found = {(s.path, s.qualified_name): s for s in others if s.qualified_name == symbol.qualified_name}
    if not found and language == "cpp":
        name = _unscoped(table_of(symbol.old_blob, old_path), symbol.qualified_name)
        found = {(s.path, s.qualified_name): s for s in others
                 if s.qualified_name.split("::")[-1] == name.split("::")[-1]
                 and _unscoped(table_of(s.new_blob, s.path), s.qualified_name) == name}
    if len(found) > 1:
        moves.ambiguous[(entry.position, (old_path, symbol.qualified_name))] = tuple(sorted(found))
        return
    if not found:
        return
    _record(Move(entry.position, entry.commit.sha, origin, (old_path, symbol.qualified_name), next(iter(found)),
                 "moved", exact=False, via=(BY_NAME_RULE,)), taken, moves, made)


def _end_left_names(moves: Moves, position: int, back: set[Key], leaving: set[Key]) -> None:
    """A chain of moves: a carrier an earlier move took the body away from (renamed on again) whose name entry
    ``position`` defines again while the body's later carrier stays is a sibling from then on, not the port's;
    one defined again while the later carrier is removed in the same entry is where the body went back."""
    for carrier in back:
        if carrier not in moves.carriers or carrier in moves.ended:
            continue
        later = [m for made in moves.by_entry.values() for m in made
                 if m.old == carrier and m.how != "extracted" and m.position < position and m.new != carrier]
        if later and not any(m.new in leaving for m in later):
            moves.ended[carrier] = position


def _follow_classes_by_name(entry: EntryChanges, symbols: list[TouchedSymbol], table_of: Callable,
                            anchored: Callable[[TouchedSymbol], bool], moves: Moves) -> None:
    """Rule ``moved-by-name`` for a class: an anchored (or followed) class ``entry`` removes is followed to the one
    class of the same qualified name the entry adds in another file of its language (``_follow_by_name``), as a
    function is. A class is otherwise followed through its methods (``_class_members``); one the tree ports as a
    class (an enum of modes, a class of constants) has no method to carry it, and is the same definition under
    its own name. Never ``exact``: following by name clears nothing."""
    classes = [s for s in symbols if s.change == "added" and s.kind == KIND_CLASS and s.language
               and not s.name.startswith("<")]
    if not classes:
        return
    taken: set[Key] = set()
    made: list[Move] = []
    for symbol in symbols:
        if symbol.change != "removed" or symbol.kind != KIND_CLASS or not symbol.language \
                or symbol.name.startswith("<"):
            continue
        old_key = (symbol.old_path or symbol.path, symbol.qualified_name)
        followed = moves.carrying(old_key, entry.position)
        if followed is None and not anchored(symbol):
            continue
        _follow_by_name(entry, symbol, followed.origin if followed is not None else old_key, old_key[0], classes,
                        taken, table_of, moves, made)


def _record(move: Move, taken: set[Key], moves: Moves, made: list[Move]) -> None:
    """Book a move that clears nothing (followed by name or to an earlier copy): its carrier is taken for
    this entry and carries the origin's anchors from here on."""
    taken.add(move.new)
    moves.carriers[move.new] = move
    moves.by_entry.setdefault(move.position, []).append(move)
    made.append(move)


def _follow_added_callees(entry: EntryChanges, symbols: list[TouchedSymbol], added: list[TouchedSymbol],
                          table_of: Callable, anchored: Callable[[TouchedSymbol], bool], moves: Moves,
                          callees: dict[Key, Key]) -> None:
    """Record in ``callees`` every Python definition ``entry`` adds that an anchored definition (or one
    followed: a carrier, or a callee recorded before) calls, as written on the commit's new side, directly
    or through other definitions the commit adds, with the anchor it runs for (rule ``moved-callee-body``).

    The port of a definition carries what the definition runs: a helper upstream splits out of it in the
    same commit (``forward`` now calls a new ``_forward`` that calls a new ``_launch``) is code the port
    inlines. Only a callee added together with its caller's call is recorded: a helper the caller called
    all along was a definition of its own when the port was written, and the port does not name it."""
    if not added:
        return
    by_name: dict[str, list[TouchedSymbol]] = {}
    for symbol in added:
        if language_for_path(symbol.path) == "python" and symbol.kind != KIND_CLASS:
            by_name.setdefault(symbol.name, []).append(symbol)
    if not by_name:
        return
    work: list[tuple[TouchedSymbol, Key]] = []
    for symbol in symbols:
        if symbol.change not in ("added", "modified") or symbol.name.startswith("<") \
                or language_for_path(symbol.path) != "python":
            continue
        key = (symbol.path, symbol.qualified_name)
        followed = moves.carrying(key, entry.position + 1)
        if followed is not None:
            work.append((symbol, followed.origin))
        elif key in callees:
            work.append((symbol, callees[key]))
        elif symbol.change == "modified" and anchored(symbol):
            work.append((symbol, (symbol.old_path or symbol.path, symbol.qualified_name)))
    seen: set[Key] = set()
    while work:
        caller, origin = work.pop()
        for name in _called_names(table_of(caller.new_blob, caller.path), caller.qualified_name):
            candidates = by_name.get(name, [])
            local = [c for c in candidates if c.path == caller.path]
            chosen = local if len(local) == 1 else candidates if len(candidates) == 1 else []
            for callee in chosen:
                key = (callee.path, callee.qualified_name)
                if key in seen or key in callees or anchored(callee):
                    continue
                seen.add(key)
                callees[key] = origin
                work.append((callee, origin))


def _called_names(table, qualified_name: str) -> set[str]:
    """The bare names a definition calls (``f(...)``) or launches (``f[grid](...)``) in its body."""
    node = _definition_node(table, qualified_name)
    found: set[str] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if current.type == "call":
            function = current.child_by_field_name("function")
            if function is not None and function.type == "subscript":
                function = function.child_by_field_name("value")
            if function is not None and function.type == "identifier":
                found.add(function.text.decode("utf-8", errors="replace"))
        stack.extend(current.named_children)
    return found


def follow_file_renames(moves: Moves, entry: EntryChanges) -> None:
    """Carriers in a file that ``entry`` renames (git pairs the old and the new path) carry their bodies
    at the new path too: renaming a whole file, or the package around it, moves every definition in it
    without changing what any of them is. The old key stays for the commit's own removed side."""
    for change in entry.commit.changes:
        if change.status != "renamed" or not change.old_path or not change.new_path \
                or change.old_path == change.new_path:
            continue
        for (path, name), move in list(moves.carriers.items()):
            if path == change.old_path and (change.new_path, name) not in moves.carriers:
                moves.carriers[(change.new_path, name)] = move
                if (path, name) in moves.ended:
                    moves.ended[(change.new_path, name)] = moves.ended[(path, name)]


def renamed_unchanged(entry: EntryChanges, table_of: Callable) -> set[str]:
    """The old and new names of every definition ``entry`` renames or moves with its body unchanged
    (a removed definition and an added one of the same kind, a class included, whose bodies are equal
    line for line, modulo the names the commit adds and removes), anchored or not: an import that
    rebinds one name to the other, or a class header that follows it, still binds the same code."""
    return {name for pair in renamed_unchanged_pairs(entry, table_of) for name in pair}


def renamed_unchanged_pairs(entry: EntryChanges, table_of: Callable) -> list[tuple[str, str]]:
    """``renamed_unchanged`` as pairs: each old name with the new name its body went to."""
    names = {s.name for s in entry.symbols if s.change in ("added", "removed")}
    bodies: dict[str, list] = {"added": [], "removed": []}
    for symbol in entry.symbols:
        if symbol.change not in bodies or symbol.name.startswith("<"):
            continue
        blob, path = (symbol.new_blob, symbol.path) if symbol.change == "added" \
            else (symbol.old_blob, symbol.old_path or symbol.path)
        lines = body_lines(table_of(blob, path), symbol.qualified_name, names)
        if lines:
            bodies[symbol.change].append((symbol, lines))
    found: list[tuple[str, str]] = []
    for old, before in bodies["removed"]:
        same = [new for new, after in bodies["added"] if after == before and new.kind == old.kind]
        if len(same) == 1 and (old.name, same[0].name) not in found:
            found.append((old.name, same[0].name))
    return found


def follows_moves(old_table, new_table, qualified_name: str, moves: list[Move], also: set[str] = frozenset()) -> bool:
    """True when a definition differs before and after only in the names of definitions
    ``moves`` carried (a launcher that now launches the renamed kernel), or the names ``also``
    (definitions the commit renames with their bodies, ``renamed_unchanged``)."""
    names = {re.split(r"::|\.", key[1])[-1] for move in moves for key in (move.old, move.new)} | set(also)

    def lines(table):
        if table is None or table.tree is None:
            return None
        raw = _raw_calls(table, qualified_name)
        return [_IDENTIFIER.sub(lambda m: "<moved>" if m.group(0) in names else m.group(0), line.strip())
                for line in raw if line.strip() and not _comment(line.strip())] or None

    before, after = lines(old_table), lines(new_table)
    return before is not None and before == after


_COMPOUND_HEADERS = {"if_statement": "condition", "elif_clause": "condition", "while_statement": "condition",
                     "for_statement": "right", "with_statement": None, "try_statement": None}


_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*|==|!=|<=|>=|\*\*|//|->|\S")


def _tokens(text: str, names: set[str]) -> list[str]:
    return ["<moved>" if t in names else t for t in _TOKEN.findall(text)]


def _statements(table, qualified_name: str, names: set[str]) -> list[list[str]] | None:
    """The statements of a Python definition's body as token lists (a compound statement as
    its header), comments aside, with the names in ``names`` written ``<moved>``."""
    if table is None or table.tree is None:
        return None
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None)
    body = _body_node(definition.node) if definition is not None else None
    if body is None:
        return None
    found = []
    stack = list(reversed(body.named_children))
    while stack:
        node = stack.pop()
        if node.type == "comment":
            continue
        if node.type in _COMPOUND_HEADERS or node.type in ("else_clause", "except_clause", "finally_clause", "block"):
            field_name = _COMPOUND_HEADERS.get(node.type)
            header = node.child_by_field_name(field_name) if field_name else None
            found.append([node.type, *(_tokens(header.text.decode("utf-8", errors="replace"), names)
                                       if header is not None else [])])
            stack.extend(reversed([c for c in node.named_children if c is not header]))
            continue
        found.append(_tokens(node.text.decode("utf-8", errors="replace"), names))
    return found


def _substituted(tokens: list[str], bound: dict[str, list[str]]) -> list[str]:
    """``tokens`` with each parameter read (not an attribute, not a keyword's name, not a string literal
    that only spells its name, such as a launch-config key ``meta["BLOCK"]``) written as its argument."""
    out: list[str] = []
    for i, token in enumerate(tokens):
        keyword = i + 1 < len(tokens) and tokens[i + 1] == "="
        quoted = 0 < i < len(tokens) - 1 and tokens[i - 1] in ('"', "'") and tokens[i + 1] == tokens[i - 1]
        if token in bound and (i == 0 or tokens[i - 1] != ".") and not keyword and not quoted:
            out.extend(bound[token])
        else:
            out.append(token)
    return out


_BINDING_PARENTS = frozenset({
    "pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "as_pattern_target", "parameters",
    "lambda_parameters", "default_parameter", "typed_parameter", "typed_default_parameter", "global_statement",
    "nonlocal_statement", "delete_statement", "dotted_name", "aliased_import", "function_definition",
    "class_definition", "keyword_separator", "named_expression"})


def _binds(node) -> bool:
    """Whether the identifier or attribute ``node`` is written, not read: a target of an assignment, a
    loop or a ``with`` (``as``), a parameter, a deleted, imported or defined name."""
    child, parent = node, node.parent
    while parent is not None and parent.type in ("pattern_list", "tuple_pattern", "list_pattern",
                                                   "parenthesized_expression", "list_splat_pattern"):
        child, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        return parent.child_by_field_name("left") == child
    return node.parent.type in _BINDING_PARENTS


def alias_attribute_reads(table, qualified_name: str, names: set[str]) -> list[list[str]] | None:
    """``_statements`` of the Python definition ``qualified_name`` with each local
    alias of a parameter's attribute dropped and its reads written as the attribute: a top-level
    statement ``name = param.attr`` before every other mention of ``name``, where ``name`` is bound
    nowhere else in the body, and ``param`` is a parameter the body uses only to read attributes
    (never rebound, called, passed on or assigned through). Then ``name`` holds ``param.attr``'s
    value at every read: nothing in the body can change it in between."""
    statements = _statements(table, qualified_name, names)
    if not statements:
        return statements
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None)
    node = _definition_node(table, qualified_name) if definition is not None else None
    body = _body_node(definition.node) if definition is not None else None
    if node is None or body is None or node.child_by_field_name("parameters") is None:
        return statements
    parameters = set(_parameters(node))
    identifiers = [n for n in walk(body) if n.type == "identifier"]
    # a parameter read only as ``param.attr`` (never rebound, called through, passed on or written)
    clean = {p for p in parameters if all(
        n.parent is not None and n.parent.type == "attribute" and n.parent.child_by_field_name("object") == n
        and not _binds(n.parent) and not (n.parent.parent is not None and n.parent.parent.type == "call"
                                          and n.parent.parent.child_by_field_name("function") == n.parent)
        for n in identifiers if n.text.decode("utf-8", errors="replace") == p and not is_field_or_keyword(n))}
    aliases: dict[str, list[str]] = {}
    for statement in body.named_children:
        assignment = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_child_count == 1 else None
        if assignment is None or assignment.type != "assignment" or assignment.child_by_field_name("type") is not None:
            continue
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier" or right.type != "attribute":
            continue
        owner, attribute = right.child_by_field_name("object"), right.child_by_field_name("attribute")
        name = left.text.decode("utf-8", errors="replace")
        if owner is None or attribute is None or owner.type != "identifier" or name in parameters or name in names \
                or owner.text.decode("utf-8", errors="replace") not in clean:
            continue
        mentions = [n for n in identifiers if n.text.decode("utf-8", errors="replace") == name and n != left
                    and not is_field_or_keyword(n)]
        if any(_binds(n) or n.start_byte < statement.end_byte for n in mentions):
            continue
        read = _tokens(right.text.decode("utf-8", errors="replace"), names)
        if len(read) != 3:
            continue
        aliases[name] = read
    if not aliases:
        return statements
    kept = list(statements)
    for name, read in aliases.items():
        if [name, "=", *read] not in kept:
            return statements  # not the statement read above: leave the body as written
        kept.remove([name, "=", *read])
    return [_substituted(s, aliases) for s in kept]


def extraction_only(old_table, new_table, helper_table, move: Move, moves: list[Move], aliases: bool = True) -> bool:
    """True when a Python definition's old body is, statement for statement, its new body and
    the body of the helper ``move`` extracted it into — the helper's parameters standing for
    the arguments the call passes (``ctx.eps`` for ``eps``) — but for the glue: the statements
    that call the helper and the ``return`` statements (what the helper hands back, what the
    definition returns). Names of definitions the same commit moves count as equal. A local
    that only names a parameter's attribute (``eps = ctx.eps``, ``alias_attribute_reads``) reads
    as that attribute in each body (``extracted-attribute-alias``; not with ``aliases`` off)."""
    names = {re.split(r"::|\.", key[1])[-1] for m in moves for key in (m.old, m.new)}
    qualified = move.old[1]
    statements = alias_attribute_reads if aliases else lambda table, name, moved: _statements(table, name, moved)
    old = statements(old_table, qualified, names)
    new = statements(new_table, qualified, names)
    helper = statements(helper_table, move.new[1], names)
    if not old or new is None or not helper:
        return False
    bound = {name: _TOKEN.findall(text)
             for name, text in _bound_arguments(new_table, qualified, helper_table, move.new[1]).items()}
    helper = [_substituted(statement, bound) for statement in helper]
    old_set, new_set = Counter(map(" ".join, old)), Counter(map(" ".join, new)) + Counter(map(" ".join, helper))
    glue = {" ".join(statement) for statement in new if "<moved>" in statement
            and statement[statement.index("<moved>") + 1:statement.index("<moved>") + 2] == ["("]}
    return all(s.startswith("return") for s in old_set - new_set) \
        and all(s.startswith("return") or s in glue for s in new_set - old_set)


def _definition_node(table, qualified_name: str):
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None) \
        if table is not None and table.tree is not None else None
    node = definition.node if definition is not None else None
    return node.child_by_field_name("definition") if node is not None and node.type == "decorated_definition" else node


def _bound_arguments(caller_table, caller: str, helper_table, helper: str) -> dict[str, str]:
    """helper parameter -> the argument text (without whitespace) the caller's one call of the
    helper passes it, for the parameters bound to something else than their own name."""
    caller_node, helper_node = _definition_node(caller_table, caller), _definition_node(helper_table, helper)
    if caller_node is None or helper_node is None or helper_node.child_by_field_name("parameters") is None:
        return {}
    call = _the_call(caller_node, helper)
    if call is None:
        return {}
    return {name: text for name, text in _passed(call, _parameters(helper_node)).items() if name != text}


def _the_call(caller_node, helper: str):
    """The caller's one call of the helper (None when it calls it never or more than once)."""
    bare = re.split(r"::|\.", helper)[-1]
    calls, stack = [], [caller_node]
    while stack:
        node = stack.pop()
        if node.type == "call" and node.child_by_field_name("function") is not None \
                and node.child_by_field_name("function").text.decode(errors="replace") == bare:
            calls.append(node)
        stack.extend(node.named_children)
    if len(calls) != 1 or calls[0].child_by_field_name("arguments") is None:
        return None
    return calls[0]


def _parameters(helper_node) -> list[str]:
    parameters = []
    for parameter in helper_node.child_by_field_name("parameters").named_children:
        name = parameter if parameter.type == "identifier" else parameter.child_by_field_name("name") \
            or next((c for c in parameter.named_children if c.type == "identifier"), None)
        if name is not None:
            parameters.append(name.text.decode(errors="replace"))
    return parameters


def _passed(call, parameters: list[str]) -> dict[str, str]:
    """helper parameter -> the argument text (without whitespace) ``call`` passes it."""
    bound: dict[str, str] = {}
    position = 0
    for argument in call.child_by_field_name("arguments").named_children:
        if argument.type == "keyword_argument":
            key, value = argument.child_by_field_name("name"), argument.child_by_field_name("value")
            if key is not None and value is not None:
                bound[key.text.decode(errors="replace")] = "".join(value.text.decode(errors="replace").split())
        elif argument.type not in ("list_splat", "dictionary_splat", "comment") and position < len(parameters):
            bound[parameters[position]] = "".join(argument.text.decode(errors="replace").split())
            position += 1
    return bound


_NEW_SCOPES = frozenset({"lambda", "list_comprehension", "set_comprehension", "dictionary_comprehension",
                         "generator_expression", "comment", "named_expression"})


def _callers_assignments(caller_table, caller: str, helper_table, helper: str) -> list[str]:
    """The caller's assignments (their text, on one line each, in the caller's order) that give the
    helper's parameters passed under their own name the caller's values: for such a parameter the
    caller assigned, the one assignment that reaches the call on every path, and those that reach it
    for the names that assignment reads. An assignment is carried only when every name it binds or
    reads that the helper binds too (a parameter or a local) is a parameter the call passes under its
    own name, so in the helper the name means what it meant in the caller, and every name it binds
    that the helper mentions reaches the call from that assignment alone; a name assigned on some
    paths only, or by an update, is carried by nothing (the parameter stays the helper's own)."""
    caller_node, helper_node = _definition_node(caller_table, caller), _definition_node(helper_table, helper)
    if caller_node is None or helper_node is None or helper_node.child_by_field_name("parameters") is None \
            or caller_node.child_by_field_name("body") is None or helper_node.child_by_field_name("body") is None:
        return []
    call = _the_call(caller_node, helper)
    if call is None:
        return []
    parameters = _parameters(helper_node)
    own = {name for name, text in _passed(call, parameters).items() if name == text}
    if not own:
        return []
    helper_binds = set(parameters) | set(PythonLocals(helper_node.child_by_field_name("body")).definitions)
    helper_names = set(_identifiers(helper_node.child_by_field_name("body"))) | helper_binds
    locals_ = PythonLocals(caller_node.child_by_field_name("body"))
    carried: dict[int, object] = {}  # assignment node id -> node, in the order found (dependencies first)

    def _reaches_only(name: str):
        """The one assignment of ``name`` that reaches the call on every path, or None."""
        reaching, always = locals_.reaching(name, call)
        return reaching[0][0] if len(reaching) == 1 and always and reaching[0][1] is not None else None

    def carry(name: str, depth: int, seen: frozenset) -> bool:
        """Whether ``name`` reads in the helper as in the caller once the needed assignments are carried."""
        if name not in locals_.definitions:  # a parameter or global of the caller: the helper reads it as is
            return name not in helper_binds or name in own
        if depth > 8 or name in seen:
            return False
        statement = _reaches_only(name)
        if statement is None:
            return False
        if statement.id in carried:
            return True
        left, right = statement.child_by_field_name("left"), statement.child_by_field_name("right")
        if left is None or right is None or any(n.type in _NEW_SCOPES for n in walk(right)) \
                or not all(_reaches_only(target) is statement if target in helper_names else True
                           for target in _identifiers(left)) \
                or any(target in helper_binds and target not in own for target in _identifiers(left)):
            return False
        if not all(carry(read, depth + 1, seen | {name}) for read in _identifiers(right)):
            return False
        carried[statement.id] = statement
        return True

    for name in sorted(own, key=lambda n: parameters.index(n) if n in parameters else len(parameters)):
        if name in locals_.definitions:
            carry(name, 0, frozenset())  # a name it cannot carry stays the helper's own parameter
    ordered = sorted(carried.values(), key=lambda node: node.start_byte)
    return [" ".join(node.text.decode(errors="replace").replace("\\\n", " ").split("\n")) for node in ordered]


def _identifiers(node) -> list[str]:
    """The names an expression or assignment target reads or binds (not attribute fields, not keywords)."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and not is_field_or_keyword(current):
            found.append(current.text.decode(errors="replace"))
        stack.extend(current.named_children)
    return sorted(set(found))


def _replaced(old: TouchedSymbol, old_table, new: TouchedSymbol, new_table) -> bool:
    """True when a removed definition and an added one of another name, whose bodies differ, differ in
    interface too: some parameter of the old is not a parameter of the new. A definition renamed or moved
    keeps what its callers pass (it may gain parameters); one whose callers must pass something else in
    place of an old parameter is a new definition that replaces it, and changes to it are not the old
    one's."""
    if re.split(r"::|\.", old.qualified_name)[-1] == re.split(r"::|\.", new.qualified_name)[-1]:
        return False
    before = _parameter_names(old_table, old.qualified_name, old.old_path or old.path)
    after = _parameter_names(new_table, new.qualified_name, new.path)
    return before is not None and after is not None and not before <= after


def _parameter_names(table, qualified_name: str, path: str) -> set[str] | None:
    """The normalised names of a definition's parameters (its signature's), in any order; None where the
    table has no such definition."""
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None) \
        if table is not None and table.tree is not None else None
    if definition is None or definition.node is None:
        return None
    return set(signature_of(definition, table.source, path).param_names)


def _raw_calls(table, qualified_name: str) -> list[str]:
    """The source lines of a definition as they are (no names rewritten)."""
    if table is None or table.tree is None:
        return []
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None)
    if definition is None:
        return []
    lines = table.source.decode("utf-8", errors="replace").splitlines()
    return lines[definition.start_line - 1:definition.end_line]
