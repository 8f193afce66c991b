"""Form rules: a change of form that provably leaves what the code computes alone (DESIGN §6, "no-op proofs").

Like the cosmetic rules, each is a proof on both sides of one definition
(or of a module's lines outside its definitions), never a guess:

* ``cosmetic-annotations`` (Python): the two sides parse to the same
  ``ast`` once type annotations, return annotations and docstrings are
  erased. An annotation that decides how a value binds is kept: a
  ``constexpr`` annotation on a parameter (Triton specialises on it), one
  on a module-level name whose value is not already a constexpr, and every
  annotation in a class body (a dataclass field is its annotation).
* ``redundant-pass`` (Python): the two sides parse to the same ``ast``
  once every ``pass`` in a block that holds another statement is dropped
  (and docstrings and annotations that bind nothing erased, as above). Such
  a ``pass`` does nothing; one that is its block's only statement is kept,
  so a block emptied, filled or removed with its test stays compared.
* ``member-lines``: a class body's changed lines inside one of its methods
  are that method's (a touched symbol of its own, decided on its own), and
  lines of the class's docstring compute nothing: a new method nothing
  ports, or a docstring that documents it, is not blamed on the class body.
* ``guarded-store`` (Python): ``if C: X = e`` is ``X = e`` when ``e`` calls
  nothing, no statement of the definition assigns a name ``C`` reads, and
  every other use of ``X`` lies under an ``if`` with the same condition: when
  ``C`` is false nothing reads ``X``, when true the store happens either way.
  A store moved under (or out of) the guard of its every reader is form.
* ``repeated-assert`` (Python): an ``assert`` that repeats, token for token,
  the statement just before it, with a test that reads only names and
  literals (no call, attribute, subscript or ``:=``), checks what the first
  has just checked with the same values: it passes whenever the first did.
  Adding or removing such a repeat is form. A repeat with a statement
  between, a test that calls something, or a different test is compared
  as before.
* ``cosmetic-namespace`` (C/C++): the same tokens once ``NS::`` is erased
  where ``NS`` is a namespace enclosing the definition: inside ``namespace
  flash``, ``flash::f`` and ``f`` look ``f`` up in the same namespace.
* ``unread-local`` (C/C++): the new definition's tokens are the old one's
  less whole declarations ``T x = e;`` (or ``T x;``) of locals no other token
  of the definition names, where no ``e`` assigns (``=``, ``+=``, ``++``),
  allocates (``new``, ``delete``), launches (``<<<``), calls a member
  (``a.f(...)``, ``a->f(...)``) or takes an address (``&y``) other than of
  another removed local: a value computed and never read, which every
  compiler drops. A member call that reads an extent, ``a.size(N)`` or
  ``a.stride(N)`` with ``N`` an integer literal, reads a shape and writes
  nothing, so it is allowed in ``e``. Qualifiers are erased as for ``cosmetic-qualifiers``. It
  compares tokens, not trees, so it holds where tree-sitter cannot parse the
  removed line (a ``decltype(...)::value`` initialiser); a free function call
  in ``e`` is taken to compute a value, as the name ``e`` is bound to.
* ``cosmetic-includes`` (C/C++): changed lines outside definitions that are
  all ``#include`` lines name files, not a name a ported definition uses;
  a header's own definitions are decided where they change.
* ``file-mode-only``: a file whose mode alone changed (``chmod +x``: the
  same blob on both sides) has the same definitions, line for line.
* ``cosmetic-qualifiers`` (C/C++/CUDA): the two sides have the same tokens
  once qualifiers that change how code is compiled or linked but not what
  it computes are erased: ``inline``/``__forceinline__``/``__inline__``,
  ``__grid_constant__``, ``const``, ``static`` beside ``constexpr`` (a
  compile-time constant has one value however it is stored) and the
  ``constexpr`` of ``if constexpr`` (a constant condition selects the same
  branch either way). ``static`` on a variable that is not a compile-time
  constant keeps its state between calls and is not erased. ``inline``
  gained or lost by a function defined outside any class body and template
  (not ``constexpr``, not ``static``, not in an unnamed namespace) is not
  erased either: the one-definition rule lets two translation units that
  include it each hold its definition only when it is inline, so there it
  decides whether the program links. A template (``template <>`` aside), a
  member defined in its class and a ``constexpr`` function are inline
  already, and internal linkage has one definition per unit, so there the
  qualifier stays erased.
* ``cosmetic-cast-spelling`` (C/C++/CUDA): the same tokens once each
  C-style cast to a pointer to a fundamental or CUDA vector/half type
  ``(float4 *)e`` is read as ``reinterpret_cast<float4 *>(e)``: no class
  derives from such a type, so the C cast is that ``reinterpret_cast`` (never
  a ``static_cast`` between base and derived classes).

Example diffs (each NOT_APPLICABLE/cosmetic)::

    -_ONE = tl.constexpr(1)
    +_ONE: tl.constexpr = tl.constexpr(1)

    -    Tensor tQrQ = make_fragment_like(tQgQ);   (tQrQ named nowhere else)

    -inline __device__ float f(float x) { constexpr int k = 4; ... }
    +__forceinline__ __device__ float f(float x) { static constexpr int k = 4; ... }

This module states the rules and holds the comparisons they make on syntax
trees and source text (``FormRules``, a part of the verdict table
``portq.classifier.verdicts.SymbolClassifier``, asks them of a modified
definition, reading the port's own file through the table for
``default-build``); the comparisons read no git and no tree index, the
module imports no verdict table, and no rule names a corpus symbol, path or
commit.
"""

from __future__ import annotations

import ast
import copy
import difflib
import re
import textwrap

from portq.classifier.reading import _walk_nodes, drop_redundant_passes, new_side_evidence
from portq.classifier.rules import Rule, branches
from portq.classifier.rules.cosmetic import closing_bracket, cpp_tokens, split_arguments
from portq.core.evidence import Kind
from portq.core.model import NOT_APPLICABLE, TouchedSymbol
from portq.language.memo import TEXT_OR_NONE, content_digest, per_text
from portq.language.signatures import comment_free_tokens, definition_text
from portq.language.symbols import language_for_path

