"""Equivalence rules: upstream's change brings its definition to the shape the port already had (DESIGN §5).

A re-implementation often runs ahead of upstream: it takes as an input what
upstream still computes inside, under its own name. When upstream catches up
the port is in sync, and saying "for a reader" would be a false alarm:

* ``port-has-flag``: a compile-time flag upstream adds (a C++ template
  parameter or a ``tl.constexpr``) is already an input of a cross-language
  port when the port takes a parameter named as the flag without its
  boolean prefix (``is_``, ``has_``, ``use_``, ``enable_``, ``with_``:
  ``Is_causal`` → ``causal``) and upstream's old definition had no parameter
  of that name (so the port's input is its own, not one of upstream's under
  another role). IN_SYNC, saying which input it is.

Example diff (IN_SYNC for a port ``def fwd_hdim64(q, k, v, out, causal)``)::

    -template<typename T>
    +template<typename T, bool Is_causal>
     void run_mha_fwd_hdim64(Flash_fwd_params &params, cudaStream_t stream) {
    -    BOOL_SWITCH(params.is_causal, Is_causal, [&] {

* ``port-has-change``: a Python body change whose every touched statement
  (an assignment or call statement holding a changed token), in its new
  form, is the statement of the port that assigns the same target, token for
  token modulo one consistent renaming of locals and parameters the commit
  did not touch (``M`` ↔ ``rows``; never an attribute, keyword or callee;
  ``A if not C else B`` read as ``B if C else A``), with
  the touched tokens verbatim, while its old form is not: the port already
  has the change. IN_SYNC, citing the port's statements. Only when every
  change of the definition is such a statement. A call statement (a
  kernel's ``tl.store``/``tl.atomic_add``, which assigns nothing) is matched
  to the port's one call of the same function, its touched part compared at
  the same place (the same argument, the same nesting), each of upstream's
  parameters read as the port's parameter at the same position (the port
  names its pointers its own way) and untouched locals renamed as above;
  where the port calls that function more than once, the first arguments
  (the pointer stored through) must read alike too, and exactly one call
  may be left. A cast that the port writes at another argument, to another
  pointer's type, or a port whose one such call has the old form, is not.
  In C++, a change confined to call arguments is matched the same way
  (``cpp_port_has_change``); so is a change that only adds simple statements
  (``cpp_port_has_added_statements``), each holding a literal and each
  already a statement of the port token for token modulo local and parameter
  names (callees, types, fields and literals verbatim). A trivial statement
  (``x = y;``) proves nothing, and a commit that also removes or rewrites a
  line is not such a change.

Example diff (IN_SYNC for a port kernel ``(src, dst, ...)`` that stores
``tl.store(dst + offs, (v * g).to(dst.dtype.element_ty), mask=inside)``)::

    -    tl.store(Y + cols, y.to(tl.float16), mask=mask)
    +    tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)

Example diff (IN_SYNC for a port whose ``forward`` already allocates
``rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)``)::

    -    rstd = torch.empty((M,), dtype=torch.float32, device="cuda")
    +    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)

* ``port-has-renamed-change``: ``port-has-change`` for a touched assignment
  whose target the port names otherwise (the port assigns nothing to
  upstream's name, so the target's text cannot pick the port's statement).
  The statement is matched to the port's one assignment, to a local the port
  binds once, that reads as the new form with each of upstream's parameters
  read as the port's parameter at the same position (both definitions take
  as many) and the target and the untouched locals renamed one to one;
  upstream's target is a plain local bound once on each side. The old form
  must read as no assignment of the port at all (whatever its target): a
  port that also allocates the old way leaves nothing to tell which of its
  statements is upstream's. IN_SYNC, naming the port's name for the target.

Example diff (IN_SYNC for a port ``def dequantize(qweight, scales, zeros)``
whose body allocates ``dst = torch.empty((rows, cols), device=qweight.device)``
and assigns nothing to ``out``)::

    -    out = torch.empty((n, m), device="cuda")
    +    out = torch.empty((n, m), device=qweight.device)

* ``port-has-inlined-change``: a C++ change that only adds simple
  statements, at least one re-assigning a local from itself
  (``f0 = fmaxf(-65504.0f, fminf(f0, 65504.0f));``, a literal in it, the
  local read once), is the port's already when each added statement is a
  statement of the port (as ``port-has-change`` reads it) or its right side
  is a value the port's definition computes (an initialiser or an
  assignment's right side) node for node, literals, callees, types and
  fields verbatim and other names renamed one to one, with upstream's read
  of the local standing for a port subexpression that holds no literal and
  reads the same parameters, by position, as the local's other definitions
  upstream (through the locals each side computes): ``float t = E; t = F(t);``
  and ``float v = F(E');`` are one dataflow. IN_SYNC, citing the port's value.
  A clamp with other literals, around a value holding a literal of the
  port's own, or of what the port reads from another input, is not.

Example diff (IN_SYNC for a port kernel ``(y, x, w, dims)`` that computes
``const float v = fmaxf(-65504.0f, fminf(__half2float(x_row[c]), 65504.0f));``
with ``x_row = x + blockIdx.x * dims``)::

     float f0 = __half2float(__low2half(x2));
    +f0 = fmaxf(-65504.0f, fminf(f0, 65504.0f));

* ``port-has-uncarried-store``: a C++ change that only stops carrying a
  local across a loop's iterations (declared before the loop with a
  literal, written in it as ``b |= E1; b |= E2; out[j] = b;``) by building
  each element in place (``out[j] = E1; out[j] |= E2;``), every other token
  the same, is IN_SYNC when the port stores an element in a loop that
  assigns no name declared outside it, combining with the same operator as
  many parts of the same form (operators and literals verbatim), and stores
  no element from a carried local anywhere.

Example diff (IN_SYNC for a port storing
``dst[p] = (code(x[2 * p]) << 4) | code(x[2 * p + 1]);``)::

    -    unsigned char b = 0;
         for (int j = 0; j < n; j++) {
    -        b |= enc(v[2 * j]) << 4;
    -        b |= enc(v[2 * j + 1]);
    -        out[j] = b;
    +        out[j] = enc(v[2 * j]) << 4;
    +        out[j] |= enc(v[2 * j + 1]);

This module states the rules, picks the port's parameter from two
signatures and compares syntax trees handed to it; it reads no git and no
tree index, and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast as _ast
import difflib
import textwrap as _textwrap

from portq.classifier.reading import _walk_nodes, assignment_targets
from portq.classifier.rules import Rule
from portq.classifier.rules.cosmetic import _function_node, _python_parameters, local_names
from portq.language.symbols import function_declarator

RULES = (
    Rule("port-has-flag", ("IN_SYNC",),
         "A compile-time flag upstream adds is already an input of a cross-language port that takes a parameter "
         "named as the flag without its boolean prefix (`Is_causal` → `causal`), one upstream's old definition did "
         "not have: IN_SYNC.",
         "-template<typename T>\n+template<typename T, bool Is_causal>   (the port takes causal)",
         "classifier.rules.equivalence.port_input_for_flag, "
         "classifier.rules.parameters._cross_language_constexpr_items"),
    Rule("port-has-change", ("IN_SYNC",),
         "A Python body change whose every touched statement, in its new form, is the port's statement assigning "
         "the same target (modulo one consistent renaming of untouched locals and parameters, the touched tokens "
         "verbatim), or for a call statement (`tl.store(...)`) the port's one call of the same function with the "
         "touched part at the same place (parameters read by position), while "
         "its old form is not, is a change the port already has: IN_SYNC, citing the port's statements. In C++, "
         "a change confined to the arguments of call statements (receiver and method kept) that the C++ port "
         "makes on its own locals, renamed one to one, with the new arguments and never the old, is the same; "
         "so is a C++ change that only adds simple statements, each holding a literal and already a statement of "
         "the port modulo local and parameter names (a trivial `x = y;` proves nothing; a commit that also "
         "removes or rewrites a line is not such a change). "
         "An early exit moved between a wrapper and the host it calls is the same: a Python definition gaining "
         "one top-level `if TEST: return` after statements that only check its inputs, whose port already "
         "returns on that test (its parameters renamed by position) after checks only; or one whose only change "
         "turns `if TEST: host(...)` into `host(...)`, whose port's one call of its host stands unguarded.",
         "-    rstd = torch.empty((M,), device=\"cuda\")\n+    rstd = torch.empty((M,), device=x.device)  "
         "(the port: rstd = torch.empty((rows,), device=x.device))",
         "classifier.rules.equivalence.port_has_change, ._call_statement_match, .cpp_port_has_change, "
         ".cpp_port_has_added_statements, "
         "classifier.rules.equivalence.port_has_moved_guard, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("port-has-renamed-change", ("IN_SYNC",),
         "A Python body change whose touched statements the port already has, where a touched assignment's "
         "target is a local the port names otherwise (it assigns nothing to upstream's name): the port's one "
         "assignment to a local it binds once reads as the new form (parameters by position, the target and "
         "untouched locals renamed one to one, upstream's target bound once on each side), and the old form "
         "reads as no assignment of the port: IN_SYNC, citing the port's statements and names.",
         "-    out = torch.empty((n,), device=\"cuda\")\n+    out = torch.empty((n,), device=w.device)  "
         "(the port: dst = torch.empty((rows,), device=w.device))",
         "classifier.rules.equivalence.port_has_renamed_change, ._renamed_assignment, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("port-has-inlined-change", ("IN_SYNC",),
         "A C++ change that only adds simple statements, at least one `x = F(x);` (F holding a literal, x read "
         "once), each either a statement of the port modulo local and parameter names or such an `F` that a "
         "value the port's definition computes (an initialiser or an assignment's right side) already reads "
         "as, node for node modulo names, upstream's read of x standing for a port subexpression without "
         "literals (`float t = E; t = F(t);` is `float t = F(E);`): IN_SYNC, citing the port's values.",
         "+        f0 = fmaxf(-65504.0f, fminf(f0, 65504.0f));  "
         "(the port: const float v = fmaxf(-65504.0f, fminf(__half2float(row[c]), 65504.0f));)",
         "classifier.rules.equivalence.cpp_port_has_inlined_statements, ._cpp_reads_as, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("port-has-uncarried-store", ("IN_SYNC",),
         "A C++ change that only stops carrying a local across a loop's iterations (a local declared before "
         "the loop with a literal, written in it only as `L op= E1; L op= E2; X = L;`, becomes "
         "`X = E1; X op= E2;` in place, the declaration gone, every other token the same, no part reading X) is "
         "IN_SYNC when the port's definition stores an element (`dst[i] = V`) in a loop that assigns no name "
         "declared outside it, V combining with that operator as many parts as upstream's, each of the same "
         "form (operators and literals verbatim, callees and names aside), and stores no element from a local "
         "any of its loops carries; a port that carries a local in that loop or stores one elsewhere, combines "
         "the parts otherwise, or a commit that changes anything else stays NEEDS_REVIEW.",
         "-        b |= enc(v[2 * j]) << 4;\n-        b |= enc(v[2 * j + 1]);\n-        out[j] = b;\n"
         "+        out[j] = enc(v[2 * j]) << 4;\n+        out[j] |= enc(v[2 * j + 1]);  "
         "(the port: dst[p] = (code(x[2 * p]) << 4) | code(x[2 * p + 1]);)",
         "classifier.rules.equivalence.cpp_port_has_uncarried_store, ._cpp_carried_runs, ._cpp_carried_writes, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
)

_FLAG_PREFIXES = ("is_", "has_", "use_", "enable_", "with_")


def port_input_for_flag(name: str, old, port) -> str | None:
    """The port's parameter (normalised) that already stands for the flag
    ``name`` (normalised) upstream adds, or None (see the module)."""
    for prefix in _FLAG_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            base = name[len(prefix):]
            if port.param(base) is not None and old.param(base) is None:
                return base
    return None


# --- the port already has the change -----------------------------------------------

_STATEMENTS = ("expression_statement", "return_statement")
_LEAVES = ("string", "concatenated_string")


def _leaves(node) -> list:
    """The leaf tokens of ``node`` in order, strings whole, comments dropped."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == "comment":
            continue
        if current.child_count == 0 or current.type in _LEAVES:
            found.append(current)
            continue
        stack.extend(reversed(current.children))
    return found


