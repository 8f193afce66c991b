"""Identity rules: which upstream code is the port's, however upstream names or moves it, and who reaches the port however it is named (issue classes 1 to 3).

An anchor names an upstream definition where it was when the port was
written, and reachability finds callers by name. Both must survive what
upstream and the tree do to names: a definition renamed, moved into another
file or extracted into a helper stays the anchored definition
(``moved-definition``); a port imported under another name, re-exported by a
package or run by torch through its class is still called
(``reach-bound-names``); and what a ported definition reads at module level
— aliases, flags, constants, import-time code, here or in a module it
imports — is part of it (``module-level-use``).

The code: ``IdentityRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules (the moves follow ``portq.classifier.moves``, the module
surface ``portq.classifier.module_surface``). It reads the in-tree index and
the upstream side through the table it is part of; it must not import the
verdict table or anything after it, and a rule never names a corpus symbol,
path or commit.
"""

from __future__ import annotations

import builtins
import re
from collections import Counter
from dataclasses import replace
from pathlib import PurePosixPath

from portq.classifier.module_surface import Imported, changed_bindings, import_time_statements, imported_from
from portq.classifier.moves import (BY_NAME_RULE, COPIED_RULE, EDITED_RULE, FOLLOW_ONLY, NARROWED_RULE, REBOUND_RULE,
                                   extraction_only, follows_moves, renamed_unchanged)
from portq.classifier.reading import (_IDENTIFIER, RangeFacts, _walk_nodes, _anchor_evidence, _changed_lines, _file_change,
                                      _is_code_line, _unchanged_moves)
from portq.classifier.rules import Rule, checked
from portq.classifier.imports import import_lines, rebound_names
from portq.core.evidence import Evidence, Kind
from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.signatures import normalise_name
from portq.language.symbols import KIND_CLASS, language_for_path
from portq.tree.anchors import NOT_CARRIED, PORTS
from portq.tree.file_records import Port

