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


def renamed_functions(old_source: bytes | None, new_source: bytes | None) -> dict[str, str]:
    """Old name -> new name of each module-level function the file loses under one name and gains under
    another with the same definition (``_shape``), paired one to one."""
    before, after = _module_functions(old_source), _module_functions(new_source)
    if before is None or after is None:
        return {}
    lost = {n: _shape(f) for n, f in before.items() if n not in after}
    gained = {n: _shape(f) for n, f in after.items() if n not in before}
    pairs: dict[str, str] = {}
    for name, shape in lost.items():
        if shape is None:
            continue
        matches = [other for other, theirs in gained.items() if theirs == shape]
        if len(matches) == 1 and sum(1 for s in lost.values() if s == shape) == 1:
            pairs[name] = matches[0]
    return pairs


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
