"""Cosmetic rules: a change that provably does nothing a port could follow (DESIGN §6, "no-op proofs").

Each is a proof, not a guess: equal tokens, an equal Python AST, a
consistent renaming, or imports that bind the same names. Any of them
gives NOT_APPLICABLE/cosmetic; failing every proof, the change is compared.

The code: the proofs on syntax trees that locals were renamed consistently
(``renamed_locals``, ``alpha_tokens``); what imports bind is read in
``classifier.imports``. It reads the syntax trees handed to it; it reads no git,
imports no verdict table and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import re
import textwrap

from portq.classifier.rules import Rule
from portq.language.memo import STRINGS, per_definition
from portq.language.signatures import comment_free_tokens, definition_text, definition_tokens, node_text, nodes_of, normalise_name
from portq.language.symbols import function_declarator

RULES = (
    Rule("formatter-only", ("NOT_APPLICABLE",),
         "A C/C++ file whose tokens, read from the text with comments dropped, line continuations joined and "
         "its `#include` lines taken as a set, are the same before and after was only reformatted (whitespace, "
         "line wrapping, wrapped comments, include order: what a code formatter changes), so every definition "
         "of it is cosmetic. Read from the text, it holds where tree-sitter cannot parse the file. A changed "
         "token anywhere in the file leaves each definition to the other rules.",
         "-__global__ void k(const float* x, int n) {\n+__global__ void k(\n+    const float *x, int n\n+) {",
         "classifier.rules.cosmetic.formatted_alike, classifier.verdicts.SymbolClassifier._decided"),
    Rule("cosmetic-comments", ("NOT_APPLICABLE",),
         "Changed lines outside definitions that are only comments or blank change nothing ported; the inner "
         "lines of a C++ block comment are comment, as its parse tree covers them, whatever they start with.",
         "-# TODO: tune\n+# Tuned on MI300",
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("cosmetic-tokens", ("NOT_APPLICABLE",),
         "A ported definition whose tokens, comments dropped, are identical before and after is unchanged.",
         "-    x = a+b  # sum\n+    x = a+b",
         "classifier.verdicts.SymbolClassifier._against_port"),
    Rule("cosmetic-renaming", ("NOT_APPLICABLE",),
         "A definition that differs only by a consistent renaming of its locals is unchanged. A name a class "
         "binds in its own body is an attribute every user of the class reads (an enum's member), never a local: "
         "a class renaming one is changed.",
         "-    acc = tl.zeros(...)\n+    accumulator = tl.zeros(...)  (every use renamed alike)",
         "classifier.verdicts.SymbolClassifier._against_port, classifier.rules.cosmetic.renamed_locals"),
    Rule("cosmetic-parameter-renaming", ("NOT_APPLICABLE",),
         "A definition that differs only by a consistent renaming of its locals and parameters, each parameter in "
         "its place, and that no call in its file or the commit's other owned files (before or after) binds by a "
         "renamed name, computes the same from the same arguments: every call binds the same values, so the renaming is form without meaning.",
         "-def k(x_ptr, r_ptr):\n-    tl.store(r_ptr, x)\n+def k(x_ptr, rstd_ptr):\n+    tl.store(rstd_ptr, x)  "
         "(k[grid](x, r) passes both by position)",
         "classifier.verdicts.SymbolClassifier._against_port, classifier.rules.cosmetic.renamed_names"),
    Rule("renamed-binding", ("NOT_APPLICABLE",),
         "A definition that differs only by a consistent renaming of its locals, its parameters (each in its place) "
         "and the attributes a method keeps on its first parameter (`ctx.a` → `ctx.b`), where every call in its "
         "file or the commit's other owned files that bound a renamed parameter by keyword now binds the new name "
         "to the same value (no call binds either name otherwise), and no use of a renamed attribute's old name is "
         "left there, computes the same from the same arguments: the callers were renamed with it, so the "
         "renaming is form without meaning for a port that binds by its own names. A keyword's value that reads "
         "a caller's local is the same value when the caller's whole change is a consistent renaming of its "
         "locals (and of the keywords it passes); such a caller, whose renamed keywords are each a parameter its "
         "callee renamed in its own place in the commit, is cosmetic too, and its launch passes the same values.",
         "-def k(x, ignored):\n-    ctx.ignored = ignored\n+def k(x, ignore):\n+    ctx.ignore = ignore  "
         "(f(x, ignored=v) → f(x, ignore=v); backward's ctx.ignored → ctx.ignore; or cols = n → n_cols = n with "
         "k(x, w=cols) → k(x, n_cols=n_cols))",
         "classifier.verdicts.SymbolClassifier._renamed_names, classifier.rules.cosmetic.renamed_names, "
         "classifier.rules.cosmetic.keyword_bindings, classifier.rules.cosmetic.caller_renaming, "
         "classifier.rules.cosmetic.followed_keywords, classifier.rules.launch._renamed_arguments"),
    Rule("dropped-keyword", ("NOT_APPLICABLE",),
         "A Python definition whose whole change is that its calls stop passing keywords, each a parameter its "
         "callee (defined once on each side of the files the commit owns, with no `**` catch-all after) drops in "
         "the same commit, each dropped value a name, an attribute of one or a literal (reading it runs "
         "nothing), makes no change of its own: the removal is the callee's, decided at the callee against its "
         "port, so the caller's half is cosmetic. A keyword whose callee keeps the parameter (the call now "
         "binds its default), a dropped value that calls something, or any other change stays flagged.",
         "-    dx = run_bwd(g=dy, width=ctx.width, BLOCK=ctx.BLOCK)\n+    dx = run_bwd(g=dy, BLOCK=ctx.BLOCK)  "
         "(def run_bwd(g, width, BLOCK) → def run_bwd(g, BLOCK) in the same commit)",
         "classifier.verdicts.SymbolClassifier._followed_keywords, classifier.rules.cosmetic.dropped_keywords"),
    Rule("cosmetic-ast", ("NOT_APPLICABLE",),
         "A Python definition (or class body) with the same AST before and after changed only its formatting.",
         "-    return f(a,\n-             b)\n+    return f(a, b)",
         "classifier.verdicts.SymbolClassifier._against_port, "
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("cosmetic-imports", ("NOT_APPLICABLE",),
         "Changed import statements that bind the same names to the same modules change nothing.",
         "-from .a import x, y\n+from .a import y, x",
         "classifier.rules.attribution.AttributionRules._import_change"),
    Rule("reexported-import", ("NOT_APPLICABLE",),
         "Changed import statements whose names resolve to the same objects once each import from a module that "
         "only re-exports the name (binds it by exactly one import and names it nowhere else in its code, "
         "`__all__` aside; or names it nowhere and has one `from m import *` of a module `m` exporting it) is "
         "followed to where it comes from, each side read at its own commit, change nothing: "
         "every ported definition using the name gets the same object.",
         "-from pkg.sub.mod import f\n+from pkg.sub import f   (pkg/sub/__init__.py: from .mod import f)",
         "classifier.imports.reexport_target, classifier.rules.attribution.AttributionRules._import_change"),
    Rule("renamed-module-import", ("NOT_APPLICABLE",),
         "A module-level change that only imports one object under a new name from a module renamed in the same "
         "commit (the old module deleted; the new one, reached through any re-export, runs the old module's "
         "program once relative imports are resolved, docstrings set aside and the object's name renamed one to "
         "one) and reads it under that name, the rest of the module the same, gives every ported definition the "
         "same object: cosmetic. A new module computing anything differently, an old module that stays, or "
         "another binding changed beside the rename stays flagged.",
         "-from ..runtime.tool import extra_module\n+from ..utils import extra_shim\n"
         "-log = extra_module.log\n+log = extra_shim.log   (runtime/tool.py deleted, utils/helper.py the same program)",
         "classifier.rules.attribution.renamed_object_program, .AttributionRules._renamed_module_import"),
    Rule("cpp-alpha-equivalence", ("NOT_APPLICABLE",),
         "A C/C++ definition whose whole change is one consistent, one-to-one renaming of its runtime parameters "
         "(each in its own position, as C++ binds arguments by position) and of the locals it declares, with "
         "`const` qualifiers added or dropped and comments rewritten, every other token the same and in the same "
         "order, computes the same from the same arguments: cosmetic. Two parameters trading roles (the body reading "
         "the first where it read the second), a changed or reordered operand (three terms regrouped round differently in floating point), or a renamed "
         "name that a macro of the file reads, stays with the other rules.",
         "-__global__ void k(float* x, float* y, int n) { float4 a = ((float4*)x)[i]; ... }\n"
         "+__global__ void k(float* acc, const float* src, const int n) { float4 v = ((float4*)acc)[i]; ... }",
         "classifier.rules.cosmetic.cpp_renaming, classifier.verdicts.SymbolClassifier._cpp_renaming"),
    Rule("unread-parameter-name", ("NOT_APPLICABLE",),
         "A C/C++ definition whose whole change is that parameters gain or lose their names (`const dim_t,` → "
         "`const dim_t axis_size,`), every other token the same and in the same order, where each such name is "
         "spelled by no other token of the definition on the side that has it, computes the same from the same "
         "arguments: C++ binds arguments by position, a name nothing reads binds nothing the body uses, and a name "
         "the body does not spell shadows nothing it reads. Cosmetic. A name the body spells (one that would now "
         "shadow a file-scope name the body reads, say), a changed type or any other changed token stays with "
         "the other rules.",
         "-void compute(const float* x, const dim_t, float* y) const {\n"
         "+void compute(const float* x, const dim_t axis_size, float* y) const {  (the body never spells axis_size)",
         "classifier.rules.cosmetic.cpp_parameter_names, classifier.verdicts.SymbolClassifier._against_port"),
)


# --- semantic no-ops: renamed locals ---------------------------------------------


_PY_TARGET_PARENTS = {
    "assignment": "left", "augmented_assignment": "left", "for_statement": "left",
    "for_in_clause": "left", "named_expression": "name", "as_pattern_target": None,
}


def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _python_parameters(function) -> set[str]:
    names: set[str] = set()
    params = function.child_by_field_name("parameters") if function is not None else None
    if params is None:
        return names
    for child in params.named_children:
        if child.type == "identifier":
            names.add(node_text(child))
            continue
        name = child.child_by_field_name("name")
        if name is None:
            name = next((c for c in child.named_children if c.type == "identifier"), None)
        if name is not None:
            names.add(node_text(name))
    return names


def _target_identifiers(target) -> list:
    """Identifiers a Python assignment target binds (not attributes or subscripts)."""
    found = []
    for node in _walk(target):
        if node.type != "identifier":
            continue
        parent = node.parent
        inside = False
        while parent is not None and parent.id != target.id:
            if parent.type in ("attribute", "subscript", "call"):
                inside = True
                break
            parent = parent.parent
        if not inside:
            found.append(node)
    if target.type == "identifier":
        found = [target]
    return found


def _function_node(node):
    if node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    if node.type == "template_declaration":
        return next((c for c in node.named_children if c.type == "function_definition"), node)
    return node


def _function_body(node):
    """The body block of a Python function definition (decorated or not); None for anything else."""
    function = _function_node(node) if node is not None else None
    return function.child_by_field_name("body") if function is not None and function.type == "function_definition" \
        else None


_PY_LOCAL_BINDERS = ("global_statement", "nonlocal_statement", *_PY_TARGET_PARENTS)


_CPP_LOCAL_BINDERS = ("init_declarator", "declaration", "for_range_loop")


def local_names(node, language: str) -> set[str]:
    """Names a definition binds as its own locals (not parameters, globals or fields)."""
    function = _function_node(node)
    names: set[str] = set()
    if language == "python":
        declared_outer: set[str] = set()
        for current in nodes_of(function, _PY_LOCAL_BINDERS, "python"):
            if current.type in ("global_statement", "nonlocal_statement"):
                declared_outer |= {node_text(c) for c in current.named_children if c.type == "identifier"}
            field = _PY_TARGET_PARENTS.get(current.type, "")
            if field == "" or current.type == "as_pattern_target":
                if current.type == "as_pattern_target":
                    names |= {node_text(i) for i in _target_identifiers(current)}
                continue
            target = current.child_by_field_name(field) if field else None
            if target is not None:
                names |= {node_text(i) for i in _target_identifiers(target)}
        return names - _python_parameters(function) - declared_outer
    body = function.child_by_field_name("body")
    if body is None:
        return names
    for current in nodes_of(body, _CPP_LOCAL_BINDERS, "cpp"):
        if current.type in _CPP_LOCAL_BINDERS:
            declarator = current.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "identifier":
                inner = declarator.child_by_field_name("declarator")
                if inner is None:
                    inner = next((c for c in declarator.named_children if c.type == "identifier"), None)
                declarator = inner
            if declarator is not None:
                names.add(node_text(declarator))
    return names


def _is_name_use(node, language: str) -> bool:
    """An identifier leaf that names a variable (not an attribute or a keyword argument's name)."""
    if node.type != "identifier":
        return False
    parent = node.parent
    if parent is None:
        return True
    if language == "python":
        if parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
            return False
        if parent.type == "keyword_argument" and parent.child_by_field_name("name") == node:
            return False
    return True


@per_definition("alpha-tokens", STRINGS)
def alpha_tokens(node, language: str) -> list[str]:
    """The definition's tokens without comments, with each local renamed to
    its order of first appearance: two definitions that differ only by a
    consistent renaming of locals (unused ones included) give equal lists."""
    locals_ = local_names(node, language)
    placeholders: dict[str, str] = {}

    def spell(leaf) -> str:
        text = node_text(leaf)
        if text in locals_ and _is_name_use(leaf, language):
            return placeholders.setdefault(text, f"\x00{len(placeholders)}")
        return text

    return comment_free_tokens(node, spell=spell)


def _parameter_name(parameter) -> str | None:
    if parameter.type == "identifier":
        return normalise_name(node_text(parameter))
    name = parameter.child_by_field_name("name") or next(
        (c for c in parameter.named_children if c.type == "identifier"), None)
    return normalise_name(node_text(name)) if name is not None else None


def renamed_locals(old_node, new_node, language: str) -> list[tuple[str, str]] | None:
    """The (old, new) local renamings that make the two definitions equal, or
    None when they differ by more than a consistent renaming of locals."""
    if alpha_tokens(old_node, language) != alpha_tokens(new_node, language):
        return None
    old_tokens, new_tokens = definition_tokens(old_node), definition_tokens(new_node)
    pairs = sorted({(a, b) for a, b in zip(old_tokens, new_tokens) if a != b})
    return pairs


def _first_parameter(node, language: str) -> str | None:
    """The name of a Python method's first parameter (``self``, ``ctx``), or None."""
    if language != "python":
        return None
    params = _function_node(node).child_by_field_name("parameters")
    first = next((c for c in params.named_children if c.type != "comment"), None) if params is not None else None
    return node_text(first) if first is not None and first.type == "identifier" else None


def _is_attribute_of(leaf, owner: str | None) -> bool:
    """``leaf`` is the attribute name of ``owner.NAME`` (``ctx.scale``)."""
    parent = leaf.parent
    if owner is None or leaf.type != "identifier" or parent is None or parent.type != "attribute":
        return False
    obj = parent.child_by_field_name("object")
    return parent.child_by_field_name("attribute") == leaf and obj is not None and obj.type == "identifier" \
        and node_text(obj) == owner


def _alpha_with(node, language: str, names: set[str], attributes: bool = False) -> list[str]:
    """``alpha_tokens`` with ``names`` (parameters) renamed to placeholders too;
    with ``attributes``, also the attribute names read or written on the
    method's first parameter (``ctx.scale``), each to its own placeholder."""
    bound = local_names(node, language) | names
    owner = _first_parameter(node, language) if attributes else None
    placeholders: dict[str, str] = {}
    fields: dict[str, str] = {}

    def spell(leaf) -> str:
        text = node_text(leaf)
        if text in bound and _is_name_use(leaf, language):
            return placeholders.setdefault(text, f"\x00{len(placeholders)}")
        if _is_attribute_of(leaf, owner):
            return fields.setdefault(text, f"\x01{len(fields)}")
        return text

    return comment_free_tokens(node, spell=spell)


def keyword_bindings(root, names: set[str], renaming: dict[str, str] | None = None,
                     callers: dict[str, dict[str, str]] | None = None) -> list[tuple[str, str, str]]:
    """Each keyword argument under ``root`` passed by one of ``names``, as
    (the callee as written, the keyword after ``renaming``, the value as
    written), sorted: the same list on both sides of a commit, the old side
    renamed, means every call that bound a renamed parameter by keyword now
    binds the new name to the same value, and no call binds it otherwise.
    ``callers`` (enclosing function -> its consistent renaming of locals,
    ``caller_renaming``) respells the names a value reads in that function."""
    renaming = renaming or {}
    found = []
    for current in nodes_of(root, ("keyword_argument",), "python"):
        name, value = current.child_by_field_name("name"), current.child_by_field_name("value")
        if name is None or node_text(name) not in names:
            continue
        call = current.parent.parent if current.parent is not None else None
        callee = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        written = node_text(value) if value is not None else ""
        respelled = (callers or {}).get(enclosing_function(current) or "")
        if respelled and value is not None:
            written = "".join(respelled.get(leaf, leaf) for leaf in re.split(r"([A-Za-z_]\w*)", written))
        found.append((node_text(callee) if callee is not None else "", renaming.get(node_text(name), node_text(name)),
                      written))
    return sorted(found)


def imported_others(root, name: str) -> set[str]:
    """The names other than ``name`` a Python module binds with ``from MODULE import NAME`` (no ``as``):
    each one, once its module shows it defines a function of that name, is another definition, whose
    calls bind its own parameters, never ``name``'s (``renamed-binding``)."""
    found = set()
    for statement in nodes_of(root, ("import_from_statement",), "python"):
        module = statement.child_by_field_name("module_name")
        for child in statement.named_children:
            if child is module or child.type != "dotted_name":
                continue
            text = node_text(child)
            if "." not in text and text != name:
                found.add(text)
    return found


def import_aliases(root, name: str) -> set[str]:
    """The local names ``import ... as ALIAS`` binds to ``name`` in a Python module."""
    found = set()
    for alias in nodes_of(root, ("aliased_import",), "python"):
        imported, local = alias.child_by_field_name("name"), alias.child_by_field_name("alias")
        if imported is not None and local is not None and node_text(imported).split(".")[-1] == name:
            found.add(node_text(local))
    return found


def enclosing_function_node(node):
    """The innermost Python function definition around ``node``, or None."""
    current = node.parent
    while current is not None and current.type != "function_definition":
        current = current.parent
    return current


def enclosing_function(node) -> str | None:
    """The name of the innermost Python function definition around ``node``, or None."""
    current = enclosing_function_node(node)
    named = current.child_by_field_name("name") if current is not None else None
    return node_text(named) if named is not None else None


def followed_keywords(old_node, new_node, trees) -> list[tuple[str, str, str]] | None:
    """Rule ``renamed-binding``, at the caller: the (callee, old keyword, new keyword) of each keyword a
    Python function's calls renamed, when its whole change is that and a consistent renaming of its locals
    (``caller_renaming``) and each callee, defined once on each side of ``trees`` ((side, root) of the
    files the commit owns), renamed that parameter in its own place; None otherwise (an empty list: no
    keyword renamed)."""
    if caller_renaming(old_node, new_node, None) is None:
        return None
    olds = list(nodes_of(old_node, ("keyword_argument",), "python"))
    news = list(nodes_of(new_node, ("keyword_argument",), "python"))
    if len(olds) != len(news):
        return None
    definitions = _functions_by_side(trees)
    followed = []
    for was, now in zip(olds, news):
        a, b = node_text(was.child_by_field_name("name")), node_text(now.child_by_field_name("name"))
        if a == b:
            continue
        call = now.parent.parent if now.parent is not None else None
        function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        callee = re.split(r"[\[(]", node_text(function))[0].split(".")[-1] if function is not None else ""
        before, after = definitions["old"].get(callee, []), definitions["new"].get(callee, [])
        if len(before) != 1 or len(after) != 1:
            return None
        old_params, new_params = _parameter_list(before[0]), _parameter_list(after[0])
        a_name, b_name = normalise_name(a), normalise_name(b)  # the parameter list is read normalised
        if len(old_params) != len(new_params) or a_name not in old_params or b_name not in new_params \
                or old_params.index(a_name) != new_params.index(b_name) or a_name in new_params \
                or b_name in old_params:
            return None
        followed.append((callee, a, b))
    return followed


def dropped_keywords(old_node, new_node, trees) -> list[tuple[str, str]] | None:
    """Rule ``dropped-keyword``: the (callee, keyword) of each keyword a Python function's calls stopped
    passing, when written back into the new side's calls they make it the old side's ``ast`` and each
    callee, defined once on each side of ``trees`` ((side, root) of the files the commit owns), dropped that
    parameter (and takes no ``**`` catch-all after); each dropped value a name, an attribute chain on one
    or a literal. None otherwise."""
    try:
        old = ast.parse(textwrap.dedent(definition_text(old_node)))
        new = ast.parse(textwrap.dedent(definition_text(new_node)))
    except (SyntaxError, ValueError):
        return None
    definitions = _functions_by_side(trees)
    dropped: list[tuple[str, str]] = []

    def callee_of(call: ast.Call) -> str | None:
        function = call.func
        return function.id if isinstance(function, ast.Name) else \
            function.attr if isinstance(function, ast.Attribute) else None

    def plain(value: ast.AST) -> bool:
        while isinstance(value, ast.Attribute):
            value = value.value
        return isinstance(value, (ast.Name, ast.Constant))

    for node in ast.walk(old):
        if not isinstance(node, ast.Call):
            continue
        callee = callee_of(node)
        if callee is None:
            continue
        kept = []
        for keyword in node.keywords:
            before, after = definitions["old"].get(callee, []), definitions["new"].get(callee, [])
            if keyword.arg is None or len(before) != 1 or len(after) != 1:
                kept.append(keyword)
                continue
            old_params, new_params = _parameter_list(before[0]), _parameter_list(after[0])
            name = normalise_name(keyword.arg)
            parameters = after[0].child_by_field_name("parameters")
            catch_all = parameters is not None and any(
                c.type == "dictionary_splat_pattern" for c in parameters.named_children)
            if name in old_params and name not in new_params and not catch_all:
                if not plain(keyword.value):
                    return None
                dropped.append((callee, keyword.arg))
                continue
            kept.append(keyword)
        node.keywords = kept
    if not dropped or ast.dump(old) != ast.dump(new):
        return None
    return dropped


def _functions_by_side(trees) -> dict[str, dict[str, list]]:
    """side ("old"/"new") -> function name -> the Python function definitions of that name on that side of
    ``trees`` ((side, root) pairs of the files a commit owns)."""
    found: dict[str, dict[str, list]] = {"old": {}, "new": {}}
    for side, root in trees:
        for node in nodes_of(root, ("function_definition",), "python"):
            named = node.child_by_field_name("name")
            if named is not None:
                found[side].setdefault(node_text(named), []).append(node)
    return found


def _parameter_list(node) -> list[str]:
    """A Python function's parameter names, in order."""
    params = node.child_by_field_name("parameters")
    return [name for child in (params.named_children if params is not None else ())
            if child.type != "comment" and (name := _parameter_name(child)) is not None]


def caller_renamings(trees, keywords: dict[str, str]) -> dict[str, dict[str, str]]:
    """Function name -> ``caller_renaming`` of it, for each Python function defined once on each side of
    ``trees`` ((side, root) pairs of the files a commit owns) whose two sides differ by that renaming."""
    found = _functions_by_side(trees)
    renamings = {}
    for name, olds in found["old"].items():
        news = found["new"].get(name, [])
        if len(olds) == 1 and len(news) == 1:
            mapping = caller_renaming(olds[0], news[0], keywords)
            if mapping:
                renamings[name] = mapping
    return renamings


def caller_renaming(old_node, new_node, keywords: dict[str, str] | None) -> dict[str, str] | None:
    """Rule ``renamed-binding``: the (old -> new) local renaming that makes a calling function's two sides
    equal once the keywords it passes are renamed by ``keywords`` (a callee's renamed parameters; None:
    any consistent renaming of keywords, each one then checked against the callee by whoever asks), or
    None when the function differs by more: then each local its keyword values read names the same value."""
    old_locals, new_locals = local_names(old_node, "python"), local_names(new_node, "python")

    def spelled(node, names, renamed):
        placeholders: dict[str, str] = {}

        def spell(leaf) -> str:
            text = node_text(leaf)
            parent = leaf.parent
            if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name") == leaf:
                if renamed is None:
                    return placeholders.setdefault("=" + text, f"\x01{len(placeholders)}")
                return renamed.get(text, text)
            if text in names and _is_name_use(leaf, "python"):
                return placeholders.setdefault(text, f"\x00{len(placeholders)}")
            return text
        return comment_free_tokens(node, spell=spell)

    if spelled(old_node, old_locals, keywords) != spelled(new_node, new_locals, None if keywords is None else {}):
        return None
    pairs = {(a, b) for a, b in zip(definition_tokens(old_node), definition_tokens(new_node))
             if a != b and a in old_locals and b in new_locals}
    mapping = dict(pairs)
    return mapping if len(mapping) == len(pairs) else None


def attribute_names(root) -> list[str]:
    """Every attribute name read or written under ``root`` (``x.NAME``), with repeats."""
    found = []
    for current in nodes_of(root, ("attribute",), "python"):
        attribute = current.child_by_field_name("attribute")
        if attribute is not None:
            found.append(node_text(attribute))
    return found


def renamed_names(old_node, new_node, language: str, old_params: list[str], new_params: list[str],
                  keywords=None) -> list[tuple[str, str]] | None:
    """The (old, new) renamings of locals and parameters that make the two
    definitions equal, with at least one parameter (or attribute, below) among them, or None. The
    parameters (as written, in order) must keep their places: equal counts,
    a renamed one renamed at its own position; and ``keywords`` must accept
    the renamed parameters: a set of the names calls in the definition's
    file pass keyword arguments by (both sides), holding no renamed old or
    new name, or a function given the (old, new) pairs that says whether
    every call binds the same values after as before.

    A renaming may also rename the attributes a method keeps on its first
    parameter (``ctx.ignored = ignored`` → ``ctx.ignore = ignore``); those
    pairs are returned too, marked as attributes (``.ignored``), for the
    caller to check that no use of the old attribute name is left."""
    if len(old_params) != len(new_params):
        return None
    moved = [(a, b) for a, b in zip(old_params, new_params) if a != b]
    if not moved:
        pass  # only attributes on the first parameter may be renamed, checked below
    elif isinstance(keywords, (set, frozenset)):
        if any(a in keywords or b in keywords for a, b in moved):
            return None
    elif keywords is not None and not keywords(moved):
        return None
    old_alpha = _alpha_with(old_node, language, set(old_params))
    if old_alpha == _alpha_with(new_node, language, set(new_params)):
        attributes: set[tuple[str, str]] = set()
    elif _alpha_with(old_node, language, set(old_params), True) == _alpha_with(new_node, language, set(new_params),
                                                                                   True):
        attributes = renamed_attributes(old_node, new_node, language)
        if not attributes:
            return None
    else:
        return None
    if not moved and not attributes:
        return None
    old_tokens, new_tokens = definition_tokens(old_node), definition_tokens(new_node)
    pairs = sorted({(a, b) for a, b in zip(old_tokens, new_tokens) if a != b})
    if not set(moved) <= set(pairs):
        return None  # a parameter swapped places with another rather than being renamed in its own
    return pairs + sorted((f".{a}", f".{b}") for a, b in attributes)


def renamed_attributes(old_node, new_node, language: str) -> set[tuple[str, str]] | None:
    """The (old, new) attribute names a method's renaming changes on its first
    parameter (``ctx.a`` → ``ctx.b``), when the two sides differ by nothing
    else there; None when the pairing is not one to one (two old names to
    one new) or a new name was already an attribute the old side kept."""
    owner_old, owner_new = _first_parameter(old_node, language), _first_parameter(new_node, language)
    if owner_old is None or owner_new is None:
        return None
    old_leaves = [leaf for leaf in _leaves(old_node) if _is_attribute_of(leaf, owner_old)]
    new_leaves = [leaf for leaf in _leaves(new_node) if _is_attribute_of(leaf, owner_new)]
    if len(old_leaves) != len(new_leaves):
        return None
    pairs = {(node_text(a), node_text(b)) for a, b in zip(old_leaves, new_leaves)}
    changed = {(a, b) for a, b in pairs if a != b}
    olds, news = [a for a, _ in pairs], [b for _, b in pairs]
    if len(set(olds)) != len(olds) or len(set(news)) != len(news):
        return None
    kept = {a for a, b in pairs if a == b}
    if any(b in kept or a in kept for a, b in changed):
        return None
    return changed


def _leaves(node):
    """The identifier leaves under ``node``, in source order."""
    return [n for n in _walk(node) if n.type == "identifier"]


# --- a whole C/C++ file reformatted -----------------------------------------------------

_CPP_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>[uUL8]*R"(?P<delimiter>[^(\s]*)\(.*?\)(?P=delimiter)"|[uUL8]*"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<word>[A-Za-z_]\w*|\d[\w.]*(?:[eEpP][+-]\d+)?\w*|\.\d[\w.]*)
  | (?P<other>\S)
""", re.VERBOSE | re.DOTALL)
_INCLUDE_LINE = re.compile(r"^[ \t]*#[ \t]*include\b[^\n]*$", re.MULTILINE)


def cpp_tokens(text: str) -> list[str]:
    """The tokens of C/C++ ``text`` (``_CPP_TOKEN``: words and numbers, string and character literals
    whole, every other character alone), comments dropped."""
    return [m.group(0) for m in _CPP_TOKEN.finditer(text) if m.lastgroup != "comment"]


def closing_bracket(tokens: list[str], at: int) -> int | None:
    """The index of the bracket closing the one at ``tokens[at]``; None when it is not closed."""
    depth = 0
    for index in range(at, len(tokens)):
        if tokens[index] in ("(", "{", "["):
            depth += 1
        elif tokens[index] in (")", "}", "]"):
            depth -= 1
            if depth == 0:
                return index
    return None


def split_arguments(tokens: list[str]) -> list[list[str]]:
    """``tokens`` (inside a call's or braced list's brackets) split at the commas outside nested brackets."""
    found: list[list[str]] = [[]]
    depth = 0
    for token in tokens:
        if token in ("(", "{", "["):
            depth += 1
        elif token in (")", "}", "]"):
            depth -= 1
        if token == "," and depth == 0:
            found.append([])
        else:
            found[-1].append(token)
    return [] if found == [[]] else found


def _formatting_free(source: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A C/C++ file's tokens with comments dropped and line continuations joined, and its ``#include``
    lines (each as its tokens) sorted, a repeated ``#include <...>`` counted once (a system header
    guards itself, so its second inclusion is a no-op; a project header ``"..."`` may be meant to expand
    twice, so each of its lines counts); None where the text cannot be read that way."""
    text = source.replace("\\\r\n", " ").replace("\\\n", " ")
    includes = []
    for found in _INCLUDE_LINE.finditer(text):
        tokens = " ".join(cpp_tokens(found.group(0)))
        if "<" not in tokens or tokens not in includes:
            includes.append(tokens)
    text = _INCLUDE_LINE.sub(" ", text)
    tokens = tuple(cpp_tokens(text))
    return tokens, tuple(sorted(includes))


def formatted_alike(before: bytes | None, after: bytes | None) -> bool:
    """True when two versions of a C/C++ file differ, and differ only in what a code formatter changes
    (``formatter-only``): the same tokens once comments are dropped, line continuations joined and
    ``#include`` lines taken in any order, a repeated system header once."""
    if before is None or after is None or before == after:
        return False
    try:
        old, new = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _formatting_free(old) == _formatting_free(new)


def macro_read_names(root) -> set[str]:
    """The identifiers the object-like and function-like macros of a C/C++ file root read in their bodies
    (``#define ROW (offset % width)`` reads ``offset`` and ``width``): a local renamed under such a macro
    changes what the macro's expansion names."""
    names: set[str] = set()
    for current in nodes_of(root, ("preproc_def", "preproc_function_def"), "cpp"):
        value = current.child_by_field_name("value")
        if value is not None:
            names |= set(re.findall(r"[A-Za-z_]\w*", node_text(value)))
    return names


def _const_free(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t != "const"]


def _alpha_cpp(node, params: set[str], expand=None) -> list[str]:
    """A C/C++ definition's tokens (through ``expand``, as ``comment_free_tokens`` reads it) with ``const``
    left out and each parameter and local replaced by the order of its first appearance."""
    bound = local_names(node, "cpp") | params
    placeholders: dict[str, str] = {}

    def spell(leaf) -> str:
        text = node_text(leaf)
        if text in bound and leaf.type == "identifier":
            return placeholders.setdefault(text, f"\x00{len(placeholders)}")
        return text

    return _const_free(comment_free_tokens(node, spell=spell, expand=expand))


def cpp_renaming(old_node, new_node, old_params: list[str], new_params: list[str],
                 macro_names: set[str], expand=(None, None)) -> list[tuple[str, str]] | None:
    """Rule ``cpp-alpha-equivalence``: the (old, new) renamings of a C/C++ definition's parameters and
    locals that, with every ``const`` token set aside, make its two sides the same token for token; None when
    the sides differ by anything else. The parameters (as written, in order) keep their places: equal
    counts, a renamed one renamed at its own position (every name is replaced by the order of its first
    appearance, so two parameters trading roles in the body differ). No renamed name may be one a macro of the file reads
    (``macro_names``). Operands are compared in order, so ``a + b`` → ``b + a`` and any regrouping of
    three terms are differences. ``expand`` (old side, new side) may read each side through
    ``comment_free_tokens``'s ``expand`` first (``declared-branch-off``)."""
    if len(old_params) != len(new_params):
        return None
    if _alpha_cpp(old_node, set(old_params), expand[0]) != _alpha_cpp(new_node, set(new_params), expand[1]):
        return None
    old_tokens = _const_free(comment_free_tokens(old_node, expand=expand[0]) if expand[0] else definition_tokens(old_node))
    new_tokens = _const_free(comment_free_tokens(new_node, expand=expand[1]) if expand[1] else definition_tokens(new_node))
    pairs = sorted({(a, b) for a, b in zip(old_tokens, new_tokens) if a != b})
    if not pairs:
        return None
    moved = {(a, b) for a, b in zip(old_params, new_params) if a != b}
    if not moved <= set(pairs):
        return None  # a parameter took another's name rather than being renamed in its own place
    if any(a in macro_names or b in macro_names for a, b in pairs):
        return None
    return pairs


def cpp_parameter_declarations(node) -> list | None:
    """The parameter declarations of the C/C++ function definition ``node`` (through a ``template``
    declaration), in order; None when it has no parameter list."""
    if node.type == "template_declaration":
        node = next((c for c in node.named_children if c.type == "function_definition"), None)
    declarator = function_declarator(node.child_by_field_name("declarator")) if node is not None else None
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    return None if parameters is None else [c for c in parameters.named_children if c.type != "comment"]


def _cpp_parameter_identifier(parameter):
    """The identifier node that names ``parameter`` (under pointer, reference or array declarators); None when
    it is unnamed."""
    declarator = parameter.child_by_field_name("declarator")
    found = nodes_of(declarator, ("identifier",), "cpp") if declarator is not None else []
    if not found:  # a reference declarator holds its name as a plain child
        found = [n for c in parameter.named_children if c.type == "reference_declarator"
                 for n in nodes_of(c, ("identifier",), "cpp")]
    return found[0] if len(found) == 1 else None


def cpp_parameter_names(old_node, new_node) -> list[tuple[str, str]] | None:
    """Rule ``unread-parameter-name``: the (old, new) names, one of them empty, of the parameters of a C/C++
    definition that gained or lost their name, when that is its whole change (every other token the same and
    in order) and each such name is spelled by no other token of its side's definition; else None."""
    olds, news = cpp_parameter_declarations(old_node), cpp_parameter_declarations(new_node)
    if olds is None or news is None or len(olds) != len(news):
        return None
    dropped: dict[str, set] = {"old": set(), "new": set()}
    pairs: list[tuple[str, str]] = []
    for before, after in zip(olds, news):
        named = (_cpp_parameter_identifier(before), _cpp_parameter_identifier(after))
        if (named[0] is None) == (named[1] is None):
            continue
        side, name, definition = ("old", named[0], old_node) if named[0] is not None else ("new", named[1], new_node)
        word = name.text.decode("utf-8", errors="replace")
        if definition_tokens(definition).count(word) != 1:
            return None  # the body spells it: it binds, or shadows, what the body reads
        dropped[side].add((name.start_byte, name.end_byte))
        pairs.append((word, "") if side == "old" else ("", word))
    if not pairs:
        return None

    def expand(side):
        return lambda n: [] if (n.start_byte, n.end_byte) in dropped[side] and n.type == "identifier" else None

    if comment_free_tokens(old_node, expand=expand("old")) != comment_free_tokens(new_node, expand=expand("new")):
        return None
    return pairs