RULES = (
    Rule("cosmetic-annotations", ("NOT_APPLICABLE",),
         "A Python definition, or the module-level lines of a file with ported definitions, whose `ast` is the same "
         "before and after once type annotations and docstrings are erased changed only its annotations: a "
         "`constexpr` annotation on a parameter, on a module name whose value is not already a constexpr, or in a "
         "class body decides how a value binds and is kept.",
         "-_ONE = tl.constexpr(1)\n+_ONE: tl.constexpr = tl.constexpr(1)",
         "classifier.rules.form.same_without_annotations, classifier.verdicts.SymbolClassifier._against_port, "
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("redundant-pass", ("NOT_APPLICABLE",),
         "A Python definition, or the module-level lines of a file with ported definitions, whose `ast` is the same "
         "before and after once every `pass` in a block holding another statement is dropped (docstrings and "
         "annotations that bind nothing erased as for `cosmetic-annotations`) changed only its form: such a `pass` "
         "does nothing. A `pass` that is its block's only statement is kept, so a block filled, emptied or removed "
         "with its test is still compared.",
         "     if MODE == 1:\n         x = x * SCALE\n-    pass\n     tl.store(out_ptr + offs, x)",
         "classifier.rules.form.same_without_redundant_passes, classifier.reading.drop_redundant_passes, "
         "classifier.verdicts.SymbolClassifier._against_port, classifier.rules.attribution.AttributionRules._container"),
    Rule("log-only", ("NOT_APPLICABLE",),
         "A Python definition, or the module-level lines of a file with ported definitions, whose `ast` is the same "
         "before and after once statements that only emit a log record are dropped changed nothing the port "
         "computes, returns or launches: a call of `logging.<level>(...)` or of a module-level logger "
         "(`NAME = logging.getLogger(...)`) as a statement, `import logging`, and the logger's own binding. The "
         "arguments of such a call must call nothing (a `.item()` syncs the device, a helper may have effects), "
         "so a log line that computes stays flagged, as does a receiver not bound to `logging.getLogger` and any "
         "other change beside the log lines.",
         "+logger = logging.getLogger(__name__)\n def f(x):\n+    logger.debug(\"F %s\", x.shape)",
         "classifier.rules.form.same_without_logging, classifier.verdicts.SymbolClassifier._against_port, "
         "classifier.rules.attribution.AttributionRules._container"),
    Rule("cosmetic-qualifiers", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once `inline`, `__forceinline__`, "
         "`__grid_constant__`, `const`, `static` beside `constexpr` and the `constexpr` of `if constexpr` are "
         "erased changed only how it is compiled, not what it computes. `inline` (any spelling) gained or lost by a "
         "function defined outside any class body and template (an explicit specialisation `template <>` "
         "counts as such), not `constexpr`, not `static` and not in an unnamed namespace decides whether two "
         "translation units including it may each hold it (the one-definition rule): not erased there, so that "
         "change stays flagged.",
         "-inline __device__ T f(T x)\n+__forceinline__ __device__ T f(T x)",
         "classifier.rules.form.same_without_qualifiers, classifier.verdicts.SymbolClassifier._against_port"),
    Rule("cosmetic-cast-spelling", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens (qualifiers erased as for `cosmetic-qualifiers`) are the same before and "
         "after once each C-style cast to a pointer `(P *)e` is read as `reinterpret_cast<P *>(e)`, where `P` is a "
         "fundamental type or one of CUDA's vector and half types (`float4`, `__half2`): no class derives from "
         "such a type, so the C cast cannot be a `static_cast` adjusting a pointer between base and derived "
         "classes, and both spell the same conversion. A cast to a pointer to any other type (a class, a template "
         "parameter), a changed target type or operand, or any other edit stays flagged.",
         "-  float4 *out_f4 = (float4 *)out + row * width;\n+  float4 *out_f4 = reinterpret_cast<float4 *>(out) + "
         "row * width;",
         "classifier.rules.form.same_with_casts_respelled, classifier.rules.form.FormRules._form_only"),
    Rule("cosmetic-namespace", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once qualifications by the namespaces that "
         "enclose it (`flash::f` written inside `namespace flash`) are erased names the same entities: the "
         "qualified and the unqualified name are looked up in the same namespace.",
         "-    rescale<true>(x, m);\n+    attn::rescale<true>(x, m);   (inside namespace attn)",
         "classifier.rules.form.without_own_namespace, classifier.rules.form.FormRules._form_only"),
    Rule("unread-local", ("NOT_APPLICABLE",),
         "A C/C++ definition whose new tokens (qualifiers erased as for `cosmetic-qualifiers`) are its old ones less "
         "whole declarations of locals that no other token of the definition names, each initialised without "
         "assigning, incrementing, allocating, calling a member (an extent read `a.size(N)`/`a.stride(N)` with a "
         "literal N excepted: it reads a shape) or taking the address of anything but another of "
         "those locals, lost only values nothing reads. A token comparison: it holds where tree-sitter cannot "
         "parse the removed line, and the reason says so.",
         "-    constexpr int kRows = kBlock / decltype(size<0>(Shape{}))::value;\n"
         "-    Tensor frag = make_fragment_like(layout);   (neither name used elsewhere)",
         "classifier.rules.form.unread_locals_removed, classifier.rules.form.FormRules._unread_locals, "
         "classifier.verdicts.SymbolClassifier._decide"),
    Rule("cosmetic-includes", ("NOT_APPLICABLE",),
         "A C/C++ change outside definitions made only of `#include` lines names files, not anything a ported "
         "definition uses: which declarations are visible is the build's to check, and what a header defines is "
         "decided where it changes. NOT_APPLICABLE/cosmetic; beside other changed lines an include stands for no "
         "name.",
         "-#include <cute/algorithm/copy.hpp>\n+#include <cute/tensor.hpp>",
         "classifier.rules.form.is_include, classifier.rules.attribution.AttributionRules._container, "
         "classifier.reading._names_used_by_others"),
    Rule("file-mode-only", ("NOT_APPLICABLE",),
         "A change to a file's mode alone (the same blob before and after, `chmod +x`) changes no line of any "
         "definition: NOT_APPLICABLE/cosmetic, never a parse failure.",
         "old mode 100644\nnew mode 100755  (no content change)",
         "classifier.rules.form.mode_only, classifier.rules.attribution.AttributionRules._container"),
    Rule("guarded-store", ("NOT_APPLICABLE",),
         "A Python definition whose tokens are the same before and after once each `if C:` holding only stores "
         "`X = e` (e calling nothing, C's names never assigned, every other use of X under an `if` with the same "
         "condition) is replaced by its stores changed only where a store nobody else reads happens: cosmetic.",
         "-    aux_ptr += row\n+    if RETURN_AUX:\n+        aux_ptr += row   (aux_ptr is used only under `if RETURN_AUX:`)",
         "classifier.rules.form.same_with_guards_unwrapped, classifier.rules.form.FormRules._form_only"),
    Rule("repeated-assert", ("NOT_APPLICABLE",),
         "A Python definition whose tokens are the same before and after once each `assert` that repeats, token "
         "for token, the statement just before it is left out, where its test reads only names and literals "
         "(no call, attribute, subscript or assignment expression), changed only a check already made: the "
         "first assert has passed with the same values, so the second passes too: cosmetic.",
         "     assert 0 <= eps <= 1, \"eps out of range\"\n-    assert 0 <= eps <= 1, \"eps out of range\"",
         "classifier.rules.form.same_without_repeated_asserts, classifier.rules.form.FormRules._form_only"),
    Rule("imported-alias", ("NOT_APPLICABLE",),
         "A Python definition whose reads of names bound by module-level `from M import N as x` imports, each read "
         "written out as the import that binds it (`M`, its level and `N`, read on each side in its own module), "
         "give the same `ast` before and after reads the same objects and computes the same: two imports trading "
         "their aliases, with every read of them trading too, is a consistent renaming. It holds only for a name "
         "bound once in its module, by that import, with nothing else in the module (another import, an "
         "assignment, a parameter, a definition, `global`, a deletion, at any depth) binding it and no star "
         "import in it; an alias swap alone, a read swap alone, or a name rebound anywhere stays flagged.",
         "-from .a import f as run_x\n-from .b import f as run_y\n+from .a import f as run_y\n"
         "+from .b import f as run_x\n     if flag:\n-        run_y(x)\n+        run_x(x)",
         "classifier.rules.form.same_modulo_imported_names, classifier.verdicts.SymbolClassifier._against_port"),
    Rule("assert-message", ("NOT_APPLICABLE",),
         "A Python definition whose `ast` (docstrings and annotations that bind nothing erased) is the same before "
         "and after once the message of each `assert` is erased changed only text for a reader: a message is "
         "evaluated only when its test fails, and the assert raises then whatever the text says. Every message, "
         "on both sides, must call nothing (literals, f-strings and operators over names, attributes and "
         "subscripts), so a message that computes stays flagged, as do a changed test, an assert added or "
         "removed and any other change beside the message. In C and C++ the same holds of a definition whose "
         "tokens (comments aside) are the same once each assertion's message is erased: an assertion is "
         "`static_assert(cond, msg)` or a call of an all-caps macro whose name ends in ASSERT (`LIB_ASSERT(cond, "
         "msg)`; not a comparing `ASSERT_EQ`), its message the last of two or more arguments, string literals alone on both sides; "
         "or a call of an all-caps check macro whose name ends in CHECK (`LIB_CHECK(cond, \"msg\", n)`), whose "
         "messages are its arguments after the first (the condition) made of string literals alone, the condition and "
         "every other argument kept token for token. A check macro of one argument, a changed condition or "
         "non-literal argument, a lower-case function, or a string changed in any other call stays flagged.",
         "-    assert x.is_cuda, \"Input must be of dtype fp16.\"\n+    assert x.is_cuda, \"Input must be in dtype fp16.\"",
         "classifier.rules.form.same_without_assert_messages, classifier.rules.form.same_without_cpp_assert_messages, "
         "classifier.verdicts.SymbolClassifier._against_port"),
    Rule("binding-doc", ("NOT_APPLICABLE",),
         "A C/C++ binding of a function into an extension module, `H.def(\"name\", &fn, \"text\")` (the op "
         "schema symbol a `.def` call with a string first argument makes), whose tokens (comments aside) are the "
         "same once each argument after the first made of string literals alone is erased changed only the "
         "documentation the binding library attaches to the bound function (its `__doc__`): the bound name, the "
         "bound function and every other argument are kept token for token, so nothing the port computes or "
         "calls changed: cosmetic. A changed first argument (the name, or a schema), bound function, keyword "
         "argument (`arg(\"x\")`, not a literal alone) or added or removed argument stays flagged.",
         "-    m.def(\"scale_rows\", &scale_rows, \"scale every row by s\");\n"
         "+    m.def(\"scale_rows\", &scale_rows, \"scale_rows\");",
         "classifier.rules.form.same_without_binding_docs, classifier.verdicts.SymbolClassifier._against_port"),
    Rule("complementary-test", ("NOT_APPLICABLE",),
         "A Python definition whose `ast` is the same before and after once each `if F:` directly followed by "
         "`if not F:` (or `if not F:` by `if F:`), neither with an `else`, is read as one `if` with the second "
         "block as its `else`, where `F` is a bare parameter of the enclosing function that the first block never "
         "rebinds (no store, deletion or `nonlocal` of it), changed only its form: the second test is the first "
         "negated, on the same value, so exactly one block runs either way. A flag the first block rebinds, a "
         "test that is no parameter (a global a call may rebind) or that calls or reads anything else stays "
         "compared.",
         "     if EVEN:\n         x = tl.load(p)\n-    if not EVEN:\n+    else:\n         x = tl.load(p, mask=m)",
         "classifier.rules.form.same_with_complementary_tests, classifier.rules.form.FormRules._form_only"),
    Rule("parallel-assignment", ("NOT_APPLICABLE",),
         "A Python definition whose `ast` is the same before and after once each tuple assignment `a, b = x, y` "
         "is read as the assignments `a = x` then `b = y` changed only its form, where the targets are distinct "
         "plain names no `global` or `nonlocal` declares and no nested function or lambda reads, the right sides "
         "match the targets one to one (nothing starred), each right side after the first reads no target bound "
         "before it and calls, assigns, awaits and yields nothing, and the statement lies in no `try` or `with` "
         "block of the definition: the tuple form evaluates every right side before it binds, the sequence binds "
         "as it goes, and when no later right side can see or raise past an earlier binding both bind the same "
         "values. A swap (`a, b = b, a`), a later right side reading an earlier target or calling something, "
         "attribute or subscript targets, a pair inside `try` and any changed value stay compared.",
         "-            k = incoming_a\n-            v = incoming_b\n+            k, v = incoming_a, incoming_b",
         "classifier.rules.form.same_with_split_assignments, classifier.rules.form.FormRules._form_only"),
    Rule("named-subexpression", ("NOT_APPLICABLE",),
         "A Python definition whose `ast` is the same before and after once a statement of its top-level body "
         "`local = read` is dropped and each later read of the local is replaced by `read` changed only its form, "
         "where `read` is a name, a literal or an item of a name by a literal (no call, no attribute, no "
         "arithmetic), the local is bound by no other statement, parameter or declaration of the definition and "
         "read only after the binding, the names `read` reads are never rebound, stored into (an item or an "
         "attribute), called on, declared `global` or bound by a lambda in the definition, which defines no function or class of its own: the value is the "
         "same at each read. A local rebound later, a read that calls, a base stored into, or a changed use stay "
         "compared.",
         "+        M = signature[0]\n-            if signature[0] > 1 and kind == 'narrow':\n+            if M > 1 and "
         "kind == 'narrow':",
         "classifier.rules.form.same_with_named_subexpressions, classifier.rules.form.FormRules._form_only"),
    Rule("member-lines", ("NOT_APPLICABLE",),
         "A class body's changed lines that lie inside one of its methods (or another nested definition) are that "
         "definition's change, decided in its own right, and its docstring's lines compute nothing; when every "
         "changed code line of a class body is such a line, the class body itself changed nothing: "
         "NOT_APPLICABLE/cosmetic.",
         "+    def extra_repr(self):\n+        return f\"eps={self.eps}\"   (a new method nothing ports)",
         "classifier.rules.form.outside_members, classifier.rules.attribution.AttributionRules._container"),
    Rule("module-alias", ("NOT_APPLICABLE",),
         "A Python definition whose body differs only in naming a module through an alias that binds exactly that "
         "module (`import triton.language as tl`, then `tl.exp` for `triton.language.exp`) is the same program: the "
         "alias is the module object itself. It holds when, on each side, the alias is bound once, by a module-level "
         "`import A.B as x`, and nothing else in the module binds that name or the root of the module path "
         "(assignment, parameter, loop, another import, a definition); then every alias read, written out as the "
         "module path, gives the same `ast` on both sides: cosmetic. `from A import B as x` may bind an attribute "
         "rather than the module, and an alias rebound anywhere may be something else: those stay flagged.",
         "+import triton.language as tl\n-    x = triton.language.load(p)\n+    x = tl.load(p)",
         "classifier.rules.form.same_modulo_module_aliases, classifier.verdicts.SymbolClassifier._against_port"),
)

# --- Python: annotations ------------------------------------------------------------


def _is_constexpr(annotation: ast.expr | None) -> bool:
    return annotation is not None and ast.unparse(annotation).split(".")[-1] == "constexpr"


def _makes_constexpr(value: ast.expr | None) -> bool:
    """``tl.constexpr(...)``: a value that is a constexpr whatever its annotation says."""
    return isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "constexpr"


class _Eraser(ast.NodeTransformer):
    """Erases annotations that bind nothing, and docstrings."""

    def __init__(self) -> None:
        self.in_class = 0

    def _drop_docstring(self, node):
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_Module(self, node):
        self._drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node):
        self._drop_docstring(node)
        self.in_class += 1
        self.generic_visit(node)
        self.in_class -= 1
        return node

    def _function(self, node):
        self._drop_docstring(node)
        node.returns = None
        outer, self.in_class = self.in_class, 0
        self.generic_visit(node)
        self.in_class = outer
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_arg(self, node):
        if not _is_constexpr(node.annotation):
            node.annotation = None
        return node

    def visit_AnnAssign(self, node):
        if self.in_class or (_is_constexpr(node.annotation) and not _makes_constexpr(node.value)):
            return node
        if node.value is None:
            return None  # `x: int` binds nothing
        return ast.Assign(targets=[node.target], value=node.value, lineno=0)


