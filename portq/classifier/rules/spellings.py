"""Spelling rules: a deprecated decorator replaced by the equivalent its library documents (DESIGN §5).

A library that deprecates a decorator often keeps the old name as a thin
wrapper that calls the new one with fixed arguments; a commit that moves to
the new spelling, passing exactly those arguments, changes no behaviour.
Whether two spellings are equal is a fact of the library, not of the
syntax, so the rule reads a small table, each entry checked against the
library's own source and cited there:

* ``torch.cuda.amp.custom_fwd(fwd=None, *, cast_inputs=None)`` returns
  ``functools.partial(torch.amp.custom_fwd, device_type="cuda")(fwd=fwd,
  cast_inputs=cast_inputs)`` (``torch/cuda/amp/autocast_mode.py``, PyTorch
  2.4 and later; its deprecation message reads "Please use
  `torch.amp.custom_fwd(args..., device_type='cuda')` instead"); used bare
  or with ``cast_inputs=``.
* ``torch.cuda.amp.custom_bwd(bwd)`` returns
  ``functools.partial(torch.amp.custom_bwd, device_type="cuda")(bwd)`` (the
  same file); used bare only.

* ``documented-equivalent-decorator``: a Python definition whose only change
  is in its decorators, each changed decorator the table's deprecated
  spelling (bare, or called with keywords the table keeps) on the old side
  and, on the new, a call of the table's replacement with the same keywords
  plus exactly the table's added ones (``device_type='cuda'``) and nothing
  positional. Each decorator's name is read through its module's one
  top-level binding of the name it starts with (``from torch.amp import
  custom_fwd``, ``import torch``), never a name the module or the enclosing
  class binds otherwise; an unchanged decorator must read the same on both
  sides. NOT_APPLICABLE/cosmetic.

Example diff (cosmetic)::

    -from torch.cuda.amp import custom_bwd, custom_fwd
    +from torch.amp import custom_bwd, custom_fwd
         @staticmethod
    -    @custom_fwd
    +    @custom_fwd(device_type='cuda')
         def forward(ctx, input):

Another ``device_type``, a keyword the old spelling did not pass, a
decorator the table does not hold, or a name bound to a function of the
module's own stays flagged.

This module reads Python syntax trees of the texts handed to it; it reads no
git and no tree index, imports no verdict table, and never names a corpus
symbol, path or commit.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from portq.classifier.rules import Rule
from portq.classifier.rules.form import _one_definition
from portq.classifier.rules.inlining import _OTHER, _top_bindings

RULES = (
    Rule("documented-equivalent-decorator", ("NOT_APPLICABLE",),
         "A Python definition whose only change replaces decorators by the equivalent their library documents "
         "for the deprecated spelling (a small cited table: torch.cuda.amp.custom_fwd/custom_bwd → "
         "torch.amp.custom_fwd/custom_bwd with device_type='cuda'), the old call's keywords kept and exactly "
         "the table's added, every decorator name read through its module's one import binding: the same "
         "behaviour, cosmetic.",
         "-    @custom_fwd\n+    @custom_fwd(device_type='cuda')  (from torch.cuda.amp import custom_fwd → "
         "from torch.amp import custom_fwd)",
         "classifier.rules.spellings.equivalent_decorators, "
         "classifier.verdicts.SymbolClassifier._equivalent_decorators"),
)


@dataclass(frozen=True)
class Equivalent:
    """A deprecated decorator's documented replacement: the call that equals it."""

    replacement: str  # the dotted name of the decorator to call instead
    added: tuple[tuple[str, object], ...]  # the keywords (name, literal value) the replacement is called with
    kept: frozenset[str]  # the old spelling's keywords passed on unchanged; empty: used bare only