def _statement_of(leaf):
    """The innermost simple statement holding ``leaf``, or None."""
    current = leaf
    while current is not None and current.type not in _STATEMENTS:
        if current.type in ("function_definition", "class_definition", "decorated_definition", "block"):
            return None
        current = current.parent
    return current


def _key(node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _normal_tokens(node) -> list:
    """``(text, leaf)`` of a statement's tokens, ``A if not C else B`` read as ``B if C else A``."""
    if node.type == "conditional_expression":
        parts = [c for c in node.children if c.type != "comment"]
        if len(parts) == 5 and parts[2].type == "not_operator":
            argument = parts[2].child_by_field_name("argument")
            if argument is not None:
                return (_normal_tokens(parts[4]) + [("if", None)] + _normal_tokens(argument) + [("else", None)]
                        + _normal_tokens(parts[0]))
    if node.child_count == 0 or node.type in _LEAVES:
        return [] if node.type == "comment" else [(node.text.decode("utf-8", errors="replace"), node)]
    return [token for child in node.children for token in _normal_tokens(child)]


def _target(statement) -> str | None:
    """The text of what a statement assigns (``mean``, ``a, b``), or None."""
    inner = statement.named_children[0] if statement.named_children else None
    if inner is None or inner.type not in ("assignment", "augmented_assignment"):
        return None
    left = inner.child_by_field_name("left")
    return left.text.decode("utf-8", errors="replace") if left is not None else None


def _aligned(upstream, port, touched: set, renaming: dict[str, str], names: tuple[set, set]) -> bool:
    """Whether ``upstream`` reads as ``port`` token for token, identifiers not
    in ``touched`` renamed by (and extending) ``renaming``, one to one; only a
    local or parameter of each definition (``names``: upstream's, the port's)
    may be renamed, never an attribute, a keyword or a function the code calls."""
    mine, theirs = _normal_tokens(upstream), _normal_tokens(port)
    if len(mine) != len(theirs):
        return False
    trial = dict(renaming)
    for (text, leaf), (other, port_leaf) in zip(mine, theirs):
        if text == other and trial.get(text, text) == text:
            if leaf is not None and leaf.type == "identifier":
                trial[text] = text
            continue
        if leaf is None or port_leaf is None or leaf.type != "identifier" or port_leaf.type != "identifier" \
                or _key(leaf) in touched or trial.get(text, other) != other \
                or text not in names[0] or other not in names[1]:
            return False
        if leaf.parent is not None and leaf.parent.type == "attribute" \
                and leaf.parent.child_by_field_name("attribute") == leaf:
            return False  # an attribute name is the object's, not a name the port may choose
        trial[text] = other
    if len(set(trial.values())) != len(trial):
        return False
    renaming.update(trial)
    return True


def _own_names(node) -> set[str]:
    """The locals and parameters a Python definition binds."""
    function = _function_node(node)
    return local_names(node, "python") | _python_parameters(function)


def port_has_change(old_node, new_node, port_node) -> list[tuple[object, object]] | None:
    """``(new statement, port statement)`` for each statement a Python
    definition's change touched, when the port already has every one in its
    new form and not in its old (``port-has-change``); None otherwise."""
    found, _ = _port_has(old_node, new_node, port_node, rename_targets=False)
    return found


def port_has_renamed_change(old_node, new_node, port_node) \
        -> tuple[list[tuple[object, object]], list[tuple[str, str]]] | None:
    """``port-has-renamed-change``: what ``port_has_change`` finds, where at least one touched assignment's
    target is a local the port names otherwise (the port assigns nothing to upstream's name): the port's one
    assignment, to a local it binds once, that reads as the new form (each parameter read as the port's
    parameter at the same position, the target and untouched locals renamed one to one), while the old form
    reads as no assignment of the port. ``(pairs, [(upstream target, port target)])``; None otherwise."""
    found, renamed = _port_has(old_node, new_node, port_node, rename_targets=True)
    return (found, renamed) if found and renamed else None


_PY_BINDERS = {"assignment": "left", "augmented_assignment": "left", "for_statement": "left",
               "for_in_clause": "left", "named_expression": "name", "as_pattern": "alias"}


def _times_bound(node, name: str) -> int:
    """How many binding places of a Python definition name ``name`` (assignment and loop targets, walrus,
    ``as``), counting any identifier of that text inside a target (an over-count only refuses more)."""
    count = 0
    for current in _walk_nodes(node):
        field = _PY_BINDERS.get(current.type)
        target = current.child_by_field_name(field) if field else None
        if target is not None:
            count += sum(1 for d in _walk_nodes(target) if d.type == "identifier" and d.text.decode() == name)
    return count


def _single_target(statement) -> str | None:
    """The one local a plain ``name = value`` statement assigns, or None."""
    inner = statement.named_children[0] if statement.named_children else None
    if inner is None or inner.type != "assignment" or inner.child_by_field_name("type") is not None:
        return None
    left = inner.child_by_field_name("left")
    return left.text.decode("utf-8", errors="replace") if left is not None and left.type == "identifier" else None


def _port_has(old_node, new_node, port_node, rename_targets: bool):
    """``port_has_change``'s proof, with ``rename_targets`` (``port_has_renamed_change``) also matching an
    assignment the port makes to a name of its own; ``(found or None, [(upstream target, port target)])``."""
    old_leaves, new_leaves = _leaves(old_node), _leaves(new_node)
    old_text = [leaf.text for leaf in old_leaves]
    new_text = [leaf.text for leaf in new_leaves]
    pairs: dict[tuple[int, int], tuple[object, object]] = {}
    touched_new: set = set()
    touched_old: set = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_text, new_text, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        olds = old_leaves[i1:i2] or old_leaves[max(i1 - 1, 0):i1]
        news = new_leaves[j1:j2] or new_leaves[max(j1 - 1, 0):j1]
        old_statements = {_key(s): s for s in map(_statement_of, olds) if s is not None}
        new_statements = {_key(s): s for s in map(_statement_of, news) if s is not None}
        if None in map(_statement_of, olds) or None in map(_statement_of, news) \
                or len(old_statements) != 1 or len(new_statements) != 1:
            return None, []
        old_statement, new_statement = next(iter(old_statements.values())), next(iter(new_statements.values()))
        pairs.setdefault(_key(new_statement), (old_statement, new_statement))
        if pairs[_key(new_statement)][0] is not old_statement and _key(pairs[_key(new_statement)][0]) != _key(old_statement):
            return None, []
        touched_new |= {_key(leaf) for leaf in new_leaves[j1:j2]}
        touched_old |= {_key(leaf) for leaf in old_leaves[i1:i2]}
    if not pairs:
        return None, []
    port_statements: dict[str, list] = {}
    for leaf in _leaves(port_node):
        statement = _statement_of(leaf)
        target = _target(statement) if statement is not None else None
        if target is not None and all(_key(s) != _key(statement) for s in port_statements.get(target, [])):
            port_statements.setdefault(target, []).append(statement)
    renaming: dict[str, str] = {}
    names = (_own_names(new_node), _own_names(port_node))
    found = []
    assigned = []
    renamed: list[tuple[str, str]] = []
    for old_statement, new_statement in pairs.values():
        if _target(new_statement) is None and _target(old_statement) is None:
            mine = _call_statement_match(old_statement, new_statement, touched_old, touched_new, port_node,
                                         (old_node, new_node), renaming, names)
            if mine is None:
                return None, []
            found.append((new_statement, mine))
            continue
        assigned.append((old_statement, new_statement))
        target = _target(new_statement)
        candidates = port_statements.get(target or "", [])
        if rename_targets and target is not None and target == _target(old_statement) and not candidates:
            mine = _renamed_assignment(old_statement, new_statement, touched_old, touched_new, port_node,
                                       (old_node, new_node), port_statements, renaming, names)
            if mine is None:
                return None, []
            renamed.append((target, _target(mine)))
            found.append((new_statement, mine))
            continue
        if target is None or target != _target(old_statement) or len(candidates) != 1:
            return None, []
        if not _aligned(new_statement, candidates[0], touched_new, renaming, names):
            return None, []
        found.append((new_statement, candidates[0]))
    for old_statement, new_statement in assigned:
        if _target(old_statement) not in port_statements:  # a renamed target: no assignment of the port may
            everything = [s for statements in port_statements.values() for s in statements]  # read as the old form
            others = {k: v for k, v in renaming.items() if k not in dict(renamed)}  # the target may be any
            if any(_aligned(old_statement, s, touched_old, dict(others), (_own_names(old_node), names[1]))
                   for s in everything):
                return None, []
            continue
        port_statement = port_statements[_target(old_statement)][0]
        if _aligned(old_statement, port_statement, touched_old, dict(renaming), (_own_names(old_node), names[1])):
            return None, []  # the port has the old form too: nothing tells which it follows
    return found, renamed


def _renamed_assignment(old_statement, new_statement, touched_old: set, touched_new: set, port_node, sides,
                        port_statements: dict[str, list], renaming: dict[str, str], names: tuple[set, set]):
    """The port's one assignment that already has a touched assignment's new form under a name of its own
    (``port-has-renamed-change``), or None: upstream's target a local both its sides bind once, the port's a
    local it binds once; parameters read by position (the same count on both sides), locals renamed one to
    one; exactly one such assignment of the port reads as the new form and none reads as the old."""
    old_node, new_node = sides
    target = _single_target(new_statement)
    if target is None or _single_target(old_statement) != target or target not in names[0] \
            or _times_bound(new_node, target) != 1 or _times_bound(old_node, target) != 1:
        return None
    upstream_parameters, port_parameters = _ordered_parameters(new_node), _ordered_parameters(port_node)
    if len(upstream_parameters) != len(port_parameters) or "" in upstream_parameters \
            or _ordered_parameters(old_node) != upstream_parameters:
        return None
    positional = dict(zip(upstream_parameters, port_parameters))
    everything = [s for statements in port_statements.values() for s in statements]
    candidates = [s for s in everything if (mine := _single_target(s)) is not None and mine in names[1]
                  and _times_bound(port_node, mine) == 1]
    having = [s for s in candidates if _same_inputs(new_statement, s, positional, dict(renaming), names, touched_new)]
    if len(having) != 1:
        return None
    old_names = (_own_names(old_node), names[1])
    if any(_same_inputs(old_statement, s, positional, dict(renaming), old_names, touched_old) for s in everything):
        return None  # the port has the old form too: nothing tells which it follows
    _same_inputs(new_statement, having[0], positional, renaming, names, touched_new)
    return having[0]


# --- a call statement: the touched part at the same place of the port's call -----------


def _named(node) -> list:
    return [c for c in node.named_children if c.type != "comment"]


def _statement_call(statement):
    """The call an expression statement consists of (``tl.store(...)``), else None."""
    inner = _named(statement)
    return inner[0] if statement.type == "expression_statement" and len(inner) == 1 and inner[0].type == "call" \
        else None


def _covering_path(call, touched: set) -> list[int] | None:
    """The named-child positions from ``call`` down to the smallest node holding every touched leaf of it."""
    leaves = [leaf for leaf in _leaves(call) if _key(leaf) in touched]
    if not leaves:
        return None
    start, end = min(l.start_byte for l in leaves), max(l.end_byte for l in leaves)
    node = leaves[0]
    while node is not None and not (node.start_byte <= start and node.end_byte >= end):
        node = node.parent
    path: list[int] = []
    while node is not None and _key(node) != _key(call):
        parent = node.parent
        if parent is None:
            return None
        children = _named(parent)
        position = next((i for i, c in enumerate(children) if _key(c) == _key(node)), None)
        if position is None:
            return None
        path.append(position)
        node = parent
    return list(reversed(path)) if node is not None else None


def _follow(call, path: list[int], like=None):
    """The node at ``path`` below ``call`` (each step of the same node type as ``like``'s, when given), or None."""
    node, model = call, like
    for position in path:
        children = _named(node)
        if position >= len(children):
            return None
        node = children[position]
        if model is not None:
            model = _named(model)[position]
            if node.type != model.type:
                return None
    return node


def _ordered_parameters(node) -> list[str]:
    function = _function_node(node)
    parameters = function.child_by_field_name("parameters") if function is not None else None
    found = []
    for parameter in _named(parameters) if parameters is not None else ():
        name = parameter if parameter.type == "identifier" else \
            (parameter.child_by_field_name("name") or next((c for c in _named(parameter) if c.type == "identifier"), None))
        found.append(name.text.decode("utf-8", errors="replace") if name is not None else "")
    return found


def _same_inputs(upstream, port, positional: dict[str, str], renaming: dict[str, str], names: tuple[set, set],
                 touched: set) -> bool:
    """Whether ``upstream`` reads as ``port`` token for token, a parameter read as the port's parameter at the
    same position (``positional``), an untouched local as the port's local by one consistent renaming (which
    a match extends); never an attribute, a keyword or a callee renamed."""
    mine, theirs = _normal_tokens(upstream), _normal_tokens(port)
    if len(mine) != len(theirs):
        return False
    trial = dict(renaming)
    for (text, leaf), (other, port_leaf) in zip(mine, theirs):
        identifier = leaf is not None and leaf.type == "identifier"
        if identifier and text in positional:
            if positional[text] != other:
                return False  # a parameter is the port's parameter at its position, and nothing else
            continue
        if text == other and trial.get(text, text) == text:
            if identifier:
                trial[text] = text
            continue
        if not identifier or port_leaf is None or port_leaf.type != "identifier" or _key(leaf) in touched \
                or trial.get(text, other) != other or text not in names[0] or other not in names[1] \
                or other in positional.values():
            return False
        if leaf.parent is not None and leaf.parent.type == "attribute" \
                and leaf.parent.child_by_field_name("attribute") == leaf:
            return False
        trial[text] = other
    if len(set(trial.values())) != len(trial):
        return False
    renaming.update(trial)
    return True


def _call_statement_match(old_statement, new_statement, touched_old: set, touched_new: set, port_node, sides,
                          renaming: dict[str, str], names: tuple[set, set]):
    """The port's call statement that already has a call statement's change (``port-has-change`` for
    ``tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)``): the one call of the port to the same
    function whose node at the place the change touched (the same argument, the same nesting) reads as the
    new form, upstream's parameters read as the port's at the same position, and not as the old; where the
    port calls that function more than once, the first arguments must read alike too. None otherwise."""
    old_node, new_node = sides
    old_call, new_call = _statement_call(old_statement), _statement_call(new_statement)
    if old_call is None or new_call is None:
        return None
    function = new_call.child_by_field_name("function")
    if function is None or old_call.child_by_field_name("function") is None \
            or function.text != old_call.child_by_field_name("function").text \
            or any(_key(leaf) in touched_new for leaf in _leaves(function)):
        return None
    path = _covering_path(new_call, touched_new)
    if not path or path != _covering_path(old_call, touched_old):
        return None
    upstream_parameters, port_parameters = _ordered_parameters(new_node), _ordered_parameters(port_node)
    if len(upstream_parameters) != len(port_parameters) or "" in upstream_parameters:
        return None
    positional = dict(zip(upstream_parameters, port_parameters))
    new_part, old_part = _follow(new_call, path), _follow(old_call, path)
    calls = []
    for leaf in _leaves(port_node):
        statement = _statement_of(leaf)
        call = _statement_call(statement) if statement is not None else None
        port_function = call.child_by_field_name("function") if call is not None else None
        if port_function is not None and port_function.text == function.text \
                and all(_key(c) != _key(call) for c in calls):
            calls.append(call)
    placed = [(call, part) for call in calls if (part := _follow(call, path, like=new_call)) is not None]
    if len(calls) > 1:
        def first(call):
            arguments = call.child_by_field_name("arguments")
            named = _named(arguments) if arguments is not None else []
            return named[0] if named else None
        placed = [(call, part) for call, part in placed
                  if first(call) is not None and first(new_call) is not None
                  and _same_inputs(first(new_call), first(call), positional, dict(renaming), names, touched_new)]
    having = [(call, part) for call, part in placed
              if _same_inputs(new_part, part, positional, dict(renaming), names, touched_new)]
    if len(placed) != 1 or len(having) != 1:
        return None
    call, part = having[0]
    if _same_inputs(old_part, part, positional, dict(renaming), (_own_names(old_node), names[1]), touched_old):
        return None  # the port has the old form too
    _same_inputs(new_part, part, positional, renaming, names, touched_new)
    return call.parent


# --- C++: call statements whose arguments changed, on locals the port renames --------


def _cpp_calls(node) -> list:
    """``(statement, receiver, method, arguments)`` of each call statement in a C++ definition, in order:
    ``recv.method(args);`` (receiver an identifier) or ``function(args);`` (receiver None)."""
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "expression_statement" and len(_named(current)) == 1 \
                and _named(current)[0].type == "call_expression":
            call = _named(current)[0]
            function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
            receiver = None
            if function is not None and function.type == "field_expression":
                argument, field = function.child_by_field_name("argument"), function.child_by_field_name("field")
                if argument is None or argument.type != "identifier" or field is None:
                    continue
                receiver, method = argument.text.decode(), field.text.decode()
            elif function is not None and function.type == "identifier":
                method = function.text.decode()
            else:
                continue
            if arguments is not None:
                found.append((current, receiver, method, "".join(_cpp_token_texts(arguments))))
            continue
        stack.extend(reversed(current.children))
    return found


def _cpp_token_texts(node, spans=frozenset(), types=frozenset(), marker: str | None = None) -> list[str]:
    """The token texts of ``node`` without comments; a node of one of ``types`` whose byte span is in
    ``spans`` stands as ``marker`` (is left out where None)."""
    if node.type == "comment":
        return []
    if node.type in types and (node.start_byte, node.end_byte) in spans:
        return [] if marker is None else [marker]
    if node.child_count == 0:
        return [node.text.decode("utf-8", errors="replace")]
    return [t for c in node.children for t in _cpp_token_texts(c, spans, types, marker)]


def cpp_port_has_change(old_node, new_node, port_node) -> list[tuple[object, object]] | None:
    """``(new statement, port statement)`` for each C++ call statement a definition's change touched, when
    the change is only the arguments of call statements (every other token equal, each call's receiver and
    method kept) and the port makes each such call, on its own receiver (upstream's receivers renamed one
    to one, in order of first use), with the new arguments and never the old (``port-has-change``); None
    otherwise."""
    old_calls, new_calls = _cpp_calls(old_node), _cpp_calls(new_node)
    if len(old_calls) != len(new_calls) \
            or any((o[1], o[2]) != (n[1], n[2]) for o, n in zip(old_calls, new_calls)):
        return None
    changed = [(o, n) for o, n in zip(old_calls, new_calls) if o[3] != n[3]]
    if not changed:
        return None
    # Nothing but those arguments changed: the old body with the new statements put in reads as the new one.
    statement = frozenset({"expression_statement"})
    if _cpp_token_texts(old_node, {(o[0].start_byte, o[0].end_byte) for o, _ in changed}, statement, "<call>") \
            != _cpp_token_texts(new_node, {(n[0].start_byte, n[0].end_byte) for _, n in changed}, statement, "<call>"):
        return None
    methods = {n[2] for _, n in changed}
    mine = [c for c in _cpp_calls(port_node) if c[2] in methods]
    theirs_order = list(dict.fromkeys(n[1] for _, n in changed))
    mine_order = list(dict.fromkeys(c[1] for c in mine))
    if len(theirs_order) != len(mine_order) or None in theirs_order and theirs_order != mine_order:
        return None
    renaming = dict(zip(theirs_order, mine_order))
    found = []
    for old, new in changed:
        receiver = renaming.get(new[1])
        same = [c for c in mine if c[1] == receiver and c[2] == new[2]]
        if not same or any(c[3] == old[3] for c in same) or any(c[3] != new[3] for c in same):
            return None
        found.append((new[0], same[0][0]))
    return found


_CPP_LEAF_STATEMENTS = frozenset({"expression_statement", "declaration", "return_statement"})
_CPP_LITERALS = frozenset({"number_literal", "string_literal", "char_literal", "true", "false"})


def _cpp_leaf_statements(node) -> list:
    """The simple statements of a C++ definition (expressions, declarations, returns), in order."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type in _CPP_LEAF_STATEMENTS:
            found.append(current)
            continue
        stack.extend(reversed(current.named_children))
    return found


def _cpp_shape(statement) -> tuple[list[str], dict[str, int]] | None:
    """A statement's tokens with each identifier that is neither called nor a type nor a field written
    ``<n>`` by order of first use (the names of locals and parameters), literals and callees verbatim;
    None when the statement holds no literal (``x = y;``, ``return;``, ``f(x);`` say nothing on their own)."""
    tokens: list[str] = []
    names: dict[str, int] = {}
    literal = False

    def walk(current):
        nonlocal literal
        if current.type == "comment":
            return
        if current.type in _CPP_LITERALS:
            literal = True
            tokens.append(current.text.decode("utf-8", errors="replace"))
            return
        if current.child_count == 0:
            text = current.text.decode("utf-8", errors="replace")
            parent = current.parent
            called = parent is not None and parent.type == "call_expression" \
                and parent.child_by_field_name("function") == current
            if current.type == "identifier" and not called:
                tokens.append(f"<{names.setdefault(text, len(names))}>")
            else:
                tokens.append(text)
            return
        for child in current.children:
            walk(child)
    walk(statement)
    return (tokens, names) if literal else None


def _cpp_added_statements(old_node, new_node) -> list | None:
    """The simple statements a C++ definition's change adds, when adding them is the whole change (every
    other statement and token the same, in order); None when it also removes or rewrites something, or
    adds nothing."""
    old_statements, new_statements = _cpp_leaf_statements(old_node), _cpp_leaf_statements(new_node)
    old_texts = ["".join(_cpp_token_texts(s)) for s in old_statements]
    new_texts = ["".join(_cpp_token_texts(s)) for s in new_statements]
    added = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=old_texts, b=new_texts, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag != "insert":
            return None
        added += new_statements[j1:j2]
    if not added:
        return None
    spans = {(s.start_byte, s.end_byte) for s in added}
    if _cpp_token_texts(old_node) != _cpp_token_texts(new_node, spans, _CPP_LEAF_STATEMENTS):
        return None
    return added


def cpp_port_has_added_statements(old_node, new_node, port_node) -> list[tuple[object, object]] | None:
    """``(new statement, port statement)`` for each simple statement a C++ definition's change adds, when
    the change only adds statements (the old body's tokens are the new body's with them left out) and each
    added one holds a literal and reads, token for token, as a statement of the port's definition modulo
    the names of locals and parameters (callees, types, fields and literals verbatim): the port already has
    what upstream adds (``port-has-change``); None otherwise."""
    added = _cpp_added_statements(old_node, new_node)
    if added is None:
        return None
    ports = [(s, _cpp_shape(s)) for s in _cpp_leaf_statements(port_node)]
    found = []
    for statement in added:
        shape = _cpp_shape(statement)
        if shape is None:
            return None
        same = next((p for p, mine in ports if mine is not None and mine[0] == shape[0]), None)
        if same is None:
            return None
        found.append((statement, same))
    return found


def _cpp_reassigned_read(statement):
    """``(value, read)`` of a C++ statement ``x = VALUE;`` (plain ``=``, ``x`` an identifier) whose value
    holds a literal and reads ``x`` exactly once, as a value (not called, not a field): that read is
    ``read``. None otherwise."""
    inner = _named(statement)
    if statement.type != "expression_statement" or len(inner) != 1 or inner[0].type != "assignment_expression":
        return None
    left, right = inner[0].child_by_field_name("left"), inner[0].child_by_field_name("right")
    operator = inner[0].child_by_field_name("operator")
    if left is None or right is None or left.type != "identifier" or operator is None or operator.text != b"=":
        return None
    reads = [d for d in _walk_nodes(right) if d.type == "identifier" and d.text == left.text]
    if len(reads) != 1 or not any(d.type in _CPP_LITERALS for d in _walk_nodes(right)):
        return None
    parent = reads[0].parent
    if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == reads[0]:
        return None
    return right, reads[0]


def _cpp_reads_as(mine, port, hole, renaming: dict[str, str], filled: list) -> bool:
    """Whether upstream's expression ``mine`` reads as the port's ``port`` node for node: literals, callees,
    types and fields verbatim, other identifiers renamed one to one (extending ``renaming``), and the node
    ``hole`` of ``mine`` standing for any port subexpression that holds no literal (appended to ``filled``)."""
    if (mine.start_byte, mine.end_byte) == (hole.start_byte, hole.end_byte):
        if not port.is_named or any(d.type in _CPP_LITERALS for d in _walk_nodes(port)):
            return False
        filled.append(port)
        return True
    if mine.type != port.type:
        return False
    theirs = [c for c in mine.children if c.type != "comment"]
    ours = [c for c in port.children if c.type != "comment"]
    if len(theirs) != len(ours):
        return False
    if not theirs:
        text, other = mine.text.decode("utf-8", errors="replace"), port.text.decode("utf-8", errors="replace")
        parent = mine.parent
        called = parent is not None and parent.type == "call_expression" \
            and parent.child_by_field_name("function") == mine
        if mine.type != "identifier" or called:
            return text == other
        if renaming.get(text, other) != other or (text not in renaming and other in renaming.values()):
            return False
        renaming[text] = other
        return True
    return all(_cpp_reads_as(a, b, hole, renaming, filled) for a, b in zip(theirs, ours))


def _cpp_parameter_names(node) -> list[str]:
    """The names of a C++ function's parameters, in order ("" where one has none)."""
    function = _function_node(node)
    declarator = function_declarator(function.child_by_field_name("declarator")) if function is not None else None
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    names = []
    for parameter in _named(parameters) if parameters is not None else ():
        if not parameter.type.endswith("parameter_declaration"):
            continue
        names.append(_cpp_declared_name(parameter.child_by_field_name("declarator")) or "")
    return names


