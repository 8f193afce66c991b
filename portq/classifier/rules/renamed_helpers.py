"""Renamed helpers: a module-level function one commit renames, its body the same, and a ported definition whose only change is calling it by the new name (DESIGN §5, form without meaning).

Upstream renames helpers in files no row owns (``map_dtype(dtype)`` becoming
``dtype(inp)``) and updates their callers in the same commit. The ported
caller's new line calls other text but runs the same code: the change is a
rename, cosmetic (``renamed-helper``).

The code: ``renamed_functions`` pairs the module-level functions one file
loses and gains in a commit whose definitions are equal once each one's
parameters are named by position (Python's ``ast``, so layout and comments
aside); ``calls_only_renamed`` reads a definition's two sides for calls of
those names and nothing else changed. It reads the sources handed to it; it
reads no git, decides no verdict and never names a corpus symbol, path or
commit.
"""

from __future__ import annotations

import ast
import re

from portq.classifier.rules import Rule

RULES = (
    Rule("renamed-helper", ("NOT_APPLICABLE",),
         "A ported Python definition whose whole change is calling module-level functions by the new names the "
         "same commit gives them, where each renamed function is removed under its old name and added under the "
         "new one in the same file with a body equal once its parameters are named by position (decorators and "
         "defaults too), is cosmetic: the call runs the same code. A helper whose body changes, an old name the "
         "commit keeps, a name paired with two candidates, or any other change to the ported definition stays "
         "flagged.",
         "-def map_dtype(dtype): ...   +def dtype(inp): ...   (same body, parameter renamed)\n"
         "-    kernel[grid](x, dtype=util.map_dtype(x.dtype))\n+    kernel[grid](x, dtype=util.dtype(x.dtype))",
         "classifier.rules.renamed_helpers.renamed_functions, classifier.rules.renamed_helpers.calls_only_renamed, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("renamed-helper-restated", ("NOT_APPLICABLE",),
         "A ported Python definition whose whole change is calling module-level functions by the new names the "
         "same commit gives them, where a renamed function's new body equals its old one once the calls of the "
         "commit's other renamed functions are read by their new names and, on both sides, each local bound once "
         "by a plain assignment and read once, in the very next statement, with nothing but names, attributes of "
         "names and constants evaluated before that read, is written into its read: the chain of renamed "
         "helpers runs the same code in the same order, so the call is cosmetic. A restatement that moves a call "
         "past another, a local read twice or bound again, a helper of the chain whose value changes, or any "
         "other change to the ported definition stays flagged.",
         "-def get_tile(n, size): return min(n, get_budget() // size)\n"
         "+def tile(n, size): return min(n, budget() // size)\n"
         "-def get_warps(n, size): w = get_budget() // (get_tile(n, size) * size); return clamp(w, 4, 32)\n"
         "+def warps(n, size): total = budget(); width = tile(n, size); return clamp(total // (width * size), 4, 32)\n"
         "-    blk = util.get_tile(n, 4); nw = util.get_warps(n, 4)\n+    blk = util.tile(n, 4); nw = util.warps(n, 4)",
         "classifier.rules.renamed_helpers.renamed_functions, classifier.rules.renamed_helpers.calls_only_renamed, "
         "classifier.rules.definitions.DefinitionRules._renamed_helper_calls"),
    Rule("renamed-cpp-helper", ("NOT_APPLICABLE",),
         "A C/C++ definition whose whole change (tokens, comments aside) is naming functions by the new names the "
         "same commit gives them, where each renamed function is removed under its old name and added under the "
         "new one in the same file with the same tokens once its own name is set aside, paired one to one, and "
         "no file the commit changes defines the old name after it or the new name before it, is cosmetic: each "
         "call runs the same code. A member call (`.old(`, `->old(`) or a qualified one is not renamed; a helper "
         "whose tokens change, two old names merged into one new one, a use left under the old name, an old name "
         "the commit keeps, or any other change to the definition stays flagged.",
         "-template <typename T> T div_up(T a, T b) { return (a + b - 1) / b; }\n"
         "+template <typename T> T round_div(T a, T b) { return (a + b - 1) / b; }\n"
         "-    const int blocks = div_up(n, BLOCK);\n+    const int blocks = round_div(n, BLOCK);",
         "classifier.rules.renamed_helpers.renamed_cpp_functions, classifier.rules.renamed_helpers.tokens_only_renamed, "
         "classifier.rules.definitions.DefinitionRules._renamed_cpp_helper_calls"),
    Rule("renamed-ported-helper", ("NOT_APPLICABLE",),
         "A ported Python module-level function that upstream removes while the same commit adds, in the same file, "
         "one under another name whose definition is equal once each one's parameters are named by position "
         "(`renamed-helper`'s pairing), where no Python file the commit changes names the old name after it and "
         "the port's definition already has the new name, is a rename the port already made: the code it "
         "mirrors runs on under the new name, so the removal is cosmetic. A body that changes, a port that still "
         "names the function by its old name, or an old name still named after the commit stays flagged.",
         "-def cdiv_up(x, y): return (x + y - 1) // y\n+def div_ceil(x, y): return (x + y - 1) // y   "
         "(the port: `def div_ceil(x, y)` anchored to cdiv_up)",
         "classifier.rules.renamed_helpers.renamed_functions, classifier.rules.definitions.DefinitionRules._removed"),
)