EQUIVALENT_DECORATORS: dict[str, Equivalent] = {
    # torch/cuda/amp/autocast_mode.py: custom_fwd(fwd=None, *, cast_inputs=None) returns
    # functools.partial(torch.amp.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)
    "torch.cuda.amp.custom_fwd": Equivalent("torch.amp.custom_fwd", (("device_type", "cuda"),),
                                            frozenset({"cast_inputs"})),
    # the same file: custom_bwd(bwd) returns functools.partial(torch.amp.custom_bwd, device_type="cuda")(bwd)
    "torch.cuda.amp.custom_bwd": Equivalent("torch.amp.custom_bwd", (("device_type", "cuda"),), frozenset()),
}
"""Deprecated decorator (dotted) → its documented equivalent; each entry read in the library's source."""


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return list(reversed(parts))


def _class_binds(module: ast.Module, qualified_name: str, name: str) -> bool:
    """Whether an enclosing class of ``qualified_name`` (top-level, by name) binds ``name`` in its body, or
    cannot be found; a top-level definition has none."""
    parts = qualified_name.split(".")[:-1]
    scope = module.body
    for part in parts:
        found = [s for s in scope if isinstance(s, ast.ClassDef) and s.name == part]
        if len(found) != 1:
            return True
        for statement in found[0].body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if statement.name == name:
                    return True
                continue
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load) and inner.id == name:
                    return True
                if isinstance(inner, (ast.Import, ast.ImportFrom)) \
                        and any((a.asname or a.name).split(".")[0] == name for a in inner.names):
                    return True
        scope = found[0].body
    return False


def _resolved(node: ast.AST, module: ast.Module, path: str, qualified_name: str) -> str | None:
    """The dotted name a decorator's callee reads, through its module's one import binding; None otherwise."""
    parts = _dotted(node)
    if parts is None or _class_binds(module, qualified_name, parts[0]):
        return None
    bindings = set(_top_bindings(module, path, parts[0]))
    if len(bindings) != 1:
        return None
    (how,) = bindings
    if how == _OTHER:
        return None
    if how[0] == "import":
        return ".".join([how[1]] + parts[1:])
    return ".".join([how[1], how[2]] + parts[1:])


def _keywords(call: ast.Call) -> dict[str, str] | None:
    if call.args or any(k.arg is None for k in call.keywords):
        return None
    found = {k.arg: ast.dump(k.value) for k in call.keywords}
    return found if len(found) == len(call.keywords) else None


def equivalent_decorators(old_text: str, new_text: str, old_source: str, new_source: str, path: str,
                          qualified_name: str) -> list[str]:
    """Rule ``documented-equivalent-decorator``: ``old → new`` for each decorator replaced by its documented
    equivalent, when that is the definition's only change (see the module docstring); empty otherwise."""
    old, new = _one_definition(old_text), _one_definition(new_text)
    try:
        old_module, new_module = ast.parse(old_source), ast.parse(new_source)
    except (SyntaxError, ValueError):
        return []
    if old is None or new is None or len(old.decorator_list) != len(new.decorator_list):
        return []
    stripped = [type(d)(**{f: (getattr(d, f) if f != "decorator_list" else []) for f in d._fields})
                for d in (old, new)]
    if ast.dump(stripped[0]) != ast.dump(stripped[1]):
        return []
    replaced: list[str] = []
    for was, now in zip(old.decorator_list, new.decorator_list):
        was_callee = was.func if isinstance(was, ast.Call) else was
        now_callee = now.func if isinstance(now, ast.Call) else now
        before = _resolved(was_callee, old_module, path, qualified_name)
        after = _resolved(now_callee, new_module, path, qualified_name)
        if ast.dump(was) == ast.dump(now):
            if before != after:  # the same text reading another binding
                return []
            continue
        equivalent = EQUIVALENT_DECORATORS.get(before or "")
        if equivalent is None or after != equivalent.replacement or not isinstance(now, ast.Call):
            return []
        kept = {} if not isinstance(was, ast.Call) else _keywords(was)
        if kept is None or (isinstance(was, ast.Call) and not equivalent.kept) or set(kept) - equivalent.kept:
            return []
        wanted = dict(kept, **{name: ast.dump(ast.Constant(value)) for name, value in equivalent.added})
        if len(wanted) != len(kept) + len(equivalent.added) or _keywords(now) != wanted:
            return []
        replaced.append(f"{before} → {after}({', '.join(f'{n}={v!r}' for n, v in equivalent.added)})")
    return replaced
