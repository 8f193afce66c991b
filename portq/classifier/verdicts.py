"""Verdict rules (DESIGN §5): one verdict per touched upstream symbol, then
one per entry, the most severe over *all* symbols.

For each touched symbol, in order:

0. **parse failures** — an error in or around the symbol's changed lines or
   its extent, or in a macro a ported symbol expands, in a file with ports:
   NEEDS_REVIEW (``parse failed at path:line``), nothing else read. Broken
   lines of something no ported definition uses lower nothing.
1. **ports** — the in-tree definitions anchored to it (or to a definition
   containing it). None: ``not-carried`` if an in-tree declaration covers it,
   ``non-code`` for tests/docs/CI/build/benchmark paths, ``not-ported`` when a
   row owns it (a coverage hole), else ``no-row``. Top-level lines and class
   bodies in a file with ports are compared with what the ported definitions
   reference before they may be called ``not-ported``.
2. **provenance** — a port whose ``@SHA`` pin contains the commit is IN_SYNC.
   A pin that does not contain it, or one git does not know, is evidence only.
3. **cosmetic** — old and new token streams without comments/docstrings are
   equal, or equal once locals are renamed consistently: NOT_APPLICABLE/
   ``cosmetic``. **not-carried** — equal once what ``[PARAM]`` declarations
   set aside is left out: NOT_APPLICABLE/``not-carried``.
4. **signature and launch** — the upstream delta (parameters removed, added,
   re-defaulted or newly dead; launches: kernel, grid and block as canonical
   expressions (names never decide), warps/stages, arguments; program-id decomposition, ``num_programs``,
   early exits) is checked item by item against the port. Any item where the
   port still has the old shape is a gap: REAL_GAP with one non-test caller,
   else INERT with the test callers. Items the comparison cannot place
   (cross-language grids with neither shape, several launches) are
   NEEDS_REVIEW with the reason. All items matched: IN_SYNC.
5. **body** — no structural delta but the tokens differ (masks, int64
   offsets): NEEDS_REVIEW, never NOT_APPLICABLE.

Range facts (``net-zero`` pairs, renames) come from ``portq.classifier.classify``; the
structural comparison item by item is ``portq.classifier.deltas.compare``, whose typed
``Delta`` records this decision table turns into a verdict. This module reads
upstream blobs through the context and the in-tree index; it never writes
anything and never reads the commit message to decide.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from portq import __version__
from portq.classifier.callees import Module, callee_deltas
from portq.tree.anchors import PORTS, Anchor
from portq.classifier.deltas import compare
from portq.classifier.rules import checked
from portq.classifier.rules import branches, form, interface, wrappers
from portq.core.evidence import Evidence, Kind, Location, Side, located
from portq.core.model import (EntryChanges, FileChange, INERT, IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP,
                              SEVERITY, SymbolVerdict, TouchedSymbol, Verdict)
from portq.core.paths import non_code_kind
from portq.language.extraction import signature_of
from portq.language.memo import TEXT_OR_NONE, content_digest, per_definition
from portq.language.signatures import Signature, comment_free_tokens, node_text, normalise_name
from portq.classifier.module_surface import Imported, changed_bindings, import_time_statements, imported_from
from portq.classifier.moves import Moves, extraction_only, follows_moves
from portq.tree.reachability import Callers
from portq.language.symbols import (
    KIND_CLASS,
    KIND_CUDA_KERNEL,
    KIND_DEVICE_FUNCTION,
    KIND_FUNCTION,
    KIND_TRITON_KERNEL,
    MAX_PARSE_BYTES,
    SymbolTable,
    language_for_path,
    macro_extents,
    parse,
    symbol_table,
)
from portq.tree.tree_index import Port, TreeIndex
from portq.classifier.delta import Delta, Status
from portq.classifier.rules.scope import (_scope_changes, _scope_names, carried_path_rewrites, dispatch_locals,
                                          forwarding_call, inlined_locals, scoped_tokens)
from portq.classifier.rules.cosmetic import _parameter_name, import_lines, rebound_names, renamed_locals
from portq.classifier.rules.parameters import (Derivation, _first_line_quote, _out_param_evidence, _returned_instead,
                                               _upstream_param_evidence, derive, launch_argument, launch_argument_texts)

CLASSIFIER_VERSION = 15
"""Bumped whenever a change to the verdict logic may change a verdict, so a
ledger that reuses earlier decisions knows which ones are stale."""

_SIGNATURE_CODE = ("signatures.py", "signatures_cpp.py", "signatures_python.py", "extraction.py", "expressions.py",
                   "symbols.py")
"""The modules of ``portq.language`` that extract a signature."""


def signature_rules() -> str:
    """What a stored upstream signature depends on besides its blob: the portq
    version and the code that extracts signatures (``SignatureStore``'s rules)."""
    global _SIGNATURE_RULES
    if _SIGNATURE_RULES is None:
        digest = hashlib.sha256()
        folder = Path(__file__).resolve().parents[1] / "language"
        for name in _SIGNATURE_CODE:
            try:
                digest.update(name.encode() + b"\0" + (folder / name).read_bytes())
            except OSError:
                digest.update(name.encode() + b"\0unreadable")
        _SIGNATURE_RULES = f"{__version__}+{digest.hexdigest()[:16]}"
    return _SIGNATURE_RULES


_SIGNATURE_RULES: str | None = None


def _kind_class(kind: str) -> str:
    return "kernel" if kind in (KIND_CUDA_KERNEL, KIND_TRITON_KERNEL, KIND_DEVICE_FUNCTION) else "host"


# Identifiers too common to tie a top-level change to a ported definition.
_COMMON_IDENTIFIERS = frozenset(
    """self cls const int void auto return if else for while true false nullptr None True False
    def class import from as torch tl triton std namespace template typename static inline
    unsigned float double bool char size_t int32_t int64_t uint32_t uint64_t and or not in is
    pass with try except finally raise assert lambda yield global struct public private case
    break continue switch default sizeof define include ifdef ifndef endif pragma once typing
    Optional Tensor tensor dtype device shape data_ptr numel size stride the a an of to""".split()
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


# --- results -------------------------------------------------------------------


@dataclass
class RangeFacts:
    """What the whole range says about one entry (from ``portq.classifier.classify``)."""

    net_zero_partner: tuple[int, str] | None = None  # (entry position, sha) of the paired commit
    aliases: dict[str, set[str]] = field(default_factory=dict)  # upstream path -> every name it had in the range
    moves: Moves = field(default_factory=Moves)  # ported definitions carried elsewhere in the range


class SymbolClassifier:
    """Decides the verdict of each touched symbol of an entry."""

    def __init__(self, context, index: TreeIndex) -> None:
        self.context = context
        self.index = index
        self.upstream = context.upstream
        self._signature_cache: dict[tuple, Signature | None] = {}
        self._modules: dict[tuple[str, str], dict] = {}  # (commit, side) -> its changed Python modules
        self._fetched: dict[str, bytes] = {}  # blobs read ahead (``prefetch``), each handed out once
        self._parse_errors: dict[tuple[str, str], bool] = {}  # (blob, language) -> its parse has errors
        self._last_parse: dict[tuple[str, str], SymbolTable] = {}  # (path, language) -> the last tree parsed there
        self._ast_dumps: tuple = (None, (None, None))  # (symbol key, both sides' ast dumps) of the last asked

    # -- upstream side

    def prefetch(self, entries: list[EntryChanges], aliases: dict[str, set[str]]) -> None:
        """Read in one round trip the upstream blobs that classifying ``entries``
        parses: both sides of every touched symbol in a file an anchor names
        (their parse is checked for errors, and a ported one compared), and of
        every owned Python change of an entry that modifies a Python function
        (callee following reads those modules), unless already parsed. A blob
        left out is read when it is asked for."""
        read_blobs = getattr(self.context, "read_blobs", None)
        self._fetched.clear()  # what the last window read but did not parse is not kept
        if read_blobs is None:
            return
        facts = RangeFacts(None, aliases)
        wanted = []
        for entry in entries:
            for symbol in entry.symbols:
                if language_for_path(symbol.path) is None or not self.index.anchors_for_path(
                        self.upstream, self._paths(symbol, facts)):
                    continue
                for blob, path, side in ((symbol.old_blob, symbol.old_path or symbol.path, "removed"),
                                         (symbol.new_blob, symbol.path, "added")):
                    if blob and symbol.change != side and not self.context.symbol_tables.has(blob, path):
                        wanted.append(blob)
            if any(s.change == "modified" and s.kind == KIND_FUNCTION and language_for_path(s.path) == "python"
                   for s in entry.symbols):
                for change in entry.owned_changes:
                    for blob, path in ((change.old_blob, change.old_path), (change.new_blob, change.new_path)):
                        if blob and path and language_for_path(path) == "python" \
                                and not self.context.symbol_tables.has(blob, path):
                            wanted.append(blob)
        if not wanted:
            return
        try:
            self._fetched.update(read_blobs(list(dict.fromkeys(wanted))))
        except Exception:  # a blob missing from the clone: each is read (and fails) on its own, as before
            pass

    def _read_blob(self, blob: str) -> bytes:
        fetched = self._fetched.pop(blob, None)
        return fetched if fetched is not None else self.context.read_blob(blob)

    def _has_parse_errors(self, blob: str | None, path: str | None) -> bool:
        """Whether the blob parses with errors, as its table's tree would say,
        without building the table when none is built yet: for a symbol
        nothing ports, its file's definitions are read only when it does. A
        blob with no tree (unreadable, too big, another language) has none."""
        language = language_for_path(path) if blob and path else None
        if language is None:
            return False
        if self.context.symbol_tables.has(blob, path):
            table = self._table(blob, path)
            return table is not None and table.tree is not None and table.tree.root_node.has_error
        key = (blob, language)
        if key not in self._parse_errors:
            try:
                source = self._read_blob(blob)
                errors = False
                if len(source) <= MAX_PARSE_BYTES:  # parsed from the last tree at this path, as tables are
                    tree = parse(source, language, self._last_parse.get((path, language)))
                    self._last_parse[(path, language)] = SymbolTable(language, [], tree=tree, source=source)
                    errors = tree.root_node.has_error
            except Exception:  # as _table: an unreadable or unparsable blob has no tree
                source, errors = None, False
            if errors:
                self._fetched[blob] = source  # its table is built next, from these bytes
            self._parse_errors[key] = errors
        return self._parse_errors[key]

    def _table(self, blob: str | None, path: str | None):
        if not blob or not path or language_for_path(path) is None:
            return None
        try:
            return self.context.symbol_tables.get(blob, path, lambda: self._read_blob(blob))
        except Exception:  # an unreadable blob is a fallback, reported by the caller
            return None

    def _upstream_signature(self, blob, path, qualified_name, lines) -> Signature | None:
        key = (blob, path, qualified_name, lines)
        if key in self._signature_cache:
            return self._signature_cache[key]
        store = getattr(self.context, "signatures", None)
        line = lines[0] if lines is not None else -1
        signature = self._stored_signature(store, blob, path, qualified_name, line)
        if signature is None:
            table = self._table(blob, path)
            if table is not None and not table.fallback:
                candidates = [d for d in table.definitions if d.qualified_name == qualified_name]
                if lines is not None and len(candidates) > 1:
                    candidates = [d for d in candidates if d.start_line == lines[0]] or candidates
                if candidates:
                    signature = signature_of(candidates[0], table.source, path)
                    if store is not None and blob:
                        store.put(blob, path, qualified_name, line,
                                  json.dumps(signature.to_json(), separators=(",", ":")))
        self._signature_cache[key] = signature
        return signature

    @staticmethod
    def _stored_signature(store, blob, path, qualified_name, line) -> Signature | None:
        """A signature an earlier scan computed of the same blob and definition, if it is stored and reads back."""
        if store is None or not blob:
            return None
        text = store.get(blob, path, qualified_name, line)
        if text is None:
            return None
        try:
            return Signature.from_json(json.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None  # a damaged row is never trusted: computed again

    def _definition(self, blob, path, qualified_name, lines):
        """The upstream definition (with its syntax node) of a touched symbol, on one side."""
        table = self._table(blob, path)
        if table is None or table.fallback:
            return None
        candidates = [d for d in table.definitions if d.qualified_name == qualified_name]
        if lines is not None and len(candidates) > 1:
            candidates = [d for d in candidates if d.start_line == lines[0]] or candidates
        return candidates[0] if candidates else None

    def _renamed_locals(self, symbol: TouchedSymbol) -> list[tuple[str, str]] | None:
        """The local renamings that are the symbol's whole change, or None."""
        language = language_for_path(symbol.path)
        old = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name, symbol.old_lines)
        new = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if old is None or new is None or old.node is None or new.node is None or language is None:
            return None
        if old.node.has_error or new.node.has_error:
            return None
        return renamed_locals(old.node, new.node, language)

    def _python_asts(self, symbol: TouchedSymbol) -> tuple[str | None, str | None]:
        """Both sides' ``ast`` dumps of a Python definition; None for a side that is not Python or does not
        parse. Kept for the symbol being decided, which may ask twice (tokens equal, then a renaming)."""
        if language_for_path(symbol.path) != "python":
            return None, None
        key = (symbol.old_blob, symbol.new_blob, symbol.path, symbol.qualified_name, symbol.old_lines, symbol.new_lines)
        if self._ast_dumps[0] != key:
            old = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                   symbol.old_lines)
            new = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
            dumps = (None, None) if old is None or new is None or old.node is None or new.node is None \
                else (_python_ast_dump(old.node), _python_ast_dump(new.node))
            self._ast_dumps = (key, dumps)
        return self._ast_dumps[1]

    def _python_ast_differs(self, symbol: TouchedSymbol) -> bool:
        """True when equal tokens hide a different program: the token comparison drops a comma before a
        closing bracket, so ``(x,)`` (a tuple) and ``(x)`` read alike there."""
        before, after = self._python_asts(symbol)
        return before is not None and after is not None and before != after

    def _same_python_ast(self, symbol: TouchedSymbol) -> bool:
        """True when a Python definition parses to the same ``ast`` on both
        sides: a formatter's redundant parentheses or ``X = 0,`` → ``X = (0,)``
        change tokens, never the program."""
        before, after = self._python_asts(symbol)
        return before is not None and before == after

    def _derivation(self, entry: EntryChanges, symbol: TouchedSymbol, new: Signature, name: str,
                    kernel: str | None = None) -> Derivation | None:
        """How upstream's new launches of this kernel (or of ``kernel``, launched from this symbol) compute
        the argument for parameter ``name``: the first launch found in a Python file the commit changed,
        or None when no launch passes it."""
        if kernel is not None:
            launched, position, written = kernel.split(".")[-1], None, name
        else:
            param = new.param(name)
            if param is None or not new.is_kernel:
                return None
            launched, position, written = symbol.name, param.position, param.name
        files = {(c.new_blob, c.path) for c in entry.owned_changes if c.new_blob}
        files.add((symbol.new_blob, symbol.path))
        for blob, path in sorted(files, key=lambda f: (f[1] != symbol.path, f[1])):
            if language_for_path(path) != "python":
                continue
            table = self._table(blob, path)
            if table is None or table.fallback:
                continue
            for definition in table.definitions:
                if definition.node is None or definition.kind in (KIND_TRITON_KERNEL, KIND_CLASS):
                    continue
                expression, received = launch_argument(definition.node, launched, name, position)
                if expression is not None:
                    keyword = expression.parent.child_by_field_name("name") \
                        if expression.parent is not None and expression.parent.type == "keyword_argument" else None
                    if kernel is not None and keyword is not None:
                        written = keyword.text.decode("utf-8", errors="replace")
                    argument = f"{written}=" + expression.text.decode("utf-8", errors="replace")
                    passed = set(launch_argument_texts(definition.node, launched, name))
                    if len(passed) > 1:
                        # A value that differs between launch sites (IS_FP4=True in a new
                        # branch, False at the old launch) is a mode the branch selects, not a tile.
                        return Derivation(argument, False, (), (), f"{written} is passed {' and '.join(sorted(passed))} "
                                          "at different launches: a mode the launch site selects", path)
                    return replace(derive(definition.node, expression, received), argument=argument, path=path)
        return None

    def _paths(self, symbol: TouchedSymbol, facts: RangeFacts) -> set[str]:
        paths = {symbol.path}
        if symbol.old_path:
            paths.add(symbol.old_path)
        for path in list(paths):
            paths |= facts.aliases.get(path, set())
        return paths

    # -- the decision for one symbol

    def classify(self, entry: EntryChanges, symbol: TouchedSymbol, facts: RangeFacts) -> SymbolVerdict:
        row = symbol.rows[0] if symbol.rows else (entry.rows[0] if entry.rows else None)
        verdict = self._decide(entry, symbol, facts)
        verdict.row = row
        verdict.evidence = [e if e.row is not None else e.with_row(row) for e in verdict.evidence]
        return verdict

    def _base(self, rules: str | tuple[str, ...], symbol: TouchedSymbol, verdict: str, justification: str | None,
              decided_by: str, reason: str, evidence: list[Evidence] | None = None,
              ports: list[str] | None = None) -> SymbolVerdict:
        """The symbol's verdict, decided by ``rules`` (ids of ``portq.classifier.rules``), with its hunks first."""
        hunks = [
            Evidence(kind=Kind.HUNK, message=f"upstream hunk in {symbol.path}", side="upstream-new",
                     path=symbol.path, hunk_header=header, symbol=symbol.name)
            for header in symbol.hunk_headers
        ]
        return SymbolVerdict(
            path=symbol.path, symbol=symbol.qualified_name or symbol.name, change=symbol.change,
            verdict=verdict, justification=justification, decided_by=decided_by,
            ports=ports or [], evidence=hunks + (evidence or []), reason=reason,
            rules=list(checked(*((rules,) if isinstance(rules, str) else rules))),
        )

    def classify_change(self, entry: EntryChanges, change: FileChange, facts: RangeFacts) -> SymbolVerdict:
        """An owned change that touched no definition (a pure rename, blank
        lines), decided as the file it is."""
        symbol = TouchedSymbol(path=change.path, name="<file>", qualified_name="<file>", kind="file",
                               language=None, change="modified",
                               old_path=change.old_path if change.old_path != change.new_path else None,
                               old_blob=change.old_blob, new_blob=change.new_blob)
        verdict = self._file_level(symbol, self._paths(symbol, facts))
        verdict.row = entry.rows[0] if entry.rows else None
        return verdict

    def anchored(self, symbol: TouchedSymbol, aliases: dict[str, set[str]]) -> bool:
        """Whether the tree ports or declares the touched definition where it was (``classifier.moves``)."""
        paths = self._paths(symbol, RangeFacts(None, aliases))
        return bool(self._ports(symbol, paths)
                    or self.index.not_carried_for(self.upstream, paths, symbol.name, symbol.qualified_name))

    def _decide(self, entry: EntryChanges, symbol: TouchedSymbol, facts: RangeFacts) -> SymbolVerdict:
        paths = self._paths(symbol, facts)
        ports = self._ports(symbol, paths)
        moved = self._moved(entry, symbol, paths, ports, facts)
        if moved is not None:
            return moved
        if ports or self.index.anchors_for_path(self.upstream, paths):
            moved_away = {m.old[1] for m in facts.moves.by_entry.get(entry.position, ()) if m.old[0] in paths}
            broken = self._parse_failure(entry, symbol, paths, bool(ports), moved_away)
            if broken is not None:
                return broken
        if symbol.name in ("<toplevel>", "<lines>") or symbol.kind == KIND_CLASS:
            container = self._container(entry, symbol, paths)
            # A cosmetic proof says the module-level program is the same, so no binding changed meaning.
            if symbol.name == "<toplevel>" and (container is None or (container.verdict == NOT_APPLICABLE
                                                                      and container.justification != "cosmetic")):
                container = self._module_level_use(entry, symbol) or container
            if container is not None:
                return container
        if not ports:
            return self._unported(entry, symbol, paths)
        return self._ported(entry, symbol, paths, ports)

    def _moved(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], ports: list[Port],
               facts: RangeFacts) -> SymbolVerdict | None:
        """Rule ``moved-definition`` (``classifier.moves``): the move of an anchored body is shown and,
        when the body is carried unchanged, is no change to the port; a later change to the carrier is
        decided against the ports of what the anchor names."""
        key = (symbol.old_path or symbol.path, symbol.qualified_name)
        made = facts.moves.made_by(entry.position, key) if symbol.change == "removed" else None
        if made is not None:
            lost = [Evidence(kind=Kind.ANCHOR_LOST, message=made.lost, side="upstream-new", path=made.new[0],
                             symbol=symbol.name, subject=made.new[1])]
            lost += [replace(_anchor_evidence(p.anchor, f"{p.definition.qualified_name} ports {p.anchor.reference}"),
                             subject=p.anchor.reference) for p in ports]
            if made.exact:
                return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                                  f"upstream {made.how} {symbol.qualified_name} to {made.new[0]}::{made.new[1]} with the "
                                  "same body, so the port follows it there: cosmetic rather than a gap (update the "
                                  "anchor)", lost)
            return self._base("moved-definition", symbol, NEEDS_REVIEW, None, "body",
                              f"upstream {made.how} {symbol.qualified_name} to {made.new[0]}::{made.new[1]} and changed "
                              "its body on the way, so a reviewer compares the new body with the port", lost)
        into = facts.moves.made_into(entry.position, (symbol.path, symbol.qualified_name)) \
            if symbol.change == "added" else None
        if into is not None:
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} is where this commit {into.how} the ported {into.old[1]} "
                              f"({into.old[0]}), so it is the port's code, not a coverage hole; the move itself is "
                              "decided on the definition it left", [Evidence(
                                  kind=Kind.COSMETIC, message=f"carries the body of {into.old[1]}", side="upstream-new",
                                  path=symbol.path, symbol=symbol.name, subject=into.old[1])])
        here = facts.moves.by_entry.get(entry.position, [])
        extracted = next((m for m in here if m.old == key and m.how == "extracted"), None)
        if extracted is not None and ports and extraction_only(
                self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path),
                self._table(next((s.new_blob for s in entry.symbols if (s.path, s.qualified_name) == extracted.new),
                                 None), extracted.new[0]), extracted, here):
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name}'s body moved unchanged into {extracted.new[0]}::{extracted.new[1]}, which it "
                              "now calls (only the call and what is returned differ), so cosmetic rather than a change "
                              "the port must follow; later changes to the helper are the port's",
                              [Evidence(kind=Kind.COSMETIC, message=f"body extracted into {extracted.new[1]}",
                                        side="upstream-new", path=extracted.new[0], symbol=symbol.name,
                                        subject=extracted.new[1])])
        if here and symbol.name == "<toplevel>" and self._imports_follow(entry, symbol, here):
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              "the changed imports only follow definitions this commit moves ("
                              + ", ".join(f"{m.old[1]} → {m.new[1]}" for m in here[:3]) + "), so cosmetic rather than "
                              "a change to anything ported",
                              [Evidence(kind=Kind.COSMETIC, message="imports follow moved definitions",
                                        side="upstream-new", path=symbol.path, symbol=symbol.name)])
        if here and ports and symbol.change == "modified" and follows_moves(
                self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path),
                symbol.qualified_name, here):
            pairs = ", ".join(f"{m.old[1]} → {m.new[1]}" for m in here[:3])
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} changes only the names of definitions this commit moves ({pairs}), so "
                              "cosmetic rather than a change the port must follow",
                              [Evidence(kind=Kind.COSMETIC, message=f"follows moved definitions: {pairs}",
                                        side="upstream-new", path=symbol.path, symbol=symbol.name)])
        if ports or symbol.change == "removed":
            return None
        move = facts.moves.carrying((symbol.path, symbol.qualified_name), entry.position)
        if move is None:
            return None
        origin_path, origin = move.origin
        origin_paths = self._paths(TouchedSymbol(path=origin_path, name=origin, qualified_name=origin, kind="",
                                                 language=None, change="modified"), facts)
        bare = re.split(r"::|\.", origin)[-1]
        since = f"since entry {move.position} ({move.sha[:10]}, {move.how} from {move.old[0]}::{move.old[1]})"
        carried = self._ports(replace(symbol, path=origin_path, old_path=None, name=bare, qualified_name=origin),
                              origin_paths)
        if not carried:
            declared = [a for a in self.index.not_carried_for(self.upstream, origin_paths, bare, origin) if not a.param]
            if not declared:
                return None
            return self._base(("moved-definition", "declared-not-carried"), symbol, NOT_APPLICABLE, "not-carried",
                              "provenance", f"{symbol.name} carries the body of {origin} {since}, which the tree "
                              f"declares out of scope at {declared[0].cite}, so not-carried rather than not-ported",
                              [_anchor_evidence(declared[0], "not-carried declaration")])
        verdict = self._ported(entry, symbol, paths | origin_paths, carried)
        verdict.rules = list(checked("moved-definition", *verdict.rules))
        verdict.reason = f"{symbol.name} carries the body of the ported {origin} {since}; " + verdict.reason
        return verdict

    def _module_level_use(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """Rule ``module-level-use`` (``classifier.module_surface``): a module-level alias, flag or constant
        rebound here is part of the surface of every ported definition that reads it — in this file or
        through an import from it; import-time code changed in a file of copied (pinned) ports runs with
        the copies. None when neither holds."""
        if language_for_path(symbol.path) != "python":
            return None
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path)
        changed = changed_bindings(old_table, new_table, _unchanged_moves(entry))
        ported = [a for a in self.index.anchors if a.kind == PORTS and a.upstream == self.upstream]
        for path in sorted({a.path for a in ported}):
            if path == symbol.path:
                table, imported = new_table, Imported(names={n: n for n in changed})
            else:
                table = self._table(f"{entry.commit.sha}:{path}", path)
                imported = imported_from(table, path, symbol.path)
            if table is None or table.tree is None or not (imported.names or imported.modules):
                continue
            reads = {local: original for local, original in imported.names.items() if original in changed}
            anchors = [a for a in ported if a.path == path]
            for definition in table.definitions:
                if not definition.node or not any(a.matches_name(definition.name, definition.qualified_name)
                                                  for a in anchors):
                    continue
                text = definition.node.text.decode("utf-8", errors="replace")
                words = set(_IDENTIFIER.findall(text))
                used = next((original for local, original in sorted(reads.items()) if local in words
                             and not self._metadata_only(definition, local, path)), None)
                used = used or next((name for module in sorted(imported.modules) for name in sorted(changed)
                                     if f"{module}.{name}" in text), None)
                if used is None:
                    continue
                how = "in the same file" if path == symbol.path else f"in {path}, through its import of it"
                return self._base("module-level-use", symbol, NEEDS_REVIEW, None, "body",
                                  f"the change rebinds {symbol.path}'s module-level {used}, which the ported "
                                  f"{definition.qualified_name} reads ({how}), so a reviewer must judge it rather "
                                  "than NOT_APPLICABLE",
                                  [Evidence(kind=Kind.TOPLEVEL, message=f"module-level {used} rebound, read by "
                                            f"ported {definition.qualified_name}", side="upstream-new",
                                            path=path, line=definition.start_line, symbol=definition.name,
                                            subject=used)])
        pinned = [a for a in ported if a.path == symbol.path and a.pin]
        change = _file_change(entry, symbol)
        if pinned and change is not None:
            changed_lines = {line for side, line, _ in _changed_lines(change, symbol, old_table, new_table,
                                                                      outside_definitions=True) if side == "new"}
            statements = import_time_statements(new_table, changed_lines)
            if statements:
                line, quote = statements[0]
                return self._base("module-level-use", symbol, NEEDS_REVIEW, None, "body",
                                  f"the change adds import-time code to {symbol.path} ({quote}), which runs whenever "
                                  f"the copied module is imported (its ports pin {pinned[0].pin[:10]}), so a reviewer "
                                  "must judge it rather than NOT_APPLICABLE",
                                  [Evidence(kind=Kind.TOPLEVEL, message="import-time code changed", side="upstream-new",
                                            path=symbol.path, line=line, quote=quote, symbol=symbol.name)])
        return None

    def _imports_follow(self, entry: EntryChanges, symbol: TouchedSymbol, moves) -> bool:
        """True when a file's changed lines outside definitions are all imports, and every name
        they bind differently is the old or new name of a definition ``moves`` carried; for C/C++,
        every changed line is an ``#include`` of a file the moves carried definitions from or to."""
        if language_for_path(symbol.path) == "cpp":
            change = _file_change(entry, symbol)
            code = [text for _, _, text in _changed_lines(change, symbol, None, None, outside_definitions=True)
                    if _is_code_line(text, symbol.path)]
            files = {PurePosixPath(key[0]).name for m in moves for key in (m.old, m.new)}
            included = [re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', text) for text in code]
            return bool(code) and all(m is not None and PurePosixPath(m.group(1)).name in files for m in included)
        if language_for_path(symbol.path) != "python":
            return False
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path)
        if old_table is None or new_table is None or old_table.tree is None or new_table.tree is None:
            return False
        change = _file_change(entry, symbol)
        code = [(side, line) for side, line, text in _changed_lines(change, symbol, old_table, new_table,
                                                                    outside_definitions=True)
                if _is_code_line(text, symbol.path)]
        lines = {"old": import_lines(old_table.tree.root_node), "new": import_lines(new_table.tree.root_node)}
        if not code or not all(line in lines[side] for side, line in code):
            return False
        names = {re.split(r"::|\.", key[1])[-1] for m in moves for key in (m.old, m.new)}
        rebound = rebound_names(old_table.tree.root_node, new_table.tree.root_node, _unchanged_moves(entry))
        return bool(rebound) and all(name in names for name in rebound)

    def _metadata_only(self, definition, word: str, path: str) -> bool:
        """True when an upstream definition names ``word`` only in its decorators and no tree file
        porting it names it (``@triton.jit(repr=word)``: metadata the port does not carry)."""
        node = definition.node
        inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
        decorated = node.type == "decorated_definition" or (node.parent is not None
                                                            and node.parent.type == "decorated_definition")
        if not decorated or inner is None or word in _IDENTIFIER.findall(inner.text.decode("utf-8", errors="replace")):
            return False
        ports = self.index.ports_for(self.upstream, {path}, definition.name, definition.qualified_name)
        for file in {p.definition.file for p in ports}:
            source = self.index.source(file)
            if source is None or word in _IDENTIFIER.findall(source.decode("utf-8", errors="replace")):
                return False
        return bool(ports)

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

    def _parse_failure(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                       ported: bool, moved: set[str] = frozenset()) -> SymbolVerdict | None:
        """NEEDS_REVIEW when the parse of a side the symbol exists on has an
        error that structure would be read from: in or around the symbol's
        changed lines or its own extent, or (for a ported symbol) in a macro
        it expands. For a symbol nothing ports, only an error in lines that
        stand for a name a ported definition uses, or a parse that lost a
        ported definition, counts: a new sibling's broken macros change no
        port. Structure read from a broken tree never decides REAL_GAP or
        IN_SYNC for a port. A ported definition this commit moved elsewhere (``moved``) is not lost."""
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
            if table is None or table.tree is None or not table.tree.root_node.has_error:
                continue
            errors = _error_spans(table.tree.root_node)
            changed = [line for _, line, _ in _changed_lines(change, symbol, None, None, outside_definitions=False)
                       if _ == side] if change is not None else []
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
                lost = self._lost_ports(table, anchors, symbol, side, moved)
                if lost is not None:
                    return self._broken(symbol, side, path, table, lost,
                                        f"a parse that lost the ported definition {lost[1]}")
                if symbol.name in ("<toplevel>", "<lines>"):
                    own = [e for e in own if _stands_for(table, e, symbol) & set(referenced)]
                elif symbol.name not in referenced:
                    own = []  # a definition nothing ported uses: its own broken lines change no port
            if own:
                return self._broken(symbol, side, path, table, (own[0], None),
                                    f"in or around the changed lines of {symbol.name}")
            if expanded:
                line, macro = expanded[0]
                return self._broken(symbol, side, path, table, (line, macro),
                                    f"in the macro {macro} that {symbol.name} expands")
        return None

    def _lost_ports(self, table, anchors: list[Anchor], symbol: TouchedSymbol, side: str,
                    moved: set[str] = frozenset()) -> tuple[int, str] | None:
        """(first error line, name) of a ported definition the other side of
        the file defines but this broken side's parse does not: recovery
        folded it into an error, so no line of the file can be placed."""
        other = self._table(symbol.old_blob, symbol.old_path or symbol.path) if side == "new" \
            else self._table(symbol.new_blob, symbol.path)
        if other is None or other.fallback:
            return None
        present = {(d.name, d.qualified_name) for d in table.definitions}
        for definition in other.definitions:
            if any(a.matches_name(definition.name, definition.qualified_name) for a in anchors) \
                    and (definition.name, definition.qualified_name) not in present \
                    and definition.qualified_name not in moved:
                errors = _error_spans(table.tree.root_node)
                return (errors[0][0] if errors else 1), definition.qualified_name
        return None

    def _broken(self, symbol: TouchedSymbol, side: str, path: str, table, where_line: tuple[int, str | None],
                what: str) -> SymbolVerdict:
        line = where_line[0]
        where = f"{path}:{line}"
        quote = table.source.decode("utf-8", errors="replace").splitlines()[line - 1].strip() \
            if 0 < line <= table.source.count(b"\n") + 1 else None
        return self._base("parse-failure", 
            symbol, NEEDS_REVIEW, None, "fallback",
            f"parse failed at {where} (upstream-{side}), {what}, so "
            "structure read from that tree decides nothing and a reviewer must read the hunks",
            [Evidence(kind=Kind.PARSE_FAILURE, message=f"parse failed at {where}", side=f"upstream-{side}",
                      path=path, line=line, quote=quote, symbol=symbol.name, subject=where_line[1])],
        )

    def _ports(self, symbol: TouchedSymbol, paths: set[str]) -> list[Port]:
        """Ports of the symbol, paired by kind when a bare name is shared by a
        kernel and its host wrapper; else ports of a definition containing it."""
        ports = self.index.ports_for(self.upstream, paths, symbol.name, symbol.qualified_name)
        if len(ports) > 1:
            same_class = [p for p in ports if p.anchor.qualified
                          or _kind_class(p.definition.kind) == _kind_class(symbol.kind)]
            if same_class:
                ports = same_class
        if ports:
            return ports
        parts = re.split(r"::|\.", symbol.qualified_name or symbol.name)
        for depth in range(len(parts) - 1, 0, -1):
            parent = ".".join(parts[:depth]) if "." in symbol.qualified_name else "::".join(parts[:depth])
            found = self.index.ports_for(self.upstream, paths, parts[depth - 1], parent)
            if found:
                return found
        return []

    # -- nothing in-tree ports it

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
        kind = non_code_kind(symbol.path)
        if kind is not None:
            return self._base("non-code-path", 
                symbol, NOT_APPLICABLE, "non-code", "path",
                f"{symbol.path} is {kind}, not code any port mirrors, so non-code rather than not-ported",
            )
        reached = self._through_ported_callers(entry, symbol, paths)
        if reached is not None:
            return reached
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

    def _container(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str]) -> SymbolVerdict | None:
        """Top-level lines, parse fallbacks and class bodies of a file whose
        definitions are ported: decided by what the changed lines name."""
        anchors = self.index.anchors_for_path(self.upstream, paths)
        if symbol.kind == KIND_CLASS and self._ports(symbol, paths):
            return None  # the class itself is ported: compared like any definition
        if not anchors:
            return None
        change = _file_change(entry, symbol)
        if symbol.name == "<lines>" and form.mode_only(change):
            return self._base("file-mode-only", symbol, NOT_APPLICABLE, "cosmetic", "path",
                              f"only the file mode of {symbol.path} changed (the same content before and after), "
                              "so cosmetic rather than a change to anything ported",
                              [Evidence(kind=Kind.COSMETIC, message="file mode change only; the blob is unchanged",
                                        side="upstream-new", path=symbol.path, symbol=symbol.name)])
        if symbol.name == "<lines>" or symbol.fallback:
            return self._base("parse-failure", 
                symbol, NEEDS_REVIEW, None, "fallback",
                f"{symbol.path} could not be parsed ({symbol.fallback or 'no symbols'}) and holds ported "
                "definitions, so a reviewer must read the hunks rather than trust NOT_APPLICABLE",
                [_anchor_evidence(a, "ported from this file") for a in anchors[:3]],
            )
        changed = _changed_lines(change, symbol, self._table(symbol.old_blob, symbol.old_path or symbol.path),
                                 self._table(symbol.new_blob, symbol.path), outside_definitions=symbol.name == "<toplevel>")
        code = [(side, line, text) for side, line, text in changed if _is_code_line(text, symbol.path)]
        if symbol.kind == KIND_CLASS:
            own = form.outside_members(code, symbol.qualified_name, {
                "old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                "new": self._table(symbol.new_blob, symbol.path)})
            if code and not own:
                members = sorted({s.name for s in entry.symbols if s.qualified_name.startswith(symbol.qualified_name + ".")})
                return self._base("member-lines", symbol, NOT_APPLICABLE, "cosmetic", "body",
                                  f"every changed line of {symbol.name}'s body lies in one of its methods "
                                  f"({', '.join(members[:4]) or 'a nested definition'}), each decided in its own right, "
                                  "so the class body itself changed nothing: cosmetic rather than NEEDS_REVIEW",
                                  [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                            symbol=symbol.name, message="changed lines lie only in the class's methods")])
            code = own
        if not code:
            return self._base("cosmetic-comments", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                "the changed lines outside definitions are comments or blank, so cosmetic rather than a "
                "change to anything ported",
            )
        if symbol.kind == KIND_CLASS and symbol.change == "modified" and self._same_python_ast(symbol):
            return self._base("cosmetic-ast", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                f"{symbol.name} has the same Python AST before and after (formatting only), so cosmetic "
                "rather than a change to anything ported",
                [_same_ast_evidence(symbol)],
            )
        if symbol.name == "<toplevel>" and language_for_path(symbol.path) == "python":
            tables = (self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path))
            if all(t is not None and t.source is not None for t in tables) and form.same_without_annotations(
                    *(t.source.decode("utf-8", errors="replace") for t in tables), outside_definitions=True):
                return self._base("cosmetic-annotations", symbol, NOT_APPLICABLE, "cosmetic", "body",
                                  "the lines outside definitions changed only type annotations or the module "
                                  "docstring (the same module once they are erased), so cosmetic rather than a "
                                  "change to anything ported",
                                  [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                            symbol=symbol.name, message="the same module-level program once "
                                            "annotations and docstrings are erased")])
            imports = self._import_change(entry, symbol, paths, anchors, code)
            if imports is not None:
                return imports
        referenced = self._ported_identifiers(symbol, paths, anchors)
        if symbol.kind == KIND_CLASS and symbol.change == "added":
            return self._added_type(entry, symbol, referenced.get(symbol.name, []))
        tables = {"old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                  "new": self._table(symbol.new_blob, symbol.path)}
        names_by_line = {(side, line): _names_used_by_others(tables[side], line, text, symbol)
                         for side, line, text in code} if symbol.name == "<toplevel>" else \
            {(side, line): set(_IDENTIFIER.findall(_strip_comment(text, symbol.path))) for side, line, text in code}
        named = set().union(*names_by_line.values()) if names_by_line else set()
        shared = sorted(w for w in named & set(referenced) if w not in _COMMON_IDENTIFIERS and len(w) > 2)
        shared = [w for w in shared if not self._decorator_only_unported(w, symbol, paths, anchors)]
        if shared:
            word = shared[0]
            side, line, text = next(c for c in code if word in names_by_line[(c[0], c[1])])
            user = referenced[word][0]
            pinned = self._pins_containing(entry, paths, {u for w in shared for u in referenced[w]})
            if pinned:
                return self._base("provenance-pin", 
                    symbol, IN_SYNC, None, "provenance",
                    f"the change outside definitions touches {', '.join(shared[:4])}, used only by ported "
                    f"definitions whose anchors pin a commit that contains this one, so IN_SYNC by provenance "
                    "rather than NEEDS_REVIEW",
                    [_anchor_evidence(a, f"pin {a.pin} contains {entry.commit.sha[:10]}", Kind.PIN) for a in pinned[:3]],
                )
            return self._base("toplevel-use", 
                symbol, NEEDS_REVIEW, None, "body",
                f"the change outside definitions touches {', '.join(shared[:4])}, which the ported "
                f"{user} uses, so a reviewer must judge it rather than NOT_APPLICABLE",
                [Evidence(kind=Kind.TOPLEVEL, message=f"changed line names {word}, used by ported {user}",
                          side=f"upstream-{side}", path=symbol.path, line=line, quote=text.strip(),
                          symbol=symbol.name)],
            )
        standing = ", ".join(sorted(named)[:4]) + (" …" if len(named) > 4 else "")
        return self._base("toplevel-use", 
            symbol, NOT_APPLICABLE, "not-ported", "body",
            "the changed lines outside definitions name nothing the ported definitions of this file use"
            + (f" (they stand for {standing})" if standing else "") + ", so not-ported rather than NEEDS_REVIEW",
            [Evidence(kind=Kind.TOPLEVEL, message="changed lines name nothing a ported definition uses",
                      side="upstream-new", path=symbol.path, symbol=symbol.name)],
        )

    def _import_change(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], anchors: list[Anchor],
                       code) -> SymbolVerdict | None:
        """A change made only of module-level import statements matters to a
        ported definition only through the names whose binding it changes and
        that definition uses. None when other lines changed too."""
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path)
        if old_table is None or new_table is None or old_table.tree is None or new_table.tree is None:
            return None
        old_root, new_root = old_table.tree.root_node, new_table.tree.root_node
        if old_root.has_error or new_root.has_error:
            return None
        lines = {"old": import_lines(old_root), "new": import_lines(new_root)}
        if not all(line in lines[side] for side, line, _ in code):
            return None
        rebound = rebound_names(old_root, new_root, _unchanged_moves(entry))
        side, line, text = code[0]
        where = dict(side=f"upstream-{side}", path=symbol.path, line=line, quote=text.strip(), symbol=symbol.name)
        if not rebound:
            return self._base("cosmetic-imports", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                "the changed import statements bind the same names to the same modules before and after, so "
                "cosmetic rather than a change to anything ported",
                [Evidence(kind=Kind.COSMETIC, message="imports bind the same names before and after", **where)],
            )
        referenced = self._ported_identifiers(symbol, paths, anchors)
        used = [name for name in rebound if name.split(".")[0] in referenced]
        if not used:
            return self._base("import-rebinding", 
                symbol, NOT_APPLICABLE, "not-ported", "body",
                f"the changed imports rebind {', '.join(rebound[:4])}, which no ported definition of this file uses, "
                "so not-ported rather than NEEDS_REVIEW",
                [Evidence(kind=Kind.TOPLEVEL, message=f"imports rebind {', '.join(rebound[:4])}", subject=rebound[0],
                          **where)],
            )
        return None  # a rebinding a ported definition uses: decided like any shared name below

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

    def _added_type(self, entry: EntryChanges, symbol: TouchedSymbol, users: list[str]) -> SymbolVerdict:
        """A struct/class new upstream that nothing in-tree ports: it matters
        through the ported definitions that use it. When this commit touches
        every one of them, each is compared in its own right and carries the
        type's change; a ported user the commit leaves alone needs a reader."""
        touched = {s.qualified_name for s in entry.symbols} | {s.name for s in entry.symbols}
        untouched = [user for user in users if user not in touched]
        if untouched:
            return self._base("new-type-use", 
                symbol, NEEDS_REVIEW, None, "body",
                f"the new type {symbol.name} is used by the ported {untouched[0]}, which this commit does not "
                "change, so a reviewer must judge it rather than NOT_APPLICABLE",
                [Evidence(kind=Kind.TOPLEVEL, message=f"ported {untouched[0]} uses {symbol.name}", side="upstream-new",
                          path=symbol.path, line=symbol.new_lines[0] if symbol.new_lines else None,
                          symbol=symbol.name)],
            )
        carried = f"the ported definitions that use it ({', '.join(users[:3])}) are changed by this commit and " \
                  "compared in their own right" if users else "no ported definition uses it"
        return self._base("new-type-use", 
            symbol, NOT_APPLICABLE, "not-ported", "body",
            f"{symbol.name} is a new type nothing in-tree ports and {carried}, so not-ported rather than NEEDS_REVIEW",
            [Evidence(kind=Kind.TOPLEVEL, message=f"new type {symbol.name}; users: {', '.join(users[:3]) or 'none ported'}",
                      side="upstream-new", path=symbol.path, line=symbol.new_lines[0] if symbol.new_lines else None,
                      symbol=symbol.name)],
        )

    def _decorator_only_unported(self, word: str, symbol: TouchedSymbol, paths: set[str],
                                 anchors: list[Anchor]) -> bool:
        """True when every ported upstream definition names ``word`` only in
        its decorators (``@triton.jit(repr=word)``) and no file of the tree
        that ports them names it: metadata the port does not carry, so a
        change to it is not attributed to the port (attribution by use)."""
        users = []
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            for definition in table.definitions if table is not None and not table.fallback else ():
                if any(a.matches_name(definition.name, definition.qualified_name) for a in anchors) \
                        and definition.node is not None and word in _IDENTIFIER.findall(definition.node.text.decode(
                            "utf-8", errors="replace")):
                    users.append(definition)
        for definition in users:
            node = definition.node
            inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
            decorated = node.type == "decorated_definition" or (node.parent is not None
                                                                and node.parent.type == "decorated_definition")
            if not decorated or word in _IDENTIFIER.findall(inner.text.decode("utf-8", errors="replace")):
                return False
        ports = [p for d in users for p in self.index.ports_for(self.upstream, paths, d.name, d.qualified_name)]
        for file in {p.definition.file for p in ports}:
            try:
                text = (self.context.tree_root / file).read_text(errors="replace")
            except OSError:
                return False
            if word in _IDENTIFIER.findall(text):
                return False
        return bool(users) and bool(ports)

    def _ported_identifiers(self, symbol: TouchedSymbol, paths: set[str], anchors: list[Anchor]) -> dict[str, list[str]]:
        """identifier -> the ported upstream definitions (old or new side) that reference it."""
        referenced: dict[str, list[str]] = {}
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            if table is None or table.fallback:
                continue
            for definition in table.definitions:
                if not any(a.matches_name(definition.name, definition.qualified_name) for a in anchors):
                    continue
                text = definition.node.text.decode("utf-8", errors="replace") if definition.node else ""
                for word in set(_IDENTIFIER.findall(text)):
                    users = referenced.setdefault(word, [])
                    if definition.qualified_name not in users:
                        users.append(definition.qualified_name)
        return referenced

    # -- something in-tree ports it

    def _ported(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], ports: list[Port]) -> SymbolVerdict:
        # Both sides' signatures, computed when a comparison first needs them: a port whose pin
        # already contains the commit is IN_SYNC by provenance and reads neither.
        sides = functools.cache(lambda: (
            self._upstream_signature(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                     symbol.old_lines) if symbol.change != "added" else None,
            self._upstream_signature(symbol.new_blob, symbol.path, symbol.qualified_name,
                                     symbol.new_lines) if symbol.change != "removed" else None))
        param_scope = {a.param for a in self.index.not_carried_for(self.upstream, paths, symbol.name,
                                                                    symbol.qualified_name) if a.param}
        results = [self._against_port(entry, symbol, sides, port, param_scope) for port in ports]
        worst = max(results, key=lambda r: SEVERITY[r.verdict])
        worst.ports = [f"{p.definition.cite} {p.definition.qualified_name}" for p in ports]
        for other in results:
            if other is not worst:
                worst.evidence.extend(e for e in other.evidence if e.kind != "hunk")
        return worst

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

    def _against_port(self, entry, symbol, sides, port: Port, param_scope: set[str]) -> SymbolVerdict:
        anchor, definition = port.anchor, port.definition
        tree_signature = definition.signature
        evidence = [_anchor_evidence(anchor, f"{definition.qualified_name} ports {anchor.reference}")]
        pinned = self._pinned_in_sync(entry, symbol, anchor, evidence, "the")
        if pinned is not None:
            return pinned
        old, new = sides()
        if tree_signature is None:
            return self._base("parse-failure", symbol, NEEDS_REVIEW, None, "fallback",
                              f"the port at {definition.cite} could not be read, so it needs review",
                              evidence)
        if symbol.change == "removed":
            return self._removed(entry, symbol, old, port, evidence)
        if symbol.change == "added" or old is None:
            return self._added(entry, symbol, new, port, evidence, param_scope)
        if new is None:
            return self._base("parse-failure", symbol, NEEDS_REVIEW, None, "fallback",
                              f"the new side of {symbol.name} could not be parsed, so it needs review",
                              evidence)
        if old.body_tokens_hash == new.body_tokens_hash and not self._python_ast_differs(symbol):
            return self._base("cosmetic-tokens", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                f"{symbol.name}'s tokens without comments are identical before and after, so cosmetic "
                "rather than a change the port must follow",
                evidence,
            )
        renamed = self._renamed_locals(symbol)
        if renamed:  # an empty renaming is equal tokens, which the ``ast`` has just told apart
            pairs = ", ".join(f"{a} → {b}" for a, b in renamed[:4])
            return self._base("cosmetic-renaming", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                f"{symbol.name} differs before and after only by a consistent renaming of its locals ({pairs}), "
                "so cosmetic rather than a change the port must follow",
                evidence + [Evidence(kind=Kind.COSMETIC, message=f"locals renamed consistently: {pairs}",
                                     side="upstream-new", path=symbol.path,
                                     line=symbol.new_lines[0] if symbol.new_lines else None,
                                     end_line=symbol.new_lines[1] if symbol.new_lines else None,
                                     symbol=symbol.name, subject=pairs,
                                     before=Location(Side.OLD, symbol.old_path or symbol.path,
                                                     symbol.old_lines[0] if symbol.old_lines else None,
                                                     symbol.old_lines[1] if symbol.old_lines else None),
                                     after=Location(Side.NEW, symbol.path,
                                                    symbol.new_lines[0] if symbol.new_lines else None,
                                                    symbol.new_lines[1] if symbol.new_lines else None))],
            )
        if self._same_python_ast(symbol):
            return self._base("cosmetic-ast", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                f"{symbol.name} has the same Python AST before and after (formatting only), so cosmetic "
                "rather than a change the port must follow",
                evidence + [_same_ast_evidence(symbol)],
            )
        formal = self._form_only(symbol, definition)
        if formal is not None:
            kept = "not-carried" if formal[0] == "default-build" else "cosmetic"
            return self._base(formal[0], symbol, NOT_APPLICABLE, kept, "body",
                              f"{symbol.name} {formal[1]}, so {kept} rather than a change the port must follow",
                              evidence + [Evidence(kind=Kind.COSMETIC, message=formal[1], side="upstream-new",
                                                   path=symbol.path, symbol=symbol.name,
                                                   line=symbol.new_lines[0] if symbol.new_lines else None)])
        registered = self._registered_only(entry, symbol)
        if registered:
            return self._base("registry-decorator", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} only gained {', '.join('@' + n for n in registered)}, which hand"
                              f"{'s' if len(registered) == 1 else ''} the same function back (its body is unchanged), "
                              "so cosmetic rather than a change the port must follow",
                              evidence + [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                                   line=symbol.new_lines[0] if symbol.new_lines else None,
                                                   symbol=symbol.name, subject=registered[0],
                                                   message="a registration decorator around an unchanged body")])
        unused = self._unused_interface(entry, symbol, old, new, tree_signature)
        if unused:
            return self._base("unused-constexpr", symbol, IN_SYNC, None, "signature",
                              f"upstream added {', '.join(unused)} to {symbol.name} with a default, and neither its body "
                              f"reads nor any launch passes {'it' if len(unused) == 1 else 'them'}; left out, the "
                              f"definition is what it was, so the port at {definition.cite} computes the same: IN_SYNC "
                              "rather than a gap",
                              evidence + [_upstream_param_evidence(new, name, "upstream-new", Kind.PARAM_ADDED,
                                                                   f"{name}: defaulted, never read, never passed")
                                          for name in unused])
        confined = self._confined_to_scope(symbol, old, new, param_scope)
        if confined is not None:
            moved = next((f"; {e.message}" for e in confined[1] if e.kind == Kind.COSMETIC), "")
            selectors = [e.subject for e in confined[1] if e.kind == Kind.NOT_CARRIED and e.side == "upstream-new"]
            if selectors:
                moved += (f"; {', '.join(selectors)} only select{'s' if len(selectors) == 1 else ''} the branch that "
                          "launches the declared path and returns")
            return self._base("declared-scope", symbol, NOT_APPLICABLE, "not-carried", "signature",
                              f"every change to {symbol.name} lies in {', '.join(confined[0])}, which the tree declares "
                              "not carried (parameters, the arguments passing them and the branches they select)"
                              f"{moved}, so not-carried rather than NEEDS_REVIEW", evidence + confined[1])
        if language_for_path(symbol.path) == "cpp" and param_scope:
            before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                      symbol.old_lines)
            after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
            if before is not None and after is not None and branches.same_with_flags_off(
                    before.node, after.node, _scope_names(param_scope)):
                names = ", ".join(sorted(param_scope))
                return self._base("declared-flag-off", symbol, NOT_APPLICABLE, "not-carried", "signature",
                                  f"with {names}, which the tree declares not carried, read as off, {symbol.name} "
                                  "is the same before and after, so not-carried rather than NEEDS_REVIEW",
                                  evidence + [Evidence(kind=Kind.NOT_CARRIED, side="upstream-new", path=symbol.path,
                                                       line=symbol.new_lines[0] if symbol.new_lines else None,
                                                       symbol=symbol.name, subject=sorted(param_scope)[0],
                                                       message=f"the change only concerns {names}, declared not "
                                                       "carried (off)")])
        stored = self._stores_for_not_carried(symbol)
        if stored:
            return self._base("not-carried-reader", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{symbol.name}'s change only stores {', '.join(stored[0][:3])}, which only "
                              f"{', '.join(stored[1][:3]) or 'no definition'} read"
                              f"{'s' if len(stored[1]) == 1 else ''}, declared not carried, so not-carried rather "
                              "than NEEDS_REVIEW",
                              evidence + [Evidence(kind=Kind.NOT_CARRIED, side="upstream-new", path=symbol.path,
                                                   line=symbol.new_lines[0] if symbol.new_lines else None,
                                                   symbol=symbol.name, subject=stored[0][0],
                                                   message=f"stored only for {', '.join(stored[1][:3]) or 'nothing'}")])
        lacked = self._lacked_branches(entry, symbol, new, definition, param_scope)
        if lacked:
            return self._base("lacked-branch", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"with the parameters the port at {definition.cite} lacks ({', '.join(lacked[:4])}) at "
                              f"upstream's default (off where the tree declares them not carried), {symbol.name} is the same before and "
                              "after: the change lies in paths the port does not have, so not-carried rather than "
                              "NEEDS_REVIEW",
                              evidence + [Evidence(kind=Kind.NOT_CARRIED, side="upstream-new", path=symbol.path,
                                                   line=symbol.new_lines[0] if symbol.new_lines else None,
                                                   symbol=symbol.name, subject=lacked[0],
                                                   message=f"the port lacks {', '.join(lacked[:4])}; the change "
                                                   "lies only in the paths they select or the values they receive")])
        items = compare(old, new, tree_signature, self.index, param_scope,
                        derivation=lambda name, kernel=None: self._derivation(entry, symbol, new, name, kernel),
                        upstream=self.upstream)
        return self._from_items(entry, symbol, old, new, port, items, evidence)

    def _registered_only(self, entry, symbol: TouchedSymbol) -> list[str] | None:
        """The decorators ``registry-decorator`` proves hand the function back, when they are the definition's
        whole change (``portq.classifier.rules.wrappers``); else None."""
        if symbol.change != "modified" or language_for_path(symbol.path) != "python":
            return None
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None \
                or after.node.type != "decorated_definition" or before.node.has_error or after.node.has_error:
            return None
        definitions = {}
        for blob, path in [(c.new_blob, c.new_path) for c in entry.owned_changes if c.new_blob and c.new_path] \
                + [(symbol.new_blob, symbol.path)]:
            table = self._table(blob, path) if language_for_path(path) == "python" else None
            for d in table.definitions if table is not None and not table.fallback else ():
                if d.node is not None and d.qualified_name == d.name:
                    definitions.setdefault(d.name, d.node)
        return wrappers.added_registrations(before.node, after.node, definitions)

    def _stores_for_not_carried(self, symbol: TouchedSymbol) -> tuple[list[str], list[str]] | None:
        """``(attributes, their readers)`` when the definition changed only statements storing attributes on its
        first parameter that only definitions declared not carried read (``not-carried-reader``); else None."""
        if symbol.change != "modified" or language_for_path(symbol.path) != "python":
            return None
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None:
            return None
        names = branches.stored_attributes(before.node) | branches.stored_attributes(after.node)
        if not names:
            return None
        readers: dict[str, set[str]] = {name: set() for name in names}
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            if table is None or table.fallback:
                return None
            for other in table.definitions:
                if other.qualified_name == symbol.qualified_name or other.node is None \
                        or symbol.qualified_name.startswith(other.qualified_name + "."):
                    continue  # itself, or a class around it (its methods are read one by one)
                words = set(re.findall(r"\.\s*([A-Za-z_]\w*)", other.node.text.decode("utf-8", errors="replace")))
                for name in names & words:
                    readers[name].add(other.qualified_name)
        paths = {symbol.path, symbol.old_path or symbol.path}
        kept = {name for name, found in readers.items() if all(
            any(not a.param for a in self.index.not_carried_for(self.upstream, paths, q.split(".")[-1], q))
            for q in found)}
        carried = branches.stored_only_parameters(before.node, after.node, kept) if kept else set()
        if not kept or not branches.same_without_stores(before.node, after.node, kept, carried):
            return None
        return sorted(kept), sorted(set().union(*(readers[n] for n in kept)))

    def _lacked_branches(self, entry, symbol: TouchedSymbol, new: Signature, definition,
                         param_scope: set[str]) -> list[str]:
        """The parameters (as upstream writes them) that ``lacked-branch`` sets aside, when the definition
        is the same before and after for a port lacking them (``portq.classifier.rules.branches``); else
        empty. A parameter new in this commit that one of its launches passes is an input upstream now
        uses, not a default: the parameter rules judge it."""
        if symbol.change != "modified" or language_for_path(symbol.path) != "python" \
                or definition.signature is None or definition.signature.language != "python":
            return []
        tables = (self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path))
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None \
                or any(t is None or t.tree is None for t in tables):
            return []
        port_names = {p.normalised for p in definition.signature.params if p.normalised not in ("self", "ctx")}
        lacked = branches.lacked_parameters(before.node, after.node, port_names, _scope_names(param_scope))
        added = set(branches.parameter_defaults(after.node)) - set(branches.parameter_defaults(before.node))
        if lacked and any(self._derivation(entry, symbol, new, name) is not None for name in added & set(lacked)):
            return []
        if not lacked or not branches.same_for_port_parameters(
                before.node, after.node, lacked, tuple(branches.module_constants(t.tree.root_node) for t in tables)):
            return []
        changed = {normalise_name(t) for t in set(comment_free_tokens(before.node)) ^ set(comment_free_tokens(after.node))}
        return sorted(lacked, key=lambda name: (name not in changed, name))

    def _from_items(self, entry, symbol, old, new, port, items: list[Delta], evidence) -> SymbolVerdict:
        definition = port.definition
        behind = [i for i in items if i.status is Status.BEHIND]
        undecided = [i for i in items if i.status is Status.UNDECIDED]
        synced = [i for i in items if i.status is Status.SYNC]
        scoped = [i for i in items if i.status is Status.NOT_CARRIED]
        for item in items:
            evidence.extend(item.evidence)
        if behind:
            return self._gap(symbol, port, behind, evidence)
        if undecided:
            return self._base(_item_rules(undecided), 
                symbol, NEEDS_REVIEW, None, undecided[0].layer,
                f"{undecided[0].message}; the structural comparison cannot place the port, so it needs "
                "review rather than IN_SYNC",
                evidence,
            )
        if synced:
            layer = "launch" if any(i.layer == "launch" for i in synced) else "signature"
            return self._base(_item_rules(synced), 
                symbol, IN_SYNC, None, layer,
                f"the port at {definition.cite} already has the new shape ({synced[0].message}), so IN_SYNC "
                "rather than a gap",
                evidence,
            )
        if scoped and self._changes_only_mention(entry, symbol, {s.message for s in scoped}):
            return self._base("declared-scope", 
                symbol, NOT_APPLICABLE, "not-carried", "signature",
                f"every change to {symbol.name} concerns {', '.join(sorted({s.message for s in scoped}))}, "
                "which the tree declares not carried, so not-carried rather than NEEDS_REVIEW",
                evidence,
            )
        language_note = "" if old.language == definition.language else " (cross-language port)"
        besides = f" besides {', '.join(sorted({s.message for s in scoped}))}, which the tree declares not carried" \
            if scoped else ""
        return self._base("body-change", 
            symbol, NEEDS_REVIEW, None, "body",
            f"{symbol.name} changed in its body, with no parameter or launch delta{besides}{language_note}, so "
            "a reviewer must compare the bodies; a body change on a ported symbol is never NOT_APPLICABLE",
            evidence + [Evidence(kind=Kind.BODY, message="body-only change on a ported symbol", side="tree",
                                 path=definition.file, line=definition.start_line,
                                 quote=_first_line_quote(definition, definition.signature),
                                 symbol=definition.qualified_name)],
        )

    def _unused_interface(self, entry, symbol: TouchedSymbol, old: Signature, new: Signature,
                          port: Signature) -> list[str]:
        """The constexpr parameters ``unused-constexpr`` sets aside, when the new
        definition without them has the old one's tokens; else empty."""
        unused = interface.unused_new_constexprs(
            old, new, port, lambda name: self._derivation(entry, symbol, new, name) is not None)
        if not unused:
            return []
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None \
                or before.node.has_error or after.node.has_error:
            return []
        if scoped_tokens(before.node, set()) != scoped_tokens(after.node, set(unused)):
            return []
        return [new.param(name).name if new.param(name) else name for name in unused]

    def _form_only(self, symbol: TouchedSymbol, port=None) -> tuple[str, str] | None:
        """``(rule id, what changed)`` when a modified definition changed only
        its form (``portq.classifier.rules.form``): annotations in Python,
        qualifiers in C/C++; None otherwise."""
        language = language_for_path(symbol.path)
        if symbol.change != "modified" or language not in ("python", "cpp"):
            return None
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None:
            return None
        if language == "python":
            if form.same_without_annotations(form.definition_text(before.node), form.definition_text(after.node)):
                return "cosmetic-annotations", "changed only its type annotations or docstring (the same program " \
                                               "once they are erased)"
            if form.same_with_guards_unwrapped(before.node, after.node):
                return "guarded-store", "only moved stores under (or out of) the guard of their every reader " \
                                        "(when the guard is false nothing reads them)"
            return None
        if form.same_without_qualifiers(before.node, after.node):
            return "cosmetic-qualifiers", "changed only qualifiers that do not change what it computes (inline, " \
                                          "static constexpr, const, __grid_constant__, if constexpr)"
        tables = (self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path))
        defined = branches.defined_macros(*(t.source for t in tables if t is not None))
        own = self.index.source(port.file) if port is not None else None
        if branches.same_in_default_build(before.node, after.node, defined) and not (own and any(
                re.search(rb"\b" + re.escape(name.encode()) + rb"\b", own)
                for name in branches.decided_macros(before.node, defined)
                | branches.decided_macros(after.node, defined))):
            return "default-build", "changed only code under a preprocessor flag no source of the file defines " \
                                    "(the default build compiles the other branch)"
        return None

    def _confined_to_scope(self, symbol: TouchedSymbol, old: Signature, new: Signature, param_scope: set[str]):
        """``(declared names, declaration records)`` when the old and new
        definitions are equal once what the tree declares not carried is set
        aside: this symbol's ``[PARAM]`` declarations and those of the kernels
        it launches. None when something else changed too."""
        declarations = [a for a in self.index.anchors if a.kind == "not-carried" and a.param
                        and a.upstream == self.upstream and (
            a.matches_name(symbol.name, symbol.qualified_name)
            or normalise_name(a.bare_symbol) in {l.kernel_normalised for l in old.launches + new.launches})]
        if not declarations or language_for_path(symbol.path) != "python":
            return None
        excluded = _scope_names({a.param for a in declarations} | set(param_scope))
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name, symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None \
                or before.node.has_error or after.node.has_error:
            return None
        moved, selected = None, {}
        if scoped_tokens(before.node, excluded) != scoped_tokens(after.node, excluded):
            selected = self._selected_by_locals(before.node, after.node, excluded)
            if selected:
                excluded = excluded | {normalise_name(n) for n in selected}
            else:
                moved = self._moved_into_helper(symbol, before.node, after.node, excluded)
                if moved is None:
                    return None
        changes = _scope_changes(before.node, after.node) | ({normalise_name(moved[1])} if moved and moved[1] else set())
        touched = sorted({a.param for a in declarations if normalise_name(a.param) in excluded
                          and normalise_name(a.param) in changes})
        if not touched:
            return None
        used = [a for a in declarations if a.param in touched]
        records = [_anchor_evidence(a, f"not-carried declaration of {a.param}", Kind.NOT_CARRIED) for a in used[:4]]
        for name, line in sorted(selected.items()):
            records.append(Evidence(kind=Kind.NOT_CARRIED, side="upstream-new", path=symbol.path, line=line,
                                    symbol=symbol.name, subject=name,
                                    message=f"{name} selects only the branch at line {line}, which launches with "
                                    "a declared not-carried parameter set and returns: its other uses are that path"))
        if moved is not None:
            helper, _, inlined, line = moved
            note = f"the carried body moved into {helper} unchanged" + (
                f" but for the local {', '.join(inlined)} written in place" if inlined else "")
            records.append(Evidence(kind=Kind.COSMETIC, message=note, side="upstream-new", path=symbol.path, line=line,
                                    symbol=helper, subject=helper))
        return touched, records

    @staticmethod
    def _selected_by_locals(before, after, excluded: set[str]) -> dict[str, int]:
        """The new locals (``dispatch_locals``) that, set aside with what they
        select, leave ``after`` equal to ``before``; empty when there are none
        or something else changed too."""
        before = before.child_by_field_name("definition") if before.type == "decorated_definition" else before
        after = after.child_by_field_name("definition") if after.type == "decorated_definition" else after
        old_names = {node_text(c) for c in _walk_nodes(before) if c.type == "identifier"}
        selectors = {n: line for n, line in dispatch_locals(after, excluded).items() if n not in old_names}
        if not selectors:
            return {}
        wider = excluded | {normalise_name(n) for n in selectors}
        replaced = carried_path_rewrites(after, set(selectors))
        if scoped_tokens(before, wider) != scoped_tokens(after, wider, replaced):
            return {}
        return selectors

    def _moved_into_helper(self, symbol: TouchedSymbol, before, after, excluded: set[str]):
        """``(helper, dispatch condition or None, inlined locals, helper line)``
        when ``after`` only forwards its parameters to a function of the same
        file (behind a not-carried ``if NAME:``) whose body is ``before``'s,
        modulo what the declarations set aside and single-use locals written
        in place; None otherwise."""
        before = before.child_by_field_name("definition") if before.type == "decorated_definition" else before
        after = after.child_by_field_name("definition") if after.type == "decorated_definition" else after
        found = forwarding_call(after, excluded)
        if found is None or scoped_tokens(before.child_by_field_name("parameters"), excluded) \
                != scoped_tokens(after.child_by_field_name("parameters"), excluded):
            return None
        callee, forwarded = found
        helper = self._definition(symbol.new_blob, symbol.path, callee, None)
        node = helper.node if helper is not None else None
        node = node.child_by_field_name("definition") if node is not None and node.type == "decorated_definition" else node
        if node is None or node.has_error or node.child_by_field_name("body") is None:
            return None
        parameters = [_parameter_name(p) for p in node.child_by_field_name("parameters").named_children
                      if p.type != "comment"]
        own = {_parameter_name(p) for p in after.child_by_field_name("parameters").named_children if p.type != "comment"}
        if parameters != [normalise_name(n) for n in forwarded] or not set(parameters) <= own:
            return None  # the helper's parameters are the kernel's, bound to themselves
        old_body, new_body = before.child_by_field_name("body"), node.child_by_field_name("body")
        replaced = inlined_locals(old_body, new_body)
        if scoped_tokens(old_body, excluded, replaced) != scoped_tokens(new_body, excluded):
            return None
        inlined = sorted(node_text(c.child_by_field_name("left")) for c in _walk_nodes(old_body)
                         if c.type == "assignment" and c.parent is not None and c.parent.id in replaced)
        branch = after.child_by_field_name("body").named_children[0]
        condition = node_text(branch.child_by_field_name("condition")) if branch.type == "if_statement" else None
        return callee, condition, inlined, helper.start_line

    def _changes_only_mention(self, entry, symbol, names: set[str]) -> bool:
        change = _file_change(entry, symbol)
        changed = _changed_lines(change, symbol, None, None, outside_definitions=False)
        code = [text for _, _, text in changed if _is_code_line(text, symbol.path)]
        return bool(code) and all(any(name in text for name in names) for text in code)

    def _gap(self, symbol, port: Port, behind: list[Delta], evidence) -> SymbolVerdict:
        definition = port.definition
        callers: Callers = self.index.reachability.callers(definition.name, definition.file, definition.qualified_name)
        behind = sorted(behind, key=lambda i: not i.geometry)
        what = "; ".join(i.message for i in behind[:3])
        layer = behind[0].layer
        if callers.non_test:
            caller = callers.non_test[0]
            through = f" (through {callers.through[0]})" if callers.through else ""
            bound = ("reach-bound-names",) if callers.bound else ()
            return self._base((*_item_rules(behind), "caller-reachability", *bound), 
                symbol, REAL_GAP, None, layer,
                f"the port at {definition.cite} still has the old shape ({what}) and non-test code calls it at "
                f"{caller.cite}{through}, so REAL_GAP rather than INERT",
                evidence + [_caller_evidence(caller, "non-test caller", test=False)],
            )
        found = callers.test[:3]
        return self._base((*_item_rules(behind), "caller-reachability"), 
            symbol, INERT, None, layer,
            f"the port at {definition.cite} still has the old shape ({what}) but "
            + (f"only tests call it ({', '.join(c.cite for c in found)})" if found else "nothing in-tree calls it")
            + ", so INERT rather than REAL_GAP",
            evidence + [_caller_evidence(c, "test caller", test=True) for c in found]
            + ([] if found else [Evidence(kind=Kind.CALLER, message="no caller found in the tree", side="tree",
                                          path=definition.file, line=definition.start_line)]),
        )

    def _removed(self, entry, symbol, old, port: Port, evidence) -> SymbolVerdict:
        """Upstream deleted or renamed a ported definition."""
        replacement = next(
            (s for s in entry.symbols if s.change == "added" and s.path == symbol.path
             and _kind_class(s.kind) == _kind_class(symbol.kind)
             and (s.name.startswith(symbol.name) or symbol.name.startswith(s.name))),
            None,
        )
        definition = port.definition
        tree_evidence = Evidence(kind=Kind.TREE_DEFINITION, message=f"the port still defines {definition.qualified_name}",
                                 side="tree", path=definition.file, line=definition.start_line,
                                 quote=_first_line_quote(definition, definition.signature), symbol=definition.name)
        if replacement is None:
            return self._base("removed-definition", 
                symbol, NEEDS_REVIEW, None, "signature",
                f"upstream deleted {symbol.name} without a same-named replacement while {definition.cite} still "
                "ports it, so a reviewer must decide whether the port goes too",
                evidence + [tree_evidence],
            )
        successors = self.index.ports_for(self.upstream, {replacement.path}, replacement.name, replacement.qualified_name)
        if successors:
            successor = successors[0]
            return self._base("renamed-definition", 
                symbol, IN_SYNC, None, "signature",
                f"upstream renamed {symbol.name} to {replacement.name} and {successor.definition.cite} already "
                "ports the new name, so IN_SYNC rather than a gap",
                evidence + [_anchor_evidence(successor.anchor, f"ports {replacement.name}")],
            )
        item = Delta("behind", "signature",
                     f"upstream renamed {symbol.name} to {replacement.name}; the port still carries {symbol.name}",
                     [tree_evidence], rule="renamed-definition")
        return self._gap(symbol, port, [item], evidence + [tree_evidence])

    def _added(self, entry, symbol, new, port: Port, evidence, param_scope: set[str]) -> SymbolVerdict:
        """A new upstream definition the tree already anchors (the tree is ahead).
        Parameters declared not carried, and C++ out-parameters whose every
        field the port returns, are not missing."""
        definition = port.definition
        if new is None:
            return self._base("parse-failure", symbol, NEEDS_REVIEW, None, "fallback",
                              f"{symbol.name} could not be parsed upstream, so it needs review", evidence)
        scope = _scope_names(param_scope)
        absent = [p for p in new.runtime_param_names if definition.signature.param(p) is None]
        returned = [p for p in absent if _returned_instead(new, definition.signature, p)]
        scoped = [p for p in absent if p in scope]
        missing = [p for p in absent if p not in returned and p not in scoped]
        evidence = evidence + [_out_param_evidence(new, definition.signature, p) for p in returned] + [
            _upstream_param_evidence(new, p, "upstream-new", Kind.PARAM_NOT_CARRIED, f"{p} is declared not carried")
            for p in scoped]
        if missing:
            return self._base("added-definition", 
                symbol, NEEDS_REVIEW, None, "signature",
                f"{symbol.name} is new upstream and {definition.cite} ports it but lacks {', '.join(missing[:4])}, "
                "so it needs review rather than IN_SYNC",
                evidence,
            )
        notes = [f"returns {', '.join(new.out_params[p])} instead of out-parameter {p}" for p in returned]
        notes += [f"declares {p} not carried" for p in scoped]
        # What the claim rests on is computed: the runtime parameters are all
        # there; constexpr ones the port does not take are listed, never
        # glossed over as "every parameter".
        unmatched = [p.normalised for p in new.params if p.constexpr and definition.signature.param(p.normalised) is None
                     and p.normalised not in scope]
        runtime = len(new.runtime_param_names)
        if unmatched:
            evidence = evidence + [Evidence(
                kind=Kind.TREE_SIGNATURE, side="tree", path=definition.file, line=definition.start_line,
                quote=_first_line_quote(definition, definition.signature), symbol=definition.qualified_name,
                message=f"the port takes no constexpr {', '.join(unmatched[:6])} of upstream's {symbol.name}",
                subject=", ".join(unmatched))]
        claim = f"every one of its {runtime} runtime parameters" if runtime else "its interface (no runtime parameters)"
        if unmatched:
            claim += f", though not its constexpr {', '.join(unmatched[:4])}{' …' if len(unmatched) > 4 else ''}" \
                     " (how upstream specialises it)"
        return self._base("added-definition", 
            symbol, IN_SYNC, None, "signature",
            f"{symbol.name} is new upstream and {definition.cite} already ports it with {claim}"
            + (f" (it {'; '.join(notes)})" if notes else "") + ", so IN_SYNC",
            evidence,
        )