def _module_functions(source: bytes | None) -> dict[str, ast.AST] | None:
    """Name -> node of each function defined once at module level of a Python ``source``; None when it does
    not parse."""
    if source is None:
        return None
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    found: dict[str, ast.AST] = {}
    twice: set[str] = set()
    for statement in module.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            (twice.add(statement.name) if statement.name in found else found.__setitem__(statement.name, statement))
    return {n: f for n, f in found.items() if n not in twice}


class _Positional(ast.NodeTransformer):
    """Writes a function's parameters as ``_p0, _p1, ...`` and its own name as ``_self`` (where no
    parameter shadows it), so two definitions that differ only in those names dump the same."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id=self.names.get(node.id, node.id), ctx=node.ctx), node)

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node


def _shape(function) -> str | None:
    """The dump of ``function`` with its parameters named by position and its own name replaced; None for a
    function with keyword-only parameters or ``**`` (their names are its interface) or a nested definition
    (its own names are not rewritten)."""
    arguments = function.args
    if arguments.kwonlyargs or arguments.kwarg is not None:
        return None
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
           for n in ast.walk(function) if n is not function):
        return None
    positional = [a.arg for a in arguments.posonlyargs + arguments.args]
    if arguments.vararg is not None:
        positional.append(arguments.vararg.arg)
    names = {function.name: "_self"}
    names.update({name: f"_p{i}" for i, name in enumerate(positional)})
    copied = ast.parse(ast.unparse(function)).body[0]
    copied.name = "_self"
    return ast.dump(_Positional(names).visit(copied), include_attributes=False)


def renamed_functions(old_source: bytes | None, new_source: bytes | None, restated: bool = False,
                      known: dict[str, str] | None = None) -> dict[str, str]:
    """Old name -> new name of each module-level function the file loses under one name and gains under
    another with the same definition (``_shape``), paired one to one. With ``restated``, a pair also holds
    when the two are the same once calls of functions already paired (here or in ``known``, other files of
    the commit) read by their new names and single-use locals written into their reads (``_restated``),
    repeated until no new pair is found."""
    before, after = _module_functions(old_source), _module_functions(new_source)
    if before is None or after is None:
        return {}
    lost = {n: _shape(f) for n, f in before.items() if n not in after}
    gained = {n: _shape(f) for n, f in after.items() if n not in before}
    pairs = _paired(lost, gained)
    if not restated:
        return pairs
    gained_restated = {n: _shape(_restated(f)) for n, f in after.items() if n not in before}
    while True:
        renames = {**(known or {}), **pairs}
        lost_restated = {n: _shape(_restated(_calls_renamed(f, renames))) for n, f in before.items() if n not in after}
        found = {n: m for n, m in _paired(lost_restated, gained_restated).items()
                 if n not in pairs and m not in pairs.values()}
        if not found:
            return pairs
        pairs.update(found)


def _paired(lost: dict[str, str | None], gained: dict[str, str | None]) -> dict[str, str]:
    """Each lost name whose shape one gained name alone has, and no other lost name has."""
    pairs: dict[str, str] = {}
    for name, shape in lost.items():
        if shape is None:
            continue
        matches = [other for other, theirs in gained.items() if theirs == shape]
        if len(matches) == 1 and sum(1 for s in lost.values() if s == shape) == 1:
            pairs[name] = matches[0]
    return pairs


def _calls_renamed(function, renames: dict[str, str]):
    """A copy of ``function`` with every call of a renamed name (``old(`` or ``mod.old(``, never ``self.old(``
    or ``cls.old(``) written with the new name."""
    copied = ast.parse(ast.unparse(function)).body[0]
    for node in ast.walk(copied):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        if isinstance(called, ast.Name) and called.id in renames:
            called.id = renames[called.id]
        elif isinstance(called, ast.Attribute) and called.attr in renames \
                and not (isinstance(called.value, ast.Name) and called.value.id in ("self", "cls")):
            called.attr = renames[called.attr]
    return copied


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _inert(node) -> bool:
    """Whether evaluating ``node`` only reads: a constant, a name, or an attribute of one."""
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    return isinstance(node, ast.Attribute) and _inert(node.value)


def _read_first(statement, name: str):
    """The one load of ``name`` in ``statement`` (a ``return``, an expression statement or a plain
    assignment to names) when everything Python evaluates before it is ``_inert`` and it sits under no
    branch, short circuit or inner scope; None otherwise."""
    if isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
        root = statement.value
    elif isinstance(statement, (ast.Return, ast.Expr)) and statement.value is not None:
        root = statement.value
    else:
        return None
    path: list = []

    def find(node) -> bool:
        path.append(node)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            return True
        for child in ast.iter_child_nodes(node):
            if find(child):
                return True
        path.pop()
        return False

    if not find(root):
        return None
    for parent, child in zip(path, path[1:]):
        # a dict display evaluates its keys and values interleaved, which the child order below does not follow
        if isinstance(parent, (*_SCOPES, ast.IfExp, ast.BoolOp, ast.Starred, ast.Dict)):
            return None
        if isinstance(parent, ast.keyword):
            continue
        if isinstance(parent, ast.Call):
            ordered = [parent.func, *parent.args, *parent.keywords]
        else:
            ordered = [c for c in ast.iter_child_nodes(parent)
                       if not isinstance(c, (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop))]
        if not any(c is child for c in ordered):
            return None
        earlier = ordered[:[i for i, c in enumerate(ordered) if c is child][0]]
        if not all(_inert(e.value if isinstance(e, ast.keyword) else e) for e in earlier):
            return None
    return path[-1]


def _restated(function):
    """A copy of ``function`` with each local bound once by ``NAME = VALUE`` in its body's top level and
    loaded once in the whole function, by the very next statement (``_read_first``), written into that read,
    repeated until none is left; parameters and names declared ``global`` or ``nonlocal`` stay."""
    copied = ast.parse(ast.unparse(function)).body[0]
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(copied)):
        return copied
    arguments = copied.args
    parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    changed = True
    while changed:
        changed = False
        body = copied.body
        for index, statement in enumerate(body[:-1]):
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                continue
            name = statement.targets[0].id
            if name in parameters or any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
                                         for n in ast.walk(statement.value)):
                continue
            uses = [n for n in ast.walk(copied) if isinstance(n, ast.Name) and n.id == name]
            if sum(isinstance(n.ctx, ast.Load) for n in uses) != 1 or sum(isinstance(n.ctx, ast.Store)
                                                                          for n in uses) != 1 \
                    or any(isinstance(n.ctx, ast.Del) for n in uses):
                continue
            read = _read_first(body[index + 1], name)
            if read is None:
                continue
            _replace(body[index + 1], read, statement.value)
            del body[index]
            changed = True
            break
    return copied


def _replace(root, old, new) -> None:
    """Puts ``new`` where ``old`` sits under ``root``."""
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[[i for i, v in enumerate(value) if v is old][0]] = new
                return


_COMMENT = re.compile(r"^\s*#")


def calls_only_renamed(old_lines: list[str], new_lines: list[str], renamed: dict[str, str]) -> list[str]:
    """The renames (``old → new``) a definition's change consists of: its old lines, each call of a renamed
    function (``old(`` or ``.old(``) written with the new name, are its new lines (comments and blank lines
    aside); empty when anything else differs or no call was renamed."""
    def code(lines):
        return [line.rstrip() for line in lines if line.strip() and not _COMMENT.match(line)]

    before, after = code(old_lines), code(new_lines)
    if not renamed or len(before) != len(after):
        return []
    pattern = re.compile(r"(?<![\w])(?<!self\.)(?<!cls\.)(" + "|".join(re.escape(n) for n in sorted(renamed)) + r")(?=\s*\()")
    used: list[str] = []
    for was, now in zip(before, after):
        rewritten = pattern.sub(lambda m: renamed[m.group(1)], was)
        if rewritten != now:
            return []
        used += [f"{m} → {renamed[m]}" for m in pattern.findall(was) if f"{m} → {renamed[m]}" not in used]
    return used


def renamed_cpp_functions(before: list[tuple[str, list[str]]], after: list[tuple[str, list[str]]]) -> dict[str, str]:
    """Rule ``renamed-cpp-helper``: old name -> new name of each C/C++ function one file loses under one name
    and gains under another with the same tokens once its own name is set aside, paired one to one.
    ``before``/``after`` are (name, comment-free tokens) of the file's function definitions on each side; a
    name defined twice on a side (overloads) takes part in no pair."""
    def once(definitions):
        counts: dict[str, int] = {}
        for name, _ in definitions:
            counts[name] = counts.get(name, 0) + 1
        return {name: tokens for name, tokens in definitions if counts[name] == 1}, set(counts)

    old, old_names = once(before)
    new, new_names = once(after)

    def shape(name, tokens):
        return "\x00".join("_self" if t == name else t for t in tokens) if tokens.count(name) == 1 else None

    lost = {n: shape(n, t) for n, t in old.items() if n not in new_names}
    gained = {n: shape(n, t) for n, t in new.items() if n not in old_names}
    return _paired(lost, gained)


_NOT_PLAIN = ((".",), ("-", ">"), (":", ":"))  # a member or qualified mention, in single-character tokens


def tokens_only_renamed(old_tokens: list[str], new_tokens: list[str], renamed: dict[str, str]) -> list[str]:
    """Rule ``renamed-cpp-helper``: the renames (``old → new``) a C/C++ definition's change consists of: its
    old tokens (as ``cosmetic.cpp_tokens`` reads them, every character but words and literals alone), each
    plain mention of a renamed function (not after ``.``, ``->`` or ``::``) written with the new name, are its
    new tokens; empty when anything else differs or nothing was renamed."""
    if not renamed or len(old_tokens) != len(new_tokens):
        return []
    used: list[str] = []
    for index, (was, now) in enumerate(zip(old_tokens, new_tokens)):
        if was == now:
            continue
        plain = not any(tuple(old_tokens[max(index - len(before), 0):index]) == before for before in _NOT_PLAIN)
        if not plain or renamed.get(was) != now:
            return []
        if f"{was} → {now}" not in used:
            used.append(f"{was} → {now}")
    return used