_LOG_LEVELS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


def module_loggers(*sources: str) -> frozenset[str]:
    """Names a module binds at its top level to ``logging.getLogger(...)``, on any of ``sources``."""
    found = set()
    for text in sources:
        tree = _parse(text)
        for statement in tree.body if tree is not None else ():
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name) and _is_get_logger(statement.value):
                found.add(statement.targets[0].id)
    return frozenset(found)


def _is_get_logger(value) -> bool:
    """``logging.getLogger(ARGS)`` with arguments that call nothing."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and isinstance(value.func.value, ast.Name) and value.func.value.id == "logging" \
        and value.func.attr == "getLogger" and not _calls_anything(value.args + [k.value for k in value.keywords])


def _calls_anything(nodes) -> bool:
    return any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom))
               for node in nodes for n in ast.walk(node))


def _is_log_statement(statement, loggers: frozenset[str], module_level: bool) -> bool:
    """A statement that only emits a log record, imports ``logging``, or (at module level) binds a logger."""
    if isinstance(statement, ast.Import):
        return all(a.name == "logging" and a.asname is None for a in statement.names)
    if module_level and isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id in loggers:
        return _is_get_logger(statement.value)
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    call = statement.value
    return isinstance(call.func, ast.Attribute) and call.func.attr in _LOG_LEVELS \
        and isinstance(call.func.value, ast.Name) and call.func.value.id in ({"logging"} | loggers) \
        and not _calls_anything(call.args + [k.value for k in call.keywords])


def drop_log_statements(tree: ast.AST, loggers: frozenset[str]) -> ast.AST:
    """``tree`` with every statement that only logs (``_is_log_statement``) removed from its block; a block
    left empty holds ``pass``."""
    for scope in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(scope, name, None)
            if isinstance(block, list) and block and all(isinstance(s, ast.stmt) for s in block):
                kept = [s for s in block if not _is_log_statement(s, loggers, isinstance(scope, ast.Module))]
                if len(kept) != len(block):
                    setattr(scope, name, kept or [ast.Pass()])
    return tree


def same_without_logging(before: str, after: str, loggers: frozenset[str], outside_definitions: bool = False) -> bool:
    """True when two Python sources (as for ``same_without_annotations``) are the same program once the
    statements that only log are dropped (``drop_log_statements``; ``loggers``: the module's logger names),
    redundant ``pass`` statements dropped and docstrings and annotations that bind nothing erased, and
    their text differs."""
    if before == after:
        return False
    dumps, plain = [], []
    for text in (before, after):
        tree = _parse(text)
        if tree is None:
            return False
        plain.append(_compared_dump(tree, outside_definitions))
        dropped = drop_log_statements(tree, loggers)
        plain[-1] = plain[-1] != _compared_dump(dropped, outside_definitions)  # a log statement was dropped
        dumps.append(_erased_dump(dropped, outside_definitions, passes=False))
    return any(plain) and dumps[0] == dumps[1]


def _reads_only(node: ast.AST) -> bool:
    """True for an expression that calls, assigns, awaits and yields nothing (``assert-message``)."""
    return not any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda,
                                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
                   for n in ast.walk(node))


def _erase_assert_messages(tree: ast.AST) -> int | None:
    """Erase, in place, the message of every ``assert`` of ``tree``; the count erased, or None when a message
    reads anything but names, attributes, subscripts and literals through operators and f-strings."""
    erased = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            if not _reads_only(node.msg):
                return None
            node.msg = None
            erased += 1
    return erased


def same_without_assert_messages(before: str, after: str) -> bool:
    """Rule ``assert-message``: True when two Python definitions' texts differ, their ``ast`` (docstrings and
    annotations that bind nothing erased) differs, and is the same once the message of each ``assert`` is
    erased, every message on both sides calling nothing (``_reads_only``)."""
    if before == after:
        return False
    dumps = []
    for text in (before, after):
        tree = _parse(text)
        if tree is None:
            return False
        plain = _erased_dump(tree, False)
        tree = _parse(text)
        if _erase_assert_messages(tree) is None:
            return False
        dumps.append((plain, _erased_dump(tree, False)))
    return dumps[0][0] != dumps[1][0] and dumps[0][1] == dumps[1][1]


def _compared_dump(tree: ast.Module, outside_definitions: bool) -> str:
    """The plain dump of what is compared: the module-level statements alone when ``outside_definitions``."""
    if outside_definitions:
        tree = ast.Module(body=[s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                            ast.ClassDef))], type_ignores=[])
    return ast.dump(tree, include_attributes=False)


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None


def _one_definition(text: str, kinds: tuple[type, ...] = (ast.FunctionDef, ast.AsyncFunctionDef)):
    """The one definition of one of ``kinds`` that ``text`` (a definition's source, at any indentation) holds;
    None when it does not parse or holds anything else."""
    module = _parse(text)
    found = module.body[0] if module is not None and len(module.body) == 1 else None
    return found if isinstance(found, kinds) else None


def _erased_dump(tree: ast.Module, outside_definitions: bool, passes: bool = True) -> str:
    if not passes:
        tree = drop_redundant_passes(tree)
    if outside_definitions:
        tree.body = [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    tree = _Eraser().visit(tree)
    return ast.dump(tree, include_attributes=False)


def same_without_annotations(before: str, after: str, outside_definitions: bool = False) -> bool:
    """True when two Python sources (a definition's text, or a whole module's
    when ``outside_definitions``, whose definitions are then left out: each is
    compared in its own right) are the same program once annotations that
    bind nothing and docstrings are erased, and their text differs."""
    if before == after:
        return False
    old, new = _annotation_free_dump(before, outside_definitions), _annotation_free_dump(after, outside_definitions)
    return old is not None and new is not None and old == new


def same_without_redundant_passes(before: str, after: str, outside_definitions: bool = False) -> bool:
    """True when two Python sources (as for ``same_without_annotations``) are the same program once
    redundant ``pass`` statements are dropped (``drop_redundant_passes``), and docstrings and annotations that
    bind nothing erased, and their text differs."""
    if before == after:
        return False
    old, new = _passless_dump(before, outside_definitions), _passless_dump(after, outside_definitions)
    return old is not None and new is not None and old == new


@per_text("passless-annotation-free-digest", TEXT_OR_NONE)
def _passless_dump(text: str, outside_definitions: bool) -> str | None:
    """A digest of ``_erased_dump`` of ``text`` with redundant ``pass`` statements dropped, or None."""
    tree = _parse(text)
    return None if tree is None else content_digest(_erased_dump(tree, outside_definitions, passes=False))


@per_text("annotation-free-digest", TEXT_OR_NONE)
def _annotation_free_dump(text: str, outside_definitions: bool) -> str | None:
    """A digest of ``_erased_dump`` of the source ``text`` (dumps are only compared), or None when it
    does not parse; once per text."""
    tree = _parse(text)
    return None if tree is None else content_digest(_erased_dump(tree, outside_definitions))


def outside_members(lines, class_name: str, tables: dict) -> list:
    """The ``(side, line, text)`` of ``lines`` whose innermost definition on
    their side is the class ``class_name`` itself, not a method or other
    definition nested in it (those are decided as their own symbols)."""
    kept = []
    for side, line, text in lines:
        table = tables.get(side)
        inner = table.enclosing(line) if table is not None and not table.fallback else None
        if inner is not None and inner.qualified_name == class_name and _in_docstring(inner.node, line):
            continue  # the class's docstring documents; it computes nothing
        if inner is None or inner.qualified_name == class_name:
            kept.append((side, line, text))
    return kept


def _in_docstring(node, line: int) -> bool:
    """True when 1-based ``line`` lies in the docstring of the class or function ``node``."""
    definition = node.child_by_field_name("definition") if node is not None and node.type == "decorated_definition" \
        else node
    body = definition.child_by_field_name("body") if definition is not None else None
    first = body.named_children[0] if body is not None and body.named_children else None
    if first is None or first.type != "expression_statement" or first.named_child_count != 1 \
            or first.named_children[0].type != "string":
        return False
    return first.start_point[0] + 1 <= line <= first.end_point[0] + 1


_PURE = frozenset({"identifier", "integer", "float", "true", "false", "none", "binary_operator", "unary_operator",
                   "parenthesized_expression", "attribute", "comparison_operator", "boolean_operator", "not_operator"})


def _store_target(statement) -> str | None:
    """``X`` of a statement that is only ``X = e``/``X op= e`` with ``e`` calling nothing, else None."""
    if statement.type != "expression_statement" or statement.named_child_count != 1:
        return None
    inner = statement.named_children[0]
    if inner.type not in ("assignment", "augmented_assignment"):
        return None
    left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
    if left is None or left.type != "identifier" or right is None:
        return None
    if any(n.is_named and n.type not in _PURE for n in _walk_nodes(right)):
        return None
    return left.text.decode("utf-8", errors="replace")


def _guards(function) -> dict[int, list]:
    """node id of each ``if`` the ``guarded-store`` rule may unwrap -> the stores it holds."""
    body = function.child_by_field_name("body") if function is not None else None
    if body is None:
        return {}
    nodes = list(_walk_nodes(body))
    assigned = {n.child_by_field_name("left").text for n in nodes
                if n.type in ("assignment", "augmented_assignment") and n.child_by_field_name("left") is not None}
    found: dict[int, list] = {}
    for branch in (n for n in nodes if n.type == "if_statement"):
        if any(c.type in ("elif_clause", "else_clause") for c in branch.children):
            continue
        condition = branch.child_by_field_name("condition")
        statements = [c for c in branch.child_by_field_name("consequence").named_children if c.type != "comment"]
        targets = {_store_target(c) for c in statements}
        if not statements or None in targets or condition is None \
                or any(n.type == "identifier" and n.text in assigned for n in _walk_nodes(condition)):
            continue
        inside = {n.id for n in _walk_nodes(branch)}

        def guarded(node) -> bool:
            parent = node.parent
            while parent is not None:
                if parent.type == "if_statement" and parent.id != branch.id and not any(
                        c.type in ("elif_clause", "else_clause") for c in parent.children) \
                        and parent.child_by_field_name("condition").text == condition.text \
                        and node.start_byte >= parent.child_by_field_name("consequence").start_byte:
                    return True
                parent = parent.parent
            return False
        uses = [n for n in nodes if n.type == "identifier" and n.id not in inside
                and n.text.decode("utf-8", errors="replace") in targets
                and not (n.parent is not None and n.parent.type == "keyword_argument"
                         and n.parent.child_by_field_name("name") == n)]
        if all(guarded(n) for n in uses):
            found[branch.id] = statements
    return found


_PLAIN_TEST = frozenset({"identifier", "integer", "float", "string", "string_start", "string_content", "string_end",
                         "true", "false", "none", "comparison_operator", "boolean_operator", "not_operator",
                         "binary_operator", "unary_operator", "parenthesized_expression", "<", "<=", ">", ">=",
                         "==", "!=", "and", "or", "not", "(", ")", "+", "-", "*", "/", "//", "%", "is", "in"})
"""What the test of an ``assert`` may be made of for ``repeated-assert``: names, literals and operators."""


def _repeats_previous(statement) -> bool:
    """True for an ``assert`` whose test reads only names and literals and that repeats, token for token, the
    statement just before it in its block (comments between are no statements)."""
    if statement.type != "assert_statement":
        return False
    test = next((c for c in statement.named_children if c.type != "comment"), None)
    if test is None or any(n.type not in _PLAIN_TEST for n in _walk_nodes(test)):
        return False
    previous = statement.prev_named_sibling
    while previous is not None and previous.type == "comment":
        previous = previous.prev_named_sibling
    return previous is not None and previous.type == "assert_statement" \
        and comment_free_tokens(previous) == comment_free_tokens(statement)


def same_without_repeated_asserts(before, after) -> bool:
    """True when two Python definition nodes differ, and are the same once each ``assert`` repeating the
    statement just before it (``_repeats_previous``) is left out."""
    if before is None or after is None or before.has_error or after.has_error:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False

    def expand(current):
        return [] if _repeats_previous(current) else None

    return comment_free_tokens(before, expand=expand) == comment_free_tokens(after, expand=expand)


def _flag_of(test: ast.expr) -> tuple[str, bool] | None:
    """``(name, negated)`` for a test that is a bare name or ``not`` a bare name; None otherwise."""
    if isinstance(test, ast.Name):
        return test.id, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return test.operand.id, True
    return None


def _rebinds(statements: list[ast.stmt], name: str) -> bool:
    """Whether any of ``statements`` stores, deletes or declares ``nonlocal``/``global`` the name ``name``."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
                return True
            if isinstance(node, (ast.Nonlocal, ast.Global)) and name in node.names:
                return True
    return False


def _merged_complementary_tests(tree: ast.AST) -> int:
    """Rewrite in place, in every function of ``tree``, each ``if F: A`` directly followed by ``if not F: B``
    (or the other way round), neither with an ``else``, into ``if F: A else: B`` when ``F`` is a parameter of
    that function (innermost) and ``A`` never rebinds it; the number of such rewrites."""
    merged = 0

    def visit(node: ast.AST, parameters: frozenset[str]) -> None:
        nonlocal merged
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            parameters = frozenset(a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                                   + [x for x in (arguments.vararg, arguments.kwarg) if x is not None])
        elif isinstance(node, (ast.ClassDef, ast.Lambda)):
            parameters = frozenset()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            i = 0
            while i + 1 < len(block):
                first, second = block[i], block[i + 1]
                if isinstance(first, ast.If) and isinstance(second, ast.If) and not first.orelse \
                        and not second.orelse:
                    one, two = _flag_of(first.test), _flag_of(second.test)
                    if one is not None and two is not None and one[0] == two[0] and one[1] != two[1] \
                            and one[0] in parameters and not _rebinds(first.body, one[0]):
                        first.orelse = second.body
                        del block[i + 1]
                        merged += 1
                        continue
                i += 1
        for child in ast.iter_child_nodes(node):
            visit(child, parameters)

    visit(tree, frozenset())
    return merged


def same_with_complementary_tests(before: str, after: str) -> bool:
    """True when two Python definition sources differ and are the same program once each ``if F:`` directly
    followed by ``if not F:`` (``_merged_complementary_tests``) is read as one ``if``/``else``, at least one
    such pair merged."""
    if before == after:
        return False
    old, new = _parse(before), _parse(after)
    if old is None or new is None:
        return False
    if ast.dump(old, include_attributes=False) == ast.dump(new, include_attributes=False):
        return False
    if not _merged_complementary_tests(old) + _merged_complementary_tests(new):
        return False
    return ast.dump(old, include_attributes=False) == ast.dump(new, include_attributes=False)


# --- Python: tuple assignments ---------------------------------------------------------


def _closed_over_or_declared(function: ast.AST) -> set[str]:
    """The names a ``global``/``nonlocal`` of ``function`` declares, or a function, lambda or class nested in it
    reads: a binding of such a name may be seen by code other than the statements that follow it."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif node is not function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                          ast.ClassDef)):
            names.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    return names


def _split(statement: ast.stmt, shared: set[str]) -> list[ast.stmt] | None:
    """``a, b = x, y`` as ``[a = x, b = y]`` when binding as it goes binds the same values (``parallel-assignment``);
    None otherwise."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(value, ast.Tuple) \
            or len(target.elts) != len(value.elts) or len(target.elts) < 2:
        return None
    names = [t.id if isinstance(t, ast.Name) else None for t in target.elts]
    if None in names or len(set(names)) != len(names) or shared.intersection(names):
        return None
    for i, part in enumerate(value.elts):
        if isinstance(part, ast.Starred):
            return None
        if i and (not _reads_only(part)
                  or any(isinstance(n, ast.Name) and n.id in names[:i] for n in ast.walk(part))):
            return None
    return [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=part, lineno=0)
            for name, part in zip(names, value.elts)]