# --- changed lines ----------------------------------------------------------------


def _unchanged_moves(entry: EntryChanges) -> dict[str, str]:
    """Dotted Python modules the commit renamed without changing them
    (``aiter/utils/arch.py`` → ``aiter/utils/arch_info.py``, same blob)."""
    def dotted(path: str) -> str:
        return path[:-3].replace("/", ".") if path.endswith(".py") else path.replace("/", ".")

    moves = {}
    for change in entry.commit.changes:
        if change.status == "renamed" and change.old_path and change.new_path and change.old_blob == change.new_blob \
                and change.old_path.endswith(".py"):
            moves[dotted(change.old_path)] = dotted(change.new_path)
    return moves


def _file_change(entry: EntryChanges, symbol: TouchedSymbol) -> FileChange | None:
    for change in list(entry.owned_changes) + list(entry.commit.changes):
        if change.path == symbol.path or (symbol.old_path and change.old_path == symbol.old_path):
            return change
    return None


def _changed_lines(change: FileChange | None, symbol: TouchedSymbol, old_table, new_table,
                   outside_definitions: bool) -> list[tuple[str, int, str]]:
    """``(side, line, text)`` of the '-'/'+' lines of ``symbol``: inside its
    extent, or outside every definition for top-level symbols."""
    if change is None:
        return []
    found: list[tuple[str, int, str]] = []

    def wanted(line: int, extent, table) -> bool:
        if outside_definitions:
            return table is None or table.enclosing(line) is None
        return extent is None or extent[0] <= line <= extent[1]

    for hunk in change.hunks:
        for line, text in zip(hunk.removed_lines, hunk.removed_text):
            if wanted(line, symbol.old_lines, old_table):
                found.append(("old", line, text))
        for line, text in zip(hunk.added_lines, hunk.added_text):
            if wanted(line, symbol.new_lines, new_table):
                found.append(("new", line, text))
    return found


