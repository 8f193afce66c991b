"""Attribution rules: a change outside definitions matters through the ported definitions that use it (DESIGN §6).

Module-level lines, class bodies and new types are attributed by use:
what the changed lines name, and whether a ported definition names it too.
Some module-level changes are decided by what they are, before any use: a
module moved byte for byte to another path behind a stub that still binds its
ported names (``moved-module``: the ported definitions moved with the lines
they read, cosmetic); C++ prototypes of siblings no anchor names
(``declared-sibling``: a prototype's parameter names are its own,
not-ported); explicit instantiations that leave upstream instantiating exactly
the port's types (``port-instantiations``, IN_SYNC). Example diff (IN_SYNC for a
port that instantiates ``sort_rows<float>`` only)::

    -#ifdef ENABLE_FP32
     INSTANTIATE_SORT(float);
    -#endif
    -INSTANTIATE_SORT(half);

The code: ``AttributionRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules to module-level lines, class bodies, imports and new types
(with the cosmetic and form proofs for such lines). It reads the in-tree index
and the upstream side through the table it is part of; it must not import the
verdict table or anything after it, and a rule never names a corpus symbol,
path or commit.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap

from portq.classifier.reading import (RangeFacts, _COMMON_IDENTIFIERS, _IDENTIFIER, _anchor_evidence, _changed_lines, _file_change,
                                      _comment_lines, _error_spans, _is_code_line, _names_used_by_others, _same_ast_evidence,
                                      _stands_for, _strip_comment, _unchanged_moves, new_side_evidence)
from portq.classifier.rules import Rule, branches, form, namespace_wrap
from portq.classifier.rules.definitions import self_test_definitions
from portq.classifier.rules.parameters import cpp_function_named
from portq.classifier.rules.scope import _scope_names, asserted_values, off_path_reads
from portq.classifier.imports import (_module_stem, import_bindings, import_lines, rebound_names,
                                      reexport_target, relative_module_path)
from portq.core.evidence import Evidence, Kind
from portq.core.paths import is_test_path
from portq.core.model import IN_SYNC, INERT, NEEDS_REVIEW, NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.signatures import node_text
from portq.language.symbols import KIND_CLASS, KIND_CUDA_KERNEL, KIND_TRITON_KERNEL, language_for_path, symbol_table
from portq.tree.anchors import NOT_CARRIED, Anchor

_PROTOTYPE = re.compile(r"^(?!return\b|typedef\b|using\b|template\b|#)[\w:<>,*&\s]*?[\w>*&]\s+[*&]*\s*"
                        r"([A-Za-z_]\w*)\s*\(([^;{}()=]*)\)\s*;$")
"""A one-line forward declaration of a function (``rule removed-forward-declaration``): its name, its parameters."""

_BUILTINS = frozenset(dir(builtins))
"""Names Python binds without an import: a new import of one shadows it, so its users change unchanged."""

RULES = (
    Rule("toplevel-use", ("NEEDS_REVIEW", "NOT_APPLICABLE"),
         "Changed module-level lines that name something a ported definition of the file uses need a reader "
         "(NEEDS_REVIEW); lines that name nothing a ported definition uses are NOT_APPLICABLE/not-ported. A name "
         "the ported definitions use only in decorators the port does not carry is not attributed to it. A C++ "
         "line in a declaration without a body (an explicit instantiation or a prototype, over any number of "
         "lines, read from the text) names only the function it declares: its parameter names are its own. A "
         "word a ported C++ definition's body declares for itself before any other mention (a local such as "
         "`constexpr int granularity = 16;`) is its own in every use, never a file-scope name it shares.",
         "-BLOCK = 128\n+BLOCK = 256  (the ported kernel reads BLOCK)",
         "classifier.rules.attribution.AttributionRules._container, classifier.reading._declared_function"),
    Rule("restored-prototype", ("IN_SYNC",),
         "Changed C++ lines outside definitions whose every line naming something a ported definition uses is an "
         "added line of a prototype (a declaration without a body) that the file had, line for line (spacing "
         "aside), at the commit every port of those definitions pins: the port reflects that commit, so it "
         "already has the interface the prototype states: IN_SYNC. A prototype with another text, a removed "
         "line naming what a port uses, or a port pinning nothing stays flagged.",
         "+void scale_cuda(torch::Tensor x, float s);  (as at the pinned commit; the ported scale calls scale_cuda)",
         "classifier.rules.attribution.AttributionRules._restored_prototypes"),
    Rule("port-instantiations", ("IN_SYNC",),
         "Changed C++ lines outside definitions that are only explicit template instantiations (written out, or "
         "through a one-parameter instantiation macro of the file) and preprocessor conditionals, after which "
         "upstream instantiates each touched template the tree carries with exactly the type arguments the "
         "port instantiates its mirror with, none under a conditional on either side, where before it did "
         "not: the port already has the new form (issue class 8, a partial revert among them), IN_SYNC citing "
         "the port's instantiation. Templates a whole-definition `not-carried` declaration names are not the "
         "port's; any other changed line, or a type set the port does not have, stays flagged.",
         "-#ifdef ENABLE_FP32\n INSTANTIATE_SORT(float);\n-#endif\n-INSTANTIATE_SORT(half);\n"
         "  (the port: template void sort_rows<float>(Args&, cudaStream_t);)",
         "classifier.rules.attribution.AttributionRules._port_instantiations, "
         "classifier.rules.attribution._instantiations"),
    Rule("declared-sibling", ("NOT_APPLICABLE",),
         "Changed C++ lines outside definitions that are only `#include` lines and function prototypes "
         "(declarations without a body) of names no anchor of the file names and no ported definition uses: a "
         "prototype's parameter names are its own, so words it shares with a ported definition are no use of "
         "anything the port reads; it declares a sibling the port lacks, NOT_APPLICABLE/not-ported like the "
         "definition it declares. A prototype of a mirrored or called name, or any other changed line, stays "
         "with `toplevel-use`.",
         "+void invokeResidualNorm(void* x, const void* w, int dims, int num, float eps, cudaStream_t st);\n"
         "  (the ported invokeNorm also has dims, num, eps)",
         "classifier.rules.attribution.AttributionRules._declared_siblings, classifier.rules.attribution._prototypes"),
    Rule("moved-callee", ("NOT_APPLICABLE",),
         "A ported Python definition whose only change is the module it reaches a helper through "
         "(`utils.pred(x)` becoming `copy_utils.pred(x)`, both names module imports of its file), where the same "
         "commit removes the helper's top-level definition from the old module and adds it to the new one with "
         "the same `ast` (decorators and body), calls the same code: the definition is followed by identity, so "
         "cosmetic. A moved helper whose body differs, one still defined in the old module, or any other change "
         "beside the qualifier stays flagged.",
         "-    m = utils.pred(x, 3)\n+    m = copy_utils.pred(x, 3)   (def pred moved verbatim from utils.py to copy_utils.py)",
         "classifier.rules.attribution.AttributionRules._moved_callee, classifier.rules.attribution.moved_callee_program"),
    Rule("moved-module", ("NOT_APPLICABLE",),
         "A module whose whole old text the same commit writes byte for byte at another path (the same blob), "
         "its old path left as a stub that defines none of its definitions and still binds, at module level, "
         "the name of every ported definition that is not a kernel (through a dispatcher, say): the ported "
         "definitions moved with the module-level lines they read, unchanged, and the stub is a new module no "
         "ported definition reads, so the old path's changed lines are NOT_APPLICABLE/cosmetic (DESIGN §5: a "
         "whole file moved with its definitions unchanged). A move that changes the text, or a stub that stops "
         "binding a ported name, stays with `toplevel-use`.",
         "-def norm_rows(x, w): ...   (the whole file now at ops/cuda/norm.py, the same blob)\n"
         "+norm_rows = Dispatcher('norm_rows').make_caller()",
         "classifier.rules.attribution.AttributionRules._moved_module"),
    Rule("import-rebinding", ("NOT_APPLICABLE",),
         "Changed imports that rebind only names no ported definition of the file uses are "
         "NOT_APPLICABLE/not-ported.",
         "+from typing import Tuple  (no ported definition names Tuple)",
         "classifier.rules.attribution.AttributionRules._import_change"),
    Rule("unused-import", ("NOT_APPLICABLE",),
         "Changed imports whose rebound names no code of the module reads outside its import lines, on either "
         "side (a comment line, such as the import commented out in place, reads nothing), and that the module "
         "does not list in `__all__` (and not a package's `__init__.py`, which exists to re-export), bind nothing "
         "the module runs: NOT_APPLICABLE/cosmetic.",
         "-from einops import rearrange  (no line of the module names rearrange)",
         "classifier.rules.attribution.AttributionRules._import_change, ._import_readers"),
    Rule("not-carried-import", ("NOT_APPLICABLE",),
         "Changed imports whose rebound names only definitions the tree declares not carried read (each reader "
         "named by, or inside, a whole-definition `not-carried` declaration; nothing at module level and no ported "
         "definition reads them) change only what the port does not carry: NOT_APPLICABLE/not-carried, citing the "
         "declaration.",
         "-from torch.cuda.amp import custom_fwd\n+from .amp import custom_fwd  (only the not-carried Fn.forward "
         "is decorated with it)",
         "classifier.rules.attribution.AttributionRules._import_change, ._import_readers"),
    Rule("new-import-use", ("NOT_APPLICABLE",),
         "Changed imports whose only rebindings a ported definition of the file uses are names the old module "
         "never mentions (and no builtin) matter only through those definitions: they could not use the name "
         "before, so this commit changes each of them, and each is compared in its own right: "
         "NOT_APPLICABLE/not-ported.",
         "-from .utils import cdiv\n+from .utils import cdiv, is_hip  (the ported wrapper now calls is_hip())",
         "classifier.rules.attribution.AttributionRules._import_change, "
         "classifier.rules.identity.IdentityRules._module_level_use"),
    Rule("removed-import-use", ("NOT_APPLICABLE",),
         "Changed imports whose rebindings a ported definition of the file uses are each a name the new module "
         "never mentions (no builtin), or one the old module never mentioned (`new-import-use`), with at least "
         "one of the first kind: the import names an object that stays where it is imported from, so its "
         "removal matters only through the module's own readers, each of which no longer names it (or could "
         "not before) and so is changed by this commit and compared in its own right: NOT_APPLICABLE/not-ported. "
         "An import the new module still names, one rebound to another object, or any other module-level line "
         "changed with it is decided as before.",
         "-from .modes import Mode\n-def scale(x, mode: Mode):\n+def scale(x, mode: str):",
         "classifier.rules.attribution.AttributionRules._import_change"),
    Rule("removed-binding-use", ("NOT_APPLICABLE",),
         "Changed module-level lines that only remove bindings of module-private names (a leading underscore: "
         "no other module imports them) that the new module never names matter only through the definitions "
         "that read them: each of those no longer reads the name, so this commit changes it, and it is compared "
         "in its own right with the old side's value: NOT_APPLICABLE/not-ported.",
         "-_ON: tl.constexpr = tl.constexpr(1)\n     ...\n-    if FLAG == _ON:\n+    if FLAG:",
         "classifier.rules.attribution.removed_private_bindings, "
         "classifier.rules.attribution.AttributionRules._removed_bindings"),
    Rule("new-type-use", ("NEEDS_REVIEW", "NOT_APPLICABLE"),
         "A new type nothing ports matters through its ported users: one the commit leaves unchanged needs a "
         "reader (NEEDS_REVIEW); when the commit changes every user (compared in their own right) or none "
         "exists, NOT_APPLICABLE/not-ported.",
         "+struct Params { int n; };  (used by a ported kernel this commit does not touch)",
         "classifier.rules.attribution.AttributionRules._added_type"),
    Rule("moved-reader", ("NEEDS_REVIEW",),
         "A definition that carries an anchored body since an earlier commit of the range moved it "
         "(`moved-definition`: renamed, or carried into another name) is the ported definition when changed "
         "module-level lines are attributed by use: a binding it reads — the configs its `autotune` decorator "
         "launches it with among them, which choose what runs rather than describe it — needs a reader "
         "(NEEDS_REVIEW) like one the anchored name reads. Bindings no ported or carried definition reads stay "
         "NOT_APPLICABLE/not-ported.",
         "-CONFIGS = make_configs([1024], 1)\n+CONFIGS = make_configs([1024], [1])\n"
         "  (@triton.autotune(CONFIGS, ...) on dequant_kernel, renamed from the anchored _deq_kernel)",
         "classifier.rules.attribution.AttributionRules._carried_definitions, "
         "classifier.rules.attribution._tunes_with"),
    Rule("declared-binding", ("NOT_APPLICABLE",),
         "Changed Python module-level lines that all lie in statements at the top of the module binding only "
         "names the tree declares `not-carried` (a whole-definition declaration of that name in that file) change "
         "nothing the port carries, even where a ported definition reads the binding upstream: the tree states "
         "that it carries its own in its place (a fixed tile for an autotuning table). NOT_APPLICABLE/not-carried, "
         "citing the declaration. A changed line in any other statement (one that also binds an undeclared name, "
         "or sits under an `if`) keeps `toplevel-use`.",
         "     triton.Config({\"BLOCK\": 64}, num_warps=4),\n+    triton.Config({\"BLOCK\": 128}, num_warps=8),\n"
         "  (in CONFIGS = [...]; `# portq: not-carried upstream::path::CONFIGS` in the tree)",
         "classifier.rules.attribution.AttributionRules._declared_binding, "
         "classifier.rules.identity.IdentityRules._module_level_use"),
    Rule("declared-off-read", ("NOT_APPLICABLE",),
         "Changed Python module-level lines that are all import lines, whose names (those a ported definition "
         "uses) no other module-level statement names and each ported definition reads only inside the body of "
         "an `if NAME not in LITERAL:` (NAME bound at most once there) where the tree declares NAME not carried "
         "for that definition (`[PARAM]`) and its port asserts, in a statement of its own body, that NAME lies in "
         "a literal whose every value is in LITERAL: for the port the branch is never taken, so the binding "
         "reaches nothing it carries. NOT_APPLICABLE/not-carried, citing the declaration. A read on any other "
         "path, no declaration, a port without the assert (a copy carries the branch) or admitting a value the "
         "branch takes, or any other changed line stays with `toplevel-use`.",
         "+import math\n     ...\n     if width not in [16, 32, 64, 128, 256]:\n"
         "         extra = 2 ** math.ceil(math.log2(width)) - width   (the port: `assert width in {16, 32, 64, "
         "128}`, `[width]` declared not carried)",
         "classifier.rules.attribution.AttributionRules._declared_off_reads, "
         "classifier.rules.scope.asserted_values, classifier.rules.scope.off_path_reads"),
    Rule("declared-specialisation", ("NOT_APPLICABLE",),
         "Changed C++ lines outside the definitions the reader extracts that all lie (`#include` lines aside) in "
         "explicit specialisations `template <> R f<T>(...) { ... }` of functions the tree declares `not-carried` "
         "as a whole for that file: a specialisation is the declared function's own body for one type, so the "
         "change lies in code the port states it does not carry, even where its lines name what a ported "
         "definition also uses. NOT_APPLICABLE/not-carried, citing the declaration. A line in a specialisation "
         "of an undeclared function, or anywhere else, stays with `toplevel-use`.",
         "template <>\nvoid launch_bw<float>(float *g, const float *dy, int rows, int width, cudaStream_t s) {\n"
         "-  int threads = width;\n+  int threads = min(width, 1024);   (`// portq: not-carried "
         "upstream:path::launch_bw` in the tree)",
         "classifier.rules.attribution.AttributionRules._declared_specialisations, "
         "classifier.rules.attribution.specialised_function_at"),
    Rule("specialisation-body", ("NOT_APPLICABLE",),
         "Changed C++ lines outside the definitions the reader extracts that all lie (`#include` lines aside) in "
         "explicit specialisations `template <> R f<T>(...) { ... }` (or are their `template <>` heads) are each "
         "function's own body for one type, decided as that body: not-carried where the tree declares the "
         "function not carried; not-ported where the commit brings the function into the file (no definition or "
         "specialisation of that name before) and no tree file ports, declares or names it; cosmetic where the "
         "function is ported and each of its specialisations is on both sides with the same tokens once "
         "qualifiers are erased (as `cosmetic-qualifiers` does: `inline` gained or lost is kept, since an explicit "
         "specialisation is an ordinary function for the one-definition rule) and pointer casts read as one "
         "spelling (`cosmetic-cast-spelling`). The entry's "
         "toplevel is NOT_APPLICABLE with the most informative of those justifications. A specialisation of a "
         "ported function that changes a value, one added to or removed from a ported function, a specialisation "
         "of a function the file had before that the tree neither ports nor declares, or any other changed line "
         "stays with `toplevel-use`.",
         "template <>\n__global__ void ln_fw<__half>(__half *out, const __half *inp, int width) {\n"
         "-  float4 *out_f4 = (float4 *)out + blockIdx.x * width;\n"
         "+  float4 *out_f4 = reinterpret_cast<float4 *>(out) + blockIdx.x * width;   (ln_fw ported)",
         "classifier.rules.attribution.AttributionRules._specialisation_bodies, "
         "classifier.rules.attribution.specialisations_of"),
    Rule("unread-constant", ("NOT_APPLICABLE",),
         "Changed C++ lines outside definitions that all lie (`#include` lines aside) in namespace-scope "
         "`constexpr` variable declarations (on both sides) change only the values of the constants they declare: a constant expression runs "
         "nothing at run time, so the change reaches code only through the constant's readers. When no ported "
         "definition of the file reads a declared name and no file of the tree names it (beyond a `constexpr` "
         "declaration of it, a vendored copy's own), the constant is not the port's, whatever words its new "
         "value's expression shares with ported definitions: NOT_APPLICABLE/not-ported. A ported reader, a tree "
         "file that names the constant, a declaration that is not `constexpr` (its initialiser may run code) or "
         "any other changed line stays with `toplevel-use`, and so does a constant named by another upstream "
         "file that holds a ported definition (read at the commit).",
         "-    constexpr dim_t max_blocks = 65535;\n+    constexpr dim_t max_blocks = std::numeric_limits<int32_t>::max();"
         "\n  (the ported block_size reads max_threads and std::max; nothing in the tree names max_blocks)",
         "classifier.rules.attribution.AttributionRules._unread_constant, "
         "classifier.rules.attribution.constexpr_declared"),
    Rule("removed-pinned-unparsed", ("INERT",),
         "A parse error in the old side of a file's lines outside definitions no longer keeps "
         "`removed-pinned-definition` from deciding when the error lies in text the commit deletes: every changed "
         "line in or beside an error span is a deleted line of the old side, the new side reads without error "
         "there, no ported definition is lost to the error, and what those lines stand for among the names ported "
         "definitions use belongs only to definitions this commit deletes whose ports are pinned copies no "
         "non-test code reaches. The unparsed text goes with the deleted definitions (an instantiation list of "
         "a removed template tree-sitter cannot read), so the lines are INERT as `removed-pinned-definition` "
         "says. A line of a run of the file's macro calls that a formatter wrapped as one expression (a call's "
         "arguments or closing parenthesis on another line than its name) stands, like a one-line call, for "
         "the macros it calls and the definitions their bodies name, not for the words it passes; a line "
         "re-indented in place (the same text, blanks around it aside, as many unchanged lines of its hunk "
         "before it on each side) is no changed line. An error beside a kept definition, in an added line, or "
         "in lines a reached copy uses stays `parse-failure`.",
         "-MAKE_FUNCS(float)\n-MAKE_FUNCS(half)      (no semicolon: tree-sitter cannot read the list)\n"
         "-template void dump<float>(float* a, int n);   (dump deleted; its pinned copy unreached)",
         "classifier.rules.attribution.AttributionRules._removed_pinned_unparsed, "
         "classifier.rules.attribution._reindented_in_place, classifier.reading._wrapped_macro_calls, "
         "classifier.verdicts.SymbolClassifier._decided_by_definitions"),
    Rule("removed-pinned-class", ("INERT",),
         "A class or struct the commit deletes whole, whose ported members it deletes too, each a copy pinned "
         "to an upstream commit that no non-test code reaches (`removed-pinned-definition`), is gone with them: "
         "deleting a class removes only what it declares, so the words its body shares with other ported "
         "definitions (a member name another class also declares, a library type) change nothing they use. "
         "INERT when no other ported definition of the file names the class and no non-test file of the tree "
         "names it outside a copy of the class itself. A class another definition or tree file names, or with a "
         "member a caller reaches, stays with `toplevel-use`.",
         "-class Handle {\n-    lib_handle_t m_handle;\n-    Handle() { lib_create(&m_handle); }   (pinned @1a2b3c4; "
         "nothing in the engine names Handle)\n-};",
         "classifier.rules.attribution.AttributionRules._removed_pinned_class, "
         "classifier.verdicts.SymbolClassifier._decided_by_definitions"),
    Rule("removed-forward-declaration", ("NOT_APPLICABLE",),
         "Changed C/C++ lines outside definitions that are only `#include` lines and deleted one-line forward "
         "declarations of functions the new side of the file defines once with the same parameter text: a "
         "declaration runs nothing, and the program still compiles only if every use now sees the definition, "
         "so what runs is the same: cosmetic. Read from the lines' text, so it holds where tree-sitter cannot "
         "parse a declaration (a function macro before its return type) as where it can. An added declaration, an explicit "
         "instantiation, a declaration whose function the file no longer defines, or one with other parameters "
         "(a default argument it gave) stays with the other rules.",
         "-DEVICE_INLINE void row_norm(vec4& dst);   (row_norm(vec4& dst) { ... } now defined above its users)",
         "classifier.rules.attribution.AttributionRules._removed_prototypes, "
         "classifier.verdicts.SymbolClassifier._decided_by_definitions"),
)


def imports_confirmed(root, source: bytes | None) -> bool:
    """Whether the module-level imports read from the tree-sitter tree ``root`` of Python ``source`` can be
    trusted: the tree has no syntax error, or (the grammar misreading valid code elsewhere, such as
    ``return x, *rest``) Python's own parser reads ``source`` and finds the same import lines, the same
    names bound to the same targets and every function and class (nested ones too) on the same lines, so
    what each definition's text names is read whole."""
    if not root.has_error:
        return True
    if source is None:
        return False
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    lines: set[int] = set()
    bound: dict[str, str] = {}
    spans = {(n.lineno, n.end_lineno) for n in ast.walk(module)
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines |= set(range(node.lineno, node.end_lineno + 1))
            for alias in node.names:
                if isinstance(node, ast.Import):
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
                        if "." in alias.name:
                            bound[alias.name] = alias.name
                elif node.module != "__future__" or node.level:
                    base = "." * node.level + (node.module or "")
                    full = f"{base}.{alias.name}" if not base.endswith(".") else f"{base}{alias.name}"
                    bound[alias.asname or alias.name] = full
            continue
        stack.extend(ast.iter_child_nodes(node))
    read = {name: b.target for name, b in import_bindings(root).items()}
    definitions, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "class_definition"):
            definitions.add((node.start_point[0] + 1, node.end_point[0] + 1))
        stack.extend(node.children)
    return import_lines(root) == lines and read == bound and definitions == spans