def _split_assignments(tree: ast.AST) -> int:
    """Rewrite in place every tuple assignment of ``tree``'s definitions that ``_split`` reads as a sequence, outside
    ``try`` and ``with`` blocks (where an exception raised between two bindings could be caught and the first
    binding read); the number rewritten."""
    split = 0

    def visit(node: ast.AST, shared: set[str] | None, guarded: bool) -> None:
        nonlocal split
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            shared, guarded = _closed_over_or_declared(node), False
        elif isinstance(node, (ast.Try, ast.With, ast.AsyncWith)) or getattr(ast, "TryStar", None) is type(node):
            guarded = True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if shared is None or guarded or not isinstance(block, list):
                continue
            rewritten = []
            for statement in block:
                parts = _split(statement, shared) if isinstance(statement, ast.stmt) else None
                rewritten.extend(parts or [statement])
                split += parts is not None
            setattr(node, field, rewritten)
        for child in ast.iter_child_nodes(node):
            visit(child, shared, guarded)

    visit(tree, None, False)
    return split


def same_with_split_assignments(before: str, after: str) -> bool:
    """Rule ``parallel-assignment``: True when two Python definition sources differ (their ``ast``, docstrings and
    annotations that bind nothing erased, too) and are the same program once each tuple assignment
    ``_split_assignments`` may read as a sequence is so read, at least one rewritten."""
    if before == after:
        return False
    old, new = _parse(before), _parse(after)
    if old is None or new is None or _erased_dump(old, False) == _erased_dump(new, False):
        return False
    old, new = _parse(before), _parse(after)
    if not _split_assignments(old) + _split_assignments(new):
        return False
    return _erased_dump(old, False) == _erased_dump(new, False)