_DEFINING = {
    "preproc_def": "name", "preproc_function_def": "name",  # a macro belongs to what expands it
    "type_definition": "declarator", "alias_declaration": "name",
}


def _names_used_by_others(table, line: int, text: str, symbol: TouchedSymbol) -> set[str]:
    """The names a changed top-level line stands for, attributed by use: a
    macro, ``typedef``, ``using``, a declaration or a Python assignment
    defines names, and only they can tie the change to a ported definition
    (not every identifier its body shares with one); any other line
    (a dispatch table entry, a bare call) offers its identifiers."""
    words = set(_IDENTIFIER.findall(_strip_comment(text, symbol.path)))
    if table is None or table.tree is None:
        return words
    if table.language == "cpp":  # a macro's continuation lines, however tree-sitter recovered from them
        macro = next((name for name, (first, last) in macro_extents(table.source).items() if first <= line <= last),
                     None)
        if macro is not None:
            return {macro}
    def spans(node) -> bool:  # a preprocessor line's node ends at column 0 of the next line
        last = node.end_point[0] + (1 if node.end_point[1] > 0 else 0)
        return node.start_point[0] + 1 <= line <= last

    statement = next((n for n in table.tree.root_node.named_children if spans(n)), None)
    while statement is not None and statement.type in ("namespace_definition", "declaration_list", "linkage_specification"):
        body = statement.child_by_field_name("body") or statement
        inner = next((n for n in body.named_children if spans(n)), None)
        if inner is None or inner == statement:
            break
        statement = inner
    if statement is None:
        return words
    if statement.type in ("namespace_definition", "declaration_list", "linkage_specification"):
        # a namespace's own head or brace stands for the definitions it holds (a port among
        # them names itself), not for the namespace name every definition in the file shares
        first, last = statement.start_point[0] + 1, statement.end_point[0] + 1
        return {d.name for d in table.definitions if first <= d.start_line <= last}
    field_name = _DEFINING.get(statement.type)
    if field_name is not None:
        name = statement.child_by_field_name(field_name)
        return set(_IDENTIFIER.findall(name.text.decode("utf-8", errors="replace"))) if name is not None else words
    if statement.type == "declaration":  # `static constexpr int kTile = 64;` defines kTile
        declarators = [statement.child_by_field_name("declarator")]
        names = {node.text.decode() for d in declarators if d is not None for node in _walk_nodes(d)
                 if node.type == "identifier" and (node.parent is None or node.parent.type != "init_declarator"
                                                   or node.parent.child_by_field_name("declarator") == node)}
        return names or words
    if statement.type == "expression_statement" and statement.named_children \
            and statement.named_children[0].type == "assignment":  # Python `TILE = 64`
        left = statement.named_children[0].child_by_field_name("left")
        return set(_IDENTIFIER.findall(left.text.decode())) if left is not None else words
    return words


