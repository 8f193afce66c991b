"""Deltas: the structural comparison of a definition, old against new, placed against a port.

``compare`` asks the comparison rules in order, item by item: the parameter
rules (``portq.classifier.rules.parameters``), the launch rules and the
program-id decomposition (``portq.classifier.rules.launch``). Each gives
typed ``Delta`` records (``portq.classifier.delta``) whose ``Status`` the
verdict table decides from; parameter records get both sides' locations
here.

This module reads the signatures handed to it, and the in-tree index only
to name what a port's launch binds to; it reads no blobs and decides no
verdict.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable

from portq.classifier.delta import Delta, _ruled
from portq.classifier.rules.launch import _launch_items, _program_id_items
from portq.classifier.rules.parameters import _parameter_items
from portq.classifier.rules.scope import _scope_names
from portq.core.evidence import Evidence, Kind, Location, Side
from portq.language.signatures import Signature, normalise_name

if TYPE_CHECKING:
    from portq.tree.tree_index import TreeIndex


# --- structural comparison against a port ------------------------------------------


def compare(old: Signature, new: Signature, port: Signature, index: TreeIndex | None = None,
            param_scope: Iterable[str] = (), derivation=None, upstream: str | None = None,
            keyword_free=None, instance=None, respell: dict[str, str] | None = None, internal=None,
            selects=None, forwarded=None, removed=None, computed=None) -> list[Delta]:
    """Every structural delta of ``old`` → ``new``, placed against ``port``.
    ``derivation(name)`` says how upstream's launches compute a new parameter;
    ``keyword_free(names)`` whether no call upstream changed binds any of ``names`` by keyword;
    ``instance(name, side)`` how a class's own methods compute a parameter of one of its methods;
    ``respell`` the launcher's own consistent renaming of its locals (``renamed-binding``);
    ``internal(name)`` how upstream's own callers of a C++ function supply its new parameter (``internal-parameter``);
    ``removed(name)`` whether the tree calls the port of a Python helper that loses ``name`` only from ports
    (``removed-internal-parameter``);
    ``computed(name)`` how upstream's own callers of a Python helper bind its new parameter, when none is an
    entry point's input (``computed-internal-parameter``);
    ``selects(name)`` the first branch condition of the new definition reading a parameter (``revived-input``);
    ``forwarded(name)`` where a default gained reaches only a moved body that requires it (``forwarded-default``)."""
    scope = _scope_names(param_scope)
    set_aside = {a.bare_symbol for a in index.anchors if a.kind == "not-carried" and not a.param
                 and (upstream is None or a.upstream == upstream)} if index is not None else set()
    items: list[Delta] = []
    items += [_both_sides(item, old, new) for item in _parameter_items(old, new, port, scope, derivation, keyword_free, instance,
                                                                   internal, selects, forwarded, removed,
                                                                   computed)]
    items += _launch_items(old, new, port, index, scope, derivation, set_aside, respell)
    items += _ruled(_program_id_items(old, new, port, set_aside), "program-decomposition")
    return items


_PARAMETER_KINDS = frozenset({Kind.PARAM_ADDED, Kind.PARAM_REMOVED, Kind.PARAM_DEAD, Kind.DEFAULT_CHANGED})


def _both_sides(item: Delta, old: Signature, new: Signature) -> Delta:
    """A parameter delta's upstream records carry both locations: the
    parameter's line on each side where it exists, else the signature's."""
    def located(record: Evidence) -> Evidence:
        if record.kind not in _PARAMETER_KINDS or record.before is not None or record.subject is None:
            return record
        before, after = old.param(normalise_name(record.subject)), new.param(normalise_name(record.subject))
        return replace(record, before=Location(Side.OLD, old.path, before.line if before else old.start_line,
                                               quote=before.quote if before else None),
                       after=Location(Side.NEW, new.path, after.line if after else new.start_line,
                                      quote=after.quote if after else None))

    return replace(item, evidence=[located(e) for e in item.evidence])


