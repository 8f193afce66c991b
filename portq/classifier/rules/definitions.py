"""Definition rules: ported definitions added, removed, renamed or changed in their body, and who calls a port (DESIGN §5, §6).

A gap is REAL_GAP only when non-test code in the tree calls the port
(``caller-reachability``); otherwise INERT. A body change no structural
rule explains needs a reader, never NOT_APPLICABLE, unless it lies where no
ported code runs: a module's own self-test that nothing in the tree calls
(``self-test-definition``), or an alternative definition in a dropped branch
of a module-level ``if`` that the port never had (``removed-alternative``).

Example diff (NOT_APPLICABLE/cosmetic for a port whose kernel takes no
scratch pointer)::

    -if triton.__version__ >= "2.1.0":
    -    def k(x_ptr, n): ...
    -else:
    -    def k(x_ptr, tmp_ptr, n): ...
    +def k(x_ptr, n): ...

The code: ``DefinitionRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules and turns the comparison's ``Delta`` items into a verdict. It
reads the in-tree index and the upstream side through the table it is part of;
it must not import the verdict table or anything after it, and a rule never
names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import functools
import re

from portq.classifier.delta import Delta, Status
from portq.classifier.moves import EDITED_RULE, _raw_calls, renamed_unchanged_pairs
from portq.classifier.reading import (_anchor_evidence, _caller_evidence, _file_change, _is_code_line, _kind_class,
                                     _source_lines, _strip_comment)
from portq.classifier.rules import (Rule, computation, equivalence, launch_checks, renamed_helpers, respelled_calls,
                                    returns, synced_beside)
from portq.classifier.rules.cosmetic import cpp_tokens
from portq.classifier.rules.parameters import (_first_line_quote, _out_param_evidence, _returned_instead,
                                               _upstream_param_evidence, template_retyped_parameters)
from portq.classifier.rules.scope import _scope_names
from portq.core.evidence import Evidence, Kind
from portq.core.model import IN_SYNC, INERT, NEEDS_REVIEW, NOT_APPLICABLE, REAL_GAP, SymbolVerdict
from portq.language.extraction import signature_of
from portq.language.signatures import comment_free_tokens
from portq.language.symbols import KIND_CLASS, KIND_CUDA_KERNEL, language_for_path, symbol_table
from portq.tree.file_records import Port
from portq.tree.reachability import Callers

_WORDS = re.compile(r"[A-Za-z_]\w*|\d+")

RULES = (
    Rule("added-definition", ("IN_SYNC", "NEEDS_REVIEW"),
         "A definition new upstream that the tree already ports is in sync when the port takes every runtime "
         "parameter (out-parameters returned and declared-out-of-scope ones aside); one lacking any needs review.",
         "+def k(x, n, stride):  (the tree's port k(x, n) is anchored to it)",
         "classifier.rules.definitions.DefinitionRules._added"),
    Rule("readded-definition", ("NEEDS_REVIEW",),
         "A definition new at this commit that existed where the port was taken (its anchor's pin, else the "
         "range's base), removed since and now added back with other tokens: the port holds the old body, so "
         "what it runs is not what upstream now has and it needs a reader, never IN_SYNC by its parameters "
         "alone. Added back with the same tokens, `added-definition` decides.",
         "-void launch(T* q, T* k, int n) { kernel<<<g, b>>>(q, k, n); }   (an earlier commit of the range)\n"
         "+void launch(T* q, T* k, int n) { return other_launch(q, k, q, k, n); }",
         "classifier.rules.definitions.DefinitionRules._added, ._as_taken"),
    Rule("absent-removal-beyond", ("NEEDS_REVIEW",),
         "A ported definition placed only by absence (upstream removed a parameter or a launch argument the port "
         "never took or passed) is IN_SYNC only when the removal is the whole change: a changed line that brings a "
         "word (identifier or number) none of the old side's changed lines has, in a hunk whose removed lines "
         "mention none of the removed names (a hunk rewriting their uses is the removal's), is a change the port's lacking those names does not show it has, so it needs "
         "review (NEEDS_REVIEW), unless the port already reads as the new side. The removal alone, its uses "
         "removed with it, stays IN_SYNC.",
         "-def k(x, tmp, n):\n-    tl.store(tmp, 0)\n-    y = tl.dot(a, b, trans_b=True)\n"
         "+def k(x, n):\n+    y = tl.dot(a, tl.trans(b))   (the port never took tmp)",
         "classifier.rules.definitions.DefinitionRules._from_items, ._changed_beyond"),
    Rule("removed-definition", ("NEEDS_REVIEW",),
         "A ported definition upstream deleted without a same-kind replacement of a related name needs a reader "
         "to decide whether the port goes too.",
         "-def k(x): ...  (the port still defines it)",
         "classifier.rules.definitions.DefinitionRules._removed"),
    Rule("uncalled-definition", ("NOT_APPLICABLE",),
         "A ported definition upstream deletes that no code named before or after the commit (comments aside, in "
         "every file the commit changes) and that nothing in the tree calls was dead on both sides: deleting it "
         "changes nothing that runs, NOT_APPLICABLE/cosmetic. One that upstream code or the tree still names needs "
         "a reader (`removed-definition`).",
         "-template <int M, class Atom> auto make_copy_warpcontiguous(Atom a) { ... }\n"
         "     // auto c = make_copy_warpcontiguous<M>(atom);   (its only use, commented out)",
         "classifier.rules.definitions.DefinitionRules._removed, ._named_upstream"),
    Rule("self-test-definition", ("NOT_APPLICABLE",),
         "A module's own self-test, a definition named as a test (`test`, `test_x`, `test2`), one its "
         "`if __name__ == \"__main__\":` block calls, or one only those call (the reference a test compares "
         "against), that no other code of the module reaches on either side of the commit, and whose port "
         "nothing in the tree calls: rewriting, adding or deleting it changes nothing a ported definition runs, "
         "NOT_APPLICABLE/not-ported. A helper the module's own code calls, a public definition nothing in the "
         "module calls (other modules may), or a copy the tree calls stays with the other rules.",
         "-def test():\n-    assert torch.allclose(double(x), torch_double(x))\n+def test():\n"
         "+    for n in (1, 4097): ...\n+if __name__ == \"__main__\":\n+    test()",
         "classifier.rules.definitions.self_test_definitions, .DefinitionRules._self_test, "
         "classifier.rules.attribution.AttributionRules._self_test_words"),
    Rule("removed-alternative", ("NOT_APPLICABLE",),
         "A ported Python definition that is one of several same-named alternatives in the branches of a "
         "module-level `if` (one per library version or platform), dropped while another alternative is kept "
         "token for token unchanged, is a path the port never had when the structural comparison of the dropped "
         "alternative to the kept one, placed against the port, finds differences and the port already on the "
         "kept side of every one: cosmetic. A port with the dropped alternative's shape, no structural "
         "difference to tell them apart, or a kept alternative that changed stays `removed-definition`.",
         "-if triton.__version__ >= \"2.1.0\":\n-    def k(x, n): ...\n-else:\n-    def k(x, tmp, n): ...\n"
         "+def k(x, n): ...   (the port's kernel takes no scratch pointer)",
         "classifier.rules.definitions.DefinitionRules._removed_alternative, ._removed"),
    Rule("renamed-definition", ("IN_SYNC", "REAL_GAP", "INERT"),
         "A ported definition renamed upstream is in sync when the new name is ported already, else the port is "
         "behind (it still carries the old name) when the rename changed a parameter (`renamed-body-edit` "
         "decides one that kept them all).",
         "-def k_v1(x): ...\n+def k_v2(x): ...",
         "classifier.rules.definitions.DefinitionRules._removed"),
    Rule("renamed-body-edit", ("NEEDS_REVIEW",),
         "A ported definition renamed upstream, the new name ported by nobody, that keeps every parameter (names, "
         "order, compile-time flags, defaults present) while its body changes on the way: the rename asks "
         "nothing of the port (it keeps its name, its callers follow it), so what is left is the body change, for "
         "a reader as the same edit made in place would be. A parameter added, dropped or changed keeps "
         "`renamed-definition` (the port's callers must pass what it asks).",
         "-def scale(x, s):\n-    return ops.scale(x, s)\n+def scale_fwd(x, s):\n+    return ops.scale(x.contiguous(), s)",
         "classifier.rules.definitions.DefinitionRules._renamed_keeping_parameters, ._removed"),
    Rule("renamed-unchanged", ("NOT_APPLICABLE",),
         "A ported definition renamed upstream (a removed definition and an added one of the same kind in the same "
         "file, one name extending the other) whose parameters are the same (names, order, compile-time flags, "
         "defaults present) and whose text is token for token the same once the names the commit renames are "
         "read as one (its own old and new name, and every definition the commit renames with its body "
         "unchanged, a string literal spelling one of them included): the rename is the whole change, and a "
         "rename is no gap (the port keeps the old name and its callers follow it), so cosmetic. A parameter "
         "changed, or any other token of the body, keeps `renamed-definition`.",
         "-def scale(x, s):\n-    return ops.scale(x, s)\n+def scale_fwd(x, s):\n+    return ops.scale(x, s)",
         "classifier.rules.definitions.DefinitionRules._renamed_unchanged, ._removed"),
    Rule("renamed-owner", ("NEEDS_REVIEW",),
         "A ported definition removed while an added one in the same file has its own name under another "
         "enclosing definition (a method whose class was renamed), its body changed on the way, is the same "
         "definition moved, not renamed: the port carries the name upstream still uses, so no gap on the name; "
         "the changed body is for a reviewer to compare. A body carried unchanged stays `moved-definition`.",
         "-class Norm:\n-    def forward(x, n): ...\n+class GroupNorm:\n+    def forward(x, n, groups): ...",
         "classifier.rules.definitions.DefinitionRules._renamed_owner, ._removed"),
    Rule("macro-declared-definition", ("REAL_GAP", "INERT", "NEEDS_REVIEW", "IN_SYNC", "NOT_APPLICABLE"),
         "A C/C++ definition introduced by a function-like macro of its file whose expansion is a function "
         "declaration named by one of its arguments (`DEFINE_K(fwd, bool F) { body }`) is that definition: its "
         "name the argument, its template, parameters and kind the expansion's, its body the braces after the "
         "invocation, its lines the invocation's; anchors, comparisons and callers read it as declared, and a "
         "verdict on it names this rule beside the rule that decided.",
         "+#define DEFINE_K(name, ...) template<typename T, __VA_ARGS__> __global__ void name(const P p)\n"
         "-template<typename T, bool F> __global__ void fwd(const P p) { run<T, F>(p); }\n"
         "+DEFINE_K(fwd, bool F) { run<T, F>(p); }",
         "language.symbols.macro_declared, classifier.verdicts.SymbolClassifier._decide"),
    Rule("body-change", ("NEEDS_REVIEW",),
         "A ported definition that changed with no parameter or launch delta (besides declared scope) changed in "
         "its body: a reviewer compares the bodies; never NOT_APPLICABLE.",
         "-    y = x * s\n+    y = x * s + bias",
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("caller-reachability", ("REAL_GAP", "INERT"),
         "A port behind upstream is REAL_GAP when non-test code in the tree calls it (directly or through ported "
         "wrappers), INERT when only tests call it or nothing does.",
         "the port of k behind upstream; engine/run.py calls k  → REAL_GAP",
         "classifier.rules.definitions.DefinitionRules._gap, tree.reachability"),
    Rule("removed-pinned-definition", ("INERT",),
         "A ported definition upstream deleted without a same-kind replacement of a related name, whose port is a "
         "copy pinned to an upstream commit (`@SHA`) that only tests reach, or nothing: the copy holds the code "
         "as it was at the pin, so it is behind upstream on code no non-test caller runs: INERT, never "
         "NOT_APPLICABLE (a deletion upstream is a change to what the copy holds, whoever named it). A C++ "
         "template no upstream code named and nothing in the tree calls is never instantiated, no code in any "
         "build: `uncalled-definition` still decides it. A pinned copy non-test code reaches needs a reader "
         "(`removed-definition`); a port without a pin is decided by `uncalled-definition` and "
         "`removed-definition`. Changed lines outside definitions (a macro, an instantiation) that among the "
         "ported definitions only such deleted copies name go with them: INERT too.",
         "-__device__ float unpack_nibble(unsigned char v) { ... }   (the copy pinned @1a2b3c4 still holds it; "
         "nothing in the engine calls it)",
         "classifier.rules.definitions.DefinitionRules._removed, "
         "classifier.rules.attribution.AttributionRules._removed_pinned_users"),
)


_TEST_NAME = re.compile(r"^_*test(?:_\w+|\d+)?$")
"""A definition named as a test: ``test``, ``test_fwd``, ``test2``."""


def _is_main_test(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either side of the comparison), with no ``else``."""
    if not isinstance(node, ast.If) or node.orelse or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides) \
        and any(isinstance(n, ast.Constant) and n.value == "__main__" for n in sides)


