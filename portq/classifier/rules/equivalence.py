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
  change of the definition is such a statement.

Example diff (IN_SYNC for a port whose ``forward`` already allocates
``rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)``)::

    -    rstd = torch.empty((M,), dtype=torch.float32, device="cuda")
    +    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)

This module states the rules, picks the port's parameter from two
signatures and compares syntax trees handed to it; it reads no git and no
tree index, and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import difflib

from portq.classifier.rules import Rule
from portq.classifier.rules.cosmetic import _function_node, _python_parameters, local_names

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
         "verbatim) while "
         "its old form is not, is a change the port already has: IN_SYNC, citing the port's statements.",
         "-    rstd = torch.empty((M,), device=\"cuda\")\n+    rstd = torch.empty((M,), device=x.device)  "
         "(the port: rstd = torch.empty((rows,), device=x.device))",
         "classifier.rules.equivalence.port_has_change, classifier.rules.definitions.DefinitionRules._from_items"),
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
    import difflib

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
            return None
        old_statement, new_statement = next(iter(old_statements.values())), next(iter(new_statements.values()))
        pairs.setdefault(_key(new_statement), (old_statement, new_statement))
        if pairs[_key(new_statement)][0] is not old_statement and _key(pairs[_key(new_statement)][0]) != _key(old_statement):
            return None
        touched_new |= {_key(leaf) for leaf in new_leaves[j1:j2]}
        touched_old |= {_key(leaf) for leaf in old_leaves[i1:i2]}
    if not pairs:
        return None
    port_statements: dict[str, list] = {}
    for leaf in _leaves(port_node):
        statement = _statement_of(leaf)
        target = _target(statement) if statement is not None else None
        if target is not None and all(_key(s) != _key(statement) for s in port_statements.get(target, [])):
            port_statements.setdefault(target, []).append(statement)
    renaming: dict[str, str] = {}
    names = (_own_names(new_node), _own_names(port_node))
    found = []
    for old_statement, new_statement in pairs.values():
        target = _target(new_statement)
        candidates = port_statements.get(target or "", [])
        if target is None or target != _target(old_statement) or len(candidates) != 1:
            return None
        if not _aligned(new_statement, candidates[0], touched_new, renaming, names):
            return None
        found.append((new_statement, candidates[0]))
    for old_statement, _ in pairs.values():
        port_statement = port_statements[_target(old_statement)][0]
        if _aligned(old_statement, port_statement, touched_old, dict(renaming), (_own_names(old_node), names[1])):
            return None  # the port has the old form too: nothing tells which it follows
    return found