def _cpp_declared_name(declarator) -> str | None:
    """The identifier a C++ declarator declares (through pointers, references, arrays), or None."""
    while declarator is not None and declarator.type != "identifier":
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in declarator.named_children if c.type == "identifier"), None)
        declarator = inner
    return declarator.text.decode("utf-8", errors="replace") if declarator is not None else None


def _cpp_parameters_read(node, start, left_out: set) -> set[int]:
    """The positions of the parameters of C++ definition ``node`` that ``start`` reads, directly or through
    any value the definition computes into a local it reads (every initialiser and assignment of that
    local, statements whose spans are in ``left_out`` aside): an over-approximation of its inputs."""
    parameters = _cpp_parameter_names(node)
    values: dict[str, list] = {}
    for current in _walk_nodes(node):
        if any(current.start_byte >= a and current.end_byte <= b for a, b in left_out):
            continue
        if current.type == "init_declarator":
            name, value = _cpp_declared_name(current.child_by_field_name("declarator")), \
                current.child_by_field_name("value")
        elif current.type == "assignment_expression":
            left = current.child_by_field_name("left")
            name = left.text.decode("utf-8", errors="replace") if left is not None and left.type == "identifier" \
                else None
            value = current.child_by_field_name("right")
        else:
            continue
        if name and value is not None:
            values.setdefault(name, []).append(value)
    found: set[int] = set()
    seen: set[str] = set()
    stack = [start]
    while stack:
        for leaf in _walk_nodes(stack.pop()):
            if leaf.type != "identifier":
                continue
            parent = leaf.parent
            if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == leaf:
                continue
            name = leaf.text.decode("utf-8", errors="replace")
            if name in parameters:
                found.add(parameters.index(name))
            elif name in values and name not in seen:
                seen.add(name)
                stack.extend(values[name])
    return found