RULES = (
    Rule("moved-definition", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored definition whose body one commit carries elsewhere (renamed, moved to another file when a "
         "module is split, or extracted into a helper it now calls) keeps its identity: the move is shown "
         "(anchor lost at SHA: SYMBOL moved to PATH::NAME?) and is cosmetic when the body is unchanged, and every "
         "later change to the carrier is decided against the anchor's port, never not-ported. A body under another name "
         "that changed on the way and dropped a parameter the old definition took is a replacement (callers pass "
         "it something else), not a move: the anchor is not followed there. A chain of moves is followed to its "
         "end, each step as strong as one; a name the chain left that a later commit defines again while the "
         "body's later carrier stays is a sibling, not the port's.",
         "-def _fwd(x_ptr, ...):\n+def _fwd_kernel(x_ptr, ...):   (same body; a later body change to _fwd_kernel is "
         "the port of _fwd's)",
         "classifier.moves.follow_moves, classifier.moves._end_left_names, "
         "classifier.rules.identity.IdentityRules._moved"),
    Rule("extracted-attribute-alias", ("NOT_APPLICABLE",),
         "When a body is extracted into a helper its definition now calls (`moved-definition`), a local the old "
         "body binds once, by a top-level statement `name = param.attr` before every other mention of `name`, "
         "reads as `param.attr` wherever it is read, when `param` is a parameter the body only reads attributes "
         "of (never rebound, called through, passed on or written through): nothing in the body can change the "
         "attribute between the copy and a read, so a helper passed `param.attr` itself receives the same value. "
         "A local bound again, read before its copy, or a parameter the body calls a method of or writes keeps "
         "the local, and the extraction stays a change.",
         "-    block = ctx.block\n-    k[grid](x, BLOCK=block)\n+    launch(x, block=ctx.block)   "
         "(def launch(x, block): k[grid](x, BLOCK=block))",
         "classifier.moves.alias_attribute_reads, classifier.moves.extraction_only, "
         "classifier.rules.identity.IdentityRules._moved"),
    Rule("module-level-use", ("NEEDS_REVIEW",),
         "A module-level alias, flag or constant is part of the surface of every ported definition that reads it, "
         "in its own file or through an import (absolute, relative, aliased, or the module itself): rebinding it "
         "needs review; import-time code changed in a file of copied (pinned) ports runs with the copies and "
         "needs review too. A helper the commit adds to carry a body it extracts out of the ported reader, "
         "under decorators that by the names they call are exactly those the reader lost, is the reader's own "
         "code moved and is decided on the reader; a decorator the reader never had stays for review.",
         "-exp = tl.exp\n+@triton.jit\n+def exp(x): return tl.exp(x.to(tl.float32))   (a ported kernel in "
         "another file does `from .utils import exp`)",
         "classifier.module_surface, classifier.rules.identity.IdentityRules._module_level_use"),
    Rule("reach-bound-names", ("REAL_GAP",),
         "A port is reached under every name bound to it (import aliases, package re-exports, module-level "
         "bindings such as op = Function.apply, class attributes such as forward = host or forward = "
         "staticmethod(host) called as obj.forward(...), an instance attribute self.forward = self.other), as a "
         "bound method handed to a call (timed(op.forward, args)), and through its class for the methods Python "
         "and torch run implicitly (forward/backward via Function.apply and Module.__call__, __init__, __call__, "
         "or a method a constructor binds to one of them): how a caller imports or invokes never turns REAL_GAP "
         "into INERT.",
         "# engine/loss.py: from kernels import xent as _x; _x.apply(logits)  → XentFunction.forward is reached",
         "tree.reachability.Reachability.names_reaching, classifier.rules.definitions.DefinitionRules._gap"),
    Rule("carrier-file-renamed", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "A definition that carries an anchored body since an earlier move (`moved-definition`) keeps carrying it "
         "when a later commit renames its whole file or the package around it (git pairs the two paths): a file "
         "renamed moves every definition in it without changing what any of them is, so a later change to the "
         "carrier at the new path is the port's, never a silent `not-ported`.",
         "R100 pkg_a/ops/forward.py -> pkg_b/ops/forward.py   (then)   -    y = f(x)\n+    y = f(x, eps)",
         "classifier.moves.follow_file_renames, classifier.rules.identity.IdentityRules._moved"),
    Rule("module-to-package", ("NOT_APPLICABLE", "NEEDS_REVIEW"),
         "A module replaced by a package of the same name (`ops/norm.py` deleted, `ops/norm/forward.py` added) "
         "keeps the import path of every definition in it: a definition removed from the module and the one "
         "definition of the same qualified name added under the package are the same definition, followed by "
         "identity even when the commit also rewrites its body (the move is then NEEDS_REVIEW, and later changes "
         "are the port's).",
         "D ops/norm.py (def _fwd: loop over H)\nA ops/norm/kernels.py (def _fwd: one block over H)",
         "classifier.moves.follow_moves, classifier.moves._into_own_package"),
    Rule("moved-by-name", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored (or followed) definition a commit removes, whose body no added definition carries (a rewrite), "
         "while the commit adds exactly one definition of the same qualified name in another file (git pairs no "
         "rename: the file goes away, or the definition leaves it) is the same definition: the move is shown "
         "(anchor lost at SHA: SYMBOL moved to PATH::NAME?) and every later change to it there is decided against "
         "the anchor's port, never a silent not-ported. A C++ name is compared without its namespaces only when no "
         "added definition has them, never without its class. Following by name clears nothing: the move commit "
         "is decided as without it. Two or more such definitions are reported (ambiguous) and followed to none; "
         "a same-named definition added while the old one stays is not followed. An anchored class (an enum the "
         "tree ports as a class, with no method to follow it by) is followed by name the same way.",
         "D src/fwd.h (ops::fwd_kernel)\nA src/kernels/fwd_pipelined.cu (fwd_kernel, rewritten)   (then)   "
         "-    x[j] = x[j] * b;\n+    x[j] = x[j] * b + 1;   → flagged, the port's",
         "classifier.moves._follow_by_name, classifier.moves._follow_classes_by_name, "
         "classifier.rules.identity.IdentityRules._named_move_shown"),
    Rule("rebound-name", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored (or followed) top-level Python function a commit removes, whose body no added definition "
         "carries, while the new side of its file binds the old name at module level to functions the commit adds "
         "there (`old = new`, directly or under a module-level setting): every caller that named it now runs one "
         "of them, so the one keeping the most lines of the old body (at least two, no tie) is the same "
         "definition: the move is shown and every later change to it is decided against the anchor's port, never "
         "a silent not-ported. Following it clears nothing: the move commit is decided as without it. A bound "
         "function sharing fewer lines, or a removal with no binding of the old name, is not followed.",
         "-def make_configs(): ...\n+def make_wide_configs(): ...  (loops reordered)\n+if SETTING == 'wide':\n"
         "+    make_configs = make_wide_configs   (then) a retune of make_wide_configs → flagged, the port's",
         "classifier.moves._follow_rebound_name, classifier.rules.identity.IdentityRules._named_move_shown"),
    Rule("renamed-with-edits", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored (or followed) definition a commit removes while it adds, in the same file, one definition of "
         "the same kind under another name that keeps at least 70% of the old body's code lines and every old "
         "parameter, the old lines making at least half of its body (a kernel renamed while the commit adds a "
         "template flag, a parameter or a branch), is the same definition: the move is shown (anchor lost at SHA: "
         "SYMBOL moved to PATH::NAME?) and every later change to it is decided against the anchor's port, never a "
         "silent not-ported. Following it clears nothing: the move commit is decided as without it. Two such "
         "definitions are followed to none; a rewrite keeping less of the old body, or one dropping a parameter "
         "(a replacement), is not followed.",
         "-template <bool g>\n-__global__ void fwd_v2(x, out, n)\n+template <bool g, bool m>\n+__global__ void "
         "fwd(x, out, n, map)   (body kept, a mapped read added)   (then)   a body fix in fwd → flagged, the port's",
         "classifier.moves._edited_rename, classifier.rules.identity.IdentityRules._named_move_shown"),
    Rule("renamed-narrowed", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored (or followed) definition a commit removes, that no added definition carries, while it adds in "
         "the same file one definition of the same kind under a kindred name (the old name with one word dropped, "
         "added or shortened: a version or variant mark changed) whose parameters are old parameters only (some "
         "dropped, none new: what a caller passed separately now travels in what it already passes) and whose body "
         "is at least 70% old lines, is the same definition with a narrowed interface: the move is shown (anchor "
         "lost at SHA: SYMBOL moved to PATH::NAME?) and every later change to it is decided against the anchor's "
         "port, never a silent not-ported. Following it clears nothing: the move commit is decided as without it "
         "(the removal and its signature change stay flagged). A definition under an unrelated name, one taking a "
         "new input (a replacement), and two kindred candidates are not followed.",
         "-void mix_v2_op(x, out, gate, gate_scales, up, up_scales, n)\n+void mix_op(x, out, gate, up, n)   (body "
         "kept, the scales inside the handles)   (then)   a body fix in mix_op → flagged, the port's",
         "classifier.moves._follow_narrowed, classifier.moves.kindred_names, "
         "classifier.rules.identity.IdentityRules._named_move_shown"),
    Rule("copied-then-removed", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "An anchored (or followed) definition a commit removes with its whole file (deleted), no definition of "
         "that commit carrying it, is followed to the "
         "one definition an earlier commit of the range added (same language, still there, not itself anchored "
         "or a carrier) whose current body carries the removed body both ways (at least 70% of each side's code "
         "lines): upstream copied the code to its new place first and deleted the original later. The move is "
         "shown (anchor lost at SHA: SYMBOL moved to PATH::NAME?) and every later change to the copy is decided "
         "against the anchor's port, never a silent not-ported; the deleting commit is decided as without it. A "
         "copy whose original stays, or whose original leaves a file that stays (one of two variants dropped), is not "
         "followed, nor a body that differs, nor one of two copies.",
         "(1) +src/handle.cu: build_order_kernel (order_kernel's body)   (2) D src/order.cu   (3) a fix in build_order_kernel "
         "→ flagged, the port's",
         "classifier.moves._follow_earlier_copy, classifier.rules.identity.IdentityRules._named_move_shown"),
    Rule("name-reused", ("NOT_APPLICABLE", "NEEDS_REVIEW"),
         "A name that now holds another kind of definition (a kernel's name reused for the launcher that wraps "
         "it) while an added definition carries the old body (the kernel renamed `*_kernel`) no longer names the "
         "port's code: the body is followed to its new name, and the launcher under the old name is not compared "
         "with the ported kernel.",
         "-@triton.jit\n-def fwd(x_ptr, n, B: tl.constexpr): ...\n+@triton.jit\n+def fwd_kernel(x_ptr, n, B: "
         "tl.constexpr): ...\n+def fwd(x): fwd_kernel[grid](x, x.numel(), B=1024)",
         "classifier.moves.follow_moves, classifier.moves._kind"),
    Rule("extracted-launch", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "A launch that one commit moves out of a ported (or carried) definition into a helper the definition now "
         "calls (a `moved-definition` extraction) is still launched by the definition: the helper's launches "
         "count as the definition's new launches, so the launch is never read as stopped. The helper is read as "
         "called: a parameter takes the argument the call passes, and one passed under its own name the caller's "
         "value (the caller's one assignment of it reaching the call on every path, carried only where every name "
         "it binds or reads means the same in the helper).",
         "-    k[grid](x, y, n)\n+    launch_k(x, y)     # def launch_k(x, y): k[grid](x, y, x.numel())",
         "classifier.verdicts.SymbolClassifier._with_extracted_launches"),
    Rule("moved-callee-body", ("NOT_APPLICABLE", "NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC"),
         "A Python definition that one commit adds together with the call that runs it from a ported (or carried) "
         "definition, directly or through other definitions the same commit adds (host code split out of a "
         "ported forward into new helpers), is code the port runs: when a later commit moves that helper's body "
         "elsewhere, the body is followed as the ported definition's own (`moved-definition`), and a later change "
         "to it is decided against the port, never a silent `not-ported`. A definition the ported one does not "
         "call, or one it called before the commit (a definition of its own when the port was written), is not "
         "followed this way.",
         "+    return _host(x, w)        # new: def _host(x, w): ...; _launch(x, y)   def _launch(x, y): k[grid](...)\n"
         "(later) _launch moved to launch.py::launch_k   (later)   -    n = x.size(0)\n+    n = x.numel() // h",
         "classifier.moves._follow_added_callees, classifier.moves.follow_moves, "
         "classifier.rules.identity.IdentityRules._moved"),
    Rule("extracted-declared-param", ("NOT_APPLICABLE",),
         "A helper carrying a body extracted out of an anchored definition (`moved-definition`) takes, as "
         "declared not carried, each of its parameters that the anchored definition's one call of it passes "
         "straight from one of its own parameters the tree declares not carried (`[PARAM]`), unchanged and never "
         "rebound, on both sides of the commit: the helper's parameter receives exactly the input the port does "
         "not have, so the branches it selects are off for the port (`lacked-branch`). A helper input computed "
         "from the declared one, or a caller not found once, maps nothing.",
         "# port: not-carried ops.py::Act.forward[use_fast];  Act.forward calls act_forward(x=x, fast=use_fast)\n"
         " def act_forward(x, fast):\n     if fast:\n-        out = x * torch.sigmoid(x)\n+        out = silu(x)",
         "classifier.rules.identity.IdentityRules._declared_through_extraction, classifier.rules.identity."
         "passed_unchanged"),
    Rule("moved-declared-param", ("NOT_APPLICABLE",),
         "A `[PARAM]` not-carried declaration follows the definition it names by identity: a definition upstream "
         "renamed or moved whole (`moved-definition`, no step an extraction into a helper) takes, as declared not "
         "carried, each parameter of the declared name it has on both sides of the commit, so the branches it "
         "selects are off for the port (`lacked-branch`). A body reached through an extraction (decided by "
         "`extracted-declared-param`), or a parameter the moved definition no longer takes, maps nothing.",
         "# port: not-carried ops/act.py::act[fast];  act moved whole to ops/act_impl.py::act_impl\n"
         " def act_impl(x, fast, BLOCK):\n     if fast:\n-        out = x * torch.sigmoid(x)\n+        out = silu(x)",
         "classifier.rules.identity.IdentityRules._declared_through_move"),
    Rule("shared-port-declaration", ("NOT_APPLICABLE",),
         "A `[PARAM]` not-carried declaration belongs to the in-tree Python definition it sits on: when that "
         "definition also ports another upstream definition taking a parameter of the same name, and the port "
         "itself takes no parameter of that name, the parameter is declared not carried there too, so the "
         "branches it selects are off (`lacked-branch`). A declaration on another in-tree definition, or a port "
         "taking a parameter of that name, shares nothing.",
         "# ports ops.py::entry; ports ops.py::fast_path; not-carried ops.py::entry[smooth]  (def run(x, block))\n"
         " def fast_path(x, BLOCK=128, smooth=True):\n     if smooth:\n-        x = x - x.mean()\n"
         "+        x = x - x.mean(dim=-1, keepdim=True)",
         "classifier.rules.identity.IdentityRules._shared_declarations"),
)


def _respelled_only(changed: list[tuple[str, int, str]], names: set[str]) -> bool:
    """True when the changed lines (``(side, line, text)``) are, side for side, the same lines once
    every name in ``names`` (definitions the commit moves or renames with their bodies) is written
    alike: a class header or an import that only follows a rename (``class _Norm_A(...)`` becoming
    ``class _Norm_B(...)`` while every method moves with it)."""
    def spelled(side: str) -> Counter:
        return Counter(_IDENTIFIER.sub(lambda m: "<moved>" if m.group(0) in names else m.group(0), " ".join(
            text.split())) for s, _, text in changed if s == side)

    return bool(names) and spelled("old") == spelled("new")


def _decorator_callees(table, qualified_name: str) -> Counter | None:
    """The names a Python definition's decorators call or name (``tuned`` for ``@tuned(configs=...)``,
    ``staticmethod``), as a multiset; None when the table has no such definition."""
    definition = next((d for d in table.definitions if d.qualified_name == qualified_name), None) \
        if table is not None and table.tree is not None else None
    if definition is None or definition.node is None:
        return None
    node = definition.node
    decorators = [c for c in node.named_children if c.type == "decorator"] if node.type == "decorated_definition" else []
    return Counter(d.text.decode("utf-8", errors="replace").lstrip("@").split("(")[0].strip() for d in decorators)


class IdentityRules:
    """The identity rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _moved(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], ports: list[Port],
               facts: RangeFacts) -> SymbolVerdict | None:
        """Rule ``moved-definition`` (``classifier.moves``): the move of an anchored body is shown and,
        when the body is carried unchanged, is no change to the port; a later change to the carrier is
        decided against the ports of what the anchor names."""
        key = (symbol.old_path or symbol.path, symbol.qualified_name)
        made = facts.moves.made_by(entry.position, key)
        if made is not None and symbol.change != "removed" and made.how == "extracted":
            made = None  # an extraction is decided on the definition that keeps the rest (below)
        if made is not None and set(FOLLOW_ONLY) & set(made.via):
            made = None  # followed by name, edited rename or earlier copy only: the move commit is decided as without it (``_named_move_shown``)
        if made is not None:
            lost = [Evidence(kind=Kind.ANCHOR_LOST, message=made.lost, side="upstream-new", path=made.new[0],
                             symbol=symbol.name, subject=made.new[1])]
            lost += [replace(_anchor_evidence(p.anchor, f"{p.definition.qualified_name} ports {p.anchor.reference}"),
                             subject=p.anchor.reference) for p in ports]
            if made.exact:
                return self._base(("moved-definition", *made.via), symbol, NOT_APPLICABLE, "cosmetic", "body",
                                  f"upstream {made.how} {symbol.qualified_name} to {made.new[0]}::{made.new[1]} with the "
                                  "same body, so the port follows it there: cosmetic rather than a gap (update the "
                                  "anchor)", lost)
            return self._base(("moved-definition", *made.via), symbol, NEEDS_REVIEW, None, "body",
                              f"upstream {made.how} {symbol.qualified_name} to {made.new[0]}::{made.new[1]} and changed "
                              "its body on the way, so a reviewer compares the new body with the port", lost)
        into = facts.moves.made_into(entry.position, (symbol.path, symbol.qualified_name)) \
            if symbol.change == "added" else None
        if into is not None and set(FOLLOW_ONLY) & set(into.via):
            into = None
        if into is not None:
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} is where this commit {into.how} the ported {into.old[1]} "
                              f"({into.old[0]}), so it is the port's code, not a coverage hole; the move itself is "
                              "decided on the definition it left", [Evidence(
                                  kind=Kind.COSMETIC, message=f"carries the body of {into.old[1]}", side="upstream-new",
                                  path=symbol.path, symbol=symbol.name, subject=into.old[1])])
        # a narrowed rename changed the interface: what only follows its name is not thereby cosmetic
        here = [m for m in facts.moves.by_entry.get(entry.position, []) if NARROWED_RULE not in m.via]
        extracted = next((m for m in here if m.old == key and m.how == "extracted"), None)
        extraction_tables = (
            self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path),
            self._table(next((s.new_blob for s in entry.symbols if (s.path, s.qualified_name) == extracted.new),
                             None), extracted.new[0])) if extracted is not None and ports else None
        if extraction_tables is not None and extraction_only(*extraction_tables, extracted, here):
            aliased = () if extraction_only(*extraction_tables, extracted, here, aliases=False) \
                else ("extracted-attribute-alias",)
            return self._base(("moved-definition", *aliased), symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name}'s body moved unchanged into {extracted.new[0]}::{extracted.new[1]}, which it "
                              "now calls (only the call and what is returned differ), so cosmetic rather than a change "
                              "the port must follow; later changes to the helper are the port's",
                              [Evidence(kind=Kind.COSMETIC, message=f"body extracted into {extracted.new[1]}",
                                        side="upstream-new", path=extracted.new[0], symbol=symbol.name,
                                        subject=extracted.new[1])],
                              ports=[f"{p.definition.cite} {p.definition.qualified_name}" for p in ports])
        if symbol.kind == KIND_CLASS and symbol.change in ("added", "removed") \
                and symbol.name in renamed_unchanged(entry, self._table):
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"class {symbol.name} is {'the old' if symbol.change == 'removed' else 'the new'} name "
                              "of a class this commit renames or moves with the same body, so cosmetic rather than a "
                              "change the port must follow; its methods are followed to the new class",
                              [Evidence(kind=Kind.COSMETIC, message="class renamed with the same body",
                                        side="upstream-new", path=symbol.path, symbol=symbol.name)])
        if here and symbol.name == "<toplevel>" and self._imports_follow(entry, symbol, here):
            return self._base("moved-definition", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              "the changed imports only follow definitions this commit moves ("
                              + ", ".join(f"{m.old[1]} → {m.new[1]}" for m in here[:3]) + "), so cosmetic rather than "
                              "a change to anything ported",
                              [Evidence(kind=Kind.COSMETIC, message="imports follow moved definitions",
                                        side="upstream-new", path=symbol.path, symbol=symbol.name)])
        if here and ports and symbol.change == "modified" and follows_moves(
                self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path),
                symbol.qualified_name, here, renamed_unchanged(entry, self._table)):
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
        if here and symbol.change == "modified" and follows_moves(
                self._table(symbol.old_blob, symbol.old_path or symbol.path), self._table(symbol.new_blob, symbol.path),
                symbol.qualified_name, here, renamed_unchanged(entry, self._table)):
            pairs = ", ".join(f"{m.old[1]} → {m.new[1]}" for m in here[:3])
            return self._base(("moved-definition", *move.via), symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} carries the body of the ported {origin} {since} and changes only the "
                              f"names of definitions this commit moves ({pairs}), so cosmetic rather than a change "
                              "the port must follow",
                              [Evidence(kind=Kind.COSMETIC, message=f"follows moved definitions: {pairs}",
                                        side="upstream-new", path=symbol.path, symbol=symbol.name)])
        scaffold = self._extracted_scaffold(entry, symbol, move, origin, since, facts)
        if scaffold is not None:  # ``extracted-scaffold``: the carried statements kept, only what wraps them changed
            return scaffold
        moved_out = [m for m in here if m.old == key and m.how == "extracted"]
        inherited = self._declared_through_extraction(entry, symbol, move, origin_paths, bare, origin, facts)
        followed = self._declared_through_move(symbol, move, origin_paths, bare, origin, facts) - inherited
        verdict = self._ported(entry, symbol, paths | origin_paths, carried, moved_out, inherited | followed)
        verdict.rules = list(checked("moved-definition", *move.via, *(["carrier-file-renamed"] if move.new[0] !=
                                                                      symbol.path else []),
                                     *(["extracted-launch"] if moved_out else []), *verdict.rules))
        if followed and "lacked-branch" in verdict.rules:
            verdict.rules = list(checked(*verdict.rules, "moved-declared-param"))
            verdict.reason = f"{symbol.name}'s {', '.join(sorted(followed))} is the parameter the tree declares not " \
                f"carried on {origin}, moved here with its body; " + verdict.reason
        if inherited and "lacked-branch" in verdict.rules:
            verdict.rules = list(checked(*verdict.rules, "extracted-declared-param"))
            verdict.reason = f"{symbol.name}'s {', '.join(sorted(inherited))} receives what the tree declares not " \
                f"carried on {origin}; " + verdict.reason
        verdict.reason = f"{symbol.name} carries the body of the ported {origin} {since}; " + verdict.reason
        return verdict

    def _named_move_shown(self, entry: EntryChanges, symbol: TouchedSymbol, facts: RangeFacts,
                          verdict: SymbolVerdict) -> SymbolVerdict:
        """Rules ``moved-by-name``, ``renamed-with-edits`` and ``copied-then-removed``: ``verdict`` (the removed
        definition's, decided as if nothing followed it) with the move shown ("anchor lost at SHA: SYMBOL moved
        to PATH::NAME?", or every candidate when more than one same-named definition was added: followed to
        none). It changes no verdict: a definition followed by its name, through an edited rename or to an
        earlier copy may have changed on the way, so the move commit stays as flagged as it was."""
        if symbol.change != "removed":
            return verdict
        key = (symbol.old_path or symbol.path, symbol.qualified_name)
        made = facts.moves.made_by(entry.position, key)
        followed = next((rule for rule in FOLLOW_ONLY if made is not None and rule in made.via), None)
        if followed is not None:
            message, path = made.lost, made.new[0]
            note = {BY_NAME_RULE: f"; the one definition of that name another file gains, {made.new[0]}::{made.new[1]}, "
                                  "is followed as this one from here on",
                    EDITED_RULE: f"; the one definition this commit adds in the same file keeping most of its body "
                                 f"and every parameter, {made.new[1]}, is followed as this one from here on",
                    COPIED_RULE: f"; the one copy of its body an earlier commit added, {made.new[0]}::{made.new[1]}, "
                                 "is followed as this one from here on",
                    NARROWED_RULE: f"; the one definition this commit adds in the same file under a kindred name, "
                                   f"keeping mostly old lines and only old parameters, {made.new[1]}, is followed as "
                                   "this one from here on",
                    REBOUND_RULE: f"; the file binds its old name to {made.new[1]}, which this commit adds and which "
                                  "keeps the most of its body, so that one is followed as this one from here on"
                    }[followed]
        else:
            message, path = facts.moves.lost_line(entry.position, entry.commit.sha, key), symbol.path
            note = "; more than one definition of that name appears elsewhere in this commit, so none is followed"
        if message is None:
            return verdict
        shown = [Evidence(kind=Kind.ANCHOR_LOST, message=message, side="upstream-new", path=path, symbol=symbol.name)]
        shown += [replace(_anchor_evidence(p.anchor, f"{p.definition.qualified_name} ports {p.anchor.reference}"),
                          subject=p.anchor.reference) for p in self._ports(symbol, self._paths(symbol, facts))]
        verdict.evidence = [*verdict.evidence, *shown]
        verdict.rules = list(checked(*verdict.rules, followed or BY_NAME_RULE))
        verdict.reason = verdict.reason + note
        return verdict

    def _shared_declarations(self, symbol: TouchedSymbol, ports: list[Port], sides) -> dict[str, str]:
        """Rule ``shared-port-declaration``: parameter -> the upstream definition it is declared not carried on,
        for each ``[PARAM]`` declaration sitting on an in-tree Python definition of ``ports`` (one porting
        ``symbol``) that names another upstream definition the same in-tree definition ports (not one ``symbol``
        is ported through, such as the definition it carries under a new name), where ``symbol``
        takes a parameter of that name (on either side) and the in-tree definition takes none. Empty when none."""
        if language_for_path(symbol.path) != "python":
            return {}
        found: dict[str, str] = {}
        through = {(p.anchor.path, p.anchor.bare_symbol) for p in ports}  # its own anchors: not a sibling
        for port in ports:
            definition = port.definition
            if definition.language != "python" or definition.signature is None:
                continue
            own = {p.normalised for p in definition.signature.params}
            here = [a for a in self.index.anchors if a.upstream == self.upstream and a.file == definition.file
                    and a.definition == definition.qualified_name]
            ported = {(a.path, a.bare_symbol) for a in here if a.kind == PORTS}
            for anchor in here:
                if anchor.kind == NOT_CARRIED and anchor.param and anchor.bare_symbol != symbol.name \
                        and (anchor.path, anchor.bare_symbol) in ported - through \
                        and normalise_name(anchor.param) not in own:
                    found.setdefault(anchor.param, anchor.bare_symbol)
        if not found:
            return {}
        taken = {p.normalised for side in sides() if side is not None for p in side.params}
        return {param: origin for param, origin in found.items() if normalise_name(param) in taken}

    def _declared_through_move(self, symbol: TouchedSymbol, move, origin_paths: set[str], bare: str, origin: str,
                               facts: RangeFacts) -> set[str]:
        """Rule ``moved-declared-param``: the ``[PARAM]`` names the tree declares not carried on ``origin``, the
        anchored definition ``symbol`` carries the body of, that ``symbol`` takes as a parameter on both sides of
        the commit, when every move from ``origin`` to ``symbol`` renamed or moved the whole definition (none
        extracted a body into a helper with parameters of its own): the declaration follows the definition by
        identity, so its parameter of that name is the one declared. Empty otherwise."""
        if symbol.change != "modified" or language_for_path(symbol.path) != "python":
            return set()
        declared = {a.param for a in self.index.not_carried_for(self.upstream, origin_paths, bare, origin) if a.param}
        if not declared:
            return set()
        step, seen = move, 0
        while True:  # the chain of moves back to the anchored definition, none an extraction
            if step is None or step.how == "extracted" or seen > 64:
                return set()
            if step.old == step.origin:
                break
            step, seen = facts.moves.carrying(step.old, step.position), seen + 1
        taken = []
        for blob, path, lines in ((symbol.old_blob, symbol.old_path or symbol.path, symbol.old_lines),
                                  (symbol.new_blob, symbol.path, symbol.new_lines)):
            signature = self._upstream_signature(blob, path, symbol.qualified_name, lines)
            if signature is None:
                return set()
            taken.append({p.normalised for p in signature.params})
        return {p for p in declared if normalise_name(p) in taken[0] and normalise_name(p) in taken[1]}

    def _declared_through_extraction(self, entry: EntryChanges, symbol: TouchedSymbol, move, origin_paths: set[str],
                                     bare: str, origin: str, facts: RangeFacts) -> set[str]:
        """Rule ``extracted-declared-param``: the parameters of ``symbol``, a helper carrying a body extracted out of
        the anchored definition ``origin``, that receive a parameter the tree declares not carried on ``origin``
        (``[PARAM]``), passed unchanged by the anchored definition's one call of the helper on both sides of the
        commit. Such a parameter is as absent for the port as the one it receives, so the branches it selects in
        the helper are off (``lacked-branch``). Empty when the helper is not an extraction, nothing is declared,
        or the caller cannot be found once on each side."""
        if move.how != "extracted" or symbol.change != "modified" or language_for_path(symbol.path) != "python":
            return set()
        declared = {normalise_name(a.param) for a in self.index.not_carried_for(self.upstream, origin_paths, bare, origin)
                    if a.param}
        if not declared or not entry.commit.parents:
            return set()
        here = (symbol.path, symbol.qualified_name)
        callers = {move.origin} | {key for key, m in facts.moves.carriers.items()
                                   if key != here and m.origin == move.origin and m.how != "extracted"
                                   and facts.moves.carrying(key, entry.position) is not None}
        sides = []
        for sha, helper_path in ((entry.commit.parents[0], symbol.old_path or symbol.path), (entry.commit.sha, symbol.path)):
            found = []
            for path, qualified in callers:
                table = self._table(f"{sha}:{path}", path)
                found += [d.node for d in (table.definitions if table is not None and not table.fallback else ())
                          if d.node is not None and d.qualified_name == qualified]
            helper = self._table(f"{sha}:{helper_path}", helper_path)
            nodes = [d.node for d in (helper.definitions if helper is not None and not helper.fallback else ())
                     if d.node is not None and d.qualified_name == symbol.qualified_name]
            if len(found) != 1 or len(nodes) != 1:
                return set()
            sides.append(passed_unchanged(found[0], nodes[0], symbol.name, declared))
        return sides[0] if sides[0] and sides[0] == sides[1] else set()

    def _module_level_use(self, entry: EntryChanges, symbol: TouchedSymbol,
                          settled: frozenset[str] = frozenset()) -> SymbolVerdict | None:
        """Rule ``module-level-use`` (``classifier.module_surface``): a module-level alias, flag or constant
        rebound here is part of the surface of every ported definition that reads it — in this file or
        through an import from it; import-time code changed in a file of copied (pinned) ports runs with
        the copies. None when neither holds. ``settled`` names bindings whose readers in this file read them
        only on paths their ports never take (``declared-off-read``): those readers are not its surface."""
        if language_for_path(symbol.path) != "python":
            return None
        platform_choice = self._module_platform_choice(symbol)  # bindings keep the port's values
        if platform_choice is not None:
            return platform_choice
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path)
        changed = changed_bindings(old_table, new_table, _unchanged_moves(entry))
        # a binding the tree declares not-carried is not the port's surface (rule ``declared-binding``)
        changed = {name for name in changed if not any(not a.param for a in self.index.not_carried_for(
            self.upstream, {symbol.path, symbol.old_path or symbol.path}, name, name))}
        ported = [a for a in self.index.anchors if a.kind == PORTS and a.upstream == self.upstream]
        for path in sorted({a.path for a in ported}):
            if path == symbol.path:
                table, imported = new_table, Imported(names={n: n for n in changed})
                blob = symbol.new_blob
            else:
                blob = f"{entry.commit.sha}:{path}"
                table = self._table(blob, path)
                imported = imported_from(table, path, symbol.path)
            if table is None or table.tree is None or not (imported.names or imported.modules):
                continue
            reads = {local: original for local, original in imported.names.items() if original in changed
                     and not (path == symbol.path and original in settled)}
            anchors = [a for a in ported if a.path == path]
            for definition in table.definitions:
                if not definition.node or not any(a.matches_name(definition.name, definition.qualified_name)
                                                  for a in anchors):
                    continue
                text = self._carried_text(blob, path, definition)  # less members it does not carry
                words = set(_IDENTIFIER.findall(text))
                used = next((original for local, original in sorted(reads.items()) if local in words
                             and not self._metadata_only(definition, local, path)), None)
                used = used or next((name for module in sorted(imported.modules) for name in sorted(changed)
                                     if f"{module}.{name}" in text), None)
                if used is None:
                    continue
                if path == symbol.path and self._fresh_in_old_module(used, old_table) \
                        and definition.qualified_name in {s.qualified_name for s in entry.symbols if s.path == path}:
                    continue  # a name the old module never named: this commit changes its reader, judged on its own
                if self._extracted_with_decorators(entry, symbol, path, definition.qualified_name, used):
                    continue  # the reader's own body, carried out of it with what decorated it: judged on the reader
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

    def _extracted_with_decorators(self, entry: EntryChanges, symbol: TouchedSymbol, path: str, reader: str,
                                   used: str) -> bool:
        """True when ``used`` is the definition this commit added in ``symbol``'s module to carry a body it
        extracted out of the ported ``reader`` (a ``moved-definition`` extraction, decided on the reader), and the
        decorators the helper is bound under are, by the names they call, exactly those the reader lost in the
        commit: the module-level binding is the reader's own code and decoration, moved. A helper under a
        decorator the reader never had binds something new, and stays for a reviewer."""
        moves = getattr(self, "_range_moves", None)
        move = next((m for m in (moves.by_entry.get(entry.position, ()) if moves is not None else ())
                     if m.how == "extracted" and m.old == (path, reader) and m.new[0] == symbol.path
                     and re.split(r"::|\.", m.new[1])[-1] == used), None)
        helper = next((s for s in entry.symbols if (s.path, s.qualified_name) == move.new and s.change == "added"),
                      None) if move is not None else None
        caller = next((s for s in entry.symbols if (s.path, s.qualified_name) == (path, reader)
                       and s.change == "modified"), None)
        if helper is None or caller is None:
            return False
        before = _decorator_callees(self._table(caller.old_blob, caller.old_path or caller.path), reader)
        after = _decorator_callees(self._table(caller.new_blob, caller.path), reader)
        carried = _decorator_callees(self._table(helper.new_blob, helper.path), helper.qualified_name)
        if before is None or after is None or carried is None:
            return False
        return before - after == carried and not (after - before)

    @staticmethod
    def _fresh_in_old_module(name: str, old_table) -> bool:
        """True when ``name`` is no builtin and the old side of the module never names it (``new-import-use``)."""
        if old_table is None or old_table.source is None or name in dir(builtins):
            return False
        source = old_table.source.decode("utf-8", errors="replace")
        return not re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", source)

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
        changed = [(side, line, text) for side, line, text in _changed_lines(change, symbol, old_table, new_table,
                                                                             outside_definitions=True)
                   if _is_code_line(text, symbol.path)]
        code = [(side, line) for side, line, _ in changed]
        names = {re.split(r"::|\.", key[1])[-1] for m in moves for key in (m.old, m.new)} \
            | renamed_unchanged(entry, self._table)
        if code and _respelled_only(changed, names):
            return True
        lines = {"old": import_lines(old_table.tree.root_node), "new": import_lines(new_table.tree.root_node)}
        if not code or not all(line in lines[side] for side, line in code):
            return False
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


def passed_unchanged(caller, helper, helper_name: str, declared: set[str]) -> set[str]:
    """The parameters (normalised) of ``helper`` that ``caller``'s one call of ``helper_name`` passes straight from
    one of ``caller``'s own parameters in ``declared`` (an identifier argument, by keyword or position, that the
    caller never rebinds). Empty when the call is not there exactly once or unpacks arguments."""
    def text(node) -> str:
        return node.text.decode(errors="replace")

    caller, helper = (n.child_by_field_name("definition") if n.type == "decorated_definition" else n
                      for n in (caller, helper))
    if caller is None or helper is None:
        return set()
    calls = [n for n in _walk_nodes(caller) if n.type == "call" and n.child_by_field_name("function") is not None
             and text(n.child_by_field_name("function")) == helper_name]
    parameters_node, caller_parameters = helper.child_by_field_name("parameters"), caller.child_by_field_name("parameters")
    if len(calls) != 1 or calls[0].child_by_field_name("arguments") is None or parameters_node is None \
            or caller_parameters is None:
        return set()

    def names(node) -> list[str]:
        found = []
        for parameter in node.named_children:
            name = parameter if parameter.type == "identifier" else parameter.child_by_field_name("name") \
                or next((c for c in parameter.named_children if c.type == "identifier"), None)
            if name is not None and name.type == "identifier":
                found.append(normalise_name(text(name)))
        return found

    own = set(names(caller_parameters))
    rebound = {normalise_name(text(n.child_by_field_name("left"))) for n in _walk_nodes(caller)
               if n.type in ("assignment", "augmented_assignment") and n.child_by_field_name("left") is not None
               and n.child_by_field_name("left").type == "identifier"}
    parameters = names(parameters_node)
    received: set[str] = set()
    for position, argument in enumerate(a for a in calls[0].child_by_field_name("arguments").named_children
                                        if a.type != "comment"):
        if argument.type in ("list_splat", "dictionary_splat"):
            return set()
        if argument.type == "keyword_argument":
            key, value = normalise_name(text(argument.child_by_field_name("name"))), argument.child_by_field_name("value")
        elif position < len(parameters):
            key, value = parameters[position], argument
        else:
            return set()
        source = normalise_name(text(value)) if value is not None and value.type == "identifier" else None
        if source in declared and source in own and source not in rebound:
            received.add(key)
    return received