def _pure_read(node: ast.AST) -> set[str] | None:
    """The names a side-effect-free read reads (a name, a literal, or a subscript of one by a literal), or None
    for anything else (a call, an attribute, arithmetic)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Constant):
        return set()
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _pure_read(node.value)
    return None


class _Substituted(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.AST):
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name):
        return copy.deepcopy(self.value) if node.id == self.name and isinstance(node.ctx, ast.Load) else node


def _named_subexpressions(function) -> list[tuple[int, str]]:
    """Rule ``named-subexpression``: substitute, in ``function`` (an ``ast`` definition, changed in place), each
    statement of its top-level body ``local = read`` (``_pure_read``) whose local is bound nowhere else in the
    definition (no other store, parameter, ``global``/``nonlocal``, lambda parameter, ``del``) and read only after
    it, and whose read names are never rebound, stored into (an item or attribute), deleted or called on
    (``name.method(...)``) in the definition: the statement goes and each read of the local becomes the read.
    The (line, local) of each substituted."""
    done = []
    for statement in list(function.body):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            continue
        local, reads = statement.targets[0].id, _pure_read(statement.value)
        if not reads:
            continue
        nodes = [n for n in ast.walk(function) if n is not function]
        if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in nodes):
            return []
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) and set(n.names) & (reads | {local}) for n in nodes):
            continue
        # a parameter of the definition named like the local, or a lambda's binding either name, reads another value
        lambdas = {a.arg for n in nodes if isinstance(n, ast.Lambda) for a in ast.walk(n.args) if isinstance(a, ast.arg)}
        if local in {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)} or lambdas & (reads | {local}):
            continue
        stores = [n for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
        if [n for n in stores if n.id == local] != [statement.targets[0]] or any(n.id in reads for n in stores):
            continue
        if any(isinstance(n, ast.Name) and n.id == local and isinstance(n.ctx, ast.Load)
               and (n.lineno, n.col_offset) <= (statement.lineno, statement.col_offset) for n in nodes):
            continue
        touched = False
        for n in nodes:
            target = None
            if isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
                target = n.value
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                target = n.func.value
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
            if isinstance(target, ast.Name) and target.id in reads:
                touched = True
        if touched:
            continue
        function.body.remove(statement)
        _Substituted(local, statement.value).visit(function)
        done.append((statement.lineno, local))
    return done


def same_with_named_subexpressions(before: str, after: str) -> bool:
    """Rule ``named-subexpression``: True when two Python definition sources differ and are the same program
    (docstrings and annotations that bind nothing erased) once each local one side names a side-effect-free read
    by is read as that read (``_named_subexpressions``), at least one so read."""
    if before == after:
        return False
    old, new = _parse(before), _parse(after)
    if old is None or new is None or len(old.body) != 1 or len(new.body) != 1 \
            or not isinstance(old.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or not isinstance(new.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or _erased_dump(_parse(before), False) == _erased_dump(_parse(after), False):
        return False
    if not _named_subexpressions(old.body[0]) + _named_subexpressions(new.body[0]):
        return False
    return _erased_dump(old, False) == _erased_dump(new, False)


def same_with_guards_unwrapped(before, after) -> bool:
    """True when two Python definition nodes differ, and are the same once
    each guard ``guarded-store`` may unwrap is replaced by its stores."""
    def tokens(node):
        function = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
        guards = _guards(function)
        return comment_free_tokens(node, expand=lambda current: guards.get(current.id))
    if before is None or after is None or before.has_error or after.has_error:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False
    return tokens(before) == tokens(after)


_INCLUDE = re.compile(r"\s*#\s*include\b")


def is_include(text: str) -> bool:
    """True for a C/C++ ``#include`` line."""
    return _INCLUDE.match(text) is not None


def mode_only(change) -> bool:
    """True for a file change that is a mode change alone: the same blob before and after."""
    if change is None:
        return False
    return change.content == "mode-only" or (change.old_blob is not None and change.old_blob == change.new_blob
                                             and change.old_path == change.new_path and not change.hunks)


# --- C/C++: qualifiers -----------------------------------------------------------------

_QUALIFIERS = frozenset({"inline", "__inline__", "__forceinline__", "__grid_constant__", "const"})


def qualifier_free_tokens(node) -> list[str]:
    """A C/C++ definition's tokens without comments and without the
    qualifiers that do not change what it computes (see the module)."""
    return _without_qualifiers(comment_free_tokens(node))


def _without_qualifiers(tokens: list[str]) -> list[str]:
    """``qualifier_free_tokens``' filter, on a token list already read."""
    kept: list[str] = []
    for index, token in enumerate(tokens):
        if token in _QUALIFIERS or (token == "static" and "constexpr" in tokens[max(0, index - 1):index + 2]) \
                or (token == "constexpr" and kept and kept[-1] == "if"):
            continue
        kept.append(token)
    return kept


_INLINE = frozenset({"inline", "__inline__", "__forceinline__"})