def _cpp_values(node) -> list:
    """The values a C++ definition computes into a name: declarations' initialisers and the right sides of
    plain assignments."""
    found = []
    for current in _walk_nodes(node):
        if current.type == "init_declarator":
            value = current.child_by_field_name("value")
        elif current.type == "assignment_expression" and current.child_by_field_name("operator") is not None \
                and current.child_by_field_name("operator").text == b"=":
            value = current.child_by_field_name("right")
        else:
            continue
        if value is not None:
            found.append(value)
    return found


def cpp_port_has_inlined_statements(old_node, new_node, port_node) -> list[tuple[object, object]] | None:
    """``port-has-inlined-change``: ``(new statement, port node)`` for each simple statement a C++ change
    adds, when the change only adds statements (as ``cpp_port_has_added_statements`` reads it), each added
    one is either such a statement of the port or ``x = F(x);`` (``F`` holding a literal, ``x`` read once)
    whose ``F`` is a value the port's definition computes (an initialiser or an assignment's right side)
    read node for node modulo the names of locals and parameters, the read of ``x`` standing for a port
    subexpression without literals (``float t = E; t = F(t);`` is ``float t = F(E);`` with the local
    inlined), and at least one is of the second kind; None otherwise."""
    added = _cpp_added_statements(old_node, new_node)
    if added is None:
        return None
    ports = [(s, _cpp_shape(s)) for s in _cpp_leaf_statements(port_node)]
    values = _cpp_values(port_node)
    found, inlined = [], False
    for statement in added:
        shape = _cpp_shape(statement)
        same = next((p for p, mine in ports if mine is not None and shape is not None and mine[0] == shape[0]), None)
        if same is not None:
            found.append((statement, same))
            continue
        parts = _cpp_reassigned_read(statement)
        if parts is None:
            return None
        value, read = parts
        # upstream's read stands for what the local held before: the port's subexpression in its place
        # must read the same parameters, by position, through the locals each side computes
        wanted = _cpp_parameters_read(new_node, read, {(a.start_byte, a.end_byte) for a in added})
        if not wanted:
            return None
        same = None
        for candidate in values:
            filled: list = []
            if _cpp_reads_as(value, candidate, read, {}, filled) and len(filled) == 1 \
                    and _cpp_parameters_read(port_node, filled[0], set()) == wanted:
                same = candidate
                break
        if same is None:
            return None
        found.append((statement, same))
        inlined = True
    return found if inlined else None


