"""Verdict rules (DESIGN §5): one verdict per touched upstream symbol, then
one per entry, the most severe over *all* symbols.

For each touched symbol, in order:

0. **parse failures** — an error in or around the symbol's changed lines or
   its extent, or in a macro a ported symbol expands, in a file with ports:
   NEEDS_REVIEW (``parse failed at path:line``), nothing else read. Broken
   lines of something no ported definition uses lower nothing, nor do errors
   tree-sitter makes of unchanged lines the same way on both sides; past
   those, only a token proof of a cosmetic change or NEEDS_REVIEW decides.
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
``Delta`` records the definition rules turn into a verdict.

This module is the assembly: ``SymbolClassifier`` is built from the rule
classes of ``portq.classifier.rules`` (each rule's code lives beside its
statement there) and asks them in the order above (``_decide``, and
``_against_port`` for a ported definition); it keeps what they share:
reading upstream blobs and signatures (cached), the ports of a symbol, the
``SymbolVerdict`` a rule gives (``_base``, with the rule ids), and the
entry's verdict over its symbols (``entry_verdict``). It reads upstream
blobs through the context and the in-tree index; it never writes anything
and never reads the commit message to decide.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from portq import __version__
from portq.classifier.deltas import compare
from portq.classifier.callees import Module
from portq.classifier.reading import (RangeFacts, _anchor_evidence, _changed_lines, _file_change, _kind_class,
                                      _module_path,
                                      _python_ast_dump,
                                      _python_passless_ast_dump, _same_ast_evidence,
                                      new_side_evidence)
from portq.classifier.moves import FOLLOW_ONLY, as_called_source, hoisted_local
from portq.classifier.rules import branches, checked
from portq.classifier.rules.attribution import AttributionRules
from portq.classifier.rules.branches import BranchRules
from portq.classifier.rules.builds import BuildRules
from portq.classifier.rules.moved_lines import MovedLineRules
from portq.classifier.rules.callee_path import CalleePathRules
from portq.classifier.rules.computation import same_computation
from portq.classifier.rules.integer_values import equal_integer_values
from portq.classifier.rules.cosmetic import (attribute_names, caller_renaming, caller_renamings, dropped_keywords,
                                             import_aliases, imported_others,
                                             followed_keywords, formatted_alike, keyword_bindings, renamed_locals, renamed_names,
                                             cpp_renaming, macro_read_names)
from portq.classifier.rules.cosmetic import cpp_parameter_names
from portq.classifier.rules.definitions import DefinitionRules
from portq.classifier.rules.form import (FormRules, module_loggers, qualifier_free_tokens,
                                        same_without_logging)
from portq.classifier.rules.form import (same_modulo_imported_names, same_modulo_module_aliases,
                                        same_without_assert_messages, same_without_binding_docs,
                                        same_without_cpp_assert_messages)
from portq.classifier.rules.form import erased_cpp_messages
from portq.classifier.rules.guards import GuardRules
from portq.classifier.rules.identity import IdentityRules
from portq.classifier.rules.inlining import inlined_helpers
from portq.classifier.rules.spellings import equivalent_decorators
from portq.classifier.rules.library_calls import equivalent_calls
from portq.classifier.rules.interface import InterfaceRules
from portq.classifier.rules.launch import platform_chosen_kernels, platform_chosen_launches
from portq.classifier.rules.ownership import OwnershipRules
from portq.classifier.rules.pinned_launchers import PinnedLauncherRules
from portq.classifier.rules.module_constants import ModuleConstantRules
from portq.classifier.rules.tracing import TracingRules
from portq.classifier.rules.registrations import RegistrationRules
from portq.classifier.rules.regrouped import RegroupRules
from portq.classifier.rules.preprocessed import PreprocessedRules
from portq.classifier.rules.not_carried_paths import NotCarriedPathRules
from portq.classifier.rules.parameters import branch_read, computed_bindings, context_form_changed, forwarded_only
from portq.classifier.rules.parameters import (Derivation, Step, cpp_call, cpp_kernel_uses, cpp_launch_constant, instance_computed, internal_argument, _upstream_param_evidence, derive, launch_argument,
                                               launch_argument_texts, parameter_position)
from portq.classifier.rules.provenance import ProvenanceRules
from portq.classifier.rules.scaffolding import ScaffoldRules
from portq.classifier.rules.scope import ScopeRules, _scope_names
from portq.classifier.rules.switches import SwitchRules
from portq.classifier.rules.wrappers import WrapperRules
from portq.classifier.rules.tuners import TunerRules
from portq.classifier.rules.absorption import AbsorptionRules
from portq.classifier.rules.selectors import SelectorRules
from portq.classifier.rules.checks import CheckRules
from portq.classifier.rules.unported_members import UnportedMemberRules
from portq.core.evidence import Evidence, Kind, Location, Side, located
from portq.core.model import (FLAGGED, IN_SYNC, NEEDS_REVIEW, NOT_APPLICABLE, SEVERITY, EntryChanges, FileChange, SymbolVerdict,
                              TouchedSymbol, Verdict)
from portq.core.paths import is_test_path
from portq.language.extraction import signature_of
from portq.language.signatures import Signature, comment_free_tokens, normalise_name
from portq.language.symbols import (KIND_CLASS, KIND_FUNCTION, KIND_OP_SCHEMA, KIND_TRITON_KERNEL, MAX_PARSE_BYTES, SymbolTable,
                                    language_for_path, parse)
from portq.language.symbols import symbol_table
from portq.language.signatures import definition_text, is_docstring, node_text, nodes_of
from portq.tree.file_records import Port
from portq.tree.tree_index import TreeIndex

CLASSIFIER_VERSION = 53
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


# --- results -------------------------------------------------------------------


def local_errors_alike(before, after) -> bool:
    """Whether two sides of a definition read well enough to compare: neither has a parse error, or
    every error of each is confined to one line of one statement (``return a, *[None] * 8``, which
    tree-sitter's Python grammar does not parse) and both sides hold the same such lines, so the
    statements around them parse as written and the unparsed ones are unchanged."""
    if not before.has_error and not after.has_error:
        return True

    def errors(node) -> list[str] | None:
        found, stack = [], [node]
        while stack:
            current = stack.pop()
            if current.type == "ERROR" or current.is_missing:
                if current.start_point[0] != current.end_point[0]:
                    return None
                found.append(" ".join(current.text.decode("utf-8", errors="replace").split()))
                continue
            if current.has_error:
                stack.extend(current.children)
        return sorted(found)

    old, new = errors(before), errors(after)
    return old is not None and old == new and bool(old)


def _launched_name(callee: str) -> str:
    """The definition a call or launch names, as written: ``k`` of ``k[grid]``, ``mod.k`` and ``k``."""
    return re.split(r"\.", re.sub(r"\[.*$", "", callee, flags=re.S).strip())[-1]


def _other_definitions(trees, name: str) -> set[str]:
    """Names of the Python functions defined in ``trees`` ((side, root)) other than ``name``: a call of
    one of them binds its own parameters, never those of ``name`` (``renamed-binding``)."""
    found = set()
    for _, root in trees:
        for node in nodes_of(root, ("function_definition",), "python"):
            named = node.child_by_field_name("name")
            if named is not None and node_text(named) != name:
                found.add(node_text(named))
    return found


def _of_this(bindings: list[tuple[str, str, str]], others: set[str]) -> list[tuple[str, str, str]]:
    """``keyword_bindings`` less the calls of another definition, each named by the definition it calls
    (a launch's grid aside: its locals are the caller's change, read there). The callers whose
    renamed locals respell a value are read only in the files that name the definition: a function
    of the same name elsewhere renaming its own locals is another caller's business."""
    kept = [(_launched_name(callee), keyword, value) for callee, keyword, value in bindings
            if _launched_name(callee) not in others]
    return sorted(kept)


class SymbolClassifier(OwnershipRules, ProvenanceRules, IdentityRules, WrapperRules, BranchRules, SwitchRules,
                       AttributionRules, FormRules, ScopeRules, InterfaceRules, CalleePathRules, DefinitionRules,
                       GuardRules, BuildRules, MovedLineRules, PinnedLauncherRules, ModuleConstantRules,
                       TracingRules, ScaffoldRules, RegistrationRules, RegroupRules,
                       PreprocessedRules, NotCarriedPathRules, TunerRules,
                       AbsorptionRules, SelectorRules, CheckRules, UnportedMemberRules):
    """Decides the verdict of each touched symbol of an entry."""

    def __init__(self, context, index: TreeIndex) -> None:
        self.context = context
        self.index = index
        self.upstream = context.upstream
        self._signature_cache: dict[tuple, Signature | None] = {}
        self._modules: dict[tuple[str, str], dict] = {}  # (commit, side) -> its changed Python modules
        self._python_files: tuple[str | None, dict | None] = (None, None)  # (commit, its Python files)
        self._fetched: dict[str, bytes] = {}  # blobs read ahead (``prefetch``), each handed out once
        self._parse_errors: dict[tuple[str, str], bool] = {}  # (blob, language) -> its parse has errors
        self._last_parse: dict[tuple[str, str], SymbolTable] = {}  # (path, language) -> the last tree parsed there
        self._ast_dumps: tuple = (None, (None, None))  # (symbol key, both sides' ast dumps) of the last asked
        self._formatted_files: dict[tuple[str, str], bool] = {}  # (old blob, new blob) -> only reformatted

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

    def _upstream_file(self, commit: str, path: str) -> bytes | None:
        """The upstream file at ``path`` as of ``commit``; None where the commit has no such file."""
        try:
            return self.context.read_blob(f"{commit}:{path}")
        except Exception:  # no such path at the commit (or an unreadable clone): nothing to follow there
            return None

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

    def _parsed_table(self, blob: str | None, path: str | None):
        """``_table``, only where tree-sitter read the whole file without an error (None otherwise): for readers
        that follow names into other modules and must not guess through a broken parse."""
        table = self._table(blob, path)
        return table if table is not None and table.tree is not None and not table.tree.root_node.has_error else None

    def _python_sides_read(self, entry, symbol: TouchedSymbol, reader):
        """``(old text, new text, old reader, new reader)`` of a modified Python symbol: each side's definition
        text at its own indentation and ``reader(commit, path, blob)`` built at that side's commit (the old side
        at the first parent); None where a side or a reader cannot be had."""
        if language_for_path(symbol.path) != "python" or symbol.change != "modified" or not entry.commit.parents:
            return None
        sides = self._both_sides(symbol, parsed=True)
        if sides is None:
            return None
        readers = [reader(commit, path, blob) for commit, path, blob in
                   ((entry.commit.parents[0], symbol.old_path or symbol.path, symbol.old_blob),
                    (entry.commit.sha, symbol.path, symbol.new_blob))]
        if None in readers:
            return None
        texts = [" " * side.node.start_point[1] + side.node.text.decode("utf-8", errors="replace") for side in sides]
        return texts[0], texts[1], readers[0], readers[1]

    def _toplevel_changes(self, entry, symbol: TouchedSymbol):
        """``(the file's change, its side tables, changed lines outside definitions)`` of a touched file, each
        line ``(side, line, text)``; None where the commit's change or either side's source cannot be read."""
        change = _file_change(entry, symbol)
        if change is None:
            return None
        tables = self._side_tables(symbol)
        if any(t is None or t.source is None for t in tables):
            return None
        return change, tables, _changed_lines(change, symbol, tables[0], tables[1], outside_definitions=True)

    def _side_tables(self, symbol: TouchedSymbol):
        """The symbol tables of a touched symbol's file before and after the commit, each None where it cannot
        be read."""
        return self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path)

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

    def _both_sides(self, symbol: TouchedSymbol, parsed: bool = False):
        """``(before, after)``: a modified symbol's upstream definitions, both with their syntax nodes (and,
        with ``parsed``, both parsed without error); None where either side has none."""
        before = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                  symbol.old_lines)
        after = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if before is None or after is None or before.node is None or after.node is None:
            return None
        if parsed and (before.node.has_error or after.node.has_error):
            return None
        return before, after

    def _modified_sides(self, symbol: TouchedSymbol, language: str, parsed: bool = False):
        """``_both_sides(symbol, parsed)`` for a modified symbol of ``language`` (a path's language as
        ``language_for_path`` names it); None for any other symbol."""
        if symbol.change != "modified" or language_for_path(symbol.path) != language:
            return None
        return self._both_sides(symbol, parsed=parsed)

    def _branch_read(self, symbol: TouchedSymbol, name: str):
        """Rule ``revived-input``: the first branch condition of the symbol's new Python definition that reads
        the parameter ``name`` (``parameters.branch_read``); None where that side did not parse cleanly."""
        sides = self._modified_sides(symbol, "python", parsed=True)
        return branch_read(sides[1].node, name) if sides is not None else None

    def _forwarded_default(self, entry: EntryChanges, symbol: TouchedSymbol, name: str) -> list[Evidence] | None:
        """Rule ``forwarded-default``: where every path of the symbol's new Python definition either raises or
        returns a call, passing the parameter ``name`` on unchanged, of a helper this commit extracted the
        definition's old body into (``parameters.forwarded_only``), and each such helper takes it with no
        default and reads it in no branch condition: evidence of each call and helper parameter. None
        otherwise."""
        sides = self._modified_sides(symbol, "python", parsed=True)
        moves = getattr(self, "_range_moves", None)
        if sides is None or moves is None:
            return None
        key = (symbol.old_path or symbol.path, symbol.qualified_name)
        helpers = {}
        for move in moves.by_entry.get(entry.position, ()):
            if move.old != key or move.how != "extracted" or move.new[0] != symbol.path or "." in move.new[1]:
                continue
            helper = next((s for s in entry.symbols if (s.path, s.qualified_name) == move.new), None)
            if helper is not None:
                helpers[move.new[1]] = helper
        passed = forwarded_only(sides[1].node, name, set(helpers)) if helpers else None
        if not passed:
            return None
        evidence = []
        for callee, binding, use in passed:
            helper = helpers[callee]
            definition = self._definition(helper.new_blob, helper.path, helper.qualified_name, helper.new_lines)
            signature = self._upstream_signature(helper.new_blob, helper.path, helper.qualified_name,
                                                 helper.new_lines)
            if definition is None or definition.node is None or definition.node.has_error or signature is None:
                return None
            if isinstance(binding, str):  # passed by keyword
                param = signature.param(normalise_name(binding))
            else:  # passed by position: only where no starred parameter makes positions ambiguous
                plain = [p for p in signature.params if not p.name.startswith("*")]
                param = plain[binding] if binding < len(plain) and len(plain) == len(signature.params) else None
            if param is None or param.has_default or branch_read(definition.node, param.normalised) is not None:
                return None
            evidence += [Evidence(kind=Kind.BODY, side="upstream-new", path=symbol.path, line=use.line,
                                  quote=use.quote, symbol=symbol.name, subject=name,
                                  message=f"every path that does not raise returns {callee}(..., {name}, ...)"),
                         Evidence(kind=Kind.BODY, side="upstream-new",
                                  path=helper.path, line=param.line, quote=param.quote, symbol=helper.name,
                                  subject=param.name,
                                  message=f"{callee} takes {param.name} with no default and reads it in no branch")]
        return evidence

    def _renamed_locals(self, symbol: TouchedSymbol) -> list[tuple[str, str]] | None:
        """The local renamings that are the symbol's whole change, or None."""
        language = language_for_path(symbol.path)
        old = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name, symbol.old_lines)
        new = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if old is None or new is None or old.node is None or new.node is None or language is None:
            return None
        if old.node.has_error or new.node.has_error:
            return None
        if KIND_CLASS in (old.kind, new.kind):
            return None  # a name bound in a class's own body is its attribute (an enum's member), not a local
        return renamed_locals(old.node, new.node, language)

    def _declared_off_sides(self, symbol: TouchedSymbol, param_scope: set[str]):
        """Both sides of a modified C/C++ definition that parse, each with its reader of the parameters the
        tree declares not carried as absent (``branches.declared_off_expander``; None where it decides
        nothing); None when there is no such pair."""
        if language_for_path(symbol.path) != "cpp" or not param_scope or symbol.change != "modified":
            return None
        sides = self._both_sides(symbol)
        if sides is None or sides[0].node.has_error or sides[1].node.has_error:
            return None
        off = _scope_names(param_scope)
        return sides, tuple(branches.declared_off_expander(side.node, off) for side in sides)

    def _lacked_member_reading(self, symbol: TouchedSymbol, definition, param_scope: set[str]):
        """Rule ``lacked-member``: ``(members, read)`` when a modified C/C++ definition, ported by a definition
        in another language, reads members of a parameters struct (``params.m``) on both sides that it did not
        read at the scanned range's base and that no file of the tree names (normalised), and, with those
        members absent (``branches.declared_off_expander``, the declared parameters as ``declared-branch-off``
        reads them), is the same before and after (tokens, or ``declared-stores``); None otherwise."""
        if language_for_path(symbol.path) != "cpp" or symbol.change != "modified" \
                or language_for_path(definition.file) in (None, "cpp"):
            return None
        sides = self._both_sides(symbol, parsed=True)
        base_sha = getattr(self.context, "range_base", None)
        if sides is None or not base_sha:
            return None
        base_table = self._table(f"{base_sha}:{symbol.old_path or symbol.path}", symbol.old_path or symbol.path)
        at_base = [d for d in (base_table.definitions if base_table is not None and not base_table.fallback else ())
                   if d.node is not None and d.qualified_name == symbol.qualified_name]
        if len(at_base) != 1 or at_base[0].node.has_error:
            return None
        read_members = [branches.struct_members(side.node) for side in sides]
        candidates = (read_members[0].keys() & read_members[1].keys()) - branches.struct_members(at_base[0].node).keys()
        if not candidates:
            return None
        named = self._tree_names()
        if named is None:
            return None
        members = frozenset(m for m in candidates if m not in named)
        if not members:
            return None
        off = _scope_names(param_scope) if param_scope else set()
        read = sides, tuple(branches.declared_off_expander(side.node, off, members) for side in sides)
        if not all(read[1]):
            return None
        tokens = [comment_free_tokens(side.node, expand=e) for side, e in zip(*read)]
        if tokens[0] != tokens[1] \
                and not branches.same_stores(sides[0].node, read[1][0], sides[1].node, read[1][1]) \
                and not branches.same_reordered_declarations(sides[0].node, read[1][0], sides[1].node, read[1][1]):
            return None
        return sorted(read_members[1][m] for m in members), tokens[0] == tokens[1]

    def _tree_names(self) -> set[str] | None:
        """Every identifier-like word of every indexed file of the tree, normalised (``normalise_name``), read
        once; None when the index holds no sources."""
        if not hasattr(self, "_tree_names_read"):
            sources = self.index.tree_sources()
            self._tree_names_read = None if not sources else {
                normalise_name(w) for w in {w for data in sources.values()
                                            for w in re.findall(r"[A-Za-z_]\w*", data.decode("utf-8", errors="replace"))}}
        return self._tree_names_read

    def _declared_branches_off(self, symbol: TouchedSymbol, old: Signature, new: Signature,
                               read) -> list[tuple[str, str]] | None:
        """Rule ``declared-branch-off``: the renamings (``[]`` for none) under which a C/C++ definition is the
        same before and after once each side is read with the parameters the tree declares not carried absent
        (``read``, from ``_declared_off_sides``); None when it is not, or nothing is decided."""
        if read is None or not any(read[1]):
            return None
        sides, expand = read
        tokens = [comment_free_tokens(side.node, expand=e) for side, e in zip(sides, expand)]
        if tokens[0] == tokens[1] or [t for t in tokens[0] if t != "const"] == [t for t in tokens[1] if t != "const"]:
            return []
        return self._cpp_renaming(symbol, old, new, expand) or None

    @staticmethod
    def _declared_counts(expand) -> list[str]:
        """Rule ``declared-count-off``: the declared parameters either side's reader (``expand``, from
        ``_declared_off_sides``) read as a count (``branches._off_count``); empty when none was."""
        return sorted({name for e in expand if e is not None for name in e.counted})

    @staticmethod
    def _declared_stores(read) -> bool:
        """Rule ``declared-stores``: whether a C/C++ definition, each side read with the parameters the tree
        declares not carried absent (``read``, from ``_declared_off_sides``; something decided on both),
        stores the same values before and after (``branches.same_stores``)."""
        if read is None or not all(read[1]):
            return False
        sides, expand = read
        return branches.same_stores(sides[0].node, expand[0], sides[1].node, expand[1])

    def _cpp_renaming(self, symbol: TouchedSymbol, old: Signature, new: Signature,
                      expand=(None, None)) -> list[tuple[str, str]] | None:
        """Rule ``cpp-alpha-equivalence``: the renamings of a C/C++ definition's parameters and locals that,
        ``const`` aside, are its whole change (``cpp_renaming``), none read by a macro of its file; or None."""
        if language_for_path(symbol.path) != "cpp" or old.language != "cpp" or new.language != "cpp":
            return None
        sides = self._both_sides(symbol)
        if sides is None or sides[0].node.has_error or sides[1].node.has_error:
            return None
        macros: set[str] = set()
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            if table is None or table.tree is None:
                return None
            macros |= macro_read_names(table.tree.root_node)
        return cpp_renaming(sides[0].node, sides[1].node, [p.name.lstrip("*&") for p in old.params],
                            [p.name.lstrip("*&") for p in new.params], macros, expand)

    def _imported_definitions(self, entry: EntryChanges, files, name: str, asked: set[str]) -> set[str]:
        """The names among ``asked`` the Python ``files`` ((side, blob, path) of the commit) import under
        their own name (``from MODULE import NAME``) where MODULE, read at that side's commit (a package
        through its ``__init__.py``, re-exports followed), defines a function NAME at its top level, NAME
        not ``name``: a call of one binds that function's parameters (``renamed-binding``). A name whose
        import cannot be followed to such a definition is not among them."""
        found: set[str] = set()
        for side, blob, path in files:
            commit = entry.commit.sha if side == "new" else (entry.commit.parents[0] if entry.commit.parents else None)
            table = self._table(blob, path)
            if commit is None or table is None or table.tree is None:
                continue
            modules: dict[str, Module | None] = {}

            def module_at(importer: str, spec: str, commit=commit, modules=modules) -> Module | None:
                written = _module_path(importer, spec)
                for candidate in ((written, written[:-3] + "/__init__.py") if written.endswith(".py") else (written,)):
                    if not candidate:
                        continue
                    if candidate not in modules:
                        read = self._table(f"{commit}:{candidate}", candidate)
                        modules[candidate] = Module(candidate, read) if read is not None and read.tree is not None \
                            else None
                    if modules[candidate] is not None:
                        return modules[candidate]
                return None

            importer = Module(path, table)
            for imported in sorted(imported_others(table.tree.root_node, name) & asked):
                module, wanted = importer, imported
                for _ in range(4):  # the importer's binding, then up to three re-exports
                    if module is None or wanted == name:
                        break
                    if wanted in module.functions and module is not importer:
                        found.add(imported)
                        break
                    if wanted not in module.imports:
                        break
                    spec, wanted = module.imports[wanted]
                    module = module_at(module.path, spec)
        return found

    def _renamed_names(self, entry: EntryChanges, symbol: TouchedSymbol, old: Signature,
                       new: Signature) -> tuple[list[tuple[str, str]], bool] | None:
        """The local and parameter renamings that are the symbol's whole change
        (``renamed_names``), with every call in the symbol's file or the
        entry's other owned files that passed a renamed parameter by keyword
        passing the new name the same value, and no use of a renamed attribute's
        old name left there; or None. With it, whether a keyword call or an
        attribute had to follow (``renamed-binding`` rather than
        ``cosmetic-parameter-renaming``)."""
        language = language_for_path(symbol.path)
        sides = self._both_sides(symbol)
        if sides is None or language is None:
            return None
        before, after = sides
        if not local_errors_alike(before.node, after.node):
            return None
        trees = []  # (side, root) of every file the commit owns that calls could bind from
        if language == "python":
            files = {("old", symbol.old_blob, symbol.old_path or symbol.path), ("new", symbol.new_blob, symbol.path)}
            files |= {(side, blob, path) for change in entry.owned_changes
                      for side, blob, path in (("old", change.old_blob, change.old_path),
                                               ("new", change.new_blob, change.new_path))
                      if path and language_for_path(path) == "python"}
            for side, blob, path in sorted(files, key=lambda f: (f[0], f[2] or "", f[1] or "")):
                table = self._table(blob, path)
                if table is None or table.tree is None:
                    return None  # a file that cannot be read could bind by keyword
                trees.append((side, table.tree.root_node))

        keyword_calls: list = []
        # a call of another definition, defined in these files or imported under its own name, binds its own
        # parameters: a keyword of a renamed name it passes is no binding of this definition's
        others = _other_definitions(trees, symbol.name)
        aliases = {n for _, root in trees for n in import_aliases(root, symbol.name)} if language == "python" else set()
        others -= aliases

        def same_bindings(moved: list[tuple[str, str]]) -> bool:
            names = {n for pair in moved for n in pair}
            renaming = dict(moved)
            if language == "python":
                # an imported callee passing a renamed name: followed to its module only then (read on its own)
                called = {_launched_name(callee) for side, root in trees
                          for callee, _, _ in keyword_bindings(root, names)} - others - aliases - {symbol.name}
                if called:
                    others.update(self._imported_definitions(entry, files, symbol.name, called))
            was = _of_this(sorted(b for side, root in trees if side == "old"
                                  for b in keyword_bindings(root, names, renaming)), others)
            now = _of_this(sorted(b for side, root in trees if side == "new" for b in keyword_bindings(root, names)),
                           others)
            keyword_calls.extend(was)
            if was != now and was:
                # a value read from a caller's local renamed with it throughout the caller is the same value
                callers = caller_renamings([(side, root) for side, root in trees if re.search(
                    rf"\b{re.escape(symbol.name)}\b", root.text.decode("utf-8", errors="replace"))], renaming)
                was = _of_this(sorted(b for side, root in trees if side == "old"
                                      for b in keyword_bindings(root, names, renaming, callers)), others)
            return was == now

        found = renamed_names(before.node, after.node, language, [p.name.lstrip("*") for p in old.params],
                              [p.name.lstrip("*") for p in new.params], same_bindings)
        if found is None:
            return None
        for a, b in found:
            if not a.startswith("."):
                continue
            # An attribute renamed on the method's first parameter: no use of
            # the old name may be left in the files the commit owns, and every
            # old use must have become a use of the new one.
            count = {side: Counter(n for s, root in trees if s == side for n in attribute_names(root))
                     for side in ("old", "new")}
            if count["new"][a[1:]] or count["old"][a[1:]] + count["old"][b[1:]] != count["new"][b[1:]]:
                return None
        return found, bool(keyword_calls) or any(a.startswith(".") for a, _ in found)

    def _followed_keywords(self, entry: EntryChanges, symbol: TouchedSymbol,
                           rule=followed_keywords) -> list[tuple[str, ...]] | None:
        """``followed_keywords`` (or ``rule``: ``dropped_keywords``) of a Python definition against the
        files the entry owns; None when a side or a file cannot be read."""
        if language_for_path(symbol.path) != "python":
            return None
        sides = self._both_sides(symbol)
        if sides is None or sides[0].node is None or sides[1].node is None \
                or not local_errors_alike(sides[0].node, sides[1].node):
            return None
        files = {("old", symbol.old_blob, symbol.old_path or symbol.path), ("new", symbol.new_blob, symbol.path)}
        files |= {(side, blob, path) for change in entry.owned_changes
                  for side, blob, path in (("old", change.old_blob, change.old_path),
                                           ("new", change.new_blob, change.new_path))
                  if path and language_for_path(path) == "python"}
        trees = []
        for side, blob, path in sorted(files, key=lambda f: (f[0], f[2] or "", f[1] or "")):
            table = self._table(blob, path)
            if table is None or table.tree is None:
                return None
            trees.append((side, table.tree.root_node))
        return rule(sides[0].node, sides[1].node, trees)

    def _launcher_renaming(self, symbol: TouchedSymbol) -> dict[str, str] | None:
        """Rule ``renamed-binding``: the consistent renaming of a Python definition's locals that, with
        the keywords its calls pass renamed alike, is its whole change (``caller_renaming``); else None."""
        if language_for_path(symbol.path) != "python":
            return None
        sides = self._both_sides(symbol)
        if sides is None or sides[0].node is None or sides[1].node is None:
            return None
        return caller_renaming(sides[0].node, sides[1].node, None) or None

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

    def _python_sides(self, symbol: TouchedSymbol, parsed: bool = False) -> tuple[str, str, str, str] | None:
        """A touched Python definition's text before and after (with ``parsed``, both parsed without error), with
        its file's source on each side; None where a side cannot be read (a rule reading the module around the
        definition needs all four)."""
        if language_for_path(symbol.path) != "python":
            return None
        tables = self._side_tables(symbol)
        sides = self._both_sides(symbol, parsed=parsed)
        if sides is None or any(t is None or not t.source for t in tables):
            return None
        old_source, new_source = (t.source.decode("utf-8", errors="replace") for t in tables)
        return definition_text(sides[0].node), definition_text(sides[1].node), old_source, new_source

    def _equal_integer_values(self, symbol: TouchedSymbol) -> list[tuple[str, str]] | None:
        """Rule ``equal-integer-value``: the expression pairs of a modified Python definition that compute the
        same integer on both sides (``integer_values.equal_integer_values``); None otherwise."""
        if symbol.change != "modified":
            return None
        sides = self._python_sides(symbol, parsed=True)
        return equal_integer_values(sides[0], sides[1]) if sides is not None else None

    def _module_aliases(self, symbol: TouchedSymbol) -> list[str]:
        """Rule ``module-alias``: the module aliases that, written out, make the two sides of a Python definition
        the same program (``form.same_modulo_module_aliases``); empty otherwise."""
        sides = self._python_sides(symbol)
        return [] if sides is None else same_modulo_module_aliases(*sides)

    def _imported_names(self, symbol: TouchedSymbol) -> list[str]:
        """Rule ``imported-alias``: the names bound by module-level from-imports that, written out as their
        imports, make the two sides of a Python definition the same program (``form.same_modulo_imported_names``);
        empty otherwise."""
        sides = self._python_sides(symbol)
        return [] if sides is None else same_modulo_imported_names(*sides)

    def _same_python_ast_without_logging(self, symbol: TouchedSymbol) -> bool:
        """True when a Python definition is the same program on both sides once statements that only log are
        dropped, the module's loggers read from both sides of its file (``log-only``)."""
        sides = self._python_sides(symbol)
        if sides is None:
            return False
        before, after, old_source, new_source = sides
        return same_without_logging(before, after, module_loggers(old_source, new_source))

    def _same_without_assert_messages(self, symbol: TouchedSymbol) -> bool:
        """Rule ``assert-message``: a Python definition that is the same program once its asserts' messages,
        which call nothing, are erased (``form.same_without_assert_messages``)."""
        sides = self._python_sides(symbol)
        return sides is not None and same_without_assert_messages(sides[0], sides[1])

    def _refused_architectures(self, symbol: TouchedSymbol) -> list[str]:
        """Rule ``refused-architecture``: the architectures (``sm100``) a modified C/C++ definition refused on its
        old side (``branches.refused_architectures``) whose tests, read as false on both sides
        (``branches.refused_arch_expander``), leave its tokens the same, check messages erased
        (``form.erased_cpp_messages``); empty otherwise."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None or sides[0].node.has_error or sides[1].node.has_error:
            return []
        named, required = branches.refused_architectures(sides[0].node)
        if not named and required is None:
            return []

        def refused(arch: str) -> bool:
            return arch in named or (required is not None and arch not in required)

        expand = [branches.refused_arch_expander(side.node, refused) for side in sides]
        if not any(expand):
            return []
        tokens = [comment_free_tokens(side.node, expand=e) for side, e in zip(sides, expand)]
        if tokens[0] != tokens[1]:
            erased = [erased_cpp_messages(t) for t in tokens]
            if any(e is None for e in erased) or erased[0][0] != erased[1][0]:
                return []
        decided = set(named) | {arch for side in sides for arch in branches.tested_architectures(side.node)
                                if refused(arch)}
        return sorted(f"sm{a}" for a in decided)

    def _same_without_binding_docs(self, symbol: TouchedSymbol) -> bool:
        """Rule ``binding-doc``: a modified binding call (an op schema symbol) whose tokens are the same once
        its literal documentation arguments are erased (``form.same_without_binding_docs``)."""
        if symbol.kind != KIND_OP_SCHEMA:
            return False
        sides = self._modified_sides(symbol, "cpp")
        return sides is not None and same_without_binding_docs(
            sides[0].node.text.decode("utf-8", errors="replace"), sides[1].node.text.decode("utf-8", errors="replace"))

    def _same_without_cpp_assert_messages(self, symbol: TouchedSymbol) -> bool:
        """Rule ``assert-message`` (C/C++): a modified C/C++ definition whose tokens are the same once its
        assertions' literal messages are erased (``form.same_without_cpp_assert_messages``)."""
        sides = self._modified_sides(symbol, "cpp")
        return sides is not None and same_without_cpp_assert_messages(
            sides[0].node.text.decode("utf-8", errors="replace"), sides[1].node.text.decode("utf-8", errors="replace"))

    def _inlined_helpers(self, entry: EntryChanges, symbol: TouchedSymbol) -> list[str]:
        """Rule ``inlined-helper``: the helpers whose calls, written back as the expression each returns, make
        the two sides of a Python definition the same program (``inlining.inlined_helpers``); empty otherwise.
        A helper's module is read at the commit."""
        sides = self._python_sides(symbol)
        if sides is None or symbol.old_path not in (None, symbol.path) or "." in symbol.qualified_name:
            return []

        def read(path: str) -> str | None:
            found = self._upstream_file(entry.commit.sha, path)
            return None if found is None else found.decode("utf-8", errors="replace")

        return inlined_helpers(*sides, symbol.path, read)

    def _equivalent_decorators(self, symbol: TouchedSymbol) -> list[str]:
        """Rule ``documented-equivalent-decorator``: the decorators a Python definition replaced by the
        equivalent their library documents, when that is its only change (``spellings.equivalent_decorators``);
        empty otherwise."""
        sides = self._python_sides(symbol)
        if sides is None or symbol.old_path not in (None, symbol.path):
            return []
        return equivalent_decorators(*sides, symbol.path, symbol.qualified_name)

    def _equivalent_calls(self, symbol: TouchedSymbol) -> list[str]:
        """Rule ``documented-equivalent-call``: the calls a Python definition respelled as the call their
        library's source defines them to be, when that is its only change (``library_calls.equivalent_calls``);
        empty otherwise."""
        sides = self._python_sides(symbol)
        if sides is None or symbol.old_path not in (None, symbol.path):
            return []
        return equivalent_calls(*sides, symbol.path, symbol.qualified_name)

    def _same_python_ast_without_passes(self, symbol: TouchedSymbol) -> bool:
        """True when a Python definition parses to the same ``ast`` on both sides once every ``pass`` in a
        block holding another statement is dropped (``redundant-pass``)."""
        if language_for_path(symbol.path) != "python":
            return False
        old = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                               symbol.old_lines)
        new = self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
        if old is None or new is None or old.node is None or new.node is None:
            return False
        before, after = _python_passless_ast_dump(old.node), _python_passless_ast_dump(new.node)
        return before is not None and before == after

    def _alternative_items(self, symbol: TouchedSymbol, dropped, kept, port: Port):
        """The structural deltas from one alternative definition of ``symbol`` (``dropped``, old side) to
        another (``kept``, new side), placed against ``port`` (``removed-alternative``); None where a side
        cannot be read."""
        before = self._upstream_signature(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                          (dropped.start_line, dropped.end_line))
        after = self._upstream_signature(symbol.new_blob, symbol.path, symbol.qualified_name,
                                         (kept.start_line, kept.end_line))
        mine = port.definition.signature
        if before is None or after is None or mine is None:
            return None
        if len(mine.params) == len(before.params) != len(after.params):
            return None  # the port takes as many parameters as the dropped alternative: it may be that one, renamed
        return compare(before, after, mine, self.index, upstream=self.upstream)

    def _derivation(self, entry: EntryChanges, symbol: TouchedSymbol, new: Signature, name: str,
                    kernel: str | None = None, old: bool = False, positional: bool = False) -> Derivation | None:
        """How upstream's new launches of this kernel (or of ``kernel``, launched from this symbol) compute
        the argument for parameter ``name``: the first launch found in a Python file the commit changed,
        or None when no launch passes it. ``old``: how this symbol's old side computed the argument it
        passed ``kernel`` by keyword (Python only; None for anything else). ``positional``: a launch argument
        passed by position is followed too (``positional-derived-argument``: the caller has found the port's
        launch still binding what upstream's old launch bound)."""
        if old:
            return self._old_launch_derivation(symbol, kernel, name, positional)
        if kernel is not None and language_for_path(symbol.path) == "cpp":
            return self._cpp_launcher_derivation(symbol, kernel.split(".")[-1].split("::")[-1], name)
        if kernel is not None:
            launched, written = kernel.split(".")[-1], name
            position = self._launched_position(entry, symbol, launched, name)
        else:
            param = new.param(name)
            if param is None or not new.is_kernel:
                return None
            if new.language == "cpp":
                return self._cpp_derivation(symbol, new, name)
            launched, position, written = symbol.name, param.position, param.name
        for path, table in self._new_python_tables(entry, symbol):
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
                    derived = replace(derive(definition.node, expression, received), argument=argument, path=path)
                    if kernel is not None and keyword is None and not derived.allocations and not positional:
                        # A launch argument found by its position is followed only to a buffer the
                        # launching function allocates (``allocated-buffer-parameter``); a positional
                        # value is otherwise the launch's interface, as it always was.
                        return None
                    return derived
        return None

    def _old_launch_derivation(self, symbol: TouchedSymbol, kernel: str | None, name: str,
                               positional: bool = False) -> Derivation | None:
        """How the old side of Python launcher ``symbol`` computed the keyword argument it passed ``kernel``'s
        parameter ``name``; None when it is not such a launcher, passes it positionally (unless ``positional``:
        then by its position in the old file's kernel) or differently at two launches."""
        if kernel is None or language_for_path(symbol.path) != "python" or not symbol.old_blob:
            return None
        path = symbol.old_path or symbol.path
        table = self._table(symbol.old_blob, path)
        if table is None or table.fallback:
            return None
        launched = kernel.split(".")[-1]
        for definition in table.definitions:
            if definition.node is None or definition.qualified_name != symbol.qualified_name:
                continue
            position = next((parameter_position(d.node, name) for d in table.definitions
                             if d.node is not None and d.kind == KIND_TRITON_KERNEL and d.name == launched),
                            None) if positional else None
            expression, received = launch_argument(definition.node, launched, name, position)
            if expression is None or expression.parent is None:
                return None
            keyword = expression.parent.type == "keyword_argument"
            if not keyword and position is None:
                return None
            if len(set(launch_argument_texts(definition.node, launched, name))) > 1:
                return None
            written = expression.parent.child_by_field_name("name").text.decode("utf-8", errors="replace") \
                if keyword else name
            argument = f"{written}=" + expression.text.decode("utf-8", errors="replace")
            return replace(derive(definition.node, expression, received), argument=argument, path=path)
        return None

    def _instance_computed(self, symbol: TouchedSymbol, name: str, side: str) -> tuple[str, ...] | None:
        """How the methods of ``symbol``'s class compute its parameter ``name`` on ``side`` (``old`` or
        ``new``) of the commit, quoted (``instance_computed``); None for anything but a Python method of a
        top-level class that only its own methods call with values they compute."""
        parts = symbol.qualified_name.split(".")
        if len(parts) != 2 or language_for_path(symbol.path) != "python":
            return None
        old = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new = self._table(symbol.new_blob, symbol.path)
        if old is None or new is None or old.fallback or new.fallback or old.tree is None or new.tree is None:
            return None
        here, there = (old, new) if side == "old" else (new, old)
        return instance_computed(here.tree.root_node, parts[0], parts[1], name, there.tree.root_node)

    def _internal_parameter(self, entry: EntryChanges, symbol: TouchedSymbol, new: Signature, name: str,
                            port) -> tuple[str, ...] | None:
        """Rule ``internal-parameter``: the declarations upstream's callers of C++ function ``symbol`` pass its
        new runtime parameter ``name`` from, when every caller it had (in the C++ files the commit changes,
        which hold every caller a compiler would reject otherwise) keeps its own parameters and passes a local it
        declares, and no tree definition other than a port calls the port's function ``port``; else None."""
        if language_for_path(symbol.path) == "cpp" and new.is_kernel:
            return self._copied_launcher_parameter(symbol, new, name, port)
        if language_for_path(symbol.path) != "cpp" or new.is_kernel or name not in new.runtime_param_names:
            return None
        index = new.runtime_param_names.index(name)
        files = {(c.old_blob, c.new_blob, c.old_path or c.path, c.path) for c in entry.owned_changes if c.new_blob}
        files.add((symbol.old_blob, symbol.new_blob, symbol.old_path or symbol.path, symbol.path))
        quotes: list[str] = []
        for old_blob, new_blob, old_path, path in sorted(files, key=lambda f: f[3]):
            if language_for_path(path) != "cpp":
                continue
            before, after = self._table(old_blob, old_path) if old_blob else None, self._table(new_blob, path)
            if after is None or after.fallback:
                return None
            for definition in after.definitions:
                if definition.node is None or definition.qualified_name == symbol.qualified_name:
                    continue
                text = definition.node.text.decode("utf-8", errors="replace")
                mine = signature_of(definition, after.source, path)
                found = internal_argument(text, symbol.name, index, set(mine.param_names))
                if found is None:
                    continue
                was = next((d for d in (before.definitions if before is not None and not before.fallback else ())
                            if d.qualified_name == definition.qualified_name and d.node is not None), None)
                if was is None:
                    continue  # a caller new in this commit: a new sibling, decided on its own
                if found is False or signature_of(was, before.source, old_path).param_names != mine.param_names:
                    return None
                quotes += [q for q in found if q not in quotes]
        if not quotes or not self._called_only_from_ports(port):
            return None
        return tuple(quotes)

    def _computed_internal_parameter(self, entry: EntryChanges, symbol: TouchedSymbol, new: Signature, name: str,
                                     port, chain: tuple = (), every_file: bool = False) -> tuple[str, ...] | None:
        """Rule ``computed-internal-parameter``: the bindings upstream's callers of Python function ``symbol``
        (no kernel) give its new parameter ``name``, when every call in the Python files the commit changes
        (which hold every call that can bind a parameter new in it) can be read, some binds it, each binding
        one binds a constant or a name that is no parameter of its caller, or hands on as it is a parameter
        its caller (a definition the commit modifies, upstream's and the tree's) gained in this commit and
        that is itself computed-internal (``chain``: the forwarders already followed, at most three), and lies
        in a function of the row's own files or one new in the commit, and the tree calls the port's function
        ``port`` (outside tests) only from definitions that port upstream ones; else None. ``every_file``: the
        parameter is not new (a forwarder already took it), so callers in files the commit leaves alone may
        bind it: every Python file upstream holds at the new side is read, each binding caller in a file the
        row claims."""
        if language_for_path(symbol.path) != "python" or new.is_kernel:
            return None
        param = new.param(name)
        if param is None or param.constexpr or param.name.startswith("*"):
            return None
        names = new.param_names
        index = names.index(name)
        position = -1 if any(n.startswith("*") for n in names[:index]) else index
        owned = {c.path for c in entry.owned_changes if c.path}
        files = {(c.old_blob, c.new_blob, c.old_path or c.path, c.path)
                 for c in list(entry.commit.changes) + list(entry.owned_changes) if c.new_blob and c.path}
        files.add((symbol.old_blob, symbol.new_blob, symbol.old_path or symbol.path, symbol.path))
        if every_file:
            every = self._upstream_python_files(entry.commit.sha)
            if every is None:
                return None
            changed = {f[3] for f in files}
            files |= {(blob, blob, path, path) for path, blob in every.items() if path not in changed}
            rows = [self.context.matrix.row(r) for r in entry.rows]
            owned |= {path for path in every if any(row.claims_path(path) for row in rows)}
        quotes: list[str] = []
        for old_blob, new_blob, old_path, path in sorted(files, key=lambda f: f[3] or ""):
            if not path or language_for_path(path) != "python":
                continue
            if every_file and old_blob == new_blob and symbol.name.encode() not in self._read_blob(new_blob):
                continue  # an unchanged file that never names the function binds nothing
            after = self._table(new_blob, path)
            if after is None or after.fallback or after.tree is None:
                return None
            bindings = computed_bindings(after.tree.root_node, symbol.name, name, position)
            if bindings is None:
                return None
            before = self._table(old_blob, old_path) if old_blob else None
            if before is not None and before.fallback:
                return None
            known = {d.qualified_name for d in before.definitions} if before is not None else set()
            for caller, bound, handed in bindings:
                if not bound:
                    if not param.has_default:
                        return None
                    continue
                if path not in owned and any(caller == k or caller.startswith(k + ".") for k in known):
                    return None  # a caller outside the row's files choosing it: an input of its own code
                quote = f"{caller}: {bound}"
                if handed:
                    # a forwarder handing on a parameter of its own: only one that gained it in this commit
                    # and whose own callers bind it internally, by the same rule
                    found = self._forwarded_internal(entry, path, caller, bound,
                                                     chain + ((symbol.path, symbol.qualified_name),))
                    if found is None:
                        return None
                    quote = f"{caller}: {bound}, itself bound only by {'; '.join(found[:2])}"
                if quote not in quotes:
                    quotes.append(quote)
        if not quotes or not self._python_called_only_from_ports(port):
            return None
        return tuple(quotes)

    def _forwarded_internal(self, entry: EntryChanges, path: str, caller: str, name: str,
                            chain: tuple) -> tuple[str, ...] | None:
        """``computed-internal-parameter`` through a forwarder: the bindings of parameter ``name`` of ``caller``
        (a qualified name in upstream's new ``path``) when ``caller`` is a definition this commit modifies that
        gained ``name`` in it (or already took it: then its callers are read in every upstream file at the new
        side), the tree ports it, and every port of it is itself decided computed-internal for ``name``; None
        otherwise (a new or unported forwarder, a chain longer than three or one that comes back)."""
        if len(chain) > 3 or (path, caller) in chain:
            return None
        forwarder = next((s for s in entry.symbols if s.path == path and s.qualified_name == caller
                          and s.change == "modified"), None)
        if forwarder is None:
            return None
        before = self._upstream_signature(forwarder.old_blob, forwarder.old_path or forwarder.path,
                                          forwarder.qualified_name, forwarder.old_lines)
        after = self._upstream_signature(forwarder.new_blob, forwarder.path, forwarder.qualified_name,
                                         forwarder.new_lines)
        if before is None or after is None or name not in after.param_names:
            return None
        took = name in before.param_names
        ports = self._ports(forwarder, {p for p in (forwarder.path, forwarder.old_path) if p})
        if not ports:
            return None
        quotes: list[str] = []
        for port in ports:
            found = self._computed_internal_parameter(entry, forwarder, after, name, port.definition, chain,
                                                      every_file=took)
            if found is None:
                return None
            quotes += [q for q in found if q not in quotes]
        return tuple(quotes)

    def _upstream_python_files(self, commit: str) -> dict[str, str] | None:
        """Every Python file upstream holds at ``commit``: path -> blob, read from its tree objects (the last
        commit asked kept); None where a tree cannot be read."""
        if self._python_files[0] == commit:
            return self._python_files[1]
        found: dict[str, str] = {}
        pending = [("", f"{commit}^{{tree}}")]
        try:
            while pending:
                prefix, tree = pending.pop()
                data = self.context.read_blob(tree)
                at = 0
                while at < len(data):
                    space = data.index(b" ", at)
                    nul = data.index(b"\0", space)
                    mode, entry_name = data[at:space], data[space + 1:nul].decode("utf-8", errors="replace")
                    sha = data[nul + 1:nul + 21].hex()
                    at = nul + 21
                    path = prefix + entry_name
                    if mode == b"40000":
                        pending.append((path + "/", sha))
                    elif mode.startswith(b"100") and language_for_path(path) == "python":
                        found[path] = sha
        except Exception:  # an unreadable tree: nothing can be said of the files it holds
            found = None
        self._python_files = (commit, found)
        return found

    def _removed_internal_parameter(self, symbol: TouchedSymbol, new: Signature, name: str, port) -> bool:
        """Rule ``removed-internal-parameter``: True when ``symbol`` is a Python function or method, no kernel,
        and the tree calls its port ``port``, outside tests, only from definitions that port upstream ones."""
        return language_for_path(symbol.path) == "python" and not new.is_kernel and not name.startswith("*") \
            and self._python_called_only_from_ports(port)

    def _python_called_only_from_ports(self, port) -> bool:
        """True when every mention of the Python tree definition ``port`` by name outside tests is its own
        definition, an import, or a call inside a tree definition that ports an upstream one
        (``removed-internal-parameter``)."""
        sources = self.index.tree_sources()
        if sources is None:
            return False
        ported = {(d.file, d.start_line) for d in self.index.ported_definitions()}
        texts = {path: source.decode("utf-8", errors="replace") for path, source in sources.items()
                 if not is_test_path(path)}
        # A name an import binds the function under is the function too (``import f as g``).
        renamed = re.compile(rf"(?<![\w]){re.escape(port.name)}\s+as\s+(\w+)")
        called = {port.name} | {m.group(1) for text in texts.values() for m in renamed.finditer(text)}
        return all(self._python_name_called_only_from_ports(texts, ported, port, name) for name in sorted(called))

    def _python_name_called_only_from_ports(self, texts: dict, ported: set, port, called: str) -> bool:
        """True when every mention of the name ``called`` in the non-test tree ``texts`` is ``port``'s own
        definition, an import, a comment, words of a docstring, or a call inside a tree definition that ports an
        upstream one."""
        mention = re.compile(rf"(?<![\w]){re.escape(called)}(?!\w)")
        for path, text in texts.items():
            if called not in text:
                continue
            if language_for_path(path) != "python":
                return False
            records = self.index.definitions_in_file(path) or []
            documented = _docstring_spans(text)
            for found in mention.finditer(text):
                if any(start <= found.start() < end for start, end in documented):
                    continue  # a docstring's words, never evaluated
                line = text.count("\n", 0, found.start()) + 1
                start = text.rfind("\n", 0, found.start()) + 1
                end = text.find("\n", found.end())
                whole = text[start:end if end >= 0 else len(text)].strip()
                if whole.startswith("#") or whole.startswith("from ") or whole.startswith("import "):
                    continue
                if whole.startswith(("def ", "async def ")) and path == port.file and line == port.start_line:
                    continue
                if not re.match(r"\s*\(", text[found.end():]):
                    return False
                around = [d for d in records if d.start_line <= line <= d.end_line]
                if not around:
                    return False
                innermost = max(around, key=lambda d: d.start_line)
                if (innermost.file, innermost.start_line) not in ported:
                    return False
        return True

    def _copied_launcher_parameter(self, symbol: TouchedSymbol, new: Signature, name: str,
                                   port) -> tuple[str, ...] | None:
        """Rule ``copied-launcher-parameter``: the launchers of CUDA kernel ``symbol`` that pass its new runtime
        parameter ``name``, when every function of upstream's file that launched it keeps its own parameters,
        every launch on the new side passes it (a launcher new in the commit is a sibling), and the tree uses the
        port's kernel ``port`` only by launches inside functions of the port's own file that have those
        names and parameters (copies of upstream's launchers); else None."""
        if name not in new.runtime_param_names:
            return None
        index = new.runtime_param_names.index(name)
        before = self._table(symbol.old_blob, symbol.old_path or symbol.path) if symbol.old_blob else None
        after = self._table(symbol.new_blob, symbol.path)
        if before is None or after is None or before.fallback or after.fallback:
            return None
        was, now = cpp_kernel_uses(before.source, symbol.name, before.tree), cpp_kernel_uses(after.source, symbol.name, after.tree)
        if not was or not now or any(count is None for _, _, count in was + now):
            return None
        launchers = {(function, parameters) for function, parameters, _ in was}
        if not launchers <= {(function, parameters) for function, parameters, _ in now} \
                or any(count <= index for _, _, count in now):
            return None  # a launcher changed its own parameters, or a launch does not pass it (new ones are siblings)
        sources = self.index.tree_sources()
        if sources is None:
            return None
        mention = re.compile(rf"(?<![\w.>:]){re.escape(port.name)}\b".encode())
        for path, source in sources.items():
            if is_test_path(path) or not mention.search(source):
                continue
            if language_for_path(path) != "cpp":
                return None
            uses = cpp_kernel_uses(source, port.name)
            if uses is not None and path != port.file and not uses:
                continue  # named only in comments or literals
            if uses is None or path != port.file or any(count is None or (function, parameters) not in launchers
                                   for function, parameters, count in uses):
                return None
        return tuple(sorted({function for function, _ in launchers}))

    def _called_only_from_ports(self, port) -> bool:
        """True when every call of the tree definition ``port`` by name lies in a tree definition that
        ports an upstream one (``internal-parameter``); a call at file scope or in any other definition,
        or a tree that cannot be read, answers False."""
        sources = self.index.tree_sources()
        if sources is None:
            return False
        ported = {(d.file, d.start_line) for d in self.index.ported_definitions()}
        call = cpp_call(port.name)
        for path, source in sources.items():
            text = source.decode("utf-8", errors="replace")
            if port.name not in text:
                continue
            records = self.index.definitions_in_file(path) or []
            for found in call.finditer(text):
                line = text.count("\n", 0, found.start()) + 1
                around = [d for d in records if d.start_line <= line <= d.end_line]
                if not around:
                    return False
                innermost = max(around, key=lambda d: d.start_line)
                if (innermost.file, innermost.start_line) == (port.file, port.start_line) and line == port.start_line:
                    continue  # the definition itself
                if (innermost.file, innermost.start_line) not in ported:
                    return False
        return True

    def _cpp_launcher_derivation(self, symbol: TouchedSymbol, kernel: str, name: str) -> Derivation | None:
        """How C++ launcher ``symbol`` (ported: it is being compared) passes kernel ``kernel``'s new
        parameter ``name``, the kernel defined in the same file upstream: see ``_cpp_derivation``."""
        table = self._table(symbol.new_blob, symbol.path)
        if table is None or table.fallback:
            return None
        kernels = [d for d in table.definitions if d.name == kernel and d.node is not None]
        mine = [d for d in table.definitions if d.qualified_name == symbol.qualified_name and d.node is not None]
        if len(kernels) != 1 or len(mine) != 1:
            return None
        runtime = signature_of(kernels[0], table.source, symbol.path).runtime_param_names
        if name not in runtime:
            return None
        return self._cpp_fixed(table, mine[0], kernel, runtime.index(name), name, symbol.path)

    def _cpp_fixed(self, table, definition, kernel: str, index: int, name: str, path: str):
        """``cpp_launch_constant`` of ``definition`` as a Derivation: derived, not derived, or None (no launch)."""
        text = definition.node.text.decode("utf-8", errors="replace")
        params = set(signature_of(definition, table.source, path).param_names)
        found = cpp_launch_constant(text, kernel, index, params)
        if found is None:
            return None
        if found is False:
            return Derivation(f"{name}=?", False, (), (), f"{definition.name} passes {name} a value it does not "
                              "fix itself", path)
        argument, declaration, literal = found
        line = definition.start_line + next((i for i, t in enumerate(text.splitlines()) if declaration in t), 0)
        return Derivation(f"{name}={argument}", True, (Step(line, declaration),), (literal,), path=path,
                          constants=(f"{declaration} in {definition.name}",))

    def _cpp_derivation(self, symbol: TouchedSymbol, new: Signature, name: str) -> Derivation | None:
        """How the ported launchers of C++ kernel ``symbol`` (upstream's new side of its file) pass new
        parameter ``name``: derived when every one of them that launches it fixes the value itself (a literal,
        or a local bound once from one, ``cpp_launch_constant``); not derived when one passes anything else;
        None when no ported launcher of the file launches it. Launchers no anchor ports are not the port's."""
        if name not in new.runtime_param_names:
            return None
        index = new.runtime_param_names.index(name)
        table = self._table(symbol.new_blob, symbol.path)
        if table is None or table.fallback:
            return None
        fixed = None
        for definition in table.definitions:
            if definition.node is None or definition.kind in (KIND_TRITON_KERNEL, KIND_CLASS) \
                    or definition.qualified_name == symbol.qualified_name:
                continue
            if not self.index.ports_for(self.upstream, {symbol.path}, definition.name, definition.qualified_name):
                continue
            derived = self._cpp_fixed(table, definition, symbol.name, index, name, symbol.path)
            if derived is not None and not derived.derived:
                return derived
            fixed = fixed or derived
        return fixed

    def _new_python_tables(self, entry: EntryChanges, symbol: TouchedSymbol) -> Iterator[tuple[str, SymbolTable]]:
        """The parsed new side of every Python file the commit owns, with the symbol's own file first and the
        rest by path; a file that cannot be read, or was read only by the fallback reader, is skipped."""
        files = {(c.new_blob, c.path) for c in entry.owned_changes if c.new_blob}
        files.add((symbol.new_blob, symbol.path))
        for blob, path in sorted(files, key=lambda f: (f[1] != symbol.path, f[1])):
            if language_for_path(path) != "python":
                continue
            table = self._table(blob, path)
            if table is None or table.fallback:
                continue
            yield path, table

    def _keyword_free(self, entry: EntryChanges, symbol: TouchedSymbol, names: set[str]) -> bool:
        """No keyword argument named one of ``names`` in any Python file the commit owns, old side or new
        (a file that cannot be read could bind one, so it answers False)."""
        files = {(symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)}
        files |= {(blob, path) for change in entry.owned_changes
                  for blob, path in ((change.old_blob, change.old_path), (change.new_blob, change.new_path))}
        for blob, path in sorted(files, key=lambda f: (f[1] or "", f[0] or "")):
            if not blob or not path or language_for_path(path) != "python":
                continue
            table = self._table(blob, path)
            if table is None or table.tree is None or keyword_bindings(table.tree.root_node, names):
                return False
        return True

    def _launched_position(self, entry: EntryChanges, symbol: TouchedSymbol, kernel: str, name: str) -> int | None:
        """The position of parameter ``name`` of Python kernel ``kernel`` as upstream's new side defines it
        in a file the commit changed (so a launch passing it positionally can be followed), or None."""
        for _path, table in self._new_python_tables(entry, symbol):
            for definition in table.definitions:
                if definition.node is not None and definition.kind == KIND_TRITON_KERNEL and definition.name == kernel:
                    return parameter_position(definition.node, name)
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

    def _form_only_verdict(self, rules: str | tuple[str, ...], symbol: TouchedSymbol, kept: str, said: str,
                           evidence: list[Evidence], shown: str | None = None,
                           subject: str | None = None) -> SymbolVerdict:
        """NOT_APPLICABLE (``kept``: cosmetic or not-carried) for a body change proved to be nothing the port
        must follow: ``said`` is the proof, up to the verdict it leads to; ``shown``, when given, the fact it
        cites at the new definition."""
        cited = [new_side_evidence(symbol, Kind.COSMETIC, shown, subject)] if shown is not None else []
        return self._base(rules, symbol, NOT_APPLICABLE, kept, "body",
                          f"{said} {kept} rather than a change the port must follow", evidence + cited)

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
        verdict = self._decided(entry, symbol, facts)
        verdict = self._pinned_launchers_verdict(entry, symbol, self._paths(symbol, facts), verdict)
        if symbol.change == "modified" and language_for_path(symbol.path) == "python" and context_form_changed(
                self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                 symbol.old_lines),
                self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)):
            verdict.rules = list(checked(*verdict.rules, "autograd-context"))
        if language_for_path(symbol.path) != "cpp":
            return verdict
        # only tables the decision built are asked: a symbol decided without its definition was not read through it
        tables = self.context.symbol_tables
        macros = {d.macro for d in (
            self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name, symbol.old_lines)
            if symbol.change != "added" and symbol.old_blob and tables.has(symbol.old_blob, symbol.path) else None,
            self._definition(symbol.new_blob, symbol.path, symbol.qualified_name, symbol.new_lines)
            if symbol.change != "removed" and symbol.new_blob and tables.has(symbol.new_blob, symbol.path) else None)
            if d is not None and d.macro}
        if macros:
            verdict.rules = list(checked(*verdict.rules, "macro-declared-definition"))
        return verdict

    def _decided(self, entry: EntryChanges, symbol: TouchedSymbol, facts: RangeFacts) -> SymbolVerdict:
        return self._named_move_shown(entry, symbol, facts, self._decided_unshown(entry, symbol, facts))

    def _decided_unshown(self, entry: EntryChanges, symbol: TouchedSymbol, facts: RangeFacts) -> SymbolVerdict:
        verdict = self._decided_by_definitions(entry, symbol, facts)
        if verdict.verdict in (NOT_APPLICABLE, IN_SYNC):
            # a module Python can no longer parse: no form-only proof decides for a port of it
            if "provenance-pin" not in verdict.rules and language_for_path(symbol.path) == "python" \
                    and self._ports(symbol, self._paths(symbol, facts)):
                return self._unparsable_module(entry, symbol) or verdict
            return verdict  # nothing to set aside: a file reformatted only ever takes back a flag
        return self._formatter_only(symbol) or self._equal_alternatives(symbol, lambda: verdict.ports or [
            f"{p.definition.cite} {p.definition.qualified_name}" for p in self._ports(symbol, self._paths(symbol, facts))]) \
            or verdict

    def _decided_by_definitions(self, entry: EntryChanges, symbol: TouchedSymbol, facts: RangeFacts) -> SymbolVerdict:
        self._range_moves = facts.moves  # ``declared-selector`` reads which definitions carry anchored bodies
        self._range_losses = facts.losses  # ``lost-anchor-successor`` reads the anchors the range lost
        paths = self._paths(symbol, facts)
        ports = self._ports(symbol, paths)
        moved = self._moved(entry, symbol, paths, ports, facts)
        if moved is not None:
            return moved
        if ports or self.index.anchors_for_path(self.upstream, paths):
            moved_away = {m.old[1] for m in facts.moves.by_entry.get(entry.position, ()) if m.old[0] in paths
                          and not set(FOLLOW_ONLY) & set(m.via)}  # followed without clearing: still lost here
            broken = self._parse_failure(entry, symbol, paths, bool(ports), moved_away, ports=ports)
            if broken is not None:
                return self._unread_despite_parse(symbol, ports, broken) \
                    or self._preprocessed_verdict(entry, symbol, ports, [], broken) \
                    or self._moved_toplevel_lines(entry, symbol) \
                    or self._removed_pinned_unparsed(entry, symbol, paths, broken, facts) \
                    or self._removed_prototypes(entry, symbol, broken) or broken
        sibling = self._other_build_sibling(entry, symbol, paths, ports)
        if sibling is not None:
            return sibling
        if symbol.name in ("<toplevel>", "<lines>") or symbol.kind == KIND_CLASS:
            container = self._container(entry, symbol, paths, facts)
            # A cosmetic proof says the module-level program is the same, so no binding changed meaning.
            # So does ``absent-platform``: every binding keeps the value it had on the port's platforms.
            if symbol.name == "<toplevel>" and (container is None or (container.verdict == NOT_APPLICABLE
                                                                      and container.justification != "cosmetic"
                                                                      and "absent-platform" not in container.rules)):
                settled = frozenset(e.subject for e in container.evidence if e.kind == Kind.TOPLEVEL and e.subject) \
                    if container is not None and "declared-off-read" in container.rules else frozenset()
                container = self._module_level_use(entry, symbol, settled) or container
            if container is not None and container.verdict in FLAGGED:
                container = self._other_build_lines(entry, symbol) or self._moved_toplevel_lines(entry, symbol) \
                    or self._removed_pinned_class(entry, symbol, paths) or self._new_macro_lines(entry, symbol) \
                    or self._declared_class_body(symbol, paths, ports) or self._conditional_includes(entry, symbol) \
                    or self._forwarding_helper_calls(entry, symbol) or self._removed_prototypes(entry, symbol) \
                    or container
            if container is not None:
                return container
        if not ports:
            return self._unported(entry, symbol, paths)
        uncarried = self._unported_member(entry, symbol, paths, ports)
        if uncarried is not None:
            return uncarried
        own_test = self._self_test(entry, symbol, ports)
        if own_test is not None:
            return own_test
        moved_out = _extracted_from(symbol, facts, entry.position)
        verdict = self._ported(entry, symbol, paths, ports, moved_out)
        if moved_out:
            verdict.rules = list(checked(*verdict.rules, "extracted-launch"))
        if verdict.verdict != NEEDS_REVIEW and (verdict.verdict, verdict.justification) != (NOT_APPLICABLE, "cosmetic"):
            # past errors tree-sitter makes of unchanged lines, structure decides no more than NEEDS_REVIEW,
            # unless tokens prove the change cosmetic
            return self._parse_failure(entry, symbol, paths, True, moved_away, misread=True, ports=ports) or verdict
        return verdict


    def _formatter_only(self, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``formatter-only``: the symbol's C/C++ file, as a whole, was only reformatted. None otherwise."""
        if language_for_path(symbol.path) != "cpp" or not symbol.old_blob or not symbol.new_blob:
            return None
        key = (symbol.old_blob, symbol.new_blob)
        if key not in self._formatted_files:
            tables = self._side_tables(symbol)
            self._formatted_files[key] = all(t is not None and t.source is not None for t in tables) \
                and formatted_alike(tables[0].source, tables[1].source)
        if not self._formatted_files[key]:
            return None
        return self._base("formatter-only", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{symbol.path} has the same tokens before and after once comments are dropped and its "
                          "include lines taken as a set: the file was only reformatted (whitespace, wrapping, "
                          "include order), so cosmetic rather than a change to follow",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message="the whole file has the same tokens; only its formatting changed")])

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


    # -- something in-tree ports it

    def _ported(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], ports: list[Port],
                moved_out=(), inherited_scope=frozenset()) -> SymbolVerdict:
        # Both sides' signatures, computed when a comparison first needs them: a port whose pin
        # already contains the commit is IN_SYNC by provenance and reads neither.
        sides = functools.cache(lambda: (
            self._upstream_signature(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                                     symbol.old_lines) if symbol.change != "added" else None,
            self._with_extracted_launches(self._upstream_signature(symbol.new_blob, symbol.path, symbol.qualified_name,
                                                                   symbol.new_lines) if symbol.change != "removed"
                                          else None, entry, moved_out)))
        param_scope = {a.param for a in self.index.not_carried_for(self.upstream, paths, symbol.name,
                                                                    symbol.qualified_name) if a.param}
        param_scope |= set(inherited_scope)  # ``extracted-declared-param``: what the extraction call passes on
        shared = {p: o for p, o in self._shared_declarations(symbol, ports, sides).items() if p not in param_scope}
        param_scope |= set(shared)  # ``shared-port-declaration``: declared on a sibling the same port mirrors
        results = [self._against_port(entry, symbol, sides, port, param_scope) for port in ports]
        worst = max(results, key=lambda r: SEVERITY[r.verdict])
        if shared and worst.verdict == NOT_APPLICABLE and "lacked-branch" in worst.rules:
            worst.rules = list(checked(*worst.rules, "shared-port-declaration"))
            worst.reason = ", ".join(f"{p} (declared not carried on {o})" for p, o in sorted(shared.items())) + \
                " by the port that mirrors " + symbol.name + " as well, so off for it too; " + worst.reason
        worst.ports = [f"{p.definition.cite} {p.definition.qualified_name}" for p in ports]
        for other in results:
            if other is not worst:
                worst.evidence.extend(e for e in other.evidence if e.kind != "hunk")
        return worst


    def _with_extracted_launches(self, new: Signature | None, entry: EntryChanges, moved_out) -> Signature | None:
        """Rule ``extracted-launch``: ``new`` with the launches of the helpers this commit extracted out of the
        definition (``moved_out``, ``classifier.moves`` extractions, each called by the new body) as its own:
        a launch moved into a helper the definition now calls is still launched by it, never a launch it
        stopped making."""
        if new is None or not moved_out:
            return new
        launches = list(new.launches)
        for move in moved_out:
            helper = next((s for s in entry.symbols if (s.path, s.qualified_name) == move.new), None)
            signature = self._as_called(entry, move, helper) or (self._upstream_signature(
                helper.new_blob, helper.path, helper.qualified_name, helper.new_lines) if helper is not None else None)
            launches += signature.launches if signature is not None else []
        return replace(new, launches=launches) if len(launches) != len(new.launches) else new

    def _as_called(self, entry: EntryChanges, move, helper) -> Signature | None:
        """The helper ``move`` extracted a definition's launches into, read with its parameters bound to
        the arguments the definition's call passes (``classifier.moves.as_called_source``): the launch
        the definition still makes, with its grid and arguments as the definition spells them."""
        caller = next((s for s in entry.symbols if (s.path, s.qualified_name) == (move.old[0], move.old[1])
                       or (s.old_path, s.qualified_name) == (move.old[0], move.old[1])), None)
        if helper is None or caller is None:
            return None
        helper_table = self._table(helper.new_blob, helper.path)
        source = as_called_source(self._table(caller.new_blob, caller.path), caller.qualified_name, helper_table,
                                  helper.qualified_name)
        if source is None:
            return None
        table = symbol_table(source, helper.path)
        definition = next((d for d in table.definitions if d.qualified_name == helper.qualified_name), None) \
            if not table.fallback else None
        return signature_of(definition, table.source, helper.path) if definition is not None else None

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
        nested = self._nested_in_lacked_branch(entry, symbol, port, param_scope)
        if nested:
            return self._base("lacked-branch-nested", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{symbol.name} is defined inside {symbol.qualified_name.rpartition('.')[0]}, which "
                              f"with the parameters the port at {definition.cite} lacks ({', '.join(nested[:4])}) "
                              "at upstream's default is the same before and after: the change lies in paths the "
                              "port does not have, so not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the port lacks {', '.join(nested[:4])}", nested[0])])
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
        renamed = self._renamed_names(entry, symbol, old, new)
        if renamed:
            pairs = ", ".join(f"{a} → {b}" for a, b in renamed[0][:4])
            if not renamed[1]:
                return self._form_only_verdict(
                    "cosmetic-parameter-renaming", symbol, "cosmetic",
                    f"{symbol.name} differs before and after only by a consistent renaming of its "
                    f"locals and parameters ({pairs}), each parameter in its place and none passed by "
                    "keyword, so every call binds the same values:",
                    evidence, f"locals and parameters renamed consistently: {pairs}",
                    pairs)
            return self._form_only_verdict(
                "renamed-binding", symbol, "cosmetic",
                f"{symbol.name} differs before and after only by a consistent renaming of its locals, "
                f"parameters and the attributes it keeps on its first parameter ({pairs}), each "
                "parameter in its place; every call in the files the commit touches that bound a "
                "renamed parameter by keyword now binds the new name to the same value, and no use of "
                "a renamed attribute's old name is left there, so every call binds the same values:",
                evidence, f"parameters, keyword arguments and attributes renamed "
                f"alike: {pairs}", pairs)
        renamed_cpp = self._cpp_renaming(symbol, old, new)
        if renamed_cpp:
            pairs = ", ".join(f"{a} → {b}" for a, b in renamed_cpp[:4])
            return self._form_only_verdict(
                "cpp-alpha-equivalence", symbol, "cosmetic",
                f"{symbol.name} differs before and after only by a consistent renaming of its "
                f"parameters, each in its place, and locals ({pairs}), `const` qualifiers and "
                "comments; C++ binds arguments by position, so it computes the same from the same "
                "arguments:",
                evidence, f"parameters and locals renamed consistently, const "
                f"aside: {pairs}", pairs)
        both = self._both_sides(symbol, parsed=True) if language_for_path(symbol.path) == "cpp" else None
        named = cpp_parameter_names(both[0].node, both[1].node) if both is not None else None
        if named:
            spelled = ", ".join(f"{a or '(unnamed)'} → {b or '(unnamed)'}" for a, b in named[:4])
            return self._form_only_verdict(
                "unread-parameter-name", symbol, "cosmetic",
                f"{symbol.name} differs before and after only by parameters gaining or losing their "
                f"names ({spelled}), none spelled anywhere else in the definition; C++ binds arguments "
                "by position, so a name nothing reads binds and shadows nothing:",
                evidence, f"parameter names added or dropped, unread: {spelled}",
                spelled)
        followed = self._followed_keywords(entry, symbol)
        if followed:
            pairs = ", ".join(f"{callee}({a}= → {b}=)" for callee, a, b in followed[:4])
            return self._form_only_verdict(
                "renamed-binding", symbol, "cosmetic",
                f"{symbol.name} differs before and after only by a consistent renaming of its locals "
                f"and the keywords its calls pass ({pairs}), each a parameter its callee renamed in "
                "its own place in this commit: every call binds the same values, so",
                evidence, f"keywords renamed with their callees' parameters: "
                f"{pairs}", pairs)
        dropped = self._followed_keywords(entry, symbol, dropped_keywords)
        if dropped:
            named = ", ".join(f"{callee}({keyword}=)" for callee, keyword in dropped[:4])
            return self._form_only_verdict(
                "dropped-keyword", symbol, "cosmetic",
                f"{symbol.name} differs before and after only by keywords its calls stop passing ({named}), "
                "each a parameter its callee drops in this commit and each value read without running "
                "anything: the removal is the callee's, decided there against its port, so",
                evidence, f"keywords dropped with their callees' parameters: {named}", named)
        aliases = self._module_aliases(symbol)
        if aliases:
            return self._form_only_verdict(
                "module-alias", symbol, "cosmetic",
                f"{symbol.name} differs before and after only in naming a module through an alias "
                f"bound to exactly that module and nowhere rebound ({', '.join(aliases[:3])}): written "
                "out, both sides are the same program, so",
                evidence, f"module aliases: {', '.join(aliases[:3])}",
                aliases[0])
        imported = self._imported_names(symbol)
        if imported:
            return self._form_only_verdict(
                "imported-alias", symbol, "cosmetic",
                f"{symbol.name} differs before and after only in the names it reads objects through, each bound "
                f"once by a module-level from-import and nowhere rebound ({', '.join(imported[:3])}): written "
                "out as the imports that bind them, both sides are the same program, so",
                evidence, f"names written out as their imports: {', '.join(imported[:3])}",
                imported[0])
        if self._same_python_ast(symbol):
            return self._base("cosmetic-ast", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                f"{symbol.name} has the same Python AST before and after (formatting only), so cosmetic "
                "rather than a change the port must follow",
                evidence + [_same_ast_evidence(symbol)],
            )
        if self._same_python_ast_without_passes(symbol):
            return self._form_only_verdict(
                "redundant-pass", symbol, "cosmetic",
                f"{symbol.name} has the same Python AST before and after once pass statements in "
                "blocks holding other statements (which do nothing) are dropped: formatting only, so",
                evidence, "the same Python AST once "
                "redundant pass statements are dropped")
        if self._same_python_ast_without_logging(symbol):
            return self._form_only_verdict(
                "log-only", symbol, "cosmetic",
                f"{symbol.name} is the same Python program before and after once statements that "
                "only emit a log record (logging calls whose arguments call nothing, `import logging`) "
                "are dropped: they compute nothing the port returns or launches, so",
                evidence, "the same Python AST once "
                "log-only statements are dropped")
        if self._same_without_cpp_assert_messages(symbol):
            return self._form_only_verdict(
                "assert-message", symbol, "cosmetic",
                f"{symbol.name}'s tokens are the same before and after once the messages of its assertions "
                "(string literals alone, shown only when the check fails) are erased: only text for a reader "
                "changed, so", evidence, "the same tokens once assertion messages are erased")
        if self._same_without_binding_docs(symbol):
            return self._form_only_verdict(
                "binding-doc", symbol, "cosmetic",
                f"{symbol.name}'s binding into the extension module is the same before and after once the "
                "arguments after the bound name made of string literals alone (the documentation the binding "
                "library attaches to the function) are erased: the name and the function bound are kept, so",
                evidence, "the same tokens once the binding's documentation is erased")
        if self._same_without_assert_messages(symbol):
            return self._form_only_verdict(
                "assert-message", symbol, "cosmetic",
                f"{symbol.name} is the same Python program before and after once the messages of its "
                "asserts (which call nothing, and are read only when the assert fails and raises) are "
                "erased: only text for a reader changed, so",
                evidence, "the same Python AST once assert messages are erased")
        inlined = self._inlined_helpers(entry, symbol)
        if inlined:
            return self._form_only_verdict(
                "inlined-helper", symbol, "cosmetic",
                f"{symbol.name} only replaces an expression by a call of "
                f"{', '.join(inlined[:3])}, which takes nothing and returns exactly that "
                "expression, every name it reads bound as the old place bound it: written back, "
                "the definition is the same program, so",
                evidence, f"calls written back as the expression returned: "
                f"{', '.join(inlined[:3])}", inlined[0])
        respelled = self._equivalent_decorators(symbol)
        if respelled:
            return self._form_only_verdict(
                "documented-equivalent-decorator", symbol, "cosmetic",
                f"{symbol.name} only replaces deprecated decorators by the equivalent their library "
                f"documents, with the arguments that make them equal ({'; '.join(respelled[:3])}), "
                "so",
                evidence, f"documented equivalent decorators: "
                f"{'; '.join(respelled[:3])}")
        called = self._equivalent_calls(symbol)
        if called:
            return self._form_only_verdict(
                "documented-equivalent-call", symbol, "cosmetic",
                f"{symbol.name} only respells calls as the call their library's source defines them "
                f"to be ({'; '.join(called[:3])}), so",
                evidence, f"documented equivalent calls: {'; '.join(called[:3])}")
        computed = self._modified_sides(symbol, "python", parsed=True)
        if computed is not None and same_computation(computed[0].node, computed[1].node):
            return self._form_only_verdict(
                "cosmetic-computation", symbol, "cosmetic",
                f"{symbol.name} is a @triton.jit definition that computes the same before and after "
                "once a product's (or a number sum's) operands are read in either order and each "
                "local bound and read once is written into its value (nothing that writes memory in "
                "between), so",
                evidence, "the same computation: operands "
                "of * and + reordered, single-use locals inlined")
        equal = self._equal_integer_values(symbol)
        if equal:
            shown = "; ".join(f"{a} → {b}" for a, b in equal[:2])
            return self._form_only_verdict(
                "equal-integer-value", symbol, "cosmetic",
                f"{symbol.name} only rewrites expressions of its int and bool parameters into ones that "
                f"compute the same integer for every value of its bool parameters ({shown}): the same "
                "polynomial either way, so",
                evidence, f"the same integer: {shown}", shown)
        formal = self._form_only(symbol, definition, entry)
        if formal is not None:
            kept = "not-carried" if formal[0] in ("default-build", "live-branch") else "cosmetic"
            return self._form_only_verdict(
                formal[0], symbol, kept,
                f"{symbol.name} {formal[1]}, so",
                evidence, formal[1])
        if self._untuned_only(symbol, definition):
            return self._form_only_verdict(
                "untuned-port", symbol, "not-carried",
                f"{symbol.name} changed only the configs its @triton.autotune decorator times, and the "
                f"port at {definition.cite} is not autotuned (it picks its own launch parameters), so "
                "the tuner's search space is an interface it lacks:",
                evidence, "only the autotune configs change; the port is not "
                "autotuned", "configs")
        tuner = self._uncarried_tuner(symbol, definition)
        if tuner:
            return self._form_only_verdict(
                "uncarried-tuner", symbol, "not-carried",
                f"{symbol.name} changed only the arguments of its @{tuner} tuning decorator, and the "
                f"port at {definition.cite} carries no @{tuner} (it passes its own launch parameters), "
                "so how that tuner picks them is an interface it lacks:",
                evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED, f"only the arguments of @{tuner} change; "
                                              "the port does not carry it", tuner)])
        absorbed = self._absorbed(symbol, definition)
        if absorbed:
            callee, tuner = absorbed
            kept = "not-carried" if tuner else "cosmetic"
            also = (f"; its @{tuner} tuning decorator also changed its arguments, and the port at {definition.cite} "
                    f"carries no @{tuner}") if tuner else ""
            return self._base(("absorbed-callee", "uncarried-tuner") if tuner else "absorbed-callee", symbol,
                              NOT_APPLICABLE, kept, "body",
                              f"{symbol.name} only handed each of its parameters on to {callee}, and now is "
                              f"{callee}'s old body under its own name and parameters, its decorators outside "
                              f"{callee}'s: the same values reach the same body under the same wrappers{also}, so "
                              f"{kept} rather than a change the port must follow",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED if tuner else Kind.COSMETIC,
                                                            f"absorbed {callee}, every parameter passed on unchanged",
                                                            callee)])
        folded = self._folded_setup(symbol, definition)
        if folded:
            return self._base("folded-setup-context", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{symbol.name} took over {folded}, which the tree declares not carried: its old "
                              "statements, then its value bound as setup_context read it, then the statements that "
                              "only save to autograd's context, then that value returned, so the port at "
                              f"{definition.cite} computes and returns what it did: not-carried rather than "
                              "NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"{folded} folded into forward; declared not carried",
                                                            folded)])
        aliased = self._aliased_only(entry, symbol)
        if aliased:
            return self._form_only_verdict(
                "macro-alias", symbol, "cosmetic",
                f"{symbol.name} only uses {', '.join(aliased[:4])}, aliases the default build defines, "
                "so it expands to the same code:",
                evidence, f"default-build macro aliases: {', '.join(aliased[:4])}",
                aliased[0].split(" = ")[0])
        expanded = self._expanded_only(entry, symbol)
        if expanded:
            names = [e.split(" = ")[0] for e in expanded]
            mine = self._port_node(definition)
            spelled = set(qualifier_free_tokens(mine)) if mine is not None else set()
            found = new_side_evidence(symbol, Kind.COSMETIC, f"macro uses replaced by their expansion: "
                                      f"{', '.join(expanded[:4])}", names[0])
            if mine is not None and not spelled & set(names) \
                    and all(t in spelled for e in expanded for t in e.split(" = ", 1)[1].split()):
                return self._base("macro-expanded", symbol, IN_SYNC, None, "body",
                                  f"{symbol.name} only spells out {', '.join(expanded[:4])}, the macro"
                                  f"{'s' if len(names) > 1 else ''} its file saw at the parent, which "
                                  f"expand{'' if len(names) > 1 else 's'} to the same code, and the port at {definition.cite} already spells the expansion: "
                                  "IN_SYNC rather than NEEDS_REVIEW", evidence + [found])
            return self._form_only_verdict(
                "macro-expanded", symbol, "cosmetic",
                f"{symbol.name} only spells out {', '.join(expanded[:4])}, the macro"
                f"{'s' if len(names) > 1 else ''} its file saw at the parent, so it expands to the "
                "same code:", evidence + [found])
        preprocessed = self._preprocessed_verdict(entry, symbol, [port], evidence) \
            or self._selected_off(symbol, evidence) or self._not_carried_call_arguments(symbol, evidence)
        if preprocessed is not None:
            return preprocessed
        registering = self._new_op_registrations(symbol, definition)
        if registering:
            return self._base("new-op-registration", symbol, NOT_APPLICABLE, "not-ported", "body",
                              f"{symbol.name} only gains registrations of ops new to its file "
                              f"({', '.join(registering[:4])}) on its own registration handle, which the port at "
                              f"{definition.cite} does not name; every registration it had is unchanged, so "
                              "not-ported rather than a change the port must follow",
                              evidence + [new_side_evidence(symbol, Kind.BODY,
                                                            f"new ops registered: {', '.join(registering[:4])}",
                                                            registering[0])])
        registered = self._registered_only(entry, symbol)
        if registered:
            return self._form_only_verdict(
                "registry-decorator", symbol, "cosmetic",
                f"{symbol.name} only gained {', '.join('@' + n for n in registered)}, which hand"
                f"{'s' if len(registered) == 1 else ''} the same function back (its body is unchanged), "
                "so",
                evidence, "a registration decorator around an unchanged body",
                registered[0])
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
                                  evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                                f"the change only concerns {names}, declared not "
                                                                "carried (off)",
                                                                sorted(param_scope)[0])])
        read = self._declared_off_sides(symbol, param_scope)  # both sides' readers, made once for the three rules
        branched = self._declared_branches_off(symbol, old, new, read)
        if branched is not None:
            names = ", ".join(sorted(param_scope))
            pairs = ", ".join(f"{a} → {b}" for a, b in branched[:4])
            counts = self._declared_counts(read[1])
            return self._base("declared-count-off" if counts else "declared-branch-off", symbol, NOT_APPLICABLE,
                              "not-carried", "body",
                              f"with {names}, which the tree declares not carried, read as absent (false, a null "
                              f"pointer"
                              + (f"; {', '.join(counts)} a count of none or one, so compared with a literal where "
                                 "both agree, a block the branch taken leaves read as its statements and a local "
                                 "declared bare then stored declared at its store" if counts else "")
                              + "), the branches they decide taken and what only those branches read left out"
                              + (f", and its parameters and locals renamed consistently ({pairs}), const aside"
                                 if branched else "")
                              + f", {symbol.name} is the same before and after, so not-carried rather than "
                              "NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the change only concerns what {names}, declared not "
                                                            "carried (absent), decide", sorted(param_scope)[0])])
        if branched is None and self._declared_stores(read):
            names = ", ".join(sorted(param_scope))
            return self._base("declared-stores", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"with {names}, which the tree declares not carried, read as absent (false, a null "
                              "pointer) and the branches they decide taken, every run of straight-line statements "
                              f"where {symbol.name}'s sides still differ leaves each place it writes with the same "
                              "value (evaluated symbolically), so the change only reorganised how the path the port "
                              "runs computes it, or lies in the path it lacks: not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the change only concerns what {names}, declared not "
                                                            "carried (absent), decide, and stores the same values "
                                                            "on the path taken", sorted(param_scope)[0])])
        lacked = self._lacked_member_reading(symbol, definition, param_scope)
        if lacked is not None:
            members, same_tokens = lacked
            names = ", ".join(members[:4])
            how = "its tokens are the same" if same_tokens else "every run of straight-line statements where its " \
                "sides still differ leaves each place it writes with the same value (evaluated symbolically)"
            return self._base("lacked-member", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{names}, read by {symbol.name} on both sides but not at the scanned range's base, "
                              f"{'is a member' if len(members) == 1 else 'are members'} the port at "
                              f"{definition.cite} lacks (no file of the tree names "
                              f"{'it' if len(members) == 1 else 'them'}; the port is taken as in sync at the base): "
                              "read as absent (a null pointer), a local holding a grid index non-negative, and the "
                              f"branches so decided taken, {how} before and after, so the change lies in the path "
                              "the port does not have: not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the change only concerns what {names}, which the "
                                                            "port lacks (absent), decide", members[0])])
        switched = self._lacked_switch_flags(symbol, definition)
        if switched:
            names = ", ".join(switched[:4])
            return self._base("lacked-switch-flag", symbol, NOT_APPLICABLE, "not-carried", "signature",
                              f"with {names}, compile-time flags a switch macro binds and the port at {definition.cite} "
                              f"does not have, read as off, {symbol.name} is the same before and after: the change "
                              "lies in the path the port lacks, so not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the port has no {names}; the change only concerns "
                                                            "what they decide",
                                                            switched[0])])
        stored = self._stores_for_not_carried(symbol)
        if stored:
            return self._base("not-carried-reader", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{symbol.name}'s change only stores {', '.join(stored[0][:3])}, which only "
                              f"{', '.join(stored[1][:3]) or 'no definition'} read"
                              f"{'s' if len(stored[1]) == 1 else ''}, declared not carried, so not-carried rather "
                              "than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"stored only for {', '.join(stored[1][:3]) or 'nothing'}",
                                                            stored[0][0])])
        guard = self._lacked_guard(symbol, definition) if symbol.change == "modified" else None
        if guard is not None:
            return self._base("lacked-guard", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"{symbol.name}'s change only swaps the context manager of a `with` around an unchanged "
                              f"block (`with {guard[0]}:` → `with {guard[1]}:`), and the port at {definition.cite} has "
                              "no `with` statement: the change lies in a statement the port does not have, so "
                              "not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the port has no guard; only `with {guard[1]}` changed",
                                                            guard[1])])
        platforms = self._absent_platforms(symbol, anchor)
        if platforms:
            return self._base("absent-platform", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"with every test for {', '.join(platforms)}, a platform no file of the tree names, read "
                              f"as false, {symbol.name} is the same before and after: the change lies in code for a "
                              "backend the port does not run, so not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"only {', '.join(platforms)} code changes",
                                                            platforms[0])])
        refused = self._refused_architectures(symbol)
        if refused:
            return self._base("refused-architecture", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"before the change {symbol.name} refused {', '.join(refused)} (an arm that only "
                              "reports, or a check demanding another architecture); with every test for "
                              f"{'it' if len(refused) == 1 else 'them'} read as false and check messages aside, "
                              f"{symbol.name} is the same before and after: the change only adds support for an "
                              f"architecture the port, in sync with a definition that refused it, never had, so "
                              "not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"only code for {', '.join(refused)}, refused before, "
                                                            "changes", refused[0])])
        lacked = self._lacked_branches(entry, symbol, new, definition, param_scope, anchor)
        if lacked:
            dropped = self._dropped_decorators(symbol, definition)
            return self._base(("lacked-branch", "port-lacks-dropped-decorator") if dropped else "lacked-branch",
                              symbol, NOT_APPLICABLE, "not-carried", "body",
                              (f"the dropped decorator{'s' if len(dropped) > 1 else ''} "
                               f"{', '.join('@' + d for d in dropped)}, which the port does not carry, set aside; "
                               if dropped else "") +
                              f"with the parameters the port at {definition.cite} lacks ({', '.join(lacked[:4])}) at "
                              f"upstream's default (off where the tree declares them not carried), {symbol.name} is the same before and "
                              "after: the change lies in paths the port does not have, so not-carried rather than "
                              "NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the port lacks {', '.join(lacked[:4])}; the change lies only "
                                                            "in the paths they select or the values they receive",
                                                            lacked[0])])
        launched = self._launched_values(entry, symbol, definition, param_scope, anchor)
        if launched:
            return self._base("launched-value", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"with the parameters the port at {definition.cite} lacks ({', '.join(launched[:4])}) at "
                              f"the value{'s' if len(launched) > 1 else ''} {symbol.name}'s one launch passes, followed "
                              "to the default of the ported definition it comes from, the definition is the same "
                              "before and after: the change lies in paths the port does not have, so not-carried "
                              "rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"the port lacks {', '.join(launched[:4])}; its launch "
                                                            "passes a value that leaves the changed branches out",
                                                            launched[0])])
        selected = self._declared_selector(symbol, _scope_names(param_scope), self._ported_names(entry))
        if selected:
            return self._base("declared-selector", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"with {selected[0]}, which the tree declares not carried, fixed to {selected[1]} (the "
                              f"one key whose branch reaches what the tree ports), {symbol.name} is the same before "
                              "and after: the change lies in backends the port does not run, so not-carried rather "
                              "than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"{selected[0]} fixed to {selected[1]}; only other "
                                                            "backends change", selected[0])])
        probed = self._declared_source_selector(symbol, self._ported_names(entry))
        if probed:
            return self._base("declared-source-selector", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"with {probed[0]}, read from {probed[2]}, which the tree declares not carried, fixed "
                              f"to {probed[1]} (the one key whose branch reaches what the tree ports), {symbol.name} "
                              "is the same before and after: the change lies in backends the port does not run, so "
                              "not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"{probed[0]} = {probed[2]}(...) fixed to {probed[1]}; "
                                                            "only other backends change", probed[0])])
        copied = self._pinned_source_selector(symbol, anchor, definition, self._ported_names(entry))
        if copied:
            return self._base("pinned-source-selector", symbol, NOT_APPLICABLE, "not-carried", "body",
                              f"the port at {definition.cite} is a copy pinned at {anchor.pin} that never reads "
                              f"{copied[2]}; with {copied[0]}, read from it, fixed to {copied[1]} (the one key whose "
                              f"branch reaches what the tree ports), {symbol.name} is the same before and after: the "
                              "change lies in backends the copy never had, so not-carried rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.NOT_CARRIED,
                                                            f"{copied[0]} = {copied[2]}(...) fixed to {copied[1]}; "
                                                            "only backends the copy lacks change", copied[0])])
        unchecked = self._port_lacks_check(symbol, definition)
        if unchecked:
            return self._base("port-lacks-check", symbol, IN_SYNC, None, "body",
                              f"{symbol.name}'s only change removes {', '.join(unchecked)} assertions, and the port at "
                              f"{definition.cite} makes none: the touched lines are already in the port's form, so "
                              "IN_SYNC rather than a change the port must follow",
                              evidence + [new_side_evidence(symbol, Kind.BODY,
                                                            f"only {', '.join(unchecked)} assertions removed; the port "
                                                            "has none", unchecked[0])])
        moved = self._moved_callee(entry, symbol)
        if moved is not None:
            return moved
        shortcut = self._identity_shortcut(entry, symbol)
        if shortcut is not None:
            was, now, operand, kernels = shortcut
            return self._base("identity-shortcut", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name}'s guard went from `{was}` to `{now}`: each is false only where "
                              f"{operand} is one, and the block it guards only scales memory in place by {operand} "
                              f"({', '.join(kernels) or 'no launch'}), which multiplying by one leaves as it was; "
                              "the change moves when a no-op is skipped, not what the definition computes, so "
                              "cosmetic rather than NEEDS_REVIEW",
                              evidence + [new_side_evidence(symbol, Kind.COSMETIC,
                                                            f"the guard skips only a scaling by {operand} where "
                                                            f"{operand} is one", operand)])
        old, new, other_build = self._default_build_launches(symbol, old, new, definition.file)
        old, new, untaken = self._lacked_branch_launches(symbol, old, new, definition, param_scope)
        evidence = evidence + other_build + untaken
        items = compare(old, new, tree_signature, self.index, param_scope,
                        derivation=lambda name, kernel=None, old=False, positional=False: self._derivation(
                            entry, symbol, new, name, kernel, old, positional),
                        upstream=self.upstream, keyword_free=lambda names: self._keyword_free(entry, symbol, names),
                        instance=lambda name, side: self._instance_computed(symbol, name, side),
                        respell=self._launcher_renaming(symbol),
                        internal=lambda name: self._internal_parameter(entry, symbol, new, name, definition),
                        removed=lambda name: self._removed_internal_parameter(symbol, new, name, definition),
                        computed=lambda name: self._computed_internal_parameter(entry, symbol, new, name, definition),
                        selects=lambda name: self._branch_read(symbol, name),
                        forwarded=lambda name: self._forwarded_default(entry, symbol, name))
        table = self._table(symbol.new_blob, symbol.path) if language_for_path(symbol.path) == "python" else None
        items = platform_chosen_launches(items, old, new, table.source if table is not None else None)
        items = platform_chosen_kernels(items, old, new, table.source if table is not None else None, symbol.path,
                                        lambda path: self._upstream_file(entry.commit.sha, path))
        verdict = self._from_items(entry, symbol, old, new, port, items, evidence)
        if verdict.verdict == "REAL_GAP" and "parameter-change" in verdict.rules and symbol.change == "modified":
            hoisted = hoisted_local(self._table(symbol.old_blob, symbol.old_path or symbol.path),
                                    self._table(symbol.new_blob, symbol.path), symbol.qualified_name,
                                    [p.name for p in old.params], [p.name for p in new.params])
            if hoisted is not None:
                local, removed, line = hoisted
                return self._base("hoisted-local", symbol, NEEDS_REVIEW, None, "signature",
                                  f"{symbol.name} takes {local} in place of {', '.join(removed)}: the local it computed "
                                  f"from them (`{line}`) is now a parameter and the rest of its body is unchanged, so "
                                  "it computes what it did from what it is given; what its callers now pass is decided "
                                  "on them, so the port still taking the old parameters is for a reader (NEEDS_REVIEW) "
                                  "rather than a gap of this definition", verdict.evidence[len(symbol.hunk_headers):]
                                  + [new_side_evidence(symbol, Kind.BODY, f"local {local} hoisted into a parameter",
                                                       local)], ports=verdict.ports)
        if other_build and "default-build-launch" not in verdict.rules:
            verdict.rules = [*verdict.rules, "default-build-launch"]
        if untaken and "lacked-branch-launch" not in verdict.rules:
            verdict.rules = [*verdict.rules, "lacked-branch-launch"]
        if "parameter-change" in verdict.rules and self._new_options_of(entry, symbol, new, definition, param_scope,
                                                                        anchor):
            verdict.rules = [*verdict.rules, "new-option"]
        return verdict