def _one_definition_inline(node) -> bool | None:
    """Whether a C/C++ function definition that the one-definition rule lets only one translation unit hold
    unless it is inline (a function defined outside any class body and template, not ``constexpr``, not
    ``static``, not in an unnamed namespace) is written ``inline`` (``__inline__``, ``__forceinline__``);
    None for any other node: a template (``template <>`` excepted: an explicit specialisation is an ordinary
    function), a member defined in its class and a ``constexpr`` function are inline already, and a ``static``
    one or one in an unnamed namespace has internal linkage, so the qualifier cannot decide whether it links."""
    if node is None:
        return None
    if node.type == "function_definition" and node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent  # read as its template
    if node.type == "template_declaration":
        parameters = node.child_by_field_name("parameters")
        inner = next((c for c in node.named_children if c.type == "function_definition"), None)
        if parameters is None or parameters.named_children or inner is None:
            return None
        node = inner
    if node.type != "function_definition":
        return None
    parent = node.parent
    while parent is not None:
        if parent.type == "field_declaration_list":
            return None
        if parent.type == "namespace_definition" and parent.child_by_field_name("name") is None:
            return None
        parent = parent.parent
    head = {child.text.decode("utf-8", errors="replace") for child in node.children
            if child.type not in ("function_declarator", "compound_statement", "comment")}
    if head & {"static", "constexpr", "consteval"}:
        return None
    return bool(head & _INLINE)


def linkage_changed(before, after) -> bool:
    """True when a C/C++ function definition gained or lost ``inline`` where that decides whether two
    translation units may each hold it (``_one_definition_inline``): not a qualifier ``cosmetic-qualifiers``
    erases there, since the program links on one side only when the definition is included twice."""
    old, new = _one_definition_inline(before), _one_definition_inline(after)
    return old is not None and new is not None and old != new


def same_without_qualifiers(before, after) -> bool:
    """True when two C/C++ definition nodes differ only by such qualifiers, and not by ``inline`` where it
    decides linkage (``linkage_changed``)."""
    if before is None or after is None or before.has_error or after.has_error:
        return False
    return qualifier_free_tokens(before) == qualifier_free_tokens(after) and not linkage_changed(before, after)


# The pointees a C-style pointer cast converts to exactly as ``reinterpret_cast`` does: fundamental types and
# CUDA's vector and half types, which no class derives from, so the cast is never a ``static_cast`` that
# adjusts the pointer between a base and a derived class.
_PLAIN_POINTEES = frozenset(
    {"int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t",
     "ptrdiff_t", "intptr_t", "uintptr_t", "uint", "half", "half2", "__half", "__half2", "__nv_bfloat16",
     "__nv_bfloat162", "nv_bfloat16", "nv_bfloat162", "__nv_fp8_e4m3", "__nv_fp8_e5m2"}
    | {f"{base}{width}" for base in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                      "longlong", "ulonglong", "float", "double") for width in (1, 2, 3, 4)})


def _plain_pointer_type(descriptor) -> bool:
    """True when a cast's ``type_descriptor`` is ``[cv] P *`` with ``P`` a plain pointee (``_PLAIN_POINTEES``,
    a built-in type)."""
    children = descriptor.children
    pointers = [c for c in children if c.type == "abstract_pointer_declarator"]
    bases = [c for c in children if c.type not in ("type_qualifier", "abstract_pointer_declarator")]
    if len(pointers) != 1 or children[-1] is not pointers[0] or [c.type for c in pointers[0].children] != ["*"]:
        return False
    if len(bases) != 1:
        return False
    base = bases[0]
    return base.type in ("primitive_type", "sized_type_specifier") or (
        base.type == "type_identifier" and base.text.decode("utf-8", errors="replace") in _PLAIN_POINTEES)


def _inner(node) -> list:
    """A parenthesised expression's inside (its brackets dropped); any other node as itself."""
    if node.type == "parenthesized_expression" and len(node.children) >= 3:
        return list(node.children[1:-1])
    return [node]


def _cast_as_reinterpret(node):
    """``expand`` for ``comment_free_tokens``: a C-style cast to a plain pointer type ``(P *)e`` read as
    ``reinterpret_cast<P *>(e)``, and a ``reinterpret_cast`` of a parenthesised value read without the
    extra brackets; None (left alone) for anything else."""
    if node.type == "cast_expression":
        descriptor = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if descriptor is None or value is None or not _plain_pointer_type(descriptor):
            return None
        return ["reinterpret_cast", "<", descriptor, ">", "(", *_inner(value), ")"]
    if node.type == "call_expression":
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if function is None or arguments is None or function.type != "template_function":
            return None
        name = function.child_by_field_name("name")
        values = [c for c in arguments.children if c.type not in ("(", ")", ",", "comment")]
        if name is None or name.text != b"reinterpret_cast" or len(values) != 1 \
                or values[0].type != "parenthesized_expression":
            return None
        return [function, "(", *_inner(values[0]), ")"]
    return None


def same_with_casts_respelled(before, after) -> bool:
    """``cosmetic-cast-spelling``: two C/C++ definition nodes, both parsed, whose tokens (qualifiers erased as
    for ``cosmetic-qualifiers``) are the same once every C-style cast to a plain pointer type is read as the
    ``reinterpret_cast`` it is, and differ without that reading."""
    if before is None or after is None or before.has_error or after.has_error:
        return False
    respelled = [_without_qualifiers(comment_free_tokens(n, expand=_cast_as_reinterpret)) for n in (before, after)]
    return respelled[0] == respelled[1] and qualifier_free_tokens(before) != qualifier_free_tokens(after)


def without_own_namespace(tokens: list[str], namespaces: set[str]) -> list[str]:
    """``tokens`` with each qualification ``NS ::`` by an enclosing namespace
    erased (``flash :: f`` -> ``f``), unless it follows another ``::``."""
    kept: list[str] = []
    skip = False
    for index, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if token in namespaces and index + 1 < len(tokens) and tokens[index + 1] == "::" \
                and (not kept or kept[-1] != "::"):
            skip = True
            continue
        kept.append(token)
    return kept


def _namespaces(qualified_name: str) -> set[str]:
    """The namespaces that enclose a C++ definition, from its qualified name."""
    return set(qualified_name.split("::")[:-1])


_WRITES = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--", "new", "delete",
                     "throw", "asm", "__asm__", "<<<", "return", "goto", "co_await", "co_yield"})
_OPENING, _CLOSING = {"(": ")", "[": "]", "{": "}"}, {")", "]", "}"}
_BOUNDARY = frozenset({";", "{", "}"})
_NOT_A_TYPE = frozenset({".", "->", "[", "]", "(", ")", "return", "if", "else", "for", "while", "do", "switch", "case",
                         "goto", "break", "continue", "typedef", "using", "namespace", "template", "static_assert",
                         "__syncthreads"})


def _declared_local(statement: list[str]) -> tuple[str, list[str]] | None:
    """``(x, e)`` of a removed statement ``T x = e ;`` (``e`` empty for
    ``T x ;``), or None when it is anything else: a store, a call, a return."""
    if len(statement) < 3 or statement[-1] != ";":
        return None
    depth, equals = 0, len(statement) - 1
    for index, token in enumerate(statement[:-1]):
        if token in _OPENING:
            depth += 1
        elif token in _CLOSING:
            depth -= 1
        elif token == "=" and depth == 0:
            equals = index
            break
    head = statement[:equals]
    if len(head) < 2 or not all(re.fullmatch(r"[A-Za-z_]\w*", t) for t in (head[0], head[-1])) \
            or any(t in _NOT_A_TYPE or t in _WRITES for t in head):
        return None
    return head[-1], statement[equals + 1:-1]


_EXTENT_READS = frozenset({"size", "stride"})
"""Members that read a tensor's (or a tensor accessor's) extent along one dimension and change nothing."""


def _extent_read(tokens: list[str], index: int) -> bool:
    """Whether the member call at ``tokens[index]`` (``.`` before the name) is ``.size(N)`` or
    ``.stride(N)`` with ``N`` an integer literal: a read of a shape, which writes nothing."""
    return tokens[index] == "." and tokens[index + 1] in _EXTENT_READS and index + 4 < len(tokens) \
        and tokens[index + 3].isdigit() and tokens[index + 4] == ")"


def _writes(initialiser: list[str], removed: set[str]) -> bool:
    for index, token in enumerate(initialiser):
        following = initialiser[index + 1] if index + 1 < len(initialiser) else ""
        if token in _WRITES:
            return True
        if token in (".", "->") and index + 2 < len(initialiser) and initialiser[index + 2] == "(" \
                and not _extent_read(initialiser, index):
            return True  # a member call may change its object
        if token == "&" and following not in removed:
            return True  # an address handed on (or a bitwise and, not told apart)
    return False


def whole_statements(tokens: list[str]) -> list[list[str]] | None:
    """``tokens`` cut into whole statements ending in ``;`` at bracket depth 0, or None."""
    found, current, depth = [], [], 0
    for token in tokens:
        current.append(token)
        if token in _OPENING:
            depth += 1
        elif token in _CLOSING:
            depth -= 1
            if depth < 0:
                return None
        elif token == ";" and depth == 0:
            found.append(current)
            current = []
    return found if not current and depth == 0 else None