def removed_private_bindings(old_root, new_root, lines: list[int]) -> list[str]:
    """The names bound by the module-level statements of ``old_root`` that hold every one of ``lines`` (1-based,
    old side), when each such statement is an assignment to one module-private name (``_ON = ...``, ``_T: X =
    ...``) that ``new_root`` never names at all; empty when any line lies elsewhere or any name is still named."""
    statements = []
    for line in lines:
        holding = next((n for n in old_root.named_children if n.start_point[0] + 1 <= line <= n.end_point[0] + 1), None)
        if holding is None:
            return []
        if holding not in statements:
            statements.append(holding)
    names: list[str] = []
    for statement in statements:
        inner = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_child_count == 1 else None
        left = inner.child_by_field_name("left") if inner is not None and inner.type == "assignment" else None
        if left is None or left.type != "identifier" or not left.text.decode().startswith("_") \
                or left.text.decode().startswith("__"):
            return []
        names.append(left.text.decode())
    stack, named = [new_root], set()
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            named.add(node.text.decode())
        stack.extend(node.children)
    return [] if set(names) & named else list(dict.fromkeys(names))


def constexpr_declared(table, line: int) -> set[str] | None:
    """The names declared by the namespace-scope ``constexpr`` variable declaration of ``table``'s C++
    source holding ``line`` (1-based): the identifiers of its declarators, never of their initialisers; None
    when the line lies in anything else (``unread-constant``)."""
    if table is None or table.tree is None or table.fallback or table.language != "cpp":
        return None
    node = table.tree.root_node
    while True:
        body = node.child_by_field_name("body") if node.type == "namespace_definition" else node
        inner = next((n for n in (body.named_children if body is not None else [])
                      if n.start_point[0] + 1 <= line <= n.end_point[0] + 1), None)
        if inner is None:
            return None
        if inner.type not in ("namespace_definition", "declaration_list"):
            break
        node = inner
    if inner.type != "declaration" or not any(c.type == "type_qualifier" and c.text == b"constexpr"
                                              for c in inner.children):
        return None
    names: set[str] = set()
    for declarator in inner.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
        if target is None or target.type != "identifier":
            return None  # an array, pointer or function declarator: not a plain constant
        names.add(target.text.decode("utf-8", errors="replace"))
    return names or None