def _walk_nodes(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _error_spans(root) -> list[tuple[int, int]]:
    """(first, last line, 1-based) of every syntax error or missing token, in order."""
    spans: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            spans.add((node.start_point[0] + 1, node.end_point[0] + 1))
        elif node.has_error:
            stack.extend(reversed(node.children))
    return sorted(spans)


def _source_lines(source: bytes, extent: tuple[int, int]) -> str:
    return "\n".join(source.decode("utf-8", errors="replace").splitlines()[extent[0] - 1:extent[1]])


def _stands_for(table, line: int, symbol: TouchedSymbol) -> set[str]:
    """The names a (possibly unparsable) line stands for: the macro whose
    continuation lines hold it, else what its top-level statement defines."""
    text = table.source.decode("utf-8", errors="replace").splitlines()[line - 1] \
        if 0 < line <= table.source.count(b"\n") + 1 else ""
    return _names_used_by_others(table, line, text, symbol)


def _strip_comment(text: str, path: str) -> str:
    if language_for_path(path) == "python":
        return text.split("#", 1)[0]
    return text.split("//", 1)[0]


def _is_code_line(text: str, path: str) -> bool:
    stripped = _strip_comment(text, path).strip()
    if not stripped:
        return False
    return not stripped.startswith(("/*", "*", "*/"))


@per_definition("python-ast-digest", TEXT_OR_NONE)
def _python_ast_dump(node) -> str | None:
    """A digest of the ``ast.dump`` of a Python definition's source with
    docstrings removed (as the token comparison ignores them), or None when
    the text does not parse. Dumps are only compared, so their digests are
    what is kept (``portq.language.memo``), not the dumps."""
    column = node.start_point[1]
    text = " " * column + node.text.decode("utf-8", errors="replace")
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    for scope in ast.walk(tree):
        body = getattr(scope, "body", None)
        if isinstance(scope, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            scope.body = body[1:]
    return content_digest(ast.dump(tree, include_attributes=False))


def _same_ast_evidence(symbol: TouchedSymbol) -> Evidence:
    return Evidence(kind=Kind.COSMETIC, message="the same Python AST before and after (formatting only)",
                    side="upstream-new", path=symbol.path,
                    line=symbol.new_lines[0] if symbol.new_lines else None,
                    end_line=symbol.new_lines[1] if symbol.new_lines else None, symbol=symbol.name,
                    before=Location(Side.OLD, symbol.old_path or symbol.path,
                                    symbol.old_lines[0] if symbol.old_lines else None,
                                    symbol.old_lines[1] if symbol.old_lines else None),
                    after=Location(Side.NEW, symbol.path,
                                   symbol.new_lines[0] if symbol.new_lines else None,
                                   symbol.new_lines[1] if symbol.new_lines else None))


def _module_resolver(table_of):
    """``(resolve, modules)``: ``resolve(importer, module)`` is the ``callees.Module`` of the file ``from
    MODULE import`` names, built once from ``table_of(path)`` (None when it gives no parsed table);
    ``modules`` holds every path asked, built or None."""
    modules: dict = {}

    def resolve(importer: str, module: str):
        path = _module_path(importer, module)
        if path not in modules:
            table = table_of(path)
            modules[path] = Module(path, table, resolve) if table is not None and table.tree is not None else None
        return modules[path]

    return resolve, modules


def _module_path(importer: str, module: str) -> str:
    """The file ``from MODULE import ...`` names, seen from ``importer``: relative to its folder, or the
    dotted path from the root of its package (the same top-level folder)."""
    folder = Path(importer).parent
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        for _ in range(dots - 1):
            folder = folder.parent
        rest = module[dots:]
        return (folder / (rest.replace(".", "/") + ".py")).as_posix() if rest else (folder / "__init__.py").as_posix()
    top = Path(importer).parts[0] if Path(importer).parts else ""
    path = module.replace(".", "/") + ".py"
    return path if path.split("/")[0] == top else ""


def _anchor_evidence(anchor: Anchor, message: str, kind: Kind = Kind.ANCHOR) -> Evidence:
    return Evidence(kind=kind, message=message, side="tree", path=anchor.file, line=anchor.line,
                    quote=anchor.quote, symbol=anchor.definition or anchor.declared_name)


def _caller_evidence(site, message: str, test: bool) -> Evidence:
    return Evidence(kind=Kind.CALLER, message=f"{message}: {site.caller or '<module>'} calls {site.callee}",
                    side="tree", path=site.file, line=site.line, quote=site.quote, symbol=site.callee, test=test,
                    subject=site.caller)


# --- the entry ----------------------------------------------------------------------

_NOT_APPLICABLE_ORDER = ("net-zero", "not-ported", "not-carried", "cosmetic", "non-code", "no-row")
"""Which justification an all-NOT_APPLICABLE entry shows: the most informative first."""


def entry_verdict(symbol_verdicts: list[SymbolVerdict], fallback_reason: str = "") -> Verdict:
    """The entry's verdict: the most severe over all symbols, with every
    symbol named in the evidence so no half of a commit goes unread."""
    if not symbol_verdicts:
        return Verdict(NOT_APPLICABLE, "no-row", "path", reason=fallback_reason or "the commit touches no file",
                       version=__version__, rules=["path-ownership"])

    def rank(verdict: SymbolVerdict):
        order = _NOT_APPLICABLE_ORDER.index(verdict.justification) if verdict.justification in _NOT_APPLICABLE_ORDER else 0
        return (SEVERITY[verdict.verdict], -order, verdict.change == "modified", len(verdict.evidence))

    deciding = max(symbol_verdicts, key=rank)
    evidence = list(deciding.evidence)
    rules = list(deciding.rules)
    for other in symbol_verdicts:
        if other is deciding:
            continue
        if other.verdict == deciding.verdict and other.verdict != NOT_APPLICABLE:
            evidence.extend(e for e in other.evidence if e not in evidence)
            rules.extend(r for r in other.rules if r not in rules)
        label = other.verdict + (f"/{other.justification}" if other.justification else "")
        # The other symbol's reason names places; its records that cite them
        # travel with it, so a report prints each as a checked citation.
        evidence.append(Evidence(kind=Kind.SYMBOL, message=f"also touched: {other.path}::{other.symbol} → {label}: {other.reason}",
                                 side="upstream-new", path=other.path, symbol=other.symbol, row=other.row,
                                 hunk_header=next((e.hunk_header for e in other.evidence if e.hunk_header), None),
                                 records=tuple(located(other.evidence))))
    reason = deciding.reason
    others = len(symbol_verdicts) - 1
    if others:
        reason += f" ({others} other touched symbol{'s' if others > 1 else ''} listed in the evidence)"
    return Verdict(deciding.verdict, deciding.justification, deciding.decided_by, reason=reason, evidence=evidence,
                   symbols=symbol_verdicts, version=__version__, rules=rules)


def _item_rules(items: list[Delta]) -> tuple[str, ...]:
    """The ids of the rules that placed ``items``, in order, without repeats."""
    return tuple(dict.fromkeys(item.rule for item in items))