def placed_statements(tokens: list[str], start: int, end: int) -> tuple[int, int, list[list[str]] | None]:
    """``tokens[start:end]``, a run an alignment inserted or deleted, placed at a statement boundary: the run
    is shifted back while the token before it repeats its last, then forward while it repeats its first, until
    it is whole statements after a boundary (``(start, end, statements)``), else ``(start, end, None)``."""
    while start > 0 and tokens[start - 1] == tokens[end - 1]:
        start, end = start - 1, end - 1  # the same run, one token earlier
    while end <= len(tokens):
        if (start == 0 or tokens[start - 1] in _BOUNDARY) and tokens[end - 1] == ";":
            placed = whole_statements(tokens[start:end])
            if placed is not None:
                return start, end, placed
        if end < len(tokens) and tokens[start] == tokens[end]:
            start, end = start + 1, end + 1
        else:
            break
    return start, end, None


def unread_locals_removed(before: list[str], after: list[str]) -> list[str] | None:
    """The locals ``unread-local`` proves removed without effect, when
    ``after`` is ``before`` less whole declarations of them (see the module),
    else None. Each deleted run is placed at a statement boundary (a run the
    alignment could shift by a repeated token is tried at each place)."""
    before, after = [t for t in before if t], [t for t in after if t]
    if before == after or len(before) <= len(after):
        return None
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    runs = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op != "delete":
            return None
        runs.append((i1, i2))
    kept = [True] * len(before)
    declared: list[tuple[str, list[str]]] = []
    for first, last in runs:
        start, end, placed = placed_statements(before, first, last)
        if not placed:
            return None
        for index in range(start, end):
            kept[index] = False
        for statement in placed:
            local = _declared_local(statement)
            if local is None:
                return None
            declared.append(local)
    names = {name for name, _ in declared}
    if any(kept[i] and before[i] in names for i in range(len(before))):
        return None  # something else still names a removed local
    if any(_writes(initialiser, names) for _, initialiser in declared):
        return None
    return list(dict.fromkeys(name for name, _ in declared))


class FormRules:
    """The form rules, as a method of the verdict table (``verdicts.SymbolClassifier``)."""

    def _form_only(self, symbol: TouchedSymbol, port=None, entry=None) -> tuple[str, str] | None:
        """``(rule id, what changed)`` when a modified definition changed only
        its form (``portq.classifier.rules.form``): annotations in Python,
        qualifiers in C/C++; None otherwise."""
        language = language_for_path(symbol.path)
        if symbol.change != "modified" or language not in ("python", "cpp"):
            return None
        sides = self._both_sides(symbol)
        if sides is None:
            return None
        before, after = sides
        if language == "python":
            if same_without_annotations(definition_text(before.node), definition_text(after.node)):
                return "cosmetic-annotations", "changed only its type annotations or docstring (the same program " \
                                               "once they are erased)"
            if same_with_guards_unwrapped(before.node, after.node):
                return "guarded-store", "only moved stores under (or out of) the guard of their every reader " \
                                        "(when the guard is false nothing reads them)"
            if same_with_complementary_tests(definition_text(before.node), definition_text(after.node)):
                return "complementary-test", "only wrote `if not F:` after `if F:` as `else:` (F a parameter the " \
                                             "first block never rebinds: exactly one block runs either way)"
            if same_with_split_assignments(definition_text(before.node), definition_text(after.node)):
                return "parallel-assignment", "only wrote consecutive assignments as one tuple assignment (or " \
                                              "the other way round) of distinct names, no later value reading " \
                                              "an earlier target or calling anything: the same values bound"
            if same_with_named_subexpressions(definition_text(before.node), definition_text(after.node)):
                return "named-subexpression", "only named a side-effect-free read (a name or an item of one by a " \
                                              "literal) by a local bound once and read it through that local, " \
                                              "nothing it reads rebound, stored into or called on: the same values"
            if same_without_repeated_asserts(before.node, after.node):
                return "repeated-assert", "only added or removed an assert repeating the one just before it " \
                                          "(a test of names and literals already checked with the same values)"
            return None
        if linkage_changed(before.node, after.node):
            return None  # whether it links where included twice is not form, whatever else changed
        if same_without_qualifiers(before.node, after.node):
            return "cosmetic-qualifiers", "changed only qualifiers that do not change what it computes (inline, " \
                                          "static constexpr, const, __grid_constant__, if constexpr)"
        if same_with_casts_respelled(before.node, after.node):
            return "cosmetic-cast-spelling", "changed only how it spells pointer casts (a C-style cast `(P *)e` " \
                                             "to a fundamental or CUDA vector type as `reinterpret_cast<P *>(e)`: " \
                                             "the same conversion)"
        namespaces = _namespaces(symbol.qualified_name)
        if namespaces and without_own_namespace(qualifier_free_tokens(before.node), namespaces) == \
                without_own_namespace(qualifier_free_tokens(after.node), namespaces):
            return "cosmetic-namespace", "changed only how it qualifies names (by the namespace that encloses it, " \
                                         "which unqualified lookup searches too)"
        removed = self._unread_locals(symbol)
        if removed:
            return "unread-local", f"only lost locals nothing else names ({', '.join(removed[:4])}), whose " \
                                   "initialisers write nothing: values never read"
        tables = self._side_tables(symbol)
        defined = branches.defined_macros(*(t.source for t in tables if t is not None))
        own = self.index.source(port.file) if port is not None else None

        def default_build(defined: set[str]) -> bool:
            return branches.same_in_default_build(before.node, after.node, defined) and not (own and any(
                re.search(rb"\b" + re.escape(name.encode()) + rb"\b", own)
                for name in branches.decided_macros(before.node, defined)
                | branches.decided_macros(after.node, defined)))
        # the included headers are read only where the file's own macros would let the rule decide
        if default_build(defined) and default_build(defined | self._included_macros(entry, symbol, tables)):
            return "default-build", "changed only code under a preprocessor flag no source of the file defines " \
                                    "(the default build compiles the other branch)"
        if port is not None and branches.cross_language(symbol.path, [port]):
            live = branches.same_on_live_branch(before.node, after.node,
                                                branches.reporting_macros(tables[1].source if tables[1] else None)
                                                | branches.reporting_macros(tables[0].source if tables[0] else None),
                                                tokens=_without_qualifiers)
            if live:
                taken = "; ".join(f"the {kept} branch of `{condition}`" for kept, condition in live[:2])
                return "live-branch", f"is the same on its live branch ({taken}, taken because the other branch " \
                                      "only reports or traps in a build with nothing to run, a build the port's " \
                                      "target, in another language, never makes)"
        return None

    def _included_macros(self, entry, symbol: TouchedSymbol, tables) -> set[str]:
        """The macros the headers a touched C/C++ file includes define, on either side, read from upstream at
        that side's commit (``branches.included_macros``); nothing where the entry is not known."""
        if entry is None:
            return set()
        sides = ((entry.commit.parents[0] if entry.commit.parents else None, symbol.old_path or symbol.path,
                  tables[0]), (entry.commit.sha, symbol.path, tables[1]))
        found: set[str] = set()
        cache = self.__dict__.setdefault("_included_macros_seen", {})
        for commit, path, table in sides:
            if commit is None or table is None or table.source is None:
                continue
            if (commit, path) not in cache:
                cache[(commit, path)] = branches.included_macros(
                    table.source, path, lambda name, commit=commit: self._upstream_file(commit, name))
            found |= cache[(commit, path)]
        return found

    def _unread_locals(self, symbol: TouchedSymbol) -> list[str] | None:
        """The locals a modified C/C++ definition lost without effect
        (``unread-local``), read from tokens, so also where a side does not
        parse; None when the change is anything more."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None:
            return None
        before, after = sides
        return unread_locals_removed(qualifier_free_tokens(before.node), qualifier_free_tokens(after.node))

    def _unread_despite_parse(self, symbol: TouchedSymbol, ports, broken):
        """``unread-local`` for a ported definition whose changed lines
        tree-sitter cannot parse (``broken``, the parse-failure verdict): the
        token comparison needs no tree, so it still proves the change has no
        effect, and the verdict says where the parse failed; None otherwise."""
        removed = self._unread_locals(symbol) if ports else None
        if not removed:
            return None
        where = next((e.message for e in broken.evidence if e.kind == Kind.PARSE_FAILURE), "parse failed")
        return self._base("unread-local", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{where}, but {symbol.name}'s tokens show it only lost locals nothing else names "
                          f"({', '.join(removed[:4])}), whose initialisers write nothing: values never read, so "
                          "cosmetic rather than a change the port must follow",
                          [e for e in broken.evidence if e.kind != Kind.HUNK]
                          + [new_side_evidence(symbol, Kind.COSMETIC,
                                               f"unread locals removed: {', '.join(removed[:4])}", removed[0])])


def _module_aliases(module: ast.Module) -> dict[str, str]:
    """``alias -> dotted module`` for every ``import A.B as alias`` at module level whose alias, and whose
    module path's root, nothing else in the module binds (rule ``module-alias``)."""
    found: dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    found[alias.asname] = None if alias.asname in found else alias.name
    found = {k: v for k, v in found.items() if v}
    if not found:
        return {}
    # Every binding counts but the module-level imports themselves: a plain `import A.B` binds the root `A`
    # to the same module, and `import A.B as alias` is the binding found above.
    bound = _binding_counts(module)
    for statement in module.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if not alias.asname or found.get(alias.asname) == alias.name:
                    bound[(alias.asname or alias.name).split(".")[0]] -= 1
    return {alias: dotted for alias, dotted in found.items()
            if not bound.get(alias) and not bound.get(dotted.split(".")[0])}