# --- the entry ----------------------------------------------------------------------

_NOT_APPLICABLE_ORDER = ("net-zero", "not-ported", "not-carried", "cosmetic", "non-code", "no-row")
"""Which justification an all-NOT_APPLICABLE entry shows: a ported definition's own first (what the
commit means to the port: its change is `cosmetic` or `not-carried`), then the most informative."""


def entry_verdict(symbol_verdicts: list[SymbolVerdict], fallback_reason: str = "") -> Verdict:
    """The entry's verdict: the most severe over all symbols, with every
    symbol named in the evidence so no half of a commit goes unread."""
    if not symbol_verdicts:
        return Verdict(NOT_APPLICABLE, "no-row", "path", reason=fallback_reason or "the commit touches no file",
                       version=__version__, rules=["path-ownership"])

    def rank(verdict: SymbolVerdict):
        order = _NOT_APPLICABLE_ORDER.index(verdict.justification) if verdict.justification in _NOT_APPLICABLE_ORDER else 0
        ported = verdict.verdict == NOT_APPLICABLE and bool(verdict.ports)
        return (SEVERITY[verdict.verdict], ported, -order, verdict.change == "modified", len(verdict.evidence))

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




def _extracted_from(symbol: TouchedSymbol, facts: RangeFacts, position: int) -> list:
    """The extractions (``classifier.moves``) entry ``position`` made out of ``symbol``'s definition."""
    key = (symbol.old_path or symbol.path, symbol.qualified_name)
    return [m for m in facts.moves.by_entry.get(position, ()) if m.old == key and m.how == "extracted"]


def _docstring_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the docstrings of Python source ``text`` (the first statement of a module, class or
    function when it is a lone string): text no call reads (``computed-internal-parameter``,
    ``removed-internal-parameter``). Empty when the text does not parse."""
    source = text.encode("utf-8")
    tree = parse(source, "python")
    if tree is None or tree.root_node.has_error:
        return []
    return [(len(source[:n.start_byte].decode("utf-8", errors="replace")),
             len(source[:n.end_byte].decode("utf-8", errors="replace")))
            for n in nodes_of(tree.root_node, ("string",), "python") if is_docstring(n)]