def _undefined_line_node(table, line: int):
    """The syntax node at the first non-blank column of ``line`` (1-based) of ``table``'s C++ source, when
    that line lies in no definition the table holds (explicit specialisations are such lines); else None."""
    if table is None or table.fallback or table.tree is None or table.enclosing(line) is not None:
        return None
    lines = table.source.decode("utf-8", errors="replace").splitlines()
    if not 0 < line <= len(lines):
        return None
    column = len(lines[line - 1].encode("utf-8")) - len(lines[line - 1].lstrip().encode("utf-8"))
    return table.tree.root_node.descendant_for_point_range((line - 1, column), (line - 1, column))


def specialised_function_at(table, line: int) -> str | None:
    """The name of the C++ function definition holding ``line`` (1-based) of ``table``'s source, when it is
    one the table's definitions lack (an explicit specialisation ``template <> void f<float>(...)``); else
    None."""
    node = _undefined_line_node(table, line)
    while node is not None and node.type != "function_definition":
        node = node.parent
    named = cpp_function_named(node) if node is not None else None
    return named[0] if named is not None else None


def specialisation_headed_at(table, line: int) -> str | None:
    """The name of the explicit specialisation (``template <>`` declaration of a function definition the
    table's definitions lack) whose ``template <>`` head ``line`` (1-based) is; else None."""
    node = _undefined_line_node(table, line)
    while node is not None and node.type != "template_declaration":
        node = node.parent
    if node is None or node.start_point[0] != line - 1:
        return None
    parameters = node.child_by_field_name("parameters")
    if parameters is None or [c.type for c in parameters.children] != ["<", ">"]:
        return None
    definition = next((c for c in node.children if c.type == "function_definition"), None)
    if definition is None or definition.start_point[0] < line - 1:
        return None
    named = cpp_function_named(definition)
    return named[0] if named is not None else None