def _names_in(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)} \
        | {n.attr for node in nodes for n in ast.walk(node) if isinstance(n, ast.Attribute)}


@functools.lru_cache(maxsize=64)
def self_test_definitions(source: bytes | None) -> frozenset[str]:
    """The module-level functions of a Python module that are its own self-test (``self-test-definition``):
    named as a test or called from its ``__main__`` block, or called only by those, and reached by no other
    code of the module (module-level statements, classes, or functions reached from them). Empty where the
    source does not parse."""
    try:
        module = ast.parse(source or b"")
    except (SyntaxError, ValueError):
        return frozenset()
    functions = {s.name: s for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    mains = [s for s in module.body if _is_main_test(s)]
    others = [s for s in module.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s not in mains]
    # What the module's own code reaches, main blocks aside.
    bodies = {name: _names_in(f.body) | _names_in(f.decorator_list) | _names_in([f.args]) for name, f in functions.items()}
    live = _names_in(others) | {n for f in functions.values() for n in _names_in(f.decorator_list)}
    frontier = [n for n in live if n in functions]
    while frontier:
        name = frontier.pop()
        for used in bodies[name] - live:
            live.add(used)
            if used in functions:
                frontier.append(used)
    main_names = _names_in(mains)
    found = {name for name in functions if name not in live and (_TEST_NAME.match(name) or name in main_names)}
    grew = True
    while grew:
        grew = False
        for name in functions:
            if name in found or name in live:
                continue
            callers = {other for other, used in bodies.items() if other != name and name in used}
            if callers and callers <= found:
                found.add(name)
                grew = True
    return frozenset(found)


def _module_branch(node) -> tuple[int, int] | None:
    """The 1-based lines of the innermost branch block (of an ``if``, ``elif`` or ``else``) of a module-level
    ``if`` holding a definition; None for a definition in no such branch, or inside a function or class."""
    current, found = node.parent, None
    while current is not None:
        if current.type in ("function_definition", "class_definition"):
            return None
        if found is None and current.type == "block" and current.parent is not None \
                and current.parent.type in ("if_statement", "elif_clause", "else_clause"):
            found = (current.start_point[0] + 1, current.end_point[0] + 1)
        current = current.parent
    return found


class DefinitionRules:
    """The definition rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _self_test(self, entry, symbol, ports) -> SymbolVerdict | None:
        """Rule ``self-test-definition``: ``symbol`` is its module's own self-test on each side it exists on,
        and no port of it has a caller in the tree; None otherwise."""
        if language_for_path(symbol.path) != "python" or symbol.name in ("<toplevel>", "<lines>") \
                or "." in (symbol.qualified_name or symbol.name) or not ports:
            return None
        sides = []
        if symbol.change != "added":
            sides.append(self._table(symbol.old_blob, symbol.old_path or symbol.path))
        if symbol.change != "removed":
            sides.append(self._table(symbol.new_blob, symbol.path))
        if not sides or any(t is None or t.source is None or symbol.name not in self_test_definitions(t.source)
                            for t in sides):
            return None
        for port in ports:
            definition = port.definition
            callers = self.index.reachability.callers(definition.name, definition.file, definition.qualified_name)
            if callers.non_test or callers.test:
                return None
        cited = ", ".join(p.definition.cite for p in ports[:2])
        return self._base("self-test-definition", symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"{symbol.name} is {symbol.path}'s own self-test (named as a test, run from its "
                          "`__main__` block, or called only by those; no other code of the module reaches it) and "
                          f"nothing in the tree calls its copy at {cited}: the change runs in no ported "
                          "definition, so not-ported rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.CALLER, side="tree", path=p.definition.file,
                                    line=p.definition.start_line, message="no caller found in the tree")
                           for p in ports[:2]])

    def _port_already_has(self, rule, symbol, definition, pairs, evidence, found):
        """IN_SYNC from a port-has rule: what it found, and each (upstream, port) statement pair it read,
        the port's statement cited."""
        return self._base(rule, symbol, IN_SYNC, None, "body",
                          f"{found}: the port already has the change, so IN_SYNC rather than NEEDS_REVIEW",
                          evidence + [Evidence(kind=Kind.TREE_USE, side="tree", path=definition.file,
                                               line=p.start_point[0] + 1,
                                               quote=p.text.decode("utf-8", errors="replace").strip(),
                                               symbol=definition.qualified_name,
                                               message=f"the port already has: "
                                                       f"{n.text.decode('utf-8', errors='replace').strip()}")
                                      for n, p in pairs[:3]])

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
        if synced and all(i.absent for i in synced) and not self._port_has_change(symbol, definition):
            beyond = self._changed_beyond(entry, symbol, {n for i in synced for n in i.absent}
                                          | {s.message for s in scoped})
            if beyond:
                return self._base("absent-removal-beyond", symbol, NEEDS_REVIEW, None, "body",
                                  f"the port at {definition.cite} lacks what upstream removed ({synced[0].message}), "
                                  f"but the commit also changes {symbol.name} elsewhere (`{beyond[:80]}`), which the "
                                  "port's lacking the removed names does not show it has: it needs review rather "
                                  "than IN_SYNC", evidence)
        if synced:
            # only a signature change in sync is read beside: a launch or grid the port already has is often
            # reached through helpers, headers or program-id decompositions this reading does not follow
            beside = self._synced_beside(entry, symbol, definition, {n for i in synced for n in i.absent}
                                         | {s.message for s in scoped}) \
                if all(i.layer == "signature" for i in synced) else None
            if beside:
                return self._base("synced-beside", symbol, NEEDS_REVIEW, None, "body",
                                  f"the port at {definition.cite} already has the new shape ({synced[0].message}), "
                                  f"but the commit also changes {symbol.name}'s body where no changed parameter is "
                                  f"read (`{beside[:80]}`), which the port's shape does not show it has: it needs "
                                  "review rather than IN_SYNC", evidence)
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
        if not scoped:
            already = self._port_has_change(symbol, definition)
            if already:
                return self._port_already_has("port-has-change", symbol, definition, already, evidence,
                                              f"every statement {symbol.name}'s change touched already reads, in "
                                              f"its new form, as the port's ({_cited(definition, already)}), "
                                              "modulo naming, and its old form does not")
            renamed = self._port_has_renamed_change(symbol, definition)
            if renamed:
                pairs, names = renamed
                named = ", ".join(f"{theirs} as {mine}" for theirs, mine in names)
                return self._port_already_has("port-has-renamed-change", symbol, definition, pairs, evidence,
                                              f"every statement {symbol.name}'s change touched already reads, in "
                                              f"its new form, as the port's ({_cited(definition, pairs)}; the port "
                                              f"names {named}), parameters by position and locals renamed one to "
                                              "one, and its old form reads as no assignment of the port")
            inlined = self._port_has_inlined_change(symbol, definition)
            if inlined:
                return self._port_already_has("port-has-inlined-change", symbol, definition, inlined, evidence,
                                              f"every statement {symbol.name}'s change adds is already computed "
                                              f"by the port ({_cited(definition, inlined)}), modulo naming, one "
                                              "re-assigned local written into the value the port computes "
                                              "(`t = E; t = F(t);` read as `t = F(E);`)")
            uncarried = self._port_has_uncarried_store(symbol, definition)
            if uncarried:
                return self._port_already_has("port-has-uncarried-store", symbol, definition, uncarried, evidence,
                                              f"{symbol.name}'s change only stops carrying a local across a "
                                              "loop's iterations, each element now built from its own parts, "
                                              f"and the port already stores each element so "
                                              f"({_cited(definition, uncarried)}), combined with the same "
                                              "operator and parts of the same form, in a loop that carries "
                                              "nothing across its iterations")
            computed = self._port_has_computed_change(symbol, definition)
            if computed:
                return self._port_already_has("port-has-computed-change", symbol, definition, computed, evidence,
                                              f"every statement {symbol.name}'s change touched already reads, as "
                                              f"what it computes, as the port's ({_cited(definition, computed)}): "
                                              "a product's (or a number sum's) operands in either order and each "
                                              "local bound and read once written into its value, nothing that "
                                              "writes memory in between, parameters by position (each as "
                                              "itself where the two take different numbers) and locals renamed "
                                              "one to one; its old form does not")
            retyped = self._port_has_retyped_value(symbol, definition)
            if retyped:
                return self._port_already_has("port-has-retyped-value", symbol, definition, retyped[1], evidence,
                                              f"{symbol.name}'s change only sets {', '.join(retyped[0][:4])} in the "
                                              f"value its one store writes, and the port's one store "
                                              f"({_cited(definition, retyped[1])}) reaches each place through the "
                                              "same operations, on operands loaded through the same pointers, "
                                              "and already holds the new constant there, never the old")
        helpers = self._renamed_helper_calls(entry, symbol) if not items else None
        restated = not helpers and not items
        if restated:
            helpers = self._renamed_helper_calls(entry, symbol, restated=True)
        if helpers:
            how = ("renamed-helper-restated", "calling functions this commit renames, each the same as before once "
                   "the other renames are followed and single-use locals written into their reads") if restated \
                else ("renamed-cpp-helper" if language_for_path(symbol.path) == "cpp" else "renamed-helper",
                      "calling functions this commit renames with the same body")
            return self._base(how[0], symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} changes only by {how[1]} ({', '.join(helpers[:3])}), so it runs the "
                              "same code: cosmetic rather than a change the port must follow",
                              evidence + [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path,
                                                   symbol=symbol.name, message=f"calls renamed helpers: "
                                                   f"{', '.join(helpers[:3])}")])
        traced = self._tracing_calls(entry, symbol) if not items else None
        if traced:
            return self._tracing_verdict(symbol, traced, evidence)
        partner = self._regrouped_return(entry, symbol) if not items else None
        if partner:
            return self._regrouped_verdict(symbol, partner, evidence)
        tabled = self._module_constant_elements(entry, symbol) if not items else None
        if tabled:
            return self._module_constant_verdict(symbol, tabled, evidence)
        respelled = self._port_has_respelled_calls(symbol, definition) if not scoped and not items else None
        if respelled:
            pairs, names = respelled
            named = ", ".join(f"{old} as {new}" for old, new in names.items())
            return self._port_already_has("port-has-respelled-call", symbol, definition, pairs, evidence,
                                          f"{symbol.name}'s change only respells the functions its calls "
                                          f"call ({named}), the arguments kept, and the port already calls "
                                          f"{', '.join(dict.fromkeys(names.values()))} and names none of the old "
                                          f"({_cited(definition, pairs)})")
        checked = self._port_has_launch_check(symbol, definition) if not scoped else None
        if checked:
            return self._port_already_has("port-has-launch-check", symbol, definition, checked, evidence,
                                          f"{symbol.name}'s change only adds a check of the last CUDA error after "
                                          f"its launch, and the port checks its own launch "
                                          f"({_cited(definition, checked)})")
        returned = self._port_has_returned_change(symbol, definition) if not scoped else None
        if returned:
            theirs, mine, line = returned
            return self._base("port-has-returned-change", symbol, IN_SYNC, None, "body",
                              f"{symbol.name}'s change is confined to the value of its one return, and the port's "
                              f"one return at {definition.file}:{line} (`{mine}`) already reads as the new one "
                              f"(`{theirs}`), parameters by position and callees through the tree's anchors, "
                              "while the old one does not: the port already has the change, so IN_SYNC rather "
                              "than NEEDS_REVIEW",
                              evidence + [Evidence(kind=Kind.TREE_USE, side="tree", path=definition.file,
                                                   line=line, quote=mine, symbol=definition.qualified_name,
                                                   message=f"the port already has: {theirs}")])
        retyped = self._retyped_kernel_parameters(symbol, definition) if not scoped else None
        if retyped:
            spelled = ", ".join(f"{name} {was} → {now}" for name, was, now in retyped[:3])
            return self._gap(symbol, port, [Delta(Status.BEHIND, "signature", f"upstream retyped kernel parameter "
                                                  f"{spelled}; the port still takes it as its template type",
                                                  rule="kernel-parameter-type")], evidence)
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

    def _synced_beside(self, entry, symbol, definition, names: set[str]) -> str | None:
        """``synced-beside``: a changed line of a modified ``symbol``'s body that its parameter change (the
        changed parameters, ``names`` removed or declared out of scope, locals derived from them) does not
        account for (``synced_beside.undecided_line``), unless the port already reads as the new side
        (``port-has-change``); None otherwise."""
        language = language_for_path(symbol.path)
        if symbol.change != "modified" or language not in ("python", "cpp"):
            return None
        change = _file_change(entry, symbol)
        if change is None:
            return None
        old_extent, new_extent = symbol.old_lines, symbol.new_lines

        def inside(line, extent) -> bool:
            return extent is None or extent[0] <= line <= extent[1]

        hunks = []
        for hunk in change.hunks:
            removed = [(n, _strip_comment(t, symbol.path)) for n, t in zip(hunk.removed_lines, hunk.removed_text)
                       if inside(n, old_extent) and _is_code_line(t, symbol.path)]
            added = [(n, _strip_comment(t, symbol.path)) for n, t in zip(hunk.added_lines, hunk.added_text)
                     if inside(n, new_extent) and _is_code_line(t, symbol.path)]
            if removed or added:
                hunks.append((removed, added))
        if not hunks:
            return None
        sides = self._both_sides(symbol)
        if sides is None:
            return None  # a body that cannot be read is left to the items: this rule flags only what it reads
        names = {n for n in names if n and n.isidentifier()}
        found = synced_beside.undecided_line(sides[0].node, sides[1].node, language, hunks, names, False,
                                             self._port_node(definition), language_for_path(definition.file))
        if found is None or self._port_has_change(symbol, definition):
            return None
        return found

    def _changed_beyond(self, entry, symbol, names: set[str]) -> str | None:
        """``absent-removal-beyond``: a changed code line of ``symbol`` that shows the commit does more than
        remove ``names``: a new-side line bringing a word (identifier or number, comments aside) none of the
        old side's changed lines has, in a hunk whose removed lines mention none of ``names`` (compared
        case-insensitively, as parameters normalise: a hunk that rewrites a removed name's uses is the
        removal's); None when there is none or the lines cannot be read."""
        change = _file_change(entry, symbol)
        if change is None:
            return None
        lowered = {n.lower() for n in names if n}
        old_extent, new_extent = symbol.old_lines, symbol.new_lines

        def inside(line, extent) -> bool:
            return extent is None or extent[0] <= line <= extent[1]

        hunks = []
        for hunk in change.hunks:
            removed = [_strip_comment(t, symbol.path) for n, t in zip(hunk.removed_lines, hunk.removed_text)
                       if inside(n, old_extent) and _is_code_line(t, symbol.path)]
            added = [_strip_comment(t, symbol.path) for n, t in zip(hunk.added_lines, hunk.added_text)
                     if inside(n, new_extent) and _is_code_line(t, symbol.path)]
            hunks.append((removed, added))
        had = {w for removed, _ in hunks for text in removed for w in _WORDS.findall(text)}
        for removed, added in hunks:
            if any(n in text.lower() for text in removed for n in lowered):
                continue
            for text in added:
                if set(_WORDS.findall(text)) - had:
                    return text.strip()
        return None

    def _port_has_change(self, symbol, definition):
        """``equivalence.port_has_change`` for a Python symbol and its Python port (``cpp_port_has_change`` for
        C++ on both sides); None when it does not hold."""
        if language_for_path(symbol.path) == language_for_path(definition.file) == "cpp":
            sides = self._both_sides(symbol, parsed=True)
            mine = self._port_node(definition)
            if sides is None or mine is None or sides[0].node is None or sides[1].node is None \
                    or sides[0].node.has_error or sides[1].node.has_error:
                return None
            return equivalence.cpp_port_has_change(sides[0].node, sides[1].node, mine) \
                or equivalence.cpp_port_has_added_statements(sides[0].node, sides[1].node, mine)
        if language_for_path(symbol.path) != "python" or language_for_path(definition.file) != "python":
            return None
        sides = self._both_sides(symbol, parsed=True)
        mine = self._port_node(definition)
        if sides is None or mine is None:
            return None
        found = equivalence.port_has_change(sides[0].node, sides[1].node, mine)
        if found is None and not sides[0].node.has_error and not sides[1].node.has_error and not mine.has_error:
            def ported_as(name: str) -> set[str]:
                """The tree's names for upstream definition ``name`` of the symbol's file (its anchors)."""
                return {a.definition.split(".")[-1] for a in self.index.anchors
                        if a.kind == "ports" and a.definition and a.bare_symbol == name
                        and a.path in (symbol.path, symbol.old_path)}
            found = equivalence.port_has_moved_guard(sides[0].node, sides[1].node, mine, ported_as)
        return found

    def _renamed_helper_calls(self, entry, symbol, restated: bool = False) -> list[str]:
        """``renamed_helpers.calls_only_renamed`` for a Python symbol, over the module-level functions every
        Python file the commit modifies renames with the same body (``renamed_helpers.renamed_functions``;
        with ``restated``, also those the same once the commit's renames and single-use locals are read
        through, every file's pairs offered to the others until none is added)."""
        if language_for_path(symbol.path) == "cpp" and symbol.change == "modified" and not restated:
            return self._renamed_cpp_helper_calls(entry, symbol)
        if language_for_path(symbol.path) != "python" or symbol.change != "modified":
            return []
        sources = []
        for change in entry.commit.changes:
            if change.status != "modified" or not change.old_blob or not change.new_blob \
                    or language_for_path(change.path) != "python":
                continue
            before, after = self._table(change.old_blob, change.old_path), self._table(change.new_blob, change.new_path)
            if before is None or after is None or before.source is None or after.source is None:
                continue
            sources.append((before.source, after.source))
        renamed: dict[str, str] = {}
        while True:
            found: dict[str, str] = {}
            for old_source, new_source in sources:
                for old, new in renamed_helpers.renamed_functions(old_source, new_source, restated=restated,
                                                                  known=renamed if restated else None).items():
                    if found.setdefault(old, new) != new:
                        return []
            if not restated or found == renamed:
                renamed = found
                break
            renamed = found
        if not renamed:
            return []
        old_table, new_table = self._side_tables(symbol)
        return renamed_helpers.calls_only_renamed(_raw_calls(old_table, symbol.qualified_name),
                                                  _raw_calls(new_table, symbol.qualified_name), renamed)

    def _renamed_ported_helper(self, entry, symbol, definition) -> str | None:
        """Rule ``renamed-ported-helper``: the new name of a removed Python module-level function that its own
        file renames with the same definition (``renamed_helpers.renamed_functions``), when no Python file the
        commit changes names the old name after it and the port's definition already has the new name; else
        None."""
        if language_for_path(symbol.path) != "python" or "." in (symbol.qualified_name or symbol.name) \
                or language_for_path(definition.file) != "python":
            return None
        change = _file_change(entry, symbol)
        if change is None or change.status != "modified" or not change.old_blob or not change.new_blob:
            return None
        before, after = self._table(change.old_blob, change.old_path), self._table(change.new_blob, change.new_path)
        if before is None or after is None or before.source is None or after.source is None:
            return None
        renamed = renamed_helpers.renamed_functions(before.source, after.source).get(symbol.name)
        if renamed is None or definition.name != renamed:
            return None
        mention = re.compile(rf"(?<![\w]){re.escape(symbol.name)}(?!\w)")
        for other in entry.commit.changes:
            if not other.new_blob or language_for_path(other.new_path or "") != "python":
                continue
            table = self._table(other.new_blob, other.new_path)
            if table is None or table.source is None \
                    or mention.search(table.source.decode("utf-8", errors="replace")):
                return None
        return renamed

    def _renamed_cpp_helper_calls(self, entry, symbol) -> list[str]:
        """Rule ``renamed-cpp-helper``: ``renamed_helpers.tokens_only_renamed`` for a C/C++ symbol, over the
        functions every C/C++ file the commit modifies renames with the same tokens
        (``renamed_helpers.renamed_cpp_functions``), less a pair whose old name a changed file still defines after
        the commit or whose new name one defined before it."""
        def functions(table):
            return [(d.name, comment_free_tokens(d.node)) for d in table.definitions
                    if d.kind != KIND_CLASS and d.node is not None and not d.node.has_error]

        renamed: dict[str, str] = {}
        defined = {"old": set(), "new": set()}
        for change in entry.commit.changes:
            if language_for_path(change.new_path or change.old_path or "") != "cpp":
                continue
            before = self._table(change.old_blob, change.old_path) if change.old_blob else None
            after = self._table(change.new_blob, change.new_path) if change.new_blob else None
            for side, table in (("old", before), ("new", after)):
                if table is not None and not table.fallback:
                    defined[side] |= {d.name for d in table.definitions if d.kind != KIND_CLASS}
            if change.status != "modified" or before is None or after is None or before.fallback or after.fallback:
                continue
            for old, new in renamed_helpers.renamed_cpp_functions(functions(before), functions(after)).items():
                if renamed.setdefault(old, new) != new:
                    return []
        renamed = {old: new for old, new in renamed.items() if old not in defined["new"] and new not in defined["old"]}
        if not renamed:
            return []
        texts = []
        for table, lines in zip(self._side_tables(symbol), (symbol.old_lines, symbol.new_lines)):
            if table is None or table.source is None or not lines:
                return []
            texts.append(_source_lines(table.source, lines))
        return renamed_helpers.tokens_only_renamed(cpp_tokens(texts[0]), cpp_tokens(texts[1]), renamed)

    def _port_has_launch_check(self, symbol, definition):
        """``launch_checks.cpp_port_has_launch_check`` for a C++ symbol and its C++ port; None when it does
        not hold."""
        if not language_for_path(symbol.path) == language_for_path(definition.file) == "cpp":
            return None
        nodes = self._clean_nodes(symbol, definition)
        return None if nodes is None else launch_checks.cpp_port_has_launch_check(*nodes)

    def _port_has_respelled_calls(self, symbol, definition):
        """``respelled_calls.cpp_port_has_respelled_calls`` for a C++ symbol and its C++ port; None when it
        does not hold."""
        if not language_for_path(symbol.path) == language_for_path(definition.file) == "cpp":
            return None
        nodes = self._clean_nodes(symbol, definition)
        return None if nodes is None else respelled_calls.cpp_port_has_respelled_calls(*nodes)

    def _port_has_returned_change(self, symbol, definition):
        """``returns.port_has_returned_change`` for a Python symbol and its Python port: ``(upstream's new
        return, the port's return, the port's line of it)``; None when it does not hold."""
        if language_for_path(symbol.path) != "python" or language_for_path(definition.file) != "python":
            return None
        nodes = self._clean_nodes(symbol, definition)
        if nodes is None:
            return None

        def text(node) -> str:
            return " " * node.start_point[1] + node.text.decode("utf-8", errors="replace")

        def ported_as(name: str) -> set[str]:
            """The tree's names for upstream definition ``name`` of the symbol's file (its anchors)."""
            return {a.definition.split(".")[-1] for a in self.index.anchors
                    if a.kind == "ports" and a.definition and a.bare_symbol == name
                    and a.path in (symbol.path, symbol.old_path)}

        found = returns.port_has_returned_change(text(nodes[0]), text(nodes[1]), text(nodes[2]), ported_as)
        if found is None:
            return None
        theirs, mine = found
        port_lines = text(nodes[2]).splitlines()
        offset = next((i for i, l in enumerate(port_lines) if l.strip() == mine), 0)
        return theirs, mine, nodes[2].start_point[0] + 1 + offset

    def _port_has_inlined_change(self, symbol, definition):
        """``equivalence.cpp_port_has_inlined_statements`` for a C++ symbol and its C++ port; None when it
        does not hold."""
        if not language_for_path(symbol.path) == language_for_path(definition.file) == "cpp":
            return None
        nodes = self._clean_nodes(symbol, definition)
        return None if nodes is None else equivalence.cpp_port_has_inlined_statements(*nodes)

    def _port_has_uncarried_store(self, symbol, definition):
        """``equivalence.cpp_port_has_uncarried_store`` for a C++ symbol and its C++ port; None when it does
        not hold."""
        if not language_for_path(symbol.path) == language_for_path(definition.file) == "cpp":
            return None
        nodes = self._clean_nodes(symbol, definition)
        return None if nodes is None else equivalence.cpp_port_has_uncarried_store(*nodes)

    def _port_has_renamed_change(self, symbol, definition):
        """``equivalence.port_has_renamed_change`` for a Python symbol and its Python port; None when it does
        not hold."""
        if language_for_path(symbol.path) != "python" or language_for_path(definition.file) != "python":
            return None
        nodes = self._clean_nodes(symbol, definition)
        return None if nodes is None else equivalence.port_has_renamed_change(*nodes)

    def _port_has_computed_change(self, symbol, definition):
        """``computation.port_has_computed_change`` for a Python symbol and its Python port (both
        ``@triton.jit``); None when it does not hold."""
        if language_for_path(symbol.path) != "python" or language_for_path(definition.file) != "python":
            return None
        nodes = self._clean_nodes(symbol, definition)
        return None if nodes is None else computation.port_has_computed_change(*nodes)

    def _port_has_retyped_value(self, symbol, definition):
        """``computation.port_has_retyped_value`` for a Python symbol and its Python port: (the new constants,
        the port's store statement as a pair list for citing); None when it does not hold."""
        if language_for_path(symbol.path) != "python" or language_for_path(definition.file) != "python":
            return None
        nodes = self._clean_nodes(symbol, definition)
        written = None if nodes is None else computation.port_has_retyped_value(*nodes)
        if not written:
            return None
        stores = [n for n in computation._statements_at(nodes[2]).values()
                  if n.text.decode("utf-8", errors="replace").lstrip().startswith("tl.store(")]
        return (written, [(stores[0], stores[0])]) if len(stores) == 1 else None

    def _clean_nodes(self, symbol, definition):
        """``(old, new, port)`` syntax nodes of a touched symbol's two upstream sides and its in-tree port,
        when all three read without a parse error; None otherwise."""
        sides = self._both_sides(symbol, parsed=True)
        mine = self._port_node(definition)
        if sides is None or mine is None or sides[0].node is None or sides[1].node is None \
                or sides[0].node.has_error or sides[1].node.has_error:
            return None
        return sides[0].node, sides[1].node, mine

    def _retyped_kernel_parameters(self, symbol, definition):
        """``parameters.template_retyped_parameters`` of a CUDA kernel and its C++ port; None otherwise."""
        if symbol.kind != KIND_CUDA_KERNEL or language_for_path(definition.file) != "cpp":
            return None
        sides = self._both_sides(symbol, parsed=True)
        mine = self._port_node(definition)
        if sides is None or mine is None:
            return None
        return template_retyped_parameters(sides[0].node, sides[1].node, mine)

    def _port_node(self, definition):
        """The syntax node of an in-tree definition, read from the tree; None where it cannot be read cleanly."""
        source = self.index.source(definition.file)
        if source is None:
            return None
        table = symbol_table(source, definition.file)
        mine = next((d for d in table.definitions if d.qualified_name == definition.qualified_name
                     and d.start_line == definition.start_line), None) if table.tree is not None else None
        if mine is None or mine.node is None or mine.node.has_error:
            return None
        return mine.node

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
        replacement = self._followed_rename(entry, symbol) or next(
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
            callers = self.index.reachability.callers(definition.name, definition.file, definition.qualified_name)
            uncalled = not callers.non_test and not callers.test and not self._named_upstream(entry, symbol)
            if port.anchor.pin and not callers.non_test and not (uncalled and self._template(symbol)):
                found = callers.test[:3]
                return self._base("removed-pinned-definition", symbol, INERT, None, "signature",
                                  f"upstream deleted {symbol.name}, which the copy at {definition.cite} still holds as "
                                  f"it was at its pin @{port.anchor.pin}; "
                                  + (f"only tests reach it ({', '.join(c.cite for c in found)})" if found
                                     else "nothing in the tree reaches it")
                                  + ", so the copy is behind on code no non-test caller runs: INERT rather than "
                                  "NOT_APPLICABLE or REAL_GAP",
                                  evidence + [tree_evidence]
                                  + [_caller_evidence(c, "test caller", test=True) for c in found]
                                  + ([] if found else [Evidence(kind=Kind.CALLER, message="no caller found in the tree",
                                                                side="tree", path=definition.file,
                                                                line=definition.start_line)]))
            if uncalled:
                return self._base("uncalled-definition", symbol, NOT_APPLICABLE, "cosmetic", "signature",
                                  f"upstream deleted {symbol.name}, which no upstream code named (comments aside) and "
                                  f"nothing in the tree calls: dead on both sides, so deleting it changes nothing "
                                  f"that runs, and the port at {definition.cite} is dead too: cosmetic rather than "
                                  "NEEDS_REVIEW",
                                  evidence + [tree_evidence, Evidence(kind=Kind.CALLER, side="tree",
                                                                      path=definition.file,
                                                                      line=definition.start_line,
                                                                      message="no caller found in the tree")])
            alternative = self._removed_alternative(entry, symbol, old, port)
            if alternative is not None:
                kept, items = alternative
                said = "; ".join(i.message for i in items[:3])
                return self._base("removed-alternative", symbol, NOT_APPLICABLE, "cosmetic", "signature",
                                  f"upstream dropped one of {symbol.path}'s alternative definitions of {symbol.name} "
                                  f"(a branch of a module-level `if`) and kept the other unchanged ({kept}); where the "
                                  f"two differ the port at {definition.cite} already has the kept one's shape "
                                  f"({said}), so the dropped branch is a path the port never had: cosmetic rather "
                                  "than NEEDS_REVIEW", evidence + [tree_evidence] + [e for i in items[:3] for e in i.evidence])
            renamed = self._renamed_ported_helper(entry, symbol, definition)
            if renamed is not None:
                return self._base("renamed-ported-helper", symbol, NOT_APPLICABLE, "cosmetic", "signature",
                                  f"upstream renamed {symbol.name} to {renamed} in {symbol.path}, the definition the "
                                  "same once each one's parameters are named by position and no file the commit "
                                  f"changes naming {symbol.name} after it, and the port at {definition.cite} already "
                                  f"defines it as {renamed}: the code it mirrors runs on under the new name, so "
                                  "cosmetic rather than NEEDS_REVIEW",
                                  evidence + [tree_evidence, Evidence(kind=Kind.COSMETIC, side="upstream-new",
                                                                      path=symbol.path, symbol=symbol.name,
                                                                      message=f"renamed with the same body: "
                                                                      f"{symbol.name} → {renamed}")])
            return self._base("removed-definition", 
                symbol, NEEDS_REVIEW, None, "signature",
                f"upstream deleted {symbol.name} without a same-named replacement while {definition.cite} still "
                "ports it, so a reviewer must decide whether the port goes too",
                evidence + [tree_evidence],
            )
        if replacement.name == symbol.name and replacement.qualified_name != symbol.qualified_name:
            return self._renamed_owner(symbol, replacement, evidence + [tree_evidence])
        successors = self.index.ports_for(self.upstream, {replacement.path}, replacement.name, replacement.qualified_name)
        if successors:
            successor = successors[0]
            return self._base("renamed-definition", 
                symbol, IN_SYNC, None, "signature",
                f"upstream renamed {symbol.name} to {replacement.name} and {successor.definition.cite} already "
                "ports the new name, so IN_SYNC rather than a gap",
                evidence + [_anchor_evidence(successor.anchor, f"ports {replacement.name}")],
            )
        if (same := self._renamed_unchanged(entry, symbol, replacement)) is not None:
            return self._base("renamed-unchanged", symbol, NOT_APPLICABLE, "cosmetic", "signature",
                              f"upstream renamed {symbol.name} to {same.name} with the same parameters and the "
                              "same text but for the names the commit renames, so the rename is the whole change and "
                              f"the port at {definition.cite} keeping the old name is no gap: cosmetic rather than "
                              "REAL_GAP (update the anchor)",
                              evidence + [tree_evidence, Evidence(
                                  kind=Kind.COSMETIC, side="upstream-new", path=same.path,
                                  symbol=symbol.name, subject=same.qualified_name,
                                  message=f"renamed to {same.qualified_name}, parameters and body unchanged")])
        if self._renamed_keeping_parameters(symbol, replacement):
            # ``renamed-body-edit``: the rename asks nothing of the port's callers; the body edited on the way does
            return self._base("renamed-body-edit", symbol, NEEDS_REVIEW, None, "signature",
                              f"upstream renamed {symbol.name} to {replacement.name} keeping every parameter and "
                              f"changed its body on the way: a rename is no gap (the port at {definition.cite} "
                              "keeps its name, its callers follow it), so what is left is the body change, which a "
                              "reviewer compares with the port rather than a renamed-definition gap",
                              evidence + [tree_evidence])
        item = Delta("behind", "signature",
                     f"upstream renamed {symbol.name} to {replacement.name}; the port still carries {symbol.name}",
                     [tree_evidence], rule="renamed-definition")
        return self._gap(symbol, port, [item], evidence + [tree_evidence])

    def _followed_rename(self, entry, symbol):
        """Rule ``renamed-definition`` (which definition it was renamed to): the added definition
        ``renamed-with-edits`` follows the removed ``symbol`` to in this commit (same file, same kind of
        definition, most of the old body carried), when one is followed. That is the definition the old one
        became; an added definition that merely shares a prefix of its name (a new class beside it) is not,
        so the rename checks (``renamed-unchanged``, ``renamed-body-edit``, the parameter comparison) must
        read the followed one. None when no edited rename follows it."""
        moves = getattr(self, "_range_moves", None)
        if moves is None or symbol.change != "removed":
            return None
        made = moves.made_by(entry.position, (symbol.old_path or symbol.path, symbol.qualified_name))
        if made is None or EDITED_RULE not in made.via:
            return None
        return next((s for s in entry.symbols if s.change == "added" and (s.path, s.qualified_name) == made.new
                     and _kind_class(s.kind) == _kind_class(symbol.kind)), None)

    def _renamed_keeping_parameters(self, symbol, replacement) -> bool:
        """Rule ``renamed-body-edit``: whether the added definition ``symbol`` was renamed to is, like it, one
        definition in a parsed file, of the same kind, with the same parameters (names, order, compile-time
        flags, defaults present)."""
        old_path = symbol.old_path or symbol.path
        before, after = self._table(symbol.old_blob, old_path), self._table(replacement.new_blob, replacement.path)
        if before is None or after is None or before.fallback or after.fallback:
            return False
        was = [d for d in before.definitions if d.qualified_name == symbol.qualified_name and d.node is not None]
        now = [d for d in after.definitions if d.qualified_name == replacement.qualified_name and d.node is not None]
        if len(was) != 1 or len(now) != 1 or was[0].kind != now[0].kind:
            return False
        sides = (signature_of(was[0], before.source, old_path), signature_of(now[0], after.source, replacement.path))
        return all(s is not None for s in sides) and len(
            {tuple((p.normalised, p.constexpr, p.has_default) for p in s.params) for s in sides}) == 1

    def _renamed_unchanged(self, entry, symbol, replacement):
        """Rule ``renamed-unchanged``: the added definition the removed definition ``symbol`` was renamed to
        (``replacement``, or where its kind differs the one added definition of ``symbol``'s own kind whose name
        extends or is extended by ``symbol``'s), when the two are one definition each in parsed files, of the
        same kind, with the same parameters (names, order, compile-time flags, defaults present) and the same
        comment-free tokens once the names the commit renames are read as one (the pair itself, and every
        definition the commit renames with its body unchanged, ``renamed_unchanged_pairs``; a string literal
        spelling one of them read the same way); else None."""
        if replacement.kind != symbol.kind:
            same_kind = [s for s in entry.symbols if s.change == "added" and s.path == replacement.path
                         and s.kind == symbol.kind and (s.name.startswith(symbol.name) or symbol.name.startswith(s.name))]
            if len(same_kind) != 1:
                return None
            replacement = same_kind[0]
        old_path = symbol.old_path or symbol.path
        before, after = self._table(symbol.old_blob, old_path), self._table(replacement.new_blob, replacement.path)
        if before is None or after is None or before.fallback or after.fallback:
            return None
        was = [d for d in before.definitions if d.qualified_name == symbol.qualified_name and d.node is not None]
        now = [d for d in after.definitions if d.qualified_name == replacement.qualified_name and d.node is not None]
        if len(was) != 1 or len(now) != 1 or was[0].kind != now[0].kind or was[0].node.has_error \
                or now[0].node.has_error:
            return None
        sides = (signature_of(was[0], before.source, old_path), signature_of(now[0], after.source, replacement.path))
        if any(s is None for s in sides) or len({tuple((p.normalised, p.constexpr, p.has_default) for p in s.params)
                                                 for s in sides}) != 1:
            return None
        placeholder: dict[str, str] = {}
        for number, pair in enumerate([(symbol.name, replacement.name)] + renamed_unchanged_pairs(entry, self._table)):
            for name in pair:
                placeholder.setdefault(name, f"<renamed{number}>")

        def read(node) -> list[str]:
            return [_WORDS.sub(lambda m: placeholder.get(m.group(0), m.group(0)), token)
                    for token in comment_free_tokens(node)]

        return replacement if read(was[0].node) == read(now[0].node) else None

    def _renamed_owner(self, symbol, replacement, evidence) -> SymbolVerdict:
        """Rule ``renamed-owner``: the removed ported definition and the added one share their own name and
        differ only in what encloses them (a method whose class was renamed or moved), and the move did not
        carry the body unchanged (``moved-definition`` decides that first). The name the port carries is the
        name upstream still uses, so the premise of ``renamed-definition`` (the port is behind on a name) does
        not hold; what changed is the body, which a reviewer compares with the port: NEEDS_REVIEW, never
        REAL_GAP on the name alone."""
        return self._base("renamed-owner", symbol, NEEDS_REVIEW, None, "signature",
                          f"upstream moved {symbol.qualified_name} to {replacement.qualified_name} (what encloses it "
                          f"was renamed; its own name {symbol.name} is unchanged) and changed its body on the way, so "
                          "a reviewer compares the new body with the port rather than a renamed-definition gap",
                          evidence + [Evidence(kind=Kind.ANCHOR_LOST, side="upstream-new", path=replacement.path,
                                               symbol=replacement.name, subject=replacement.qualified_name,
                                               message=f"carried on as {replacement.qualified_name}")])

    def _template(self, symbol) -> bool:
        """Whether upstream's old definition of ``symbol`` is a C++ template (``removed-pinned-definition``:
        one nothing names is never instantiated, so it is no code in any build)."""
        old = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                               symbol.old_lines)
        return old is not None and old.node is not None and old.node.type == "template_declaration"

    def _removed_alternative(self, entry, symbol, old, port: Port, depth: int = 0):
        """Rule ``removed-alternative``: ``(kept, items)`` when ``symbol`` is one of several same-named
        definitions in the branches of a module-level Python ``if`` and the commit keeps exactly one other, token
        for token unchanged (``kept`` cites it), and the port is on the kept side of what only the dropped
        alternative has: the structural comparison of the dropped alternative to the kept one, placed against
        the port, finds parameters the dropped one takes and the kept one does not, and the port takes none of
        them (``items``); a host whose dropped alternative only differs in launching a kernel dropped with it,
        from the same branch, holds when that kernel's does. None otherwise (what only the kept alternative
        has, the port may lack: that is the kept definition's own history, not which one the port follows)."""
        if language_for_path(symbol.path) != "python" or "." in (symbol.qualified_name or "") or depth > 1:
            return None
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path) if symbol.new_blob else None
        if old_table is None or new_table is None or old_table.tree is None or new_table.tree is None:
            return None
        before = [d for d in old_table.definitions if d.qualified_name == symbol.qualified_name and d.node is not None]
        after = [d for d in new_table.definitions if d.qualified_name == symbol.qualified_name and d.node is not None]
        if len(before) < 2 or len(after) != 1:
            return None
        mine = next((d for d in before if d.start_line == (symbol.old_lines or (0,))[0]), None)
        branch = _module_branch(mine.node) if mine is not None else None
        if branch is None:
            return None
        kept_new = after[0]
        kept_old = [d for d in before if d is not mine and comment_free_tokens(d.node) == comment_free_tokens(kept_new.node)]
        if len(kept_old) != 1 or _module_branch(kept_old[0].node) is None:
            return None
        kept = f"{symbol.path}:{kept_new.start_line}"
        items = self._alternative_items(symbol, mine, kept_new, port) or []
        removals = [i for i in items if any(e.kind == Kind.PARAM_REMOVED for e in i.evidence)]
        if removals:
            return (kept, removals) if all(i.status is Status.SYNC for i in removals) else None
        # A host: the kernels its dropped alternative launches, dropped from the same branch, decide it.
        dropped_old = old_table.source.decode("utf-8", errors="replace") if old_table.source is not None else ""
        launched = [s for s in entry.symbols if s.change == "removed" and s.path == symbol.path and s is not symbol
                    and s.old_lines and branch[0] <= s.old_lines[0] <= branch[1]
                    and re.search(rf"\b{re.escape(s.name)}\s*\[", mine.node.text.decode("utf-8", errors="replace"))]
        if not launched or not dropped_old:
            return None
        found = []
        for kernel in launched:
            kernel_ports = self.index.ports_for(self.upstream, {kernel.path}, kernel.name, kernel.qualified_name)
            decided = [self._removed_alternative(entry, kernel, None, p, depth + 1) for p in kernel_ports]
            if not kernel_ports or any(d is None for d in decided):
                return None
            found += [i for d in decided for i in d[1]]
        return kept, found

    def _named_upstream(self, entry, symbol) -> bool:
        """Whether code (not comments) of any file the commit changes names
        ``symbol`` outside its own deleted definition, before or after: a
        caller the deletion broke or rebound, or another definition of the
        name. An unreadable side counts as naming it."""
        own = self._definition(symbol.old_blob, symbol.old_path or symbol.path, symbol.qualified_name,
                               symbol.old_lines)
        if own is None or own.node is None:
            return True
        inside = comment_free_tokens(own.node).count(symbol.name)
        for change in entry.commit.changes:
            for blob, path in ((change.old_blob, change.old_path or change.path), (change.new_blob, change.path)):
                if not blob or not path or language_for_path(path) is None:
                    continue
                table = self._table(blob, path)
                if table is None or table.tree is None:
                    return True
                named = comment_free_tokens(table.tree.root_node).count(symbol.name)
                if blob == symbol.old_blob and path == (symbol.old_path or symbol.path):
                    named -= inside
                if named > 0:
                    return True
        return False

    def _taken_at(self, port: Port) -> str | None:
        """The upstream commit the port was taken from: its anchor's pin when the clone knows it, else the
        scanned range's base."""
        pin = port.anchor.pin
        if pin and self.context.is_ancestor(pin, pin):
            return pin
        return getattr(self.context, "range_base", None)

    def _as_taken(self, entry, symbol, port: Port):
        """Upstream's definition of ``symbol`` (same path, same qualified name) where the port was taken, or
        None when it did not exist there (the port is ahead of upstream, not behind a removal)."""
        at = self._taken_at(port)
        if not at or self.context.is_ancestor(entry.commit.sha, at):
            return None
        try:
            source = self.context.read_blob(f"{at}:{symbol.path}")
        except Exception:  # the path did not exist there
            return None
        table = symbol_table(source, symbol.path)
        if table.fallback:
            return None
        found = [d for d in table.definitions if d.qualified_name == symbol.qualified_name]
        return signature_of(found[0], table.source, symbol.path) if len(found) == 1 else None

    def _added(self, entry, symbol, new, port: Port, evidence, param_scope: set[str]) -> SymbolVerdict:
        """A new upstream definition the tree already anchors (the tree is ahead).
        Parameters declared not carried, and C++ out-parameters whose every
        field the port returns, are not missing."""
        definition = port.definition
        if new is None:
            return self._base("parse-failure", symbol, NEEDS_REVIEW, None, "fallback",
                              f"{symbol.name} could not be parsed upstream, so it needs review", evidence)
        taken = self._as_taken(entry, symbol, port)
        if taken is not None and taken.body_tokens_hash != new.body_tokens_hash:
            return self._base("readded-definition", symbol, NEEDS_REVIEW, None, "body",
                              f"{symbol.name} is added back upstream with another body than it had where "
                              f"{definition.cite} was taken ({symbol.path} at {self._taken_at(port)[:10]}), so the port runs the old body and it needs review "
                              "rather than IN_SYNC", evidence)
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


def _cited(definition, pairs) -> str:
    """The port's lines a port-has rule read the new form in, as ``file:line``, each once."""
    return ", ".join(dict.fromkeys(f"{definition.file}:{p.start_point[0] + 1}" for _, p in pairs[:3]))


def _item_rules(items: list[Delta]) -> tuple[str, ...]:
    """The ids of the rules that placed ``items``, in order, without repeats."""
    return tuple(dict.fromkeys(item.rule for item in items))