# --- a value no longer carried across loop iterations --------------------------------

_CPP_LOOPS = frozenset({"for_statement", "for_range_loop", "while_statement", "do_statement"})


def _cpp_text(node) -> str:
    return "".join(_cpp_token_texts(node))


def _cpp_unparen(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _cpp_assignment(statement):
    """``(left, operator, right)`` of an expression statement that is one assignment; None otherwise."""
    if statement.type != "expression_statement" or statement.named_child_count != 1:
        return None
    expression = statement.named_children[0]
    if expression.type != "assignment_expression":
        return None
    operator = expression.child_by_field_name("operator")
    left, right = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return None
    return left, operator.text.decode("utf-8", errors="replace"), right


def _cpp_identifiers(node) -> list:
    return [n for n in _walk_nodes(node) if n.type == "identifier"]


def _cpp_inside(node, outer) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _cpp_loop_of(node):
    current = node.parent
    while current is not None and current.type not in _CPP_LOOPS:
        current = current.parent
    return current


def _cpp_skeleton(node):
    """What an operand of a combined store is, its callees and names left out: a binary expression as its
    operator and operands' skeletons, a literal verbatim, anything else ``*``."""
    node = _cpp_unparen(node)
    if node.type == "binary_expression":
        operator = node.child_by_field_name("operator")
        return (operator.text.decode("utf-8", errors="replace") if operator is not None else None,
                _cpp_skeleton(node.child_by_field_name("left")), _cpp_skeleton(node.child_by_field_name("right")))
    if node.type in _CPP_LITERALS:
        return node.text.decode("utf-8", errors="replace")
    return "*"


def _cpp_stored_base(target):
    """The name an assignment target stores through: ``out`` of ``out[i]``, ``p`` of ``*p`` or ``p->x``."""
    current = target
    while current is not None and current.type != "identifier":
        current = current.child_by_field_name("argument") or current.child_by_field_name("left") \
            or (current.named_children[0] if current.named_child_count else None)
    return current.text if current is not None else None


def _cpp_carried_runs(old_node):
    """``(declaration, runs)`` for the one local of ``old_node`` carried across a loop's iterations: declared
    with a literal initialiser outside the loop, and otherwise only written ``L op= E;`` (k >= 1 in a row,
    one operator, no E reading L) and then stored ``X = L;`` (X not reading L), each such run inside a loop
    the declaration is outside; ``runs`` as ``[(compound statements, store statement)]``. None when no
    local, or more than one, reads so."""
    found = None
    for declaration in _walk_nodes(old_node):
        if declaration.type != "declaration":
            continue
        declarators = declaration.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            continue
        name_node = declarators[0].child_by_field_name("declarator")
        value = declarators[0].child_by_field_name("value")
        if name_node is None or name_node.type != "identifier" or value is None or value.type not in _CPP_LITERALS:
            continue
        name = name_node.text
        uses = sorted((n for n in _cpp_identifiers(old_node) if n.text == name and n != name_node),
                      key=lambda n: n.start_byte)
        runs, covered = [], set()
        for use in uses:
            if (use.start_byte, use.end_byte) in covered:
                continue
            statement = use.parent.parent if use.parent is not None else None
            parts = _cpp_assignment(statement) if statement is not None else None
            if parts is None or parts[0] != use or parts[1] in ("=",) or not parts[1].endswith("="):
                runs = None
                break
            run = [statement]
            sibling = statement.next_named_sibling
            while sibling is not None:
                more = _cpp_assignment(sibling)
                if more is None or more[0].type != "identifier" or more[0].text != name:
                    break
                run.append(sibling)
                sibling = sibling.next_named_sibling
            store = _cpp_assignment(sibling) if sibling is not None else None
            operators = {_cpp_assignment(s)[1] for s in run}
            stored = {_cpp_stored_base(store[0])} if store is not None else set()
            if store is None or store[1] != "=" or store[2].type != "identifier" or store[2].text != name \
                    or len(operators) != 1 or name in stored \
                    or any(n.text == name or n.text in stored
                           for s in run for n in _cpp_identifiers(_cpp_assignment(s)[2])):
                runs = None
                break
            loop = _cpp_loop_of(statement)
            if loop is None or _cpp_inside(declaration, loop) or _cpp_loop_of(sibling) != loop:
                runs = None
                break
            for s in run + [sibling]:
                covered |= {(n.start_byte, n.end_byte) for n in _cpp_identifiers(s) if n.text == name}
            runs.append((run, sibling))
        if not runs:
            continue
        if found is not None:
            return None
        found = (declaration, runs)
    return found


def _cpp_rewritten_tokens(node, replaced: dict[tuple[int, int], list[str]]) -> list[str]:
    """The token texts of ``node`` without comments, each node whose byte span is in ``replaced`` written as
    the tokens given for it."""
    if node.type == "comment":
        return []
    key = (node.start_byte, node.end_byte)
    if key in replaced and node.type in _CPP_LEAF_STATEMENTS:
        return replaced[key]
    if node.child_count == 0:
        return [node.text.decode("utf-8", errors="replace")]
    return [t for c in node.children for t in _cpp_rewritten_tokens(c, replaced)]


def _cpp_stores_carried(node) -> bool:
    """Whether ``node`` stores an element from a local a loop carries (``out[j] = b;`` in a loop that
    assigns ``b``, declared outside it): the form a port without the fix would have."""
    for statement in _cpp_leaf_statements(node):
        parts = _cpp_assignment(statement)
        loop = _cpp_loop_of(statement)
        if parts is None or parts[1] != "=" or parts[0].type == "identifier" or loop is None \
                or _cpp_unparen(parts[2]).type != "identifier":
            continue
        name = _cpp_unparen(parts[2]).text
        declared_inside = any(n.text == name and n.parent is not None and n.parent.type == "init_declarator"
                              for n in _cpp_identifiers(loop))
        if declared_inside:
            continue
        for node_ in _walk_nodes(loop):
            if node_.type == "assignment_expression":
                target = node_.child_by_field_name("left")
                if target is not None and target.type == "identifier" and target.text == name:
                    return True
    return False


def _cpp_carried_writes(loop) -> bool:
    """Whether ``loop`` assigns to (or steps) a name declared outside it: a value carried across its
    iterations. Stores through a subscript, a field or a pointer are not such writes."""
    declared = {n.text for d in _walk_nodes(loop) if d.type in ("declaration", "for_range_loop")
                for n in _cpp_identifiers(d) if n.parent is not None and n.parent.type in
                ("init_declarator", "declaration", "for_range_loop", "array_declarator",
                 "pointer_declarator", "reference_declarator")}
    return any(target.type == "identifier" and target.text not in declared
               for target in assignment_targets(loop))


def cpp_port_has_uncarried_store(old_node, new_node, port_node) -> list[tuple[object, object]] | None:
    """``port-has-uncarried-store``: ``(new statement, port store)`` for each store a C++ change stops
    carrying across loop iterations, when the change is only that (``_cpp_carried_runs``: the local's
    declaration removed and each run ``L op= E1; L op= E2; ...; X = L;`` written ``X = E1; X op= E2; ...;``
    in place, every other token the same; no part reading the element it builds) and the port stores, in
    a loop that assigns no name declared outside it, an element (``dst[...] = V``) whose value combines, with that operator, as many operands as
    the run had, each of E1, E2, ...'s skeleton (``_cpp_skeleton``: operators and literals verbatim), and
    stores no element from a local any of its loops carries (``_cpp_stores_carried``); None otherwise."""
    carried = _cpp_carried_runs(old_node)
    if carried is None:
        return None
    declaration, runs = carried
    name = next(n.text for n in _cpp_identifiers(declaration) if n.parent.type == "init_declarator")
    if any(n.text == name for n in _cpp_identifiers(new_node)):
        return None
    replaced: dict[tuple[int, int], list[str]] = {(declaration.start_byte, declaration.end_byte): []}
    wanted = []
    for run, store in runs:
        target = _cpp_token_texts(_cpp_assignment(store)[0])
        operator = _cpp_assignment(run[0])[1]
        for i, statement in enumerate(run):
            value = _cpp_assignment(statement)[2]
            replaced[(statement.start_byte, statement.end_byte)] = \
                target + (["="] if i == 0 else [operator]) + _cpp_token_texts(value) + [";"]
        replaced[(store.start_byte, store.end_byte)] = []
        wanted.append((run, operator[:-1], [_cpp_skeleton(_cpp_assignment(s)[2]) for s in run]))
    if _cpp_rewritten_tokens(old_node, replaced) != _cpp_token_texts(new_node) or _cpp_stores_carried(port_node):
        return None
    stores = []
    for statement in _cpp_leaf_statements(port_node):
        parts = _cpp_assignment(statement)
        loop = _cpp_loop_of(statement)
        if parts is None or parts[1] != "=" or parts[0].type != "subscript_expression" or loop is None \
                or _cpp_carried_writes(loop):
            continue
        stores.append((statement, _cpp_unparen(parts[2])))
    new_statements = _cpp_leaf_statements(new_node)
    found = []
    for run, operator, skeletons in wanted:
        first = replaced[(run[0].start_byte, run[0].end_byte)]
        ours = next((s for s in new_statements if _cpp_token_texts(s) == first), None)
        same = None
        for statement, value in stores:
            operands, current = [], value
            for _ in range(len(skeletons) - 1):
                op = current.child_by_field_name("operator") if current.type == "binary_expression" else None
                if op is None or op.text.decode("utf-8", errors="replace") != operator:
                    break
                operands.insert(0, current.child_by_field_name("right"))
                current = _cpp_unparen(current.child_by_field_name("left"))
            else:
                operands.insert(0, current)
                if [_cpp_skeleton(o) for o in operands] == skeletons:
                    same = statement
                    break
        if ours is None or same is None:
            return None
        found.append((ours, same))
    return found


# --- an early exit moved from a wrapper into the host it calls ----------------------


def _statements(node) -> list:
    """The top-level statements of a Python definition's body, comments aside."""
    function = _function_node(node)
    body = function.child_by_field_name("body") if function is not None else None
    return [c for c in body.named_children if c.type != "comment"] if body is not None else []


def _params_in_order(node) -> list[str]:
    function = _function_node(node)
    params = function.child_by_field_name("parameters") if function is not None else None
    names = []
    for child in params.named_children if params is not None else ():
        name = child if child.type == "identifier" else child.child_by_field_name("name") or next(
            (c for c in child.named_children if c.type == "identifier"), None)
        names.append(name.text.decode("utf-8", errors="replace") if name is not None else "")
    return names


class _Renamed(_ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node):
        return _ast.copy_location(_ast.Name(id=self.names.get(node.id, node.id), ctx=node.ctx), node)

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node


def _dump(statement, names: dict[str, str] | None = None) -> str | None:
    """``ast.dump`` of one statement (its own indentation set aside), Python names renamed by ``names``."""
    text = " " * statement.start_point[1] + statement.text.decode("utf-8", errors="replace")
    try:
        tree = _ast.parse(_textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    return _ast.dump(_Renamed(names or {}).visit(tree))


def _if_parts(statement):
    """``(test, [statements of its block])`` of an ``if`` with no ``elif``/``else``, else None."""
    if statement.type != "if_statement" or statement.child_by_field_name("alternative") is not None:
        return None
    block = statement.child_by_field_name("consequence")
    if block is None:
        return None
    return statement.child_by_field_name("condition"), [c for c in block.named_children if c.type != "comment"]


def _early_exit(statement) -> bool:
    """``if TEST: return`` (no value, or None), nothing else in the block."""
    parts = _if_parts(statement)
    if parts is None or len(parts[1]) != 1 or parts[1][0].type != "return_statement":
        return False
    values = [c for c in parts[1][0].named_children if c.type != "comment"]
    return not values or (len(values) == 1 and values[0].type == "none")


def _check_only(statement) -> bool:
    """A statement that only checks its inputs: an ``assert``, a ``raise``, a docstring, a local bound to a
    value no call computes, or an ``if``/``for`` whose blocks hold only such statements (nothing outside the
    definition changes before an early exit after them)."""
    if statement.type in ("assert_statement", "raise_statement"):
        return True
    if statement.type == "expression_statement":
        inner = [c for c in statement.named_children if c.type != "comment"]
        if len(inner) == 1 and inner[0].type == "assignment":
            # a local bound to a value computed by no call (a set of dtypes): nothing runs, nothing outside changes
            left = inner[0].child_by_field_name("left")
            return left is not None and left.type == "identifier" \
                and not any(d.type in ("call", "await", "lambda") for d in _walk_nodes(inner[0]))
        return len(inner) == 1 and inner[0].type == "string"
    if statement.type in ("if_statement", "for_statement"):
        blocks = [c for c in statement.named_children if c.type in ("block", "else_clause", "elif_clause")]
        inner = []
        for block in blocks:
            inner += [c for c in (block.named_children if block.type == "block" else
                                  (block.child_by_field_name("body") or block).named_children) if c.type != "comment"]
        return bool(inner) and all(_check_only(c) for c in inner if c.type != "block") \
            and all(all(_check_only(d) for d in c.named_children if d.type != "comment") for c in inner if c.type == "block")
    return False


def port_has_moved_guard(old_node, new_node, port_node, callee_names=None) -> list[tuple[object, object]] | None:
    """``[(new statement, port statement)]`` when a Python definition's whole change is an early exit moved in
    or out of it (``port-has-change``) and the port already has the new form, never the old:

    - *gained*: one top-level ``if TEST: return`` inserted after statements that only check the inputs; the
      port's body holds, after checks only, an ``if TEST: return`` with the same test once its parameters are
      renamed, by position, to upstream's;
    - *dropped*: one top-level ``if TEST: CALL`` (no ``else``) became ``CALL``; the port's body holds, at top
      level, its one call of the same callee or of one of ``callee_names(callee)`` (the port's names for it),
      as upstream's body now holds one call of it, unguarded.
    None otherwise."""
    old, new, port = _statements(old_node), _statements(new_node), _statements(port_node)
    if not old or not new or not port:
        return None
    upstream_params, port_params = _params_in_order(new_node), _params_in_order(port_node)
    if _params_in_order(old_node) != upstream_params or len(port_params) != len(upstream_params):
        return None
    renaming = {mine: theirs for mine, theirs in zip(port_params, upstream_params) if mine and theirs}
    olds, news = [_dump(s) for s in old], [_dump(s) for s in new]
    if None in olds or None in news:
        return None
    if len(new) == len(old) + 1:
        at = next((i for i in range(len(old)) if olds[i] != news[i]), len(old))
        if olds[at:] != news[at + 1:] or not _early_exit(new[at]) or not all(_check_only(s) for s in new[:at]):
            return None
        wanted = news[at]
        for position, mine in enumerate(port):
            if _early_exit(mine) and _dump(mine, renaming) == wanted:
                return [(new[at], mine)] if all(_check_only(s) for s in port[:position]) else None
        return None
    if len(new) != len(old):
        return None
    differing = [i for i in range(len(old)) if olds[i] != news[i]]
    if len(differing) != 1:
        return None
    at = differing[0]
    parts = _if_parts(old[at])
    if parts is None or len(parts[1]) != 1 or _dump(parts[1][0]) != news[at]:
        return None
    call = [c for c in new[at].named_children if c.type != "comment"]
    if new[at].type != "expression_statement" or len(call) != 1 or call[0].type != "call":
        return None
    callee = call[0].child_by_field_name("function")
    written = callee.text.decode("utf-8", errors="replace")
    names = {written} | (set(callee_names(written)) if callee_names is not None else set())

    def calls(node, chosen: set[str]) -> list:
        return [c for c in _walk_nodes(node) if c.type == "call" and c.child_by_field_name("function") is not None
                and c.child_by_field_name("function").text.decode("utf-8", errors="replace") in chosen]

    if len(calls(new_node, {written})) != 1:
        return None  # upstream's one call of the host is the one unguarded
    mine = calls(port_node, names)
    if len(mine) != 1 or mine[0].parent is None or mine[0].parent.type != "expression_statement" \
            or not any(mine[0].parent.id == s.id for s in port):
        return None  # the port's one call of its host stands unguarded at the top of its body
    return [(new[at], mine[0].parent)]