def specialisations_of(table, name: str) -> dict[str, object]:
    """The explicit specialisations of function ``name`` in ``table``'s source (function definitions the
    table's definitions lack), keyed by their declarator with blanks dropped (``f<__half>(...)``)."""
    found: dict[str, object] = {}
    stack = [table.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            named = cpp_function_named(node)
            if named is not None and named[0] == name and table.enclosing(node.start_point[0] + 1) is None:
                declarator = node.child_by_field_name("declarator")
                found["".join(node_text(declarator).split()) if declarator is not None else ""] = node
            continue
        stack.extend(node.children)
    return found


def _tunes_with(node, word: str) -> bool:
    """True when ``word`` is named in the arguments of an ``autotune`` decorator of the decorated
    definition ``node``: the configs the kernel is launched with, not metadata (``moved-reader``)."""
    for decorator in (c for c in node.children if c.type == "decorator"):
        text = decorator.text.decode("utf-8", errors="replace")
        match = re.match(r"@\s*(?:[\w.]*\.)?autotune\s*\(", text)
        if match and word in _IDENTIFIER.findall(text[match.end():]):
            return True
    return False


def _reindented_in_place(change, symbol: TouchedSymbol) -> set[tuple[str, int]]:
    """``(side, line)`` of each C/C++ '-' line and its '+' line at the same place of one hunk (as many unchanged
    lines of the hunk before each) that differ only in the blanks around their text: a line re-indented in
    place, the same tokens where they were. Empty when either side of the file holds a raw string literal,
    where blanks are text."""
    if change is None or language_for_path(symbol.path) != "cpp":
        return set()
    found: set[tuple[str, int]] = set()
    for hunk in change.hunks:
        if any('R"' in t for t in (*hunk.removed_text, *hunk.added_text)):
            return set()
        added = {}
        for line, text in zip(hunk.added_lines, hunk.added_text):
            before = (line - hunk.new_start) - sum(1 for a in hunk.added_lines if a < line)
            added.setdefault((before, text.strip()), []).append(line)
        for line, text in zip(hunk.removed_lines, hunk.removed_text):
            before = (line - hunk.old_start) - sum(1 for r in hunk.removed_lines if r < line)
            twins = added.get((before, text.strip()))
            if text.strip() and twins:
                found |= {("old", line), ("new", twins.pop(0))}
    return found


class AttributionRules:
    """The attribution rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _container(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                   facts: RangeFacts | None = None) -> SymbolVerdict | None:
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
        if code and language_for_path(symbol.path) == "cpp":  # inner lines of a /* ... */ block are comment too
            inside = {"old": _comment_lines(self._table(symbol.old_blob, symbol.old_path or symbol.path)),
                      "new": _comment_lines(self._table(symbol.new_blob, symbol.path))}
            code = [(side, line, text) for side, line, text in code if line not in inside[side]]
            reindented = _reindented_in_place(change, symbol)
            code = [(side, line, text) for side, line, text in code if (side, line) not in reindented]
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
        if symbol.name == "<toplevel>" and language_for_path(symbol.path) == "cpp" \
                and all(form.is_include(text) for _, _, text in code):
            return self._base("cosmetic-includes", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              "the changed lines outside definitions are #include lines, which name files rather "
                              "than anything a ported definition uses, so cosmetic rather than NEEDS_REVIEW",
                              [Evidence(kind=Kind.COSMETIC, side=f"upstream-{code[0][0]}", path=symbol.path,
                                        line=code[0][1], quote=code[0][2].strip(), symbol=symbol.name,
                                        message="only #include lines changed")])
        if symbol.name == "<toplevel>" and language_for_path(symbol.path) == "cpp":
            built = self._default_build_lines(symbol)
            if built is not None:
                return built
        if symbol.kind == KIND_CLASS and symbol.change == "modified" and self._same_python_ast(symbol):
            return self._base("cosmetic-ast", 
                symbol, NOT_APPLICABLE, "cosmetic", "body",
                f"{symbol.name} has the same Python AST before and after (formatting only), so cosmetic "
                "rather than a change to anything ported",
                [_same_ast_evidence(symbol)],
            )
        if symbol.kind == KIND_CLASS and symbol.change == "modified" and self._same_python_ast_without_passes(symbol):
            return self._base("redundant-pass", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"{symbol.name} has the same Python AST before and after once pass statements in "
                              "blocks holding other statements (which do nothing) are dropped: formatting only, so "
                              "cosmetic rather than a change to anything ported",
                              [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                        message="the same Python AST once redundant pass statements are dropped")])
        if symbol.name == "<toplevel>" and language_for_path(symbol.path) == "python":
            tables = self._side_tables(symbol)
            sources = [t.source.decode("utf-8", errors="replace") for t in tables] \
                if all(t is not None and t.source is not None for t in tables) else None
            if sources is not None and form.same_without_annotations(*sources, outside_definitions=True):
                return self._module_cosmetic("cosmetic-annotations", symbol,
                                             "the lines outside definitions changed only type annotations or the "
                                             "module docstring (the same module once they are erased), so cosmetic "
                                             "rather than a change to anything ported",
                                             "the same module-level program once annotations and docstrings are "
                                             "erased")
            if sources is not None and form.same_without_redundant_passes(*sources, outside_definitions=True):
                return self._module_cosmetic("redundant-pass", symbol,
                                             "the lines outside definitions changed only by pass statements in blocks "
                                             "holding other statements, which do nothing (the same module once they "
                                             "are dropped and annotations and docstrings erased), so cosmetic rather "
                                             "than a change to anything ported",
                                             "the same module-level program once redundant pass statements are "
                                             "dropped")
            if sources is not None and form.same_without_logging(*sources, form.module_loggers(*sources),
                                                                  outside_definitions=True):
                return self._module_cosmetic("log-only", symbol,
                                             "the lines outside definitions changed only by `import logging` and a "
                                             "logger bound from `logging.getLogger`, which compute nothing a ported "
                                             "definition returns or launches, so cosmetic rather than a change to "
                                             "anything ported",
                                             "the same module-level program once log-only statements are dropped")
            moved = self._moved_module(entry, symbol, anchors)
            if moved is not None:
                return moved
            platforms = self._module_platform_choice(symbol)
            if platforms is not None:
                return platforms
            imports = self._import_change(entry, symbol, paths, anchors, code)
            if imports is not None:
                return imports
            renamed = self._renamed_module_import(entry, symbol)
            if renamed is not None:
                return renamed
            removed = self._removed_bindings(symbol, paths, anchors, code)
            if removed is not None:
                return removed
        carried = self._carried_definitions(entry, symbol, anchors, facts) if symbol.name == "<toplevel>" else {}
        scaffold = self._scaffold_imports(entry, symbol, paths, anchors, code, facts) if carried else None
        if scaffold is not None:  # ``extracted-scaffold``: imports only the scaffolding of carried helpers reads
            return scaffold
        referenced = self._ported_identifiers(symbol, paths, anchors, carried)
        if symbol.name == "<toplevel>" and language_for_path(symbol.path) == "cpp":
            instantiated = self._port_instantiations(symbol, anchors, code)
            if instantiated is not None:
                return instantiated
            declared = self._declared_siblings(symbol, anchors, code, referenced)
            if declared is not None:
                return declared
            specialised = self._declared_specialisations(symbol, paths, code) \
                or self._specialisation_bodies(entry, symbol, paths, code)
            if specialised is not None:
                return specialised
            wrapped = self._namespace_wrap(entry, symbol, code)
            if wrapped is not None:
                return wrapped
        if symbol.kind == KIND_CLASS and symbol.change == "added":
            return self._added_type(entry, symbol, referenced.get(symbol.name, []))
        tables = {"old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                  "new": self._table(symbol.new_blob, symbol.path)}
        names_by_line = {(side, line): _names_used_by_others(tables[side], line, text, symbol)
                         for side, line, text in code} if symbol.name == "<toplevel>" else \
            {(side, line): set(_IDENTIFIER.findall(_strip_comment(text, symbol.path))) for side, line, text in code}
        named = set().union(*names_by_line.values()) if names_by_line else set()
        shared = sorted(w for w in named & set(referenced) if w not in _COMMON_IDENTIFIERS and len(w) > 2)
        shared = [w for w in shared if not self._decorator_only_unported(w, symbol, paths, anchors, carried)]
        shared = self._self_test_words(symbol, paths, shared, referenced)
        if shared and symbol.name == "<toplevel>" and language_for_path(symbol.path) == "cpp":
            unread = self._unread_constant(entry, symbol, code, tables, referenced)
            if unread is not None:
                return unread
        if shared and symbol.name == "<toplevel>" and language_for_path(symbol.path) == "cpp":
            restored = self._restored_prototypes(entry, symbol, paths, code, names_by_line, shared, referenced)
            if restored is not None:
                return restored
        if shared and symbol.name == "<toplevel>":
            declared = self._declared_binding(symbol, paths, code)
            if declared is not None:
                return declared
            declared = self._declared_off_reads(symbol, paths, code, shared, referenced)
            if declared is not None:
                return declared
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
            gone = self._removed_pinned_users(entry, symbol, {u for w in shared for u in referenced[w]})
            if gone:
                return self._base("removed-pinned-definition", symbol, INERT, None, "body",
                                  f"the change outside definitions touches {', '.join(shared[:4])}, which among the "
                                  f"ported definitions only {', '.join(gone[:4])} use"
                                  f"{'s' if len(gone) == 1 else ''}; upstream deletes "
                                  f"{'it' if len(gone) == 1 else 'them'} in this commit and the pinned copies, which "
                                  "no non-test code reaches, still hold them with these lines: the lines go with the "
                                  "deleted definitions, INERT rather than NEEDS_REVIEW",
                                  [Evidence(kind=Kind.TOPLEVEL, message=f"changed line names {word}, used only by "
                                            f"{', '.join(gone[:3])}, deleted in this commit",
                                            side=f"upstream-{side}", path=symbol.path, line=line, quote=text.strip(),
                                            symbol=symbol.name)])
            moved = user in carried and not any(a.matches_name(re.split(r"::|\.", user)[-1], user)
                                                          for a in anchors)
            return self._base(("toplevel-use", "moved-reader") if moved else "toplevel-use",
                symbol, NEEDS_REVIEW, None, "body",
                f"the change outside definitions touches {', '.join(shared[:4])}, which the ported "
                f"{user} uses" + (f" (it carries the anchored {carried.get(user)} since upstream moved "
                                  "it)" if moved else "") + ", so a reviewer must judge it rather than NOT_APPLICABLE",
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

    def _unread_constant(self, entry: EntryChanges, symbol: TouchedSymbol, code, tables,
                         referenced) -> SymbolVerdict | None:
        """Rule ``unread-constant``: every changed code line lies in a namespace-scope ``constexpr``
        declaration (``constexpr_declared``), no ported definition of the file reads a declared name
        (``referenced``), no tree file names one outside a ``constexpr`` declaration of it, and no other upstream
        file holding a ported definition names one at the commit; else None."""
        declared: set[str] = set()
        code = [(side, line, text) for side, line, text in code if not form.is_include(text)]
        for side, line, _ in code:
            names = constexpr_declared(tables[side], line)
            if names is None:
                return None
            declared |= names
        if not declared or declared & set(referenced):
            return None
        sources = self.index.tree_sources()
        if sources is None:
            return None
        for name in sorted(declared):
            word = re.compile(rf"\b{re.escape(name)}\b")
            own = re.compile(rf"\bconstexpr\b[^;=]*\b{re.escape(name)}\s*[={{]")
            for data in sources.values():
                text = data.decode("utf-8", errors="replace")
                if word.search(text) and any(word.search(t) and not own.search(t) for t in text.splitlines()):
                    return None
        words = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(declared)) + r")\b")
        paths = {symbol.path, symbol.old_path or symbol.path}
        for path in dict.fromkeys(a.path for a in self.index.anchors if a.upstream == self.upstream
                                  and a.kind == "ports" and a.path not in paths):
            other = self._upstream_file(entry.commit.sha, path)
            if other is None or words.search(other.decode("utf-8", errors="replace")):
                return None  # a ported definition elsewhere may read the constant
        names = ", ".join(sorted(declared)[:4])
        side, line, text = code[-1]
        return self._base("unread-constant", symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"the changed lines outside definitions only declare the constexpr constant"
                          f"{'s' if len(declared) > 1 else ''} {names}, which no ported definition of "
                          f"{symbol.path} reads and no file of the tree names: a constant expression runs nothing, "
                          "so the change reaches only the constant's readers, none of them the port's: not-ported "
                          "rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.TOPLEVEL, message=f"changed lines declare only {names}, which nothing "
                                    "ported reads", side=f"upstream-{side}", path=symbol.path, line=line,
                                    quote=text.strip(), symbol=symbol.name)])

    def _removed_pinned_unparsed(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                                 broken: SymbolVerdict, facts: RangeFacts | None = None) -> SymbolVerdict | None:
        """Rule ``removed-pinned-unparsed``: the lines outside definitions ``broken`` (a ``parse-failure`` on
        the old side, in or around the changed lines) set aside, decided by ``removed-pinned-definition``,
        when every changed line near an error span of the old side is deleted text that, among the names
        ported definitions use, stands only for definitions this commit deletes whose pinned copies no
        non-test code reaches; else None."""
        failure = next((e for e in broken.evidence if e.kind == Kind.PARSE_FAILURE), None)
        if symbol.name != "<toplevel>" or failure is None or failure.side != "upstream-old" \
                or failure.subject is not None or self._ports(symbol, paths):
            return None  # a lost ported definition or a broken macro a port expands names its subject
        change = _file_change(entry, symbol)
        table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        if change is None or table is None or table.tree is None:
            return None
        lines = _changed_lines(change, symbol, None, None, outside_definitions=False)
        kept = {" ".join(text.split()) for at, _line, text in lines if at == "new"}
        changed = [line for at, line, text in lines if at == "old" and _is_code_line(text, symbol.path)
                   and " ".join(text.split()) not in kept]  # a line re-added with other spacing is not deleted
        near = sorted({line for first, last in _error_spans(table.tree.root_node)
                       for line in changed if first - 3 <= line <= last + 3})
        if not near:
            return None
        referenced = self._ported_identifiers(symbol, paths, self.index.anchors_for_path(self.upstream, paths))
        users = {u for line in near for w in _stands_for(table, line, symbol) & set(referenced) for u in referenced[w]}
        if not self._removed_pinned_users(entry, symbol, users):
            return None
        container = self._container(entry, symbol, paths, facts)
        if container is None or container.verdict != INERT or "removed-pinned-definition" not in container.rules:
            return None
        container.rules = [*container.rules, "removed-pinned-unparsed"]
        container.reason = (f"{container.reason}; the parse error at {failure.path}:{failure.line} (upstream-old) "
                            f"lies in deleted lines that stand only for {', '.join(sorted(users)[:4])}")
        container.evidence = [*container.evidence, failure]
        return container

    def _removed_pinned_class(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str]) -> SymbolVerdict | None:
        """Rule ``removed-pinned-class``: INERT for a class deleted whole with its ported members, each a
        pinned copy no non-test code reaches, when nothing else ported or in the tree names the class; else None."""
        if symbol.kind != KIND_CLASS or symbol.change != "removed":
            return None
        inside = (symbol.qualified_name + "::", symbol.qualified_name + ".")
        members = {s.qualified_name for s in entry.symbols if s.change == "removed" and s.qualified_name.startswith(inside)
                   and (s.old_path or s.path) == (symbol.old_path or symbol.path)}
        ported = {m for m in members if self.index.ports_for(self.upstream, paths, re.split(r"::|\.", m)[-1], m)}
        if not ported or self._removed_pinned_users(entry, symbol, ported) != sorted(ported):
            return None
        referenced = self._ported_identifiers(symbol, paths, self.index.anchors_for_path(self.upstream, paths))
        if any(user != symbol.qualified_name and not user.startswith(inside) for user in referenced.get(symbol.name, [])):
            return None  # another ported definition names the class
        sources = self.index.tree_sources()
        if sources is None:
            return None
        word = re.compile(rf"\b{re.escape(symbol.name)}\b")
        for path, data in sources.items():
            lines = [n for n, text in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1)
                     if word.search(text)]
            if not lines or is_test_path(path):
                continue
            table = symbol_table(data, path)
            copies = [(d.start_line, d.end_line) for d in table.definitions
                      if d.kind == KIND_CLASS and d.name == symbol.name] if not table.fallback else []
            if any(not any(first <= n <= last for first, last in copies) for n in lines):
                return None  # the tree names the class outside a copy of it
        gone = sorted(ported)
        return self._base("removed-pinned-class", symbol, INERT, None, "body",
                          f"upstream deletes {symbol.name} whole with its ported member{'s' if len(gone) > 1 else ''} "
                          f"{', '.join(gone[:4])}, whose pinned copies no non-test code reaches, and nothing else "
                          "ported or in the tree names the class: its body's lines go with it, INERT rather than "
                          "NEEDS_REVIEW",
                          [Evidence(kind=Kind.TOPLEVEL, side="upstream-old", path=symbol.old_path or symbol.path,
                                    symbol=symbol.name,
                                    message=f"class {symbol.name} deleted with {', '.join(gone[:3])}")])

    def _removed_prototypes(self, entry: EntryChanges, symbol: TouchedSymbol,
                            broken: SymbolVerdict | None = None) -> SymbolVerdict | None:
        """Rule ``removed-forward-declaration``: cosmetic when the changed C/C++ lines outside definitions are
        only ``#include`` lines and deleted forward declarations of functions the new side of the file defines
        with the same parameter text, read from the lines' text (past a parse error, ``broken``, or on a file
        that parses); else None."""
        if symbol.name != "<toplevel>" or language_for_path(symbol.path) != "cpp" or symbol.change != "modified":
            return None
        change = _file_change(entry, symbol)
        old = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new = self._table(symbol.new_blob, symbol.path)
        if change is None or old is None or new is None or new.tree is None or new.source is None:
            return None
        code = [(side, line, text) for side, line, text in _changed_lines(change, symbol, old, new, outside_definitions=True)
                if _is_code_line(text, symbol.path) and not form.is_include(text)]
        if not code or any(side != "old" for side, _line, _text in code):
            return None
        source = new.source.decode("utf-8", errors="replace")
        declared = []
        for _side, _line, text in code:
            prototype = _PROTOTYPE.match(text.strip())
            if prototype is None:
                return None
            name, parameters = prototype.group(1), prototype.group(2)
            spaced = r"\s*".join(re.escape(token) for token in re.findall(r"\w+|[^\w\s]", parameters))
            if len(re.findall(rf"\b{re.escape(name)}\s*\(\s*{spaced}\s*\)\s*(?:const\s*)?\{{", source)) != 1:
                return None  # not defined once on the new side with the same parameters
            declared.append(name)
        return self._base("removed-forward-declaration", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"the changed lines outside definitions are #include lines and deleted forward "
                          f"declarations of {', '.join(declared[:4])}, which the file now defines with the same "
                          "parameters: a declaration of a function the file defines runs nothing, so cosmetic "
                          "rather than NEEDS_REVIEW"
                          + (f" (read from the lines' text: {broken.reason.split(',')[0]})" if broken else ""),
                          [Evidence(kind=Kind.COSMETIC, side="upstream-old", path=symbol.old_path or symbol.path,
                                    line=code[0][1], quote=code[0][2].strip(), symbol=symbol.name,
                                    message=f"forward declaration of {declared[0]} deleted; the file defines it")])

    def _removed_pinned_users(self, entry: EntryChanges, symbol: TouchedSymbol, users: set[str]) -> list[str]:
        """Rule ``removed-pinned-definition``, for lines outside definitions: ``users`` (the ported upstream
        definitions of the file that name a changed line), sorted, when the entry deletes every one of them and
        every port of each is a copy pinned to an upstream commit that no non-test code reaches, none a template
        nothing names or calls (``uncalled-definition`` decides those); else []."""
        paths = {symbol.path, symbol.old_path or symbol.path}
        deleted = {s.qualified_name: s for s in entry.symbols if s.change == "removed" and (s.old_path or s.path) in paths}
        if not users or not users <= set(deleted):
            return []
        for user in users:
            removed = deleted[user]
            ports = self.index.ports_for(self.upstream, {removed.path, removed.old_path or removed.path}, removed.name,
                                         removed.qualified_name)
            if not ports:
                return []
            for port in ports:
                definition = port.definition
                callers = self.index.reachability.callers(definition.name, definition.file, definition.qualified_name)
                if not port.anchor.pin or callers.non_test:
                    return []
                if not callers.test and not self._named_upstream(entry, removed) and self._template(removed):
                    return []  # an uncalled template: no code, its deletion cosmetic (``uncalled-definition``)
        return sorted(users)

    def _self_test_words(self, symbol: TouchedSymbol, paths: set[str], words: list[str], referenced) -> list[str]:
        """``words`` less the module's own self-tests (``self-test-definition``: a ``__main__`` block calling
        ``test()``) whose every ported user is a self-test too, none of whose ports the tree calls."""
        if language_for_path(symbol.path) != "python" or not words:
            return words
        tests: set[str] = set()
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path) if blob else None
            if table is not None and table.source is not None:
                tests |= self_test_definitions(table.source)

        def uncalled(name: str) -> bool:
            ports = self.index.ports_for(self.upstream, paths, name, name)
            return all(not (c := self.index.reachability.callers(p.definition.name, p.definition.file,
                                                                  p.definition.qualified_name)).non_test
                       and not c.test for p in ports)

        return [w for w in words if not (w in tests and all(u in tests and uncalled(u) for u in referenced[w]))]

    def _port_instantiations(self, symbol: TouchedSymbol, anchors: list[Anchor], code) -> SymbolVerdict | None:
        """``port-instantiations``: every changed C++ line outside definitions is a preprocessor conditional or
        an explicit instantiation (written out, or a call of an instantiation macro the file defines), and for
        each template they instantiate that the tree does not declare not carried, upstream's new file
        instantiates, unconditionally, exactly the type arguments the port instantiates its mirror with (and
        its old file did not). None otherwise."""
        sources = {"old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                   "new": self._table(symbol.new_blob, symbol.path)}
        if any(t is None or t.source is None for t in sources.values()):
            return None
        texts = {side: t.source.decode("utf-8", errors="replace") for side, t in sources.items()}
        macros = {side: _instantiation_macros(text) for side, text in texts.items()}
        touched: list[str] = []
        for side, _, text in code:
            if _PREPROCESSOR_CONDITIONAL.match(text):
                continue
            item = _instantiation(text, macros[side])
            if item is None:
                return None
            if item[0] not in touched:
                touched.append(item[0])
        if not touched:
            return None
        items = {side: _instantiations(text, macros[side]) for side, text in texts.items()}
        declared = self.index.anchors_for_path(self.upstream, {symbol.path, symbol.old_path or symbol.path}, NOT_CARRIED)
        agreed: list[tuple[str, Anchor, list[str], int, str]] = []
        for name in touched:
            if any(not a.param and a.bare_symbol == name for a in declared):
                continue  # a template the port does not carry: its instantiations are not the port's
            mirrors = [a for a in anchors if a.kind != NOT_CARRIED and a.bare_symbol == name and a.definition]
            if len({(a.file, a.definition) for a in mirrors}) != 1:
                return None
            mirror = mirrors[0]
            port_source = self.index.source(mirror.file)
            if port_source is None:
                return None
            port_text = port_source.decode("utf-8", errors="replace")
            port_name = re.split(r"::", mirror.definition)[-1]
            theirs = [(args, conditional) for fn, args, conditional, _, _ in items["new"] if fn == name]
            before = [(args, conditional) for fn, args, conditional, _, _ in items["old"] if fn == name]
            ours = [(args, conditional, line, text) for fn, args, conditional, line, text
                    in _instantiations(port_text, _instantiation_macros(port_text)) if fn == port_name]
            if not theirs or not ours or any(c for _, c in theirs) or any(c for _, c, _, _ in ours):
                return None
            if {a for a, _ in theirs} != {a for a, _, _, _ in ours} or set(before) == set(theirs):
                return None
            agreed.append((name, mirror, sorted({a for a, _ in theirs}), ours[0][2], ours[0][3]))
        if not agreed:
            return None
        shown = "; ".join(f"{name}<{'>, <'.join(types)}>" for name, _, types, _, _ in agreed[:3])
        return self._base("port-instantiations", symbol, IN_SYNC, None, "body",
                          f"the changed lines outside definitions are explicit instantiations and preprocessor "
                          f"conditionals that leave upstream instantiating {shown}, unconditionally, exactly the "
                          "types the port instantiates its mirror with, so the port already has the new form: "
                          "IN_SYNC rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.TOPLEVEL, side="tree", path=mirror.file, line=line, quote=text.strip(),
                                    symbol=mirror.definition,
                                    message=f"the port instantiates its mirror of {name} with {', '.join(types)}")
                           for name, mirror, types, line, text in agreed[:3]])

    def _restored_prototypes(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str], code, names_by_line,
                             shared: list[str], referenced) -> SymbolVerdict | None:
        """``restored-prototype``: every changed C++ line outside definitions that names something a ported
        definition uses (``shared``) is an added line of a prototype (a declaration without a body) whose text,
        line for line (spacing aside), the file had at the commit every port of those definitions pins: the
        port reflects that commit, so it already has the interface the prototype states. None otherwise."""
        users = sorted({u for w in shared for u in referenced[w]})
        pins: set[str] = set()
        for user in users:
            ports = self.index.ports_for(self.upstream, paths, re.split(r"::|\.", user)[-1], user)
            if not ports or any(not port.anchor.pin for port in ports):
                return None
            pins |= {port.anchor.pin for port in ports}
        table = self._table(symbol.new_blob, symbol.path)
        if not pins or table is None or table.source is None:
            return None
        spans = _prototypes(table)
        lines = table.source.decode("utf-8", errors="replace").splitlines()
        declared: dict[str, str] = {}
        for side, line, text in code:
            if not names_by_line[(side, line)] & set(shared):
                continue
            span = next(((start, end, name) for start, end, name in spans if start <= line <= end), None)
            if side != "new" or span is None:
                return None
            start, end, name = span
            declared[name] = "\n".join(" ".join(t.split()) for t in lines[start - 1:end])
        if not declared:
            return None
        for pin in sorted(pins):
            held = self._upstream_file(pin, symbol.old_path or symbol.path)
            if held is None:
                return None
            text = "\n" + "\n".join(" ".join(t.split()) for t in held.decode("utf-8", errors="replace")
                                      .splitlines()) + "\n"
            if any(f"\n{prototype}\n" not in text for prototype in declared.values()):
                return None
        shown = ", ".join(sorted(declared)[:3])
        return self._base("restored-prototype", symbol, IN_SYNC, None, "provenance",
                          f"the changed lines outside definitions that name what the ported {', '.join(users[:3])} "
                          f"use{'s' if len(users) == 1 else ''} only add the prototype of {shown}, text for text as "
                          f"the file had it at {', '.join(sorted(pins))}, the commit the port pins: the port already "
                          "has that interface, so IN_SYNC",
                          [Evidence(kind=Kind.TOPLEVEL, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message=f"the prototype of {name} as at pin {pin}")
                           for name in sorted(declared)[:3] for pin in sorted(pins)[:1]])

    def _declared_siblings(self, symbol: TouchedSymbol, anchors: list[Anchor], code, referenced) -> SymbolVerdict | None:
        """``declared-sibling``: every changed C++ line outside definitions is an ``#include`` or lies in a
        function prototype (a declaration without a body) whose name no anchor of the file names and no
        ported definition of it uses. None otherwise."""
        spans = {"old": _prototypes(self._table(symbol.old_blob, symbol.old_path or symbol.path)),
                 "new": _prototypes(self._table(symbol.new_blob, symbol.path))}
        names: list[str] = []
        for side, line, text in code:
            if form.is_include(text):
                continue
            name = next((n for start, end, n in spans[side] if start <= line <= end), None)
            if name is None:
                return None
            if name not in names:
                names.append(name)
        if not names or any(name in referenced or any(a.matches_name(name, name) for a in anchors) for name in names):
            return None
        shown = ", ".join(names[:3])
        return self._base("declared-sibling", symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"the changed lines outside definitions declare {shown} (a prototype, no body; its parameter "
                          "names are its own), which no in-tree anchor names and no ported definition uses, so "
                          "not-ported rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.TOPLEVEL, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message=f"only the prototype{'s' if len(names) > 1 else ''} of {shown} "
                                    "and includes changed")])

    def _namespace_wrap(self, entry: EntryChanges, symbol: TouchedSymbol, code) -> SymbolVerdict | None:
        """``namespace-wrap`` (``namespace_wrap.wrap_only``): the changed lines outside definitions only enclose
        the file's definitions in namespaces, and move declarations verbatim into headers it includes."""
        table = self._table(symbol.new_blob, symbol.path)
        if table is None or table.fallback or table.source is None or table.tree is None:
            return None
        spans = namespace_wrap.function_spans(table.tree.root_node)
        if not spans:
            return None
        source = table.source.decode("utf-8", errors="replace")
        header_lines: set[str] = set()
        if any(side == "old" for side, _, _ in code):
            for header in namespace_wrap.included_headers(symbol.path, source):
                text = self._upstream_file(entry.commit.sha, header)
                if text is not None:
                    header_lines |= {" ".join(line.split()) for line in text.decode("utf-8", errors="replace")
                                     .splitlines() if line.strip()}
        first, last = min(start for start, _ in spans), max(end for _, end in spans)
        if not namespace_wrap.wrap_only(code, form.is_include, first, last, header_lines):
            return None
        return self._base("namespace-wrap", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          "the changed lines outside definitions only enclose every definition of the file in "
                          "namespaces (and move declarations verbatim into headers it includes), so each keeps its "
                          "body: cosmetic rather than a change to anything ported",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message="definitions enclosed in namespaces, bodies unchanged")])

    def _declared_specialisations(self, symbol: TouchedSymbol, paths: set[str], code) -> SymbolVerdict | None:
        """``declared-specialisation``: every changed C++ line outside definitions is an ``#include`` or lies in
        a function definition (an explicit specialisation ``template <> void f<float>(...)``, which no anchor
        can name) of a function the tree declares not-carried as a whole for this file. None otherwise."""
        tables = {"old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                  "new": self._table(symbol.new_blob, symbol.path)}
        declarations: dict[str, Anchor] = {}
        for side, line, text in code:
            if form.is_include(text):
                continue
            name = specialised_function_at(tables[side], line)
            if name is None:
                return None
            if name not in declarations:
                found = [a for a in self.index.not_carried_for(self.upstream, paths, name, name) if not a.param]
                if not found:
                    return None
                declarations[name] = found[0]
        if not declarations:
            return None
        names = sorted(declarations)
        anchor = declarations[names[0]]
        return self._base("declared-specialisation", symbol, NOT_APPLICABLE, "not-carried", "provenance",
                          f"every changed line outside definitions lies in a specialisation of {', '.join(names[:3])} "
                          f"(`template <> ... {names[0]}<...>(...)`), which the tree declares out of scope at "
                          f"{anchor.cite}, so not-carried rather than a change to anything the port carries",
                          [_anchor_evidence(declarations[name], "not-carried declaration") for name in names[:3]])

    def _specialisation_bodies(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                               code) -> SymbolVerdict | None:
        """``specialisation-body``: every changed C++ line outside definitions is an ``#include`` or lies in (or
        heads) an explicit specialisation, and each specialised function's lines are decided as its body: not
        carried where the tree declares it so, not ported where the commit brings the function into the file
        and the tree neither ports, declares nor names it, cosmetic where it is ported and each of its
        specialisations is on both sides with the same tokens once pointer casts are read as one spelling.
        None otherwise."""
        tables = {"old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                  "new": self._table(symbol.new_blob, symbol.path)}
        if any(t is None or t.fallback or t.tree is None or t.source is None for t in tables.values()):
            return None
        names: set[str] = set()
        for side, line, text in code:
            if form.is_include(text):
                continue
            name = specialised_function_at(tables[side], line) or specialisation_headed_at(tables[side], line)
            if name is None:
                return None
            names.add(name)
        if not names:
            return None
        sources = self.index.tree_sources()
        if sources is None:
            return None
        tree_text = b"\n".join(sources.values())
        kinds: dict[str, str] = {}
        for name in sorted(names):
            if any(not a.param for a in self.index.not_carried_for(self.upstream, paths, name, name)):
                kinds[name] = "not-carried"
                continue
            old, new = (specialisations_of(tables[side], name) for side in ("old", "new"))
            if self.index.ports_for(self.upstream, paths, name, name):
                if set(old) != set(new) or any((not form.same_with_casts_respelled(old[key], new[key])
                                                and form.qualifier_free_tokens(old[key])
                                                != form.qualifier_free_tokens(new[key]))
                                               or form.linkage_changed(old[key], new[key]) for key in old):
                    return None
                kinds[name] = "cosmetic"
                continue
            if old or any(d.name == name for d in tables["old"].definitions) \
                    or re.search(rb"\b" + re.escape(name.encode()) + rb"\b", tree_text):
                return None
            kinds[name] = "not-ported"
        justification = next(j for j in ("not-ported", "not-carried", "cosmetic") if j in kinds.values())
        said = "; ".join(f"{name}: {kind}" for name, kind in sorted(kinds.items())[:4])
        return self._base("specialisation-body", symbol, NOT_APPLICABLE, justification, "body",
                          "every changed line outside definitions lies in explicit specialisations "
                          "(`template <> ... f<T>(...)`), each its function's body for one type, decided as that "
                          f"body ({said}): no specialisation of a carried function changes what it computes, so "
                          f"{justification} rather than a change to anything the port carries",
                          [Evidence(kind=Kind.COSMETIC if kind == "cosmetic" else Kind.SYMBOL, side="upstream-new",
                                    path=symbol.path, symbol=symbol.name,
                                    message=f"specialisations of {name}: {kind}") for name, kind in
                           sorted(kinds.items())[:4]])

    def _moved_module(self, entry: EntryChanges, symbol: TouchedSymbol, anchors: list[Anchor]) -> SymbolVerdict | None:
        """``moved-module``: this commit writes the module's whole old text, byte for byte, at another path
        (a changed file whose new blob is this one's old blob), and the old path's new module is a stub that
        defines none of the old module's definitions and still binds, at module level, every ported
        definition the old module had that is not a kernel or its own self-test (the names its callers call).
        None otherwise."""
        old_path = symbol.old_path or symbol.path
        if symbol.change != "modified" or not symbol.old_blob or not symbol.new_blob:
            return None
        target = next((c.new_path for c in entry.owned_changes
                       if c.new_blob == symbol.old_blob and c.new_path and c.new_path not in (symbol.path, old_path)),
                      None)
        if target is None:
            return None
        old_table, new_table = self._table(symbol.old_blob, old_path), self._table(symbol.new_blob, symbol.path)
        if old_table is None or new_table is None or old_table.fallback or new_table.fallback \
                or old_table.source is None or new_table.source is None:
            return None
        try:
            stub = ast.parse(new_table.source)
        except (SyntaxError, ValueError, RecursionError):
            return None
        bound: set[str] = set()
        for statement in stub.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(statement.name)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                bound |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in statement.names if a.name != "*"}
        stub_definitions = {d.qualified_name for d in new_table.definitions}
        if stub_definitions & {d.qualified_name for d in old_table.definitions}:
            return None
        ported = [d for d in old_table.definitions if "." not in d.qualified_name
                  and any(a.matches_name(d.name, d.qualified_name) for a in anchors if a.kind != NOT_CARRIED)]
        try:
            module = ast.parse(old_table.source)
        except (SyntaxError, ValueError, RecursionError):
            return None
        # A module's own self-test (its __main__ block and what only it calls) is no name a caller imports.
        mains = [s for s in module.body if isinstance(s, ast.If) and "__main__" in ast.unparse(s.test)]
        self_tests = {n.name for m in mains for n in ast.walk(m)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        self_tests |= self_test_definitions(old_table.source)
        callable_names = {d.name for d in ported if d.kind not in (KIND_TRITON_KERNEL, KIND_CUDA_KERNEL)
                          and d.name not in self_tests}
        if not ported or not callable_names <= bound:
            return None
        names = ", ".join(sorted(callable_names)[:3]) or "no callable name"
        return self._base("moved-module", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"this commit moved the whole module byte for byte to {target}, where the ported "
                          f"definitions read the same module-level lines; the old path keeps a stub that defines "
                          f"none of them and still binds {names}, so its lines are a new module no ported definition "
                          "reads: cosmetic rather than NEEDS_REVIEW (update the anchors)",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=target, symbol=symbol.name,
                                    message=f"the same blob as {old_path} before this commit"),
                           Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message=f"a stub binding {names}")])

    def _module_cosmetic(self, rule: str, symbol: TouchedSymbol, reason: str, message: str) -> SymbolVerdict:
        """A cosmetic verdict for a module's lines outside definitions that are the same program once ``rule``'s
        erasure is applied to both sides; ``message`` says which erasure on the new side's evidence."""
        return self._base(rule, symbol, NOT_APPLICABLE, "cosmetic", "body", reason,
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message=message)])

    def _removed_bindings(self, symbol: TouchedSymbol, paths: set[str], anchors: list[Anchor],
                          code) -> SymbolVerdict | None:
        """``removed-binding-use``: module-level lines that only remove bindings of private names the new module
        never names (``removed_private_bindings``). None otherwise."""
        tables = self._side_tables(symbol)
        if symbol.change != "modified" or any(t is None or t.tree is None or t.tree.root_node.has_error for t in tables):
            return None
        if any(side != "old" for side, _, _ in code):
            return None
        names = removed_private_bindings(tables[0].tree.root_node, tables[1].tree.root_node, [line for _, line, _ in code])
        if not names:
            return None
        referenced = self._ported_identifiers(symbol, paths, anchors)
        readers = sorted({user for name in names for user in referenced.get(name, [])})
        side, line, text = code[0]
        return self._base("removed-binding-use", symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"the changed lines outside definitions only remove {', '.join(names[:4])}, module-private "
                          "names the new module never names, so every definition that read them "
                          f"({', '.join(readers[:3]) or 'none ported'}) is changed by this commit and compared in its "
                          "own right: not-ported rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.TOPLEVEL, side="upstream-old", path=symbol.path, line=line,
                                    quote=text.strip(), symbol=symbol.name, subject=names[0],
                                    message=f"{names[0]} removed with its every use")])

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
        if not all(imports_confirmed(t.tree.root_node, t.source) for t in (old_table, new_table)):
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
        followed = rebound_names(old_root, new_root, _unchanged_moves(entry), self._reexports_followed(entry, symbol))
        if not followed:
            return self._base("reexported-import", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"the changed imports of {', '.join(rebound[:4])} name a module that only re-exports "
                              "the same object (followed at each side's commit), so every ported definition using "
                              "it gets the same object: cosmetic rather than a change to anything ported",
                              [Evidence(kind=Kind.COSMETIC, message=f"{rebound[0]} resolves to the same object through "
                                        "the re-export", subject=rebound[0], **where)])
        rebound = [name for name in rebound if name in followed]
        referenced = self._ported_identifiers(symbol, paths, anchors)
        used = [name for name in rebound if name.split(".")[0] in referenced]
        if not used:
            readers = self._import_readers(symbol, paths, rebound)
            if readers is not None and not readers[0]:
                return self._base("unused-import", symbol, NOT_APPLICABLE, "cosmetic", "body",
                                  f"the changed imports rebind {', '.join(rebound[:4])}, which no code of the module "
                                  "names outside its imports on either side (nor its `__all__`), so the binding feeds "
                                  "nothing: cosmetic rather than a change to anything ported",
                                  [Evidence(kind=Kind.COSMETIC, message=f"{rebound[0]} is read nowhere in the module",
                                            subject=rebound[0], **where)])
            if readers is not None and all(readers[1].get(user) for user in readers[0]):
                declared = sorted({readers[1][user].symbol for user in readers[0]})
                anchor = readers[1][readers[0][0]]
                return self._base("not-carried-import", symbol, NOT_APPLICABLE, "not-carried", "provenance",
                                  f"the changed imports rebind {', '.join(rebound[:4])}, which only "
                                  f"{', '.join(readers[0][:4])} read, all inside definitions the tree declares not "
                                  f"carried ({', '.join(declared[:3])}, at {anchor.cite}), so not-carried rather "
                                  "than a change to anything ported",
                                  [_anchor_evidence(anchor, f"not-carried declaration of {anchor.symbol}")])
            return self._base("import-rebinding", 
                symbol, NOT_APPLICABLE, "not-ported", "body",
                f"the changed imports rebind {', '.join(rebound[:4])}, which no ported definition of this file uses, "
                "so not-ported rather than NEEDS_REVIEW",
                [Evidence(kind=Kind.TOPLEVEL, message=f"imports rebind {', '.join(rebound[:4])}", subject=rebound[0],
                          **where)],
            )
        old_source = old_table.source.decode("utf-8", errors="replace") if old_table.source is not None else None
        touched = {s.qualified_name for s in entry.symbols} | {s.name for s in entry.symbols}
        fresh = old_source is not None and all(
            name.split(".")[0] not in _BUILTINS
            and not re.search(r"(?<![\w.])" + re.escape(name.split(".")[0]) + r"(?!\w)", old_source)
            and all(user in touched for user in referenced[name.split(".")[0]]) for name in used)
        if fresh:
            users = sorted({u for name in used for u in referenced[name.split(".")[0]]})
            return self._base("new-import-use", symbol, NOT_APPLICABLE, "not-ported", "body",
                              f"the changed imports bind {', '.join(used[:4])}, which the old module never names, "
                              f"so the ported definitions that use it ({', '.join(users[:3])}) are changed by this "
                              "commit and compared in their own right: not-ported rather than NEEDS_REVIEW",
                              [Evidence(kind=Kind.TOPLEVEL, message=f"new name {used[0]}, used by {users[0]}",
                                        subject=used[0], **where)])
        new_source = new_table.source.decode("utf-8", errors="replace") if new_table.source is not None else None
        gone = [name for name in used if new_source is not None and name.split(".")[0] not in _BUILTINS
                and not re.search(r"(?<![\w.])" + re.escape(name.split(".")[0]) + r"(?!\w)", new_source)
                and all(user in touched for user in referenced[name.split(".")[0]])]
        fresh_names = [name for name in used if name not in gone and old_source is not None
                       and name.split(".")[0] not in _BUILTINS
                       and not re.search(r"(?<![\w.])" + re.escape(name.split(".")[0]) + r"(?!\w)", old_source)
                       and all(user in touched for user in referenced[name.split(".")[0]])]
        if gone and len(gone) + len(fresh_names) == len(used):
            users = sorted({u for name in used for u in referenced[name.split(".")[0]]})
            return self._base("removed-import-use", symbol, NOT_APPLICABLE, "not-ported", "body",
                              f"the changed imports unbind {', '.join(gone[:4])}, which the new module never names"
                              + (f" (and bind {', '.join(fresh_names[:4])}, which the old module never names)"
                                 if fresh_names else "")
                              + f", so the ported definitions that used it ({', '.join(users[:3])}) are changed by "
                              "this commit and compared in their own right: not-ported rather than NEEDS_REVIEW",
                              [Evidence(kind=Kind.TOPLEVEL, message=f"{gone[0]} unbound with its every use",
                                        subject=gone[0], **where)])
        return None  # a rebinding a ported definition uses: decided like any shared name below

    def _import_readers(self, symbol: TouchedSymbol, paths: set[str], names: list[str]):
        """Who reads the import-bound ``names`` in the module, on either side:
        the qualified names of the outermost definitions whose code names one
        (outside import lines), and for each the whole-definition not-carried
        declaration naming or enclosing it (absent when none). None when a
        name is also read outside every definition, listed in ``__all__``, or
        the module is a package's ``__init__.py`` (which exists to re-export)."""
        if symbol.path.endswith("__init__.py"):
            return None
        declared = [a for a in self.index.anchors_for_path(self.upstream, paths, NOT_CARRIED) if not a.param]
        heads = {n.split(".")[0] for n in names}
        pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(h) for h in sorted(heads)) + r")(?!\w)")
        readers: list[str] = []
        covering: dict[str, Anchor] = {}
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            if table is None or table.tree is None or table.fallback or table.source is None:
                return None
            skip = import_lines(table.tree.root_node)
            spans = [(d.node.start_byte, d.node.end_byte, d) for d in table.definitions if d.node is not None]
            offset = 0
            for number, line in enumerate(table.source.split(b"\n"), start=1):
                start, offset = offset, offset + len(line) + 1
                if number in skip:
                    continue
                text = line.decode("utf-8", errors="replace")
                if text.lstrip().startswith("#"):
                    continue  # a comment line (an import commented out in place among them) reads nothing
                if "__all__" in text and pattern.search(text):
                    return None
                for found in pattern.finditer(text):
                    where = start + len(text[:found.start()].encode("utf-8"))
                    holders = [d for a, b, d in spans if a <= where < b]
                    if not holders:
                        return None  # read by module-level code
                    outer = min(holders, key=lambda d: d.node.start_byte)
                    if outer.qualified_name not in readers:
                        readers.append(outer.qualified_name)
                    for holder in sorted(holders, key=lambda d: d.node.start_byte):
                        anchor = next((a for a in declared if a.matches_name(holder.name, holder.qualified_name)
                                       or a.encloses(holder.qualified_name)), None)
                        if anchor is not None:
                            covering.setdefault(outer.qualified_name, anchor)
                            break
        return readers, covering

    def _default_build_lines(self, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``default-build-lines`` (``branches.same_file_in_default_build``): a C/C++ file whose default
        build compiles the same tokens before and after, its includes aside, every conditional it decides
        on a macro no file of the tree sets. None otherwise."""
        if symbol.change != "modified":
            return None
        tables = self._side_tables(symbol)
        if any(t is None or t.tree is None or t.source is None for t in tables):
            return None
        defined = branches.defined_macros(*(t.source for t in tables))
        decided = branches.same_file_in_default_build(tables[0].tree.root_node, tables[1].tree.root_node, defined)
        if not decided or branches.set_in_tree(decided, self.index.tree_sources()):
            return None
        names = ", ".join(sorted(decided)[:3])
        return self._base("default-build-lines", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"with every conditional on {names} (which no source of the file defines and no file "
                          "of the tree sets) replaced by the branch the default build compiles, and include lines "
                          "aside, the file has the same tokens before and after: what the port's build compiles "
                          "is unchanged, so cosmetic rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=sorted(decided)[0],
                                    message=f"the same default-build tokens once {names} is off")])

    def _module_platform_choice(self, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``absent-platform`` for a module's lines outside definitions (``BranchRules._module_absent_platforms``):
        every binding and import keeps the value it had on the port's platforms. None otherwise."""
        platforms = self._module_absent_platforms(symbol)
        if not platforms:
            return None
        return self._base("absent-platform", symbol, NOT_APPLICABLE, "not-carried", "body",
                          f"with every test for {', '.join(platforms)}, a platform no file of the tree names, read "
                          "as false, the lines outside definitions bind the same values and imports as before, so "
                          "no ported definition reading them changes: only code for a backend the port does not run",
                          [Evidence(kind=Kind.TOPLEVEL, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=platforms[0],
                                    message=f"only {', '.join(platforms)} choices outside definitions change")])

    def _renamed_module_import(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """Rule ``renamed-module-import`` (see ``renamed_object_program``); None when it does not hold."""
        if language_for_path(symbol.path) != "python" or not entry.commit.parents:
            return None
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path)
        if old_table is None or new_table is None or old_table.tree is None or new_table.tree is None \
                or old_table.tree.root_node.has_error or new_table.tree.root_node.has_error:
            return None
        old_bindings, new_bindings = import_bindings(old_table.tree.root_node), import_bindings(new_table.tree.root_node)
        follow = self._reexports_followed(entry, symbol)
        rebound = rebound_names(old_table.tree.root_node, new_table.tree.root_node, _unchanged_moves(entry), follow)
        gone, fresh = [n for n in rebound if n not in new_bindings], [n for n in rebound if n not in old_bindings]
        if len(rebound) != 2 or len(gone) != 1 or len(fresh) != 1:
            return None
        was, now = gone[0], fresh[0]
        if not renamed_object_program(old_table.source, new_table.source, now, was):
            return None
        origins = {"old": follow("old", old_bindings[was].target), "new": follow("new", new_bindings[now].target)}
        if any(":" not in origin for origin in origins.values()):
            return None
        commits = {"old": entry.commit.parents[0], "new": entry.commit.sha}
        modules = {}
        for side, origin in origins.items():
            stem, _, name = origin.partition(":")
            modules[side] = next(((path, table, name) for path in (stem + ".py", stem + "/__init__.py")
                                  for table in (self._table(f"{commits[side]}:{path}", path),)
                                  if table is not None and table.source is not None), None)
        if modules["old"] is None or modules["new"] is None:
            return None
        (old_path, old_module, old_name), (new_path, new_module, new_name) = modules["old"], modules["new"]
        still = self._table(f"{commits['new']}:{old_path}", old_path)
        if still is not None and still.source is not None:
            return None  # the old module stays: two modules, so not a rename
        if not renamed_object_program(old_module.source, new_module.source, new_name, old_name,
                                      (old_path, new_path)):
            return None
        return self._base("renamed-module-import", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"the changed lines import {now} instead of {was} and read it under that name: {old_path}, "
                          f"where {was} came from, is deleted by this commit and {new_path}, where {now} comes from, "
                          f"runs the same program ({old_name} named {new_name}, its imports resolving to the same "
                          "modules), so every ported definition gets the same object: cosmetic rather than a change "
                          "to anything ported",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=new_path, symbol=symbol.name,
                                    subject=now, message=f"{new_path} is {old_path} renamed, {old_name} as {new_name}")])

    def _moved_callee(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """Rule ``moved-callee`` (see ``moved_callee_program``) for a modified ported Python definition;
        None when it does not hold."""
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None or not entry.commit.parents:
            return None
        before, after = sides
        old_table = self._table(symbol.old_blob, symbol.old_path or symbol.path)
        new_table = self._table(symbol.new_blob, symbol.path)
        if old_table is None or new_table is None or old_table.tree is None or new_table.tree is None:
            return None
        commits = {"old": entry.commit.parents[0], "new": entry.commit.sha}
        importers = {"old": symbol.old_path or symbol.path, "new": symbol.path}
        bindings = {"old": import_bindings(old_table.tree.root_node), "new": import_bindings(new_table.tree.root_node)}

        def module_source(side: str, alias: str, at: str) -> bytes | None:
            """The source at commit side ``at`` of the module ``alias`` names in the file on ``side``."""
            binding = bindings[side].get(alias)
            stem = _module_stem(binding.target, importers[side]) if binding is not None else None
            if stem is None:
                return None
            for path in (stem + ".py", stem + "/__init__.py"):
                table = self._table(f"{commits[at]}:{path}", path)
                if table is not None and table.source is not None:
                    return table.source
            return b""  # no such module at that commit

        moved = moved_callee_program(before.node, after.node, module_source)
        if moved is None:
            return None
        was, now, name = moved[0]
        return self._base("moved-callee", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{symbol.name} now calls {now}.{name} where it called {was}.{name}, and this commit moves "
                          f"{name}'s definition, the same `ast`, from the module {was} names to the one {now} names, "
                          "removing it from the old: the same code followed by identity, so cosmetic rather than a "
                          "change to anything ported",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=name, message=f"{was}.{name} moved unchanged to {now}.{name}")])

    def _reexports_followed(self, entry: EntryChanges, symbol: TouchedSymbol):
        """``follow(side, target)`` for ``rebound_names``: where an import target of the symbol's file resolves
        once modules that only re-export a name are followed (``reexport_target``), each side's files read at
        its own commit (the old side at the commit's first parent)."""
        commits = {"old": entry.commit.parents[0] if entry.commit.parents else None, "new": entry.commit.sha}
        importers = {"old": symbol.old_path or symbol.path, "new": symbol.path}

        def root_at(side: str, path: str):
            if commits[side] is None:
                return None
            table = self._parsed_table(f"{commits[side]}:{path}", path)
            return table.tree.root_node if table is not None else None

        return lambda side, target: reexport_target(target, importers[side], lambda path: root_at(side, path))

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
                [new_side_evidence(symbol, Kind.TOPLEVEL, f"ported {untouched[0]} uses {symbol.name}")],
            )
        carried = f"the ported definitions that use it ({', '.join(users[:3])}) are changed by this commit and " \
                  "compared in their own right" if users else "no ported definition uses it"
        return self._base("new-type-use", 
            symbol, NOT_APPLICABLE, "not-ported", "body",
            f"{symbol.name} is a new type nothing in-tree ports and {carried}, so not-ported rather than NEEDS_REVIEW",
            [new_side_evidence(symbol, Kind.TOPLEVEL,
                               f"new type {symbol.name}; users: {', '.join(users[:3]) or 'none ported'}")],
        )

    def _decorator_only_unported(self, word: str, symbol: TouchedSymbol, paths: set[str],
                                 anchors: list[Anchor], carried: dict[str, str] | None = None) -> bool:
        """True when every ported upstream definition names ``word`` only in
        its decorators (``@triton.jit(repr=word)``) and no file of the tree
        that ports them names it: metadata the port does not carry, so a
        change to it is not attributed to the port (attribution by use)."""
        users = []
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            for definition in table.definitions if table is not None and not table.fallback else ():
                if (any(a.matches_name(definition.name, definition.qualified_name) for a in anchors)
                        or definition.qualified_name in (carried or {})) \
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
            if carried and definition.qualified_name in carried and _tunes_with(node, word):
                return False  # the configs an autotuner launches the carried kernel with (``moved-reader``)
        ports = [p for d in users for p in self.index.ports_for(self.upstream, paths, d.name, d.qualified_name)]
        for file in {p.definition.file for p in ports}:
            try:
                text = (self.context.tree_root / file).read_text(errors="replace")
            except OSError:
                return False
            if word in _IDENTIFIER.findall(text):
                return False
        return bool(users) and bool(ports)

    def _carried_definitions(self, entry: EntryChanges, symbol: TouchedSymbol, anchors: list[Anchor],
                             facts: RangeFacts | None) -> dict[str, str]:
        """Rule ``moved-reader``: qualified name of a definition of ``symbol``'s file that carries an anchored
        body since an earlier move of the range (``moved-definition``) -> the qualified name the anchor names."""
        if facts is None:
            return {}
        carried: dict[str, str] = {}
        for (path, name), _ in facts.moves.carriers.items():
            move = facts.moves.carrying((path, name), entry.position) if path == symbol.path else None
            if move is not None and any(a.matches_name(re.split(r"::|\.", move.origin[1])[-1], move.origin[1])
                                        for a in anchors):
                carried[name] = move.origin[1]
        return carried

    def _ported_identifiers(self, symbol: TouchedSymbol, paths: set[str], anchors: list[Anchor],
                            carried: dict[str, str] | None = None) -> dict[str, list[str]]:
        """identifier -> the ported upstream definitions (old or new side) that reference it; a definition
        that carries an anchored body since an earlier move (``carried``, ``moved-reader``) is one of them."""
        referenced: dict[str, list[str]] = {}
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            if table is None or table.fallback:
                continue
            reporting = None
            for definition in table.definitions:
                matching = [a for a in anchors if a.matches_name(definition.name, definition.qualified_name)]
                if not matching and definition.qualified_name not in (carried or {}):
                    continue
                text = self._carried_text(blob, path, definition) if definition.node else ""
                if definition.node is not None and table.language == "cpp" \
                        and branches.cross_language(path, [a for a in matching if a.kind == "ports"]):
                    # a port in another language runs the live branch only (``live-branch``): the condition
                    # and the branch that only reports are not what it uses
                    reporting = branches.reporting_macros(table.source) if reporting is None else reporting
                    live = branches.live_branches(definition.node, reporting) if reporting else {}
                    if live:
                        text = " ".join(branches.live_branch_tokens(definition.node, reporting, live))
                words = set(_IDENTIFIER.findall(text))
                if table.language == "cpp":
                    words -= _declared_first(text, words)
                for word in words:
                    users = referenced.setdefault(word, [])
                    if definition.qualified_name not in users:
                        users.append(definition.qualified_name)
        return referenced


    def _declared_binding(self, symbol: TouchedSymbol, paths: set[str],
                          code: list[tuple[str, int, str]]) -> SymbolVerdict | None:
        """``declared-binding``: every changed module-level line of a Python file lies in a statement at the top
        of the module that binds only names the tree declares not-carried (whole definitions, no ``[PARAM]``).
        None otherwise."""
        if language_for_path(symbol.path) != "python" or not code:
            return None
        statements = {}
        for side, blob, path in (("old", symbol.old_blob, symbol.old_path or symbol.path),
                                 ("new", symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            try:
                module = ast.parse(table.source) if table is not None and table.source is not None else None
            except (SyntaxError, ValueError):
                module = None
            statements[side] = module.body if module is not None else []
        declarations: dict[str, Anchor] = {}
        for side, line, _text in code:
            statement = next((s for s in statements[side] if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
            names = _bound_names(statement)
            if not names:
                return None
            for name in names:
                if name not in declarations:
                    found = [a for a in self.index.not_carried_for(self.upstream, paths, name, name) if not a.param]
                    if not found:
                        return None
                    declarations[name] = found[0]
        bound = sorted(declarations)
        anchor = declarations[bound[0]]
        return self._base("declared-binding", symbol, NOT_APPLICABLE, "not-carried", "provenance",
                          f"every changed line outside definitions lies in the binding of {', '.join(bound[:4])}, "
                          f"which the tree declares out of scope at {anchor.cite}, so not-carried rather than a "
                          "change to anything the port carries",
                          [_anchor_evidence(declarations[name], "not-carried declaration") for name in bound[:3]])

    def _declared_off_reads(self, symbol: TouchedSymbol, paths: set[str], code: list[tuple[str, int, str]],
                            shared: list[str], referenced: dict[str, list[str]]) -> SymbolVerdict | None:
        """``declared-off-read``: every changed module-level line of a Python file is an import line, no other
        module-level statement names a word in ``shared`` (what the changed lines name that ported definitions
        use), and each ported definition reads each such word only inside an ``if NAME not in LITERAL:`` its
        port never takes (``scope.off_path_reads``): ``NAME`` declared not carried for it (``[PARAM]``) and
        asserted by the port to lie in values that are all in ``LITERAL`` (``scope.asserted_values``). None
        otherwise."""
        if language_for_path(symbol.path) != "python" or not code or not shared:
            return None
        tables = {"old": self._table(symbol.old_blob, symbol.old_path or symbol.path),
                  "new": self._table(symbol.new_blob, symbol.path)}
        if any(t is None or t.fallback or t.tree is None for t in tables.values()):
            return None
        for side, line, _text in code:
            if line not in import_lines(tables[side].tree.root_node):
                return None
        root = tables["new"].tree.root_node
        imported = import_lines(root)
        for statement in root.named_children:
            if statement.type in ("function_definition", "class_definition", "decorated_definition") \
                    or statement.start_point[0] + 1 in imported:
                continue
            if set(_IDENTIFIER.findall(node_text(statement))) & set(shared):
                return None  # a module-level reader may hand the binding to anything
        anchors: list[Anchor] = []
        reads = 0
        for word in shared:
            for user in referenced[word]:
                definition = next((d for d in tables["new"].definitions if d.qualified_name == user), None)
                if definition is None or definition.node is None:
                    return None
                declared = [a for a in self.index.not_carried_for(self.upstream, paths, definition.name, user)
                            if a.param]
                ports = self.index.ports_for(self.upstream, paths, definition.name, definition.qualified_name)
                mines = [self._port_node(p.definition) for p in ports] if ports else [None]
                if any(m is None or language_for_path(p.definition.file) != "python" for m, p in zip(mines, ports)):
                    return None
                counts = []
                for mine in mines:
                    admitted = asserted_values(mine, _scope_names(a.param for a in declared)) if declared else {}
                    counts.append(off_path_reads(definition.node, word, admitted))
                if any(c is None for c in counts):
                    return None
                if counts and max(counts):
                    reads += max(counts)
                    anchors.extend(a for a in declared if a not in anchors)
        if not reads or not anchors:
            return None
        names = ", ".join(shared[:4])
        return self._base("declared-off-read", symbol, NOT_APPLICABLE, "not-carried", "provenance",
                          f"the changed lines outside definitions are imports binding {names}, which the ported "
                          "definitions read only inside branches their ports never take (a name the tree declares "
                          f"not carried at {anchors[0].cite}, asserted by the port to values the branch excludes), "
                          "so not-carried rather than a change to anything the port carries",
                          [_anchor_evidence(a, f"not-carried declaration of {a.param}") for a in anchors[:3]]
                          + [Evidence(kind=Kind.TOPLEVEL, message=f"module-level {word} read only on paths the "
                                      "ports never take", side="upstream-new", path=symbol.path, symbol=symbol.name,
                                      subject=word) for word in shared])


def _bound_names(statement) -> list[str]:
    """The names a module-level assignment binds (plain names, or tuples and lists of them); empty for any other
    statement (an import, a call, an ``if`` holding bindings), whose lines may do more than bind."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    else:
        return []
    names: list[str] = []
    for target in targets:
        for node in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
            if not isinstance(node, ast.Name):
                return []
            names.append(node.id)
    return names


_NOT_A_TYPE = frozenset({"return", "case", "else", "goto", "throw", "delete", "new", "typename", "sizeof", "co_return",
                         "co_yield", "co_await", "using", "namespace", "struct", "class", "enum", "operator", "define",
                         "if", "while", "for", "switch", "do", "template", "decltype", "alignof", "noexcept"})


def _declared_first(text: str, words: set[str]) -> set[str]:
    """The words a C++ definition's body declares for itself before any other mention: its first mention, in
    the body, is a declaration (a type, then the name, then `=`, `;`, `[` or `{`: a local), so every use in
    the definition reads its own, never a file-scope name it shares (``toplevel-use``)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
    found: set[str] = set()
    for word in words:
        first = re.search(r"(?<![\w:.>])" + re.escape(word) + r"(?!\w)", code)
        if first is None:
            continue
        if "{" not in code[:first.start()]:
            continue  # in the signature: a parameter is left to the other rules
        before = re.search(r"([A-Za-z_]\w*)\s*$", code[:first.start()])
        after = code[first.end():].lstrip()[:1]
        if before is not None and before.group(1) not in _NOT_A_TYPE and after in ("=", ";", "[", "{"):
            found.add(word)
    return found


# --- a module renamed with the object it computes -----------------------------------


def _resolved_imports(module: ast.Module, path: str | None) -> dict[str, str] | None:
    """name -> the repository path of what each module-level import binds (relative specs resolved from
    ``path``, so ``from . import b`` in ``pkg/x/m.py`` and ``from ..x import b`` in ``pkg/y/m.py`` agree); None
    for a star import."""
    found: dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(statement, ast.ImportFrom):
            spec = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.name == "*":
                    return None
                full = f"{spec}.{alias.name}" if not spec.endswith(".") else f"{spec}{alias.name}"
                where = (relative_module_path(path, full) if statement.level else _module_stem(full, path)) \
                    if path is not None else full
                found[alias.asname or alias.name] = where or full
    return found


class _Renamed(ast.NodeTransformer):
    def __init__(self, was: str, now: str):
        self.was, self.now = was, now

    def visit_Name(self, node: ast.Name):
        return ast.copy_location(ast.Name(id=self.was, ctx=node.ctx), node) if node.id == self.now else node


def renamed_object_program(old: bytes | None, new: bytes | None, now: str, was: str,
                           paths: tuple[str, str] | None = None) -> bool:
    """Whether module ``new`` is module ``old`` with the module-level name ``was`` renamed ``now`` (neither
    named on the other side), its other statements the same ``ast`` once imports are set aside and strings
    standing alone as statements (docstrings) dropped; with ``paths`` (old, new), each side's imports must also
    resolve to the same modules from its own path (a module moved to another package depth); without, the
    imports are another rule's (they bind ``was`` and ``now``)."""
    try:
        before, after = ast.parse(old or b""), ast.parse(new or b"")
    except (SyntaxError, ValueError):
        return False
    named = lambda tree, name: any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree))
    if named(before, now) or named(after, was) or not named(before, was) or not named(after, now):
        return False

    def program(tree: ast.Module) -> list[str]:
        return [ast.dump(s) for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))
                and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]

    if program(before) != program(_Renamed(was, now).visit(after)):
        return False
    if paths is None:
        return True
    imports = (_resolved_imports(before, paths[0]), _resolved_imports(after, paths[1]))
    return imports[0] is not None and imports[0] == imports[1]