class _Spelled(ast.NodeTransformer):
    """Every read of an alias written out as its module path."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.used: set[str] = set()

    def visit_Name(self, node: ast.Name):
        dotted = self.aliases.get(node.id)
        if dotted is None or not isinstance(node.ctx, ast.Load):
            return node
        self.used.add(node.id)
        parts = dotted.split(".")
        spelled: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
        for part in parts[1:]:
            spelled = ast.Attribute(value=spelled, attr=part, ctx=ast.Load())
        return spelled


def _spelled_dump(text: str, module_source: str) -> tuple[str, set[str]] | None:
    try:
        module = ast.parse(module_source)
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    spelled = _Spelled(_module_aliases(module))
    return ast.dump(spelled.visit(tree)), spelled.used


def same_modulo_module_aliases(old_text: str, new_text: str, old_module: str, new_module: str) -> list[str]:
    """Rule ``module-alias``: the aliases (either side) whose reads, written out as the module each binds
    exactly, make the two definitions the same ``ast``; empty when they do not, or when they are the same ``ast``
    as written (no alias was needed)."""
    old, new = _spelled_dump(old_text, old_module), _spelled_dump(new_text, new_module)
    if old is None or new is None or old[0] != new[0] or not (old[1] | new[1]):
        return []
    if ast.dump(ast.parse(textwrap.dedent(old_text))) == ast.dump(ast.parse(textwrap.dedent(new_text))):
        return []  # the same program without reading any alias: ``cosmetic-ast``'s, not this rule's
    return sorted(old[1] | new[1])


# --- Python: names bound by from-imports ----------------------------------------------


def _binding_counts(module: ast.Module) -> dict[str, int]:
    """How many times each name is bound anywhere in ``module`` (assignment, deletion, parameter, definition,
    ``global``/``nonlocal``, handler, pattern and every import, at any depth)."""
    bound: dict[str, int] = {}

    def bind(name: str) -> None:
        bound[name] = bound.get(name, 0) + 1

    for node in ast.walk(module):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bind(node.id)
        elif isinstance(node, ast.arg):
            bind(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bind((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bind(node.rest)
    return bound


def _imported_names(module: ast.Module) -> dict[str, str]:
    """``name -> "<from M import N>"`` for every name a module-level ``from M import N [as name]`` binds
    (rule ``imported-alias``) that nothing else in the module binds: no other import, assignment, parameter,
    definition, ``global`` or deletion of it, at any depth. A star import binds names nobody can list, so
    a module with one has none."""
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(module)):
        return {}
    found: dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                found[alias.asname or alias.name] = \
                    f"<from {'.' * (statement.level or 0)}{statement.module or ''} import {alias.name}>"
    bound = _binding_counts(module)
    return {name: spelled for name, spelled in found.items() if bound.get(name) == 1}


class _SpelledImports(ast.NodeTransformer):
    """Every read of a name bound by a from-import written out as that import (a spelling no identifier has)."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.used: set[str] = set()

    def visit_Name(self, node: ast.Name):
        spelled = self.names.get(node.id)
        if spelled is None or not isinstance(node.ctx, ast.Load):
            return node
        self.used.add(node.id)
        return ast.Name(id=spelled, ctx=ast.Load())


def same_modulo_imported_names(old_text: str, new_text: str, old_module: str, new_module: str) -> list[str]:
    """Rule ``imported-alias``: the names bound by module-level from-imports (``_imported_names``, each side
    read in its own module) whose reads, written out as the import binding each, make two Python definitions
    the same ``ast`` (docstrings and annotations that bind nothing erased); empty when they do not, or when the
    definitions are the same ``ast`` as written (no name was needed)."""
    dumps = []
    for text, source in ((old_text, old_module), (new_text, new_module)):
        module, tree = _parse(source), _parse(text)
        if module is None or tree is None:
            return []
        plain = _erased_dump(_parse(text), False)
        spelled = _SpelledImports(_imported_names(module))
        dumps.append((plain, _erased_dump(spelled.visit(tree), False), spelled.used))
    (old_plain, old_spelled, old_used), (new_plain, new_spelled, new_used) = dumps
    if old_plain == new_plain or old_spelled != new_spelled or not (old_used | new_used):
        return []
    return sorted(old_used | new_used)


_CPP_ASSERTION = re.compile(r"static_assert|_Static_assert|[A-Z][A-Z0-9_]*ASSERT")
_CPP_CHECK = re.compile(r"[A-Z][A-Z0-9_]*CHECK")


def _is_string(token: str) -> bool:
    return token.endswith('"') and (token.startswith('"') or token[:3] in ('u8"', 'u8R') or token[:2] in (
        'u"', 'U"', 'L"', 'R"', 'uR', 'UR', 'LR'))


def erased_cpp_messages(tokens: list[str]) -> tuple[list[str], int] | None:
    """``tokens`` with the message of each assertion (``assert-message``) replaced by one placeholder, and
    the count replaced; None where brackets do not balance. An assertion's message is its last of two or more
    arguments; a check macro's (an all-caps name ending in CHECK) is each argument after its first (the
    condition). Only an argument made of string literals alone is erased."""
    out: list[str] = []
    erased = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        check = _CPP_CHECK.fullmatch(token) is not None
        if (check or _CPP_ASSERTION.fullmatch(token)) and i + 1 < len(tokens) and tokens[i + 1] == "(":
            depth, j, commas = 0, i + 1, []
            while j < len(tokens):
                if tokens[j] in ("(", "[", "{"):
                    depth += 1
                elif tokens[j] in (")", "]", "}"):
                    depth -= 1
                    if depth == 0:
                        break
                elif tokens[j] == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j >= len(tokens):
                return None
            if check:
                # the condition (and the macro's name) as written, then each later argument: erased where it is
                # string literals alone, else kept token for token
                bounds = commas + [j]
                arguments = [(tokens[a + 1:b], tokens[b]) for a, b in zip(bounds, bounds[1:])]
                messages = [bool(argument) and all(_is_string(t) for t in argument) for argument, _ in arguments]
                if any(messages):
                    out += tokens[i:bounds[0] + 1]
                    for (argument, closer), message in zip(arguments, messages):
                        out += ["<message>"] if message else argument
                        out.append(closer)
                    erased += sum(messages)
                    i = j + 1
                    continue
            else:
                last = tokens[commas[-1] + 1:j] if commas else []
                if last and all(_is_string(t) for t in last):
                    out += tokens[i:commas[-1] + 1] + ["<message>", ")"]
                    erased += 1
                    i = j + 1
                    continue
        out.append(token)
        i += 1
    return out, erased


def _erased_binding_docs(tokens: list[str]) -> tuple[list[str], int] | None:
    """``tokens`` of one call ``H.def("name", ...)`` with each argument after the first that is string literals
    alone replaced by one placeholder, and the count replaced; None for anything else (another call, brackets
    that do not balance, a first argument that is not string literals alone, tokens after the call)."""
    if len(tokens) < 6 or tokens[1:4] != [".", "def", "("] or tokens[-1] != ")" \
            or closing_bracket(tokens, 3) != len(tokens) - 1:
        return None
    arguments = split_arguments(tokens[4:-1])
    if not arguments or not arguments[0] or not all(_is_string(t) for t in arguments[0]):
        return None
    out, erased = tokens[:4] + arguments[0], 0
    for argument in arguments[1:]:
        doc = bool(argument) and all(_is_string(t) for t in argument)
        out += [","] + (["<doc>"] if doc else argument)
        erased += doc
    return out + [")"], erased


def _same_once_erased(before: str, after: str, erase) -> bool:
    """True when two C/C++ texts' tokens (comments aside) differ and are the same once ``erase`` (tokens to the
    erased tokens and how many it erased, or None where it cannot read them) has erased something on the old
    side and both sides read alike."""
    old, new = cpp_tokens(before), cpp_tokens(after)
    if old == new:
        return False
    erased_old, erased_new = erase(old), erase(new)
    if erased_old is None or erased_new is None or not erased_old[1]:
        return False
    return erased_old[0] == erased_new[0]


def same_without_binding_docs(before: str, after: str) -> bool:
    """Rule ``binding-doc``: True when two texts of one binding call ``H.def("name", ...)`` differ in their
    tokens (comments aside) and are the same once each argument after the first that is string literals alone
    (the bound function's documentation) is erased on both sides."""
    return _same_once_erased(before, after, _erased_binding_docs)


def same_without_cpp_assert_messages(before: str, after: str) -> bool:
    """Rule ``assert-message`` (C/C++): True when two C/C++ definitions' tokens (comments aside) differ and are the
    same once each assertion's message, string literals alone, is erased on both sides."""
    return _same_once_erased(before, after, erased_cpp_messages)