def _parsed_definition(node) -> ast.AST | None:
    """The ``ast`` of a definition's whole text, its decorators included."""
    if node.type == "function_definition" and node.parent is not None and node.parent.type == "decorated_definition":
        node = node.parent
    try:
        text = node.text.decode("utf-8", errors="replace")
        return ast.parse(textwrap.dedent(" " * node.start_point[1] + text))
    except (SyntaxError, ValueError):
        return None


def _top_level_function(source: bytes | None, name: str) -> str | None:
    """``ast.dump`` of the one top-level function ``name`` of ``source`` (decorators and body), or None."""
    try:
        tree = ast.parse(source or b"")
    except (SyntaxError, ValueError):
        return None
    found = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name]
    return ast.dump(found[0]) if len(found) == 1 else None


def moved_callee_program(old_node, new_node, module_source) -> list[tuple[str, str, str]] | None:
    """``[(old alias, new alias, helper), ...]`` when definition ``new_node`` is ``old_node`` with only
    ``OLD.helper`` read as ``NEW.helper`` (both aliases module imports of the definition's file), and for
    each such pair the commit moved ``helper``: ``module_source(side, alias, at)`` (the source at commit side
    ``at`` of the module ``alias`` names on ``side``) shows the old module defining it before and not after,
    and the new module defining it after, the same ``ast``, and not before. None otherwise."""
    before, after = _parsed_definition(old_node), _parsed_definition(new_node)
    if before is None or after is None:
        return None
    old_reads = {(n.value.id, n.attr) for n in ast.walk(before)
                 if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    new_reads = {(n.value.id, n.attr) for n in ast.walk(after)
                 if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    pairs: dict[tuple[str, str], str] = {}
    for now, name in sorted(new_reads - old_reads):
        was = [w for w, n in old_reads - new_reads if n == name]
        if len(was) != 1:
            return None
        pairs[(now, name)] = was[0]
    if not pairs:
        return None

    class Back(ast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in pairs:
                node.value = ast.Name(id=pairs[(node.value.id, node.attr)], ctx=node.value.ctx)
            return node

    if ast.dump(Back().visit(after)) != ast.dump(before):
        return None
    for (now, name), was in pairs.items():
        old_before, old_after = module_source("old", was, "old"), module_source("old", was, "new")
        new_before, new_after = module_source("new", now, "old"), module_source("new", now, "new")
        if None in (old_before, old_after, new_before, new_after):
            return None
        moved = _top_level_function(old_before, name)
        if moved is None or _top_level_function(old_after, name) is not None \
                or _top_level_function(new_before, name) is not None or _top_level_function(new_after, name) != moved:
            return None
    return [(was, now, name) for (now, name), was in pairs.items()]


# --- C++ prototypes -----------------------------------------------------------------

_PROTOTYPE_SCOPES = frozenset({"namespace_definition", "declaration_list", "linkage_specification", "translation_unit"})
_WRAPPING_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator"})


def _prototypes(table) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of each function prototype of a C++ file at namespace scope: a
    declaration (or a template of one) with a single function declarator and no body. Empty when the file
    does not parse cleanly."""
    if table is None or table.tree is None or table.tree.root_node.has_error:
        return []
    found: list[tuple[int, int, str]] = []

    def walk(node) -> None:
        for child in node.children:
            if child.type in _PROTOTYPE_SCOPES:
                walk(child)
                continue
            declaration = child
            if child.type == "template_declaration":
                declaration = next((c for c in child.children if c.type == "declaration"), None)
            if declaration is None or declaration.type != "declaration":
                continue
            declarators = declaration.children_by_field_name("declarator")
            if len(declarators) != 1:
                continue
            target = declarators[0]
            while target is not None and target.type in _WRAPPING_DECLARATORS:
                target = target.child_by_field_name("declarator")
            if target is None or target.type != "function_declarator":
                continue
            named = target.child_by_field_name("declarator")
            if named is None:
                continue
            name = re.split(r"::", named.text.decode("utf-8", errors="replace"))[-1].strip()
            if re.fullmatch(r"[A-Za-z_]\w*", name):
                found.append((child.start_point[0] + 1, child.end_point[0] + 1, name))

    walk(table.tree.root_node)
    return found


# --- explicit instantiations ------------------------------------------------------

_PREPROCESSOR_CONDITIONAL = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif|else|endif)\b")
_WRITTEN_INSTANTIATION = re.compile(r"^\s*(?:extern\s+)?template\s+(?!<)[^;{}<]*?\b([A-Za-z_]\w*)\s*<([^;{}()]*)>\s*\(.*;\s*(?://.*)?$")
_MACRO_CALL = re.compile(r"^\s*([A-Z_][A-Z0-9_]*)\s*\(([^()]*)\)\s*;?\s*(?://.*)?$")
_MACRO_DEFINITION = re.compile(r"^\s*#\s*define\s+([A-Z_][A-Z0-9_]*)\(\s*(\w+)\s*\)((?:.*\\\n)*.*)$", re.M)


def _type_arguments(text: str) -> str:
    """Type arguments compared as written, less spaces and the leading underscores of CUDA's type names."""
    return ",".join(re.sub(r"\b_+(?=[A-Za-z])", "", part.replace(" ", "")) for part in text.split(","))


def _instantiation_macros(source: str) -> dict[str, tuple[str, str]]:
    """Macros of one parameter whose body is one explicit instantiation with that parameter as its template
    argument list: name -> (the instantiated template, the parameter)."""
    found: dict[str, tuple[str, str]] = {}
    for match in _MACRO_DEFINITION.finditer(source):
        name, parameter, body = match.group(1), match.group(2), match.group(3).replace("\\\n", " ")
        inner = _WRITTEN_INSTANTIATION.match(" ".join(body.split()))
        if inner is not None and inner.group(2).strip() == parameter and body.count("template") == 1:
            found[name] = (inner.group(1), parameter)
    return found


def _instantiation(text: str, macros: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """(template, type arguments) of one line that explicitly instantiates a template, written out or through
    one of ``macros``; None for any other line."""
    written = _WRITTEN_INSTANTIATION.match(text)
    if written is not None:
        return written.group(1), _type_arguments(written.group(2))
    called = _MACRO_CALL.match(text)
    if called is not None and called.group(1) in macros:
        return macros[called.group(1)][0], _type_arguments(called.group(2))
    return None


_DEDUCED_INSTANTIATION = re.compile(r"^\s*template\s+(?!<)[^;{}<]*?\b([A-Za-z_]\w*)\s*\((.*)\)\s*;", re.S)
_TOKEN = re.compile(r"\w+|[^\s\w]")


def _deduced(statement: str, source: str) -> tuple[str, str] | None:
    """(template, type argument) of an explicit instantiation that names no template arguments, deduced by
    laying its parameter list over the one-parameter template's definition in ``source``: every token the
    same but the template parameter's, which all stand for one type. None otherwise."""
    written = _DEDUCED_INSTANTIATION.match(statement)
    if written is None:
        return None
    name, given = written.group(1), _TOKEN.findall(written.group(2))
    for definition in re.finditer(r"template\s*<\s*(?:typename|class)\s+(\w+)\s*>\s*[^;{}()]*?\b" + re.escape(name)
                                  + r"\s*\(([^()]*)\)\s*\{", source):
        parameter, declared = definition.group(1), _TOKEN.findall(definition.group(2))
        if len(declared) != len(given):
            continue
        bound = {g for d, g in zip(declared, given) if d == parameter}
        if len(bound) == 1 and all(d == g for d, g in zip(declared, given) if d != parameter):
            return name, _type_arguments(bound.pop())
    return None


def _instantiations(source: str, macros) -> list[tuple[str, str, bool, int, str]]:
    """Every explicit instantiation of a C++ file: (template, type arguments, under a preprocessor
    conditional, first line, its text). One written over several lines is read whole; one that names no
    template arguments has them deduced from the template's definition (``_deduced``)."""
    found: list[tuple[str, str, bool, int, str]] = []
    depth = 0
    lines = source.splitlines()
    number = 0
    while number < len(lines):
        text = lines[number]
        number += 1
        directive = re.match(r"^\s*#\s*(\w+)", text)
        if directive is not None:  # a directive, continued lines and all (a macro's body is no instantiation)
            if directive.group(1) in ("if", "ifdef", "ifndef", "endif"):
                depth += -1 if directive.group(1) == "endif" else 1
            while text.rstrip().endswith("\\") and number < len(lines):
                text = lines[number]
                number += 1
            continue
        first = number
        if re.match(r"^\s*template\s+(?!<)", text) and ";" not in text:
            while number < len(lines) and ";" not in text and "{" not in text:
                text += "\n" + lines[number]
                number += 1
        item = _instantiation(" ".join(text.split()), macros) if "\n" in text else _instantiation(text, macros)
        if item is None and re.match(r"^\s*template\s+(?!<)", text):
            item = _deduced(text, source)
        if item is not None:
            found.append((item[0], item[1], depth > 0, first, text.splitlines()[0]))
    return found
